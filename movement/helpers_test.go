package movement

import (
	"math"
	"testing"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/stresslevel"
	"github.com/rewind-gg/rewind/trimesh"
)

// The tests' levels block movement with mask bit 1; bit 2 is a shot-only
// surface the controller must ignore.
const (
	solid    trimesh.Mask = 1
	shotOnly trimesh.Mask = 2
)

// world builds a mesh of parts.
func world(tb testing.TB, parts ...[]stresslevel.Triangle) *trimesh.Mesh {
	tb.Helper()
	var tris []trimesh.Triangle
	for _, p := range parts {
		for _, t := range p {
			tris = append(tris, trimesh.Triangle{A: t.A, B: t.B, C: t.C, Mask: trimesh.Mask(t.Mask)})
		}
	}
	m, err := trimesh.New(tris)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// box is a solid box from lo to hi.
func box(lo, hi geom.Vec3) []stresslevel.Triangle { return stresslevel.Box(lo, hi, uint8(solid)) }

// floor is a slab 1 m thick whose top is y = 0, 2·half across.
func floor(half float64) []stresslevel.Triangle {
	return box(geom.V(-half, -1, -half), geom.V(half, 0, half))
}

// wedge is a solid ramp across z0..z1 whose slope rises from height 0 at
// x = x0 to height h at x = x1 (either side of x0), with a vertical back
// at x1: its slope is atan(h/|x1−x0|).
func wedge(x0, x1, z0, z1, h float64) []stresslevel.Triangle {
	a0, a1 := geom.V(x0, 0, z0), geom.V(x0, 0, z1)
	b0, b1 := geom.V(x1, 0, z0), geom.V(x1, 0, z1)
	t0, t1 := geom.V(x1, h, z0), geom.V(x1, h, z1)
	tri := func(a, b, c geom.Vec3) stresslevel.Triangle {
		return stresslevel.Triangle{A: a, B: b, C: c, Mask: uint8(solid)}
	}
	return []stresslevel.Triangle{
		tri(a0, a1, t1), tri(a0, t1, t0), // the slope
		tri(b0, t0, t1), tri(b0, t1, b1), // the back
		tri(a0, t0, b0), tri(a1, b1, t1), // the sides
		tri(a0, b0, b1), tri(a0, b1, a1), // the bottom
	}
}

// stairs are n steps of rise × tread going up along +x from x0, across
// z0..z1, each a solid box down to y = 0.
func stairs(x0, z0, z1, rise, tread float64, n int) []stresslevel.Triangle {
	var out []stresslevel.Triangle
	for i := range n {
		x := x0 + float64(i)*tread
		out = append(out, box(geom.V(x, 0, z0), geom.V(x+tread, float64(i+1)*rise, z1))...)
	}
	return out
}

// player is a character standing at pos with the default tuning.
func player(pos geom.Vec3) State { return State{Pos: pos} }

// walking is full stick forward at yaw (0 walks along +Z, π/2 along +X).
func walking(yaw float64) Input { return Input{MoveZ: 1, Yaw: yaw} }

// east is the yaw that walks along +X.
const east = math.Pi / 2

// settle runs n ticks of in and returns the state.
func settle(c *Character, s State, in Input, dt float64, m *trimesh.Mesh, n int) State {
	for range n {
		Move(c, &s, in, dt, m, solid)
	}
	return s
}

// clearance returns how far the capsule of s is from the nearest triangle
// of m that blocks movement, up to limit: limit if none is closer.
func clearance(c *Character, s *State, m *trimesh.Mesh, limit float64) float64 {
	cp := c.Capsule(s)
	var buf [64]trimesh.Contact
	dist := limit
	for _, ct := range m.OverlapCapsule(cp.A, cp.B, c.Radius+limit, solid, buf[:0]) {
		dist = min(dist, limit-ct.Depth)
	}
	return dist
}

// checkClear fails if the capsule of s is inside m: closer to it than its
// radius.
func checkClear(tb testing.TB, c *Character, s *State, m *trimesh.Mesh, what string) {
	tb.Helper()
	if d := clearance(c, s, m, 1); d < 0 {
		tb.Fatalf("%s: the capsule at %v is %.3g m inside the level", what, s.Pos, -d)
	}
}

func near(a, b geom.Vec3, tol float64) bool { return a.Sub(b).Len() <= tol }
