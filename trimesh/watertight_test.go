package trimesh

import (
	"math"
	"testing"

	"github.com/rewind-gg/rewind/geom"
)

// mtHits reports whether any triangle passes Möller–Trumbore's test for the
// ray (boundaries included): the usual test, which is not watertight.
func mtHits(o, d geom.Vec3, tris []Triangle) bool {
	for _, t := range tris {
		tt, u, v, _ := refRay(o, d, t)
		if u >= 0 && v >= 0 && u+v <= 1 && tt >= 0 {
			return true
		}
	}
	return false
}

// aimAt casts rays from the origins at each target and checks that every
// ray hits, at the target. It returns how many rays Möller–Trumbore lets
// through.
func aimAt(t *testing.T, m *Mesh, tris []Triangle, o, p geom.Vec3) (mtLeak bool) {
	t.Helper()
	d := p.Sub(o).Normalize()
	want := p.Sub(o).Len()
	if h, ok := m.Raycast(o, d, 100, 1); !ok || math.Abs(h.T-want) > 1e-9 {
		t.Fatalf("ray from %v at %v (d=%v): got %+v %v, want a hit at %v", o, p, d, h, ok, want)
	}
	return !mtHits(o, d, tris)
}

// onSegments returns the points a + k/8·(b − a), k = 0..8, of each pair.
func onSegments(pairs [][2]geom.Vec3) []geom.Vec3 {
	var out []geom.Vec3
	for _, p := range pairs {
		for k := range 9 {
			out = append(out, p[0].Lerp(p[1], float64(k)/8))
		}
	}
	return out
}

// TestRaysDoNotLeakThroughABox casts rays at the vertices, edges and face
// diagonals of a closed box, from inside it (every one must leave through
// the aimed point) and from outside through the aimed point toward the
// inside (every one must enter there).
func TestRaysDoNotLeakThroughABox(t *testing.T) {
	tris := boxMesh(geom.V(-1, -1, -1), geom.V(1, 1, 1), 1)
	m := mustNew(t, tris)
	var pairs [][2]geom.Vec3
	for _, tr := range tris { // every edge, the diagonals included
		pairs = append(pairs, [2]geom.Vec3{tr.A, tr.B}, [2]geom.Vec3{tr.B, tr.C}, [2]geom.Vec3{tr.C, tr.A})
	}
	g := newGen(31)
	rays, leaks := 0, 0
	for _, p := range onSegments(pairs) {
		for range 30 {
			o := g.v(-0.999, 0.999)
			if aimAt(t, m, tris, o, p) {
				leaks++
			}
			o = p.AddScaled(p.Sub(g.v(-0.5, 0.5)).Normalize(), g.f(0.1, 5)) // outside, aimed inward through p
			if aimAt(t, m, tris, o, p) {
				leaks++
			}
			rays += 2
		}
	}
	t.Logf("%d rays, all hit; Möller–Trumbore lets %d through", rays, leaks)
	if leaks == 0 {
		t.Error("no ray found the cracks a test that is not watertight leaves: the rays do not test watertightness")
	}
}

// TestRaysDoNotLeakThroughAGrid casts rays through the vertices and edges of
// a subdivided heightfield, from above and from below, and straight along
// the vertical. The terrain's slopes are at most 1.5 and the rays are
// within 30° of the vertical (a slope of at least 1.73), so each ray crosses
// the surface at the aimed point and nowhere before it.
func TestRaysDoNotLeakThroughAGrid(t *testing.T) {
	h := func(i, j int) float64 { return float64((i*5+j*3)%7) / 8 }
	tris := gridMesh(16, 16, -4, -4, 0.5, h, 1)
	m := mustNew(t, tris)
	var pairs [][2]geom.Vec3
	for _, tr := range tris {
		pairs = append(pairs, [2]geom.Vec3{tr.A, tr.B}, [2]geom.Vec3{tr.B, tr.C}, [2]geom.Vec3{tr.C, tr.A})
	}
	g := newGen(32)
	rays, leaks := 0, 0
	for _, p := range onSegments(pairs) {
		if math.Abs(p.X) == 4 || math.Abs(p.Z) == 4 {
			continue // the open border is no crack
		}
		for range 4 {
			var u geom.Vec3
			for u.Y < math.Sqrt(3)/2 {
				u = g.unit()
				u.Y = math.Abs(u.Y)
			}
			for _, side := range []float64{1, -1} {
				if aimAt(t, m, tris, p.AddScaled(u, side*g.f(0.5, 5)), p) {
					leaks++
				}
				rays++
			}
		}
		// Straight down and up: the shear is exact, so the edge functions
		// are exactly 0 on the edges.
		for _, d := range []geom.Vec3{geom.V(0, -1, 0), geom.V(0, 1, 0)} {
			o := p.AddScaled(d, -3)
			if hit, ok := m.Raycast(o, d, 100, 1); !ok || hit.T != 3 {
				t.Fatalf("ray from %v along %v: got %+v %v, want a hit at 3", o, d, hit, ok)
			}
			rays++
		}
	}
	t.Logf("%d rays, all hit; Möller–Trumbore lets %d through", rays, leaks)
	if leaks == 0 {
		t.Error("no ray found the cracks a test that is not watertight leaves: the rays do not test watertightness")
	}
}
