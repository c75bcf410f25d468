package spread

import (
	"math"
	"testing"

	"github.com/rewind-gg/rewind/geom"
)

func TestDirStaysInTheConeAndIsDeterministic(t *testing.T) {
	aim := geom.V(1, 0.2, -0.5).Normalize()
	half := 0.1
	var sum geom.Vec3
	for p := range 2000 {
		d := Dir(aim, half, 42, uint16(p/8), p%8)
		if math.Abs(d.Len()-1) > 1e-12 {
			t.Fatalf("not a unit vector: %v", d)
		}
		if a := math.Acos(min(1, d.Dot(aim))); a > half+1e-12 {
			t.Fatalf("pellet %d at %v rad, outside the %v cone", p, a, half)
		}
		if d != Dir(aim, half, 42, uint16(p/8), p%8) {
			t.Fatal("not deterministic")
		}
		sum = sum.Add(d)
	}
	// Uniform over the cone: the mean direction is the aim.
	if m := sum.Normalize(); math.Acos(min(1, m.Dot(aim))) > 0.005 {
		t.Errorf("pellets are biased: mean %v, aim %v", m, aim)
	}
	if Dir(aim, half, 42, 1, 0) == Dir(aim, half, 43, 1, 0) || Dir(aim, half, 42, 1, 0) == Dir(aim, half, 42, 1, 1) {
		t.Error("different shooters or pellets should differ")
	}
	if Dir(aim, 0, 1, 2, 3) != aim {
		t.Error("no spread must return the aim")
	}
	if d := Dir(geom.V(0, 1, 0), half, 1, 2, 3); math.Acos(d.Y) > half+1e-12 {
		t.Errorf("straight up: %v", d)
	}
}

// The formula docs/protocol.md gives for other languages.
func TestUniformsPinned(t *testing.T) {
	u1, u2 := Uniforms(0x100005, 7, 3)
	if u1 < 0 || u1 >= 1 || u2 < 0 || u2 >= 1 {
		t.Fatal(u1, u2)
	}
}
