package lagcomp

import (
	"testing"

	arche "github.com/mlange-42/arche/ecs"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/stresslevel"
	"github.com/rewind-gg/rewind/trimesh"
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

// shotMask is the test levels' mask of triangles that block shots.
const shotMask trimesh.Mask = 2

// setLevel makes the boxes w's level, as entity e: their triangles block
// shots (mask 3) unless the box is marked movement-only (moveOnly).
func setLevel(t testing.TB, w *CollisionWorld, e ecs.Entity, boxes []geom.AABB, moveOnly ...geom.AABB) *trimesh.Mesh {
	t.Helper()
	var tris []trimesh.Triangle
	add := func(b geom.AABB, mask uint8) {
		for _, g := range stresslevel.Box(b.Min, b.Max, mask) {
			tris = append(tris, trimesh.Triangle{A: g.A, B: g.B, C: g.C, Mask: trimesh.Mask(g.Mask)})
		}
	}
	for _, b := range boxes {
		add(b, 3)
	}
	for _, b := range moveOnly {
		add(b, 1)
	}
	m, err := trimesh.New(tris)
	if err != nil {
		t.Fatal(err)
	}
	w.SetLevel(e, m, shotMask)
	return m
}
