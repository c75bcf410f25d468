package trimesh

import (
	"math"
	"testing"

	"github.com/rewind-gg/rewind/geom"
)

// A player's capsule in these cases: radius 0.5, the segment from the
// bottom sphere's centre a to the top sphere's centre a + (0, 1, 0).
var up1 = geom.V(0, 1, 0)

func near(a, b geom.Vec3, tol float64) bool { return a.Sub(b).Len() <= tol }

// floor is the square [-5, 5]² at y = 0 as two triangles (0 and 1) sharing
// the diagonal x = z, wound with the normal up.
func floor() []Triangle {
	return []Triangle{
		{A: geom.V(-5, 0, -5), B: geom.V(5, 0, 5), C: geom.V(5, 0, -5), Mask: 1},
		{A: geom.V(-5, 0, -5), B: geom.V(-5, 0, 5), C: geom.V(5, 0, 5), Mask: 1},
	}
}

func TestCapsuleDroppedOntoAFloor(t *testing.T) {
	m := mustNew(t, floor())
	down := geom.V(0, -1, 0)
	for _, tt := range []struct {
		name    string
		x, z    float64
		wantTri int
	}{
		{"inside triangle 0", 2, -3, 0},
		{"inside triangle 1", -2, 3, 1},
		{"on the shared diagonal", 1.25, 1.25, 0}, // both touch at once: the lower index
		{"on a shared vertex", 5, 5, 0},
	} {
		a := geom.V(tt.x, 2.5, tt.z)
		h, ok := m.SweepCapsule(a, a.Add(up1), 0.5, down, 10, 1)
		if !ok || h.T != 2 || h.Normal != up1 || h.Tri != tt.wantTri {
			t.Errorf("%s: got %+v %v, want t=2 exactly, normal up, triangle %d", tt.name, h, ok, tt.wantTri)
		}
	}
	// Beside the floor's border x = 5, the bottom sphere meets the edge: its
	// centre is 0.25 beyond it, so it touches 0.5 away when sqrt(0.1875) above.
	a := geom.V(5.25, 2.5, 0)
	h, ok := m.SweepCapsule(a, a.Add(up1), 0.5, down, 10, 1)
	lift := math.Sqrt(0.1875)
	wantN := geom.V(0.25, lift, 0).Scale(2)
	if !ok || math.Abs(h.T-(2.5-lift)) > 1e-12 || !near(h.Normal, wantN, 1e-12) {
		t.Errorf("beside the border: got %+v %v, want t=%v normal %v", h, ok, 2.5-lift, wantN)
	}
	a = geom.V(5.501, 2.5, 0)
	if h, ok := m.SweepCapsule(a, a.Add(up1), 0.5, down, 10, 1); ok {
		t.Errorf("0.501 beyond the border: got %+v, want a miss", h)
	}
	// Already resting 1 cm deep: t = 0, pushed up.
	a = geom.V(1, 0.49, -2)
	if h, ok := m.SweepCapsule(a, a.Add(up1), 0.5, down, 10, 1); !ok || h.T != 0 || h.Normal != up1 {
		t.Errorf("resting 1 cm deep: got %+v %v, want t=0, normal up", h, ok)
	}
}

func TestCapsuleSlidingAlongAWall(t *testing.T) {
	// A wall in the plane x = 0, 3 m high, from z = -5 to 5, facing +x.
	wall := []Triangle{
		{A: geom.V(0, 0, -5), B: geom.V(0, 3, 5), C: geom.V(0, 0, 5), Mask: 1},
		{A: geom.V(0, 0, -5), B: geom.V(0, 3, -5), C: geom.V(0, 3, 5), Mask: 1},
	}
	m := mustNew(t, wall)
	along := geom.V(0, 0, 1)
	plusX := geom.V(1, 0, 0)
	// 1 mm off the wall, moving along it: nothing.
	a := geom.V(0.501, 0.5, -3)
	if h, ok := m.SweepCapsule(a, a.Add(up1), 0.5, along, 6, 1); ok {
		t.Errorf("sliding 1 mm off the wall: got %+v", h)
	}
	// Touching it exactly: touching counts, at t = 0, with the wall's normal.
	a = geom.V(0.5, 0.5, -3)
	if h, ok := m.SweepCapsule(a, a.Add(up1), 0.5, along, 6, 1); !ok || h.T != 0 || h.Normal != plusX {
		t.Errorf("sliding in contact: got %+v %v, want t=0, normal +x", h, ok)
	}
	// Coming at it at an angle: 0.75 m to close at 0.6 m per metre.
	a = geom.V(1.25, 0.5, -3)
	d := geom.V(-0.6, 0, 0.8)
	if h, ok := m.SweepCapsule(a, a.Add(up1), 0.5, d, 6, 1); !ok || math.Abs(h.T-1.25) > 1e-12 || h.Normal != plusX {
		t.Errorf("into the wall at an angle: got %+v %v, want t=1.25, normal +x", h, ok)
	}
	// From behind (the wall is two-sided): normal -x.
	a = geom.V(-1.25, 0.5, -3)
	if h, ok := m.SweepCapsule(a, a.Add(up1), 0.5, geom.V(0.6, 0, 0.8), 6, 1); !ok || math.Abs(h.T-1.25) > 1e-12 || h.Normal != plusX.Scale(-1) {
		t.Errorf("into the back of the wall: got %+v %v, want t=1.25, normal -x", h, ok)
	}
	// Along it past its end at z = 5, 0.3 m off: the end's edge stops it
	// where the capsule's side is 0.5 from the edge, 0.4 before the end.
	a = geom.V(0.3, 0.5, 0)
	if h, ok := m.SweepCapsule(a.Add(geom.V(0, 0, 5)), a.Add(geom.V(0, 0, 5)).Add(up1), 0.5, along, 6, 1); !ok || h.T != 0 {
		t.Errorf("overlapping the wall's end: got %+v %v, want t=0", h, ok)
	}
	a = geom.V(0.3, 0.5, 6)
	if h, ok := m.SweepCapsule(a, a.Add(up1), 0.5, geom.V(0, 0, -1), 6, 1); !ok || math.Abs(h.T-0.6) > 1e-12 || !near(h.Normal, geom.V(0.6, 0, 0.8), 1e-12) {
		t.Errorf("around the wall's end: got %+v %v, want t=0.6, normal (0.6, 0, 0.8)", h, ok)
	}
}

func TestCapsuleHittingAStep(t *testing.T) {
	// A step 0.25 m high from x = 1 to 3 on the floor; the capsule walks +x
	// standing on the floor (bottom sphere's centre at 0.5).
	tris := append(floor(), boxMesh(geom.V(1, 0, -2), geom.V(3, 0.25, 2), 1)...)
	m := mustNew(t, tris)
	a := geom.V(0, 0.5+1e-3, 0) // 1 mm above the floor
	h, ok := m.SweepCapsule(a, a.Add(up1), 0.5, geom.V(1, 0, 0), 3, 1)
	// The bottom sphere meets the step's front top edge (x = 1, y = 0.25)
	// 0.251 below its centre, so sqrt(0.25 - 0.251²) before the edge.
	dx := math.Sqrt(0.25 - 0.251*0.251)
	wantN := geom.V(-dx, 0.251, 0).Scale(2)
	if !ok || math.Abs(h.T-(1-dx)) > 1e-12 || !near(h.Normal, wantN, 1e-12) {
		t.Fatalf("step edge: got %+v %v, want t=%v normal %v", h, ok, 1-dx, wantN)
	}
	// The edge is shared by the front face's triangle 3 and the top's 8.
	if h.Tri != 3 && h.Tri != 8 {
		t.Errorf("step edge: triangle %d %+v is not a face at the edge", h.Tri, tris[h.Tri])
	}
	// A step higher than the bottom sphere's centre is a wall to it.
	m = mustNew(t, append(floor(), boxMesh(geom.V(1, 0, -2), geom.V(3, 0.75, 2), 1)...))
	if h, ok := m.SweepCapsule(a, a.Add(up1), 0.5, geom.V(1, 0, 0), 3, 1); !ok || h.T != 0.5 || h.Normal != geom.V(-1, 0, 0) {
		t.Errorf("high step: got %+v %v, want t=0.5, normal -x", h, ok)
	}
}

func TestNoTunnellingThroughAThinWall(t *testing.T) {
	// A wall 5 cm thick at x = 2, and a shape moving 3 m in one query.
	m := mustNew(t, boxMesh(geom.V(2, 0, -2), geom.V(2.05, 3, 2), 1))
	plusX, minusX := geom.V(1, 0, 0), geom.V(-1, 0, 0)
	for _, r := range []float64{0.3, 0.01} {
		a := geom.V(0, 1, 0)
		if h, ok := m.SweepCapsule(a, a.Add(up1), r, plusX, 3, 1); !ok || h.T != 2-r || h.Normal != minusX {
			t.Errorf("capsule r=%v: got %+v %v, want t=%v, normal -x", r, h, ok, 2-r)
		}
		if h, ok := m.SweepSphere(a, r, plusX, 3, 1); !ok || h.T != 2-r || h.Normal != minusX {
			t.Errorf("sphere r=%v: got %+v %v, want t=%v, normal -x", r, h, ok, 2-r)
		}
	}
	if h, ok := m.Raycast(geom.V(0, 1, 0), plusX, 3, 1); !ok || h.T != 2 || h.Normal != minusX {
		t.Errorf("ray: got %+v %v, want t=2, normal -x", h, ok)
	}
	// Lying flat, the capsule's segment crosses the wall's top edge
	// edge-first: the segment along z at height 3.2 moving down meets the
	// top face.
	a := geom.V(2.025, 3.5, -1)
	if h, ok := m.SweepCapsule(a, a.Add(geom.V(0, 0, 2)), 0.3, geom.V(0, -1, 0), 3, 1); !ok || math.Abs(h.T-0.2) > 1e-12 || h.Normal != up1 {
		t.Errorf("lying capsule onto the top: got %+v %v, want t=0.2, normal up", h, ok)
	}
	// Lying across the wall (along x) moving down onto its top edge: the
	// segment meets the 5 cm top face first.
	a = geom.V(1, 3.5, 0)
	if h, ok := m.SweepCapsule(a, a.Add(geom.V(2, 0, 0)), 0.3, geom.V(0, -1, 0), 3, 1); !ok || math.Abs(h.T-0.2) > 1e-12 || h.Normal != up1 {
		t.Errorf("crossing capsule onto the top: got %+v %v, want t=0.2, normal up", h, ok)
	}
}

// TestEdgeAgainstEdge: a capsule lying along z meets a ridge along x: the
// contact is between the two segments' interiors.
func TestEdgeAgainstEdge(t *testing.T) {
	// A ridge: two faces meeting at the edge y = 1 along x, from x = -2 to 2.
	ridge := []Triangle{
		{A: geom.V(-2, 1, 0), B: geom.V(2, 1, 0), C: geom.V(-2, 0, 1), Mask: 1},
		{A: geom.V(-2, 1, 0), B: geom.V(2, 0, -1), C: geom.V(2, 1, 0), Mask: 1},
	}
	m := mustNew(t, ridge)
	a := geom.V(0.5, 3, -1)
	h, ok := m.SweepCapsule(a, a.Add(geom.V(0, 0, 2)), 0.25, geom.V(0, -1, 0), 5, 1)
	if !ok || math.Abs(h.T-1.75) > 1e-12 || !near(h.Normal, up1, 1e-12) {
		t.Errorf("onto the ridge: got %+v %v, want t=1.75 normal up", h, ok)
	}
}

func TestOverlapCapsuleDepths(t *testing.T) {
	m := mustNew(t, floor())
	point4 := 0.4 // a variable: 0.5 - 0.4 in floating point, not Go's exact constant 0.1
	for _, tt := range []struct {
		name      string
		a, b      geom.Vec3
		depth     float64
		wantCount int
	}{
		{"resting 0.1 deep", geom.V(2, 0.4, -3), geom.V(2, 1.4, -3), 0.5 - point4, 1},
		{"piercing 0.25 below", geom.V(2, -0.25, -3), geom.V(2, 1, -3), 0.75, 1},
		{"lying in the plane over the diagonal", geom.V(-1, 0, 1.5), geom.V(1.5, 0, -1), 0.5, 2},
		{"just touching", geom.V(2, 0.5, -3), geom.V(2, 1.5, -3), 0, 0},
	} {
		got := m.OverlapCapsule(tt.a, tt.b, 0.5, 1, nil)
		if len(got) != tt.wantCount {
			t.Errorf("%s: got %+v, want %d contacts", tt.name, got, tt.wantCount)
			continue
		}
		for i, c := range got {
			if c.Tri != i || c.Depth != tt.depth || c.Normal != up1 {
				t.Errorf("%s: contact %d is %+v, want triangle %d, depth %v, normal up", tt.name, i, c, i, tt.depth)
			}
		}
	}
	// Mostly below: pushed down, by the depth below plus r.
	if got := m.OverlapCapsule(geom.V(2, -1, -3), geom.V(2, 0.25, -3), 0.5, 1, nil); len(got) != 1 || got[0].Depth != 0.75 || got[0].Normal != up1.Scale(-1) {
		t.Errorf("piercing mostly below: got %+v, want depth 0.75, normal down", got)
	}
	// Appends to what out holds, without reallocating when it has room.
	out := make([]Contact, 1, 8)
	out[0].Tri = 99
	got := m.OverlapCapsule(geom.V(2, 0.4, -3), geom.V(2, 1.4, -3), 0.5, 1, out)
	if len(got) != 2 || got[0].Tri != 99 || &got[0] != &out[0] {
		t.Errorf("append: got %+v", got)
	}
}

func TestSweepStartingInside(t *testing.T) {
	m := mustNew(t, floor())
	// A sphere 0.1 above the floor, radius 0.5, moving anywhere: t = 0,
	// pushed up; one exactly on the floor: the front (up).
	for _, c := range []geom.Vec3{geom.V(1, 0.1, -2), geom.V(1, 0, -2)} {
		for _, d := range []geom.Vec3{geom.V(0, -1, 0), geom.V(0, 1, 0), geom.V(1, 0, 0)} {
			if h, ok := m.SweepSphere(c, 0.5, d, 3, 1); !ok || h.T != 0 || h.Normal != up1 || h.Tri != 0 {
				t.Errorf("sphere at %v moving %v: got %+v %v, want t=0, normal up, triangle 0", c, d, h, ok)
			}
		}
	}
	// A long capsule through the floor, its ends and sides far from every
	// edge: t = 0, pushed the shorter way (up: 1 m of it is below, 1.5 m
	// above).
	for _, d := range []geom.Vec3{geom.V(0, -1, 0), geom.V(0, 1, 0), geom.V(1, 0, 0)} {
		if h, ok := m.SweepCapsule(geom.V(1, -1, -2), geom.V(1, 1.5, -2), 0.25, d, 3, 1); !ok || h.T != 0 || h.Normal != up1 || h.Tri != 0 {
			t.Errorf("capsule through the floor moving %v: got %+v %v, want t=0, normal up, triangle 0", d, h, ok)
		}
	}
	// A sphere of radius 0.6 beside the floor's corner (5, 0, -5), 0.5 from
	// it diagonally: the closest-point direction.
	c := geom.V(5.3, 0, -5.4)
	want := geom.V(0.6, 0, -0.8)
	if h, ok := m.SweepSphere(c, 0.6, geom.V(0, 1, 0), 3, 1); !ok || h.T != 0 || !near(h.Normal, want, 1e-12) {
		t.Errorf("sphere by the corner: got %+v %v, want t=0 normal %v", h, ok, want)
	}
}
