package lagcomp

import (
	"testing"

	arche "github.com/mlange-42/arche/ecs"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
)

// entities returns n distinct live entities of a throwaway arche World.
func entities(n int) []ecs.Entity {
	w := arche.NewWorld()
	out := make([]ecs.Entity, n)
	for i := range out {
		out[i] = w.NewEntity()
	}
	return out
}

var stdHitbox = ecs.Hitbox{Radius: 0.4, Height: 1.8}

func pose(e ecs.Entity, team uint8, x, z float64) Pose {
	return Pose{Entity: e, Team: team, Hitbox: stdHitbox, Pos: geom.V(x, 0, z)}
}

func mustRecord(t *testing.T, h *History, tick int64, poses ...Pose) {
	t.Helper()
	if err := h.Record(tick, poses); err != nil {
		t.Fatal(err)
	}
}

// feetOf returns where entity e's hitbox currently stands in w.
func feetOf(t *testing.T, w *CollisionWorld, e ecs.Entity) (geom.Vec3, bool) {
	t.Helper()
	c, ok := w.Hitbox(e)
	if !ok {
		return geom.Vec3{}, false
	}
	return c.Capsule.A.Sub(geom.V(0, c.Capsule.Radius, 0)), true
}

// recycled returns an entity with e's index and a newer generation.
func recycled(e ecs.Entity) ecs.Entity {
	w := arche.NewWorld()
	var got ecs.Entity
	for {
		n := w.NewEntity()
		if n.ID() == e.ID() {
			w.RemoveEntity(n)
			got = w.NewEntity()
			break
		}
	}
	if got.ID() != e.ID() || got.Generation() == e.Generation() {
		panic("recycling did not give the same index with a new generation")
	}
	return got
}
