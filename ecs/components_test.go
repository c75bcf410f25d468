package ecs

import (
	"math/rand/v2"
	"testing"

	"github.com/rewind-gg/rewind/geom"
)

// ViewTimeOf and Ticks are exact inverses, so bucket keys and printed view
// times are exactly the computed τ.
func TestViewTimeSplitIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		f := rng.Float64()*1e7 - 1e3
		v := ViewTimeOf(f)
		if v.Ticks() != f || v.Frac < 0 || v.Frac >= 1 {
			t.Fatalf("%v → %+v → %v", f, v, v.Ticks())
		}
	}
	if !(ViewTime{Tick: 3, Frac: 0.5}).Less(ViewTime{Tick: 4}) || (ViewTime{Tick: 4}).Less(ViewTime{Tick: 3, Frac: 0.9}) {
		t.Error("Less is wrong")
	}
}

func TestHitboxCapsule(t *testing.T) {
	c := Hitbox{Radius: 0.4, Height: 1.8}.Capsule(geom.V(1, 2, 3), false)
	if c.A != geom.V(1, 2.4, 3) || c.B != geom.V(1, 3.4, 3) || c.Radius != 0.4 {
		t.Errorf("capsule %+v", c)
	}
}

func TestNewWorldHasResources(t *testing.T) {
	w := NewWorld(30)
	if c := Resource[Clock](w); c == nil || c.TickRate != 30 || c.Dt() != 1.0/30 {
		t.Errorf("clock %+v", c)
	}
	if Resource[Commands](w) == nil || Resource[Events](w) == nil {
		t.Error("missing resources")
	}
}
