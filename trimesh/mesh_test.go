package trimesh

import (
	"math"
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/geom"
)

// queryGen makes queries against a given set of triangles: random ones and
// the hard kinds, aimed at vertices and edges, grazing, starting on a
// surface or touching at t = 0.
type queryGen struct {
	*gen
	tris   []Triangle
	bounds geom.AABB
}

// target returns a random non-degenerate triangle and its unit normal.
func (g *queryGen) target() (Triangle, geom.Vec3) {
	for {
		t := g.tris[g.rng.IntN(len(g.tris))]
		if n := t.B.Sub(t.A).Cross(t.C.Sub(t.A)); n.Len() > 0 {
			return t, n.Normalize()
		}
	}
}

func (g *queryGen) anywhere() geom.Vec3 {
	b := g.bounds.Expand(3)
	return geom.V(g.f(b.Min.X, b.Max.X), g.f(b.Min.Y, b.Max.Y), g.f(b.Min.Z, b.Max.Z))
}

func (g *queryGen) maxT() float64 {
	switch g.rng.IntN(8) {
	case 0:
		return math.Inf(1)
	case 1:
		return 0
	}
	return g.f(0, 30)
}

func (g *queryGen) queryMask() Mask {
	switch g.rng.IntN(10) {
	case 0:
		return 0
	case 1, 2:
		return 0xff
	}
	return g.mask()
}

// axis returns ±x, ±y or ±z.
func (g *queryGen) axis() geom.Vec3 {
	v := [3]float64{}
	v[g.rng.IntN(3)] = float64(1 - 2*g.rng.IntN(2))
	return geom.FromArray(v)
}

// motion returns a start point and direction for a shape whose reference
// point should meet p (for the hard kinds) or anything (random).
func (g *queryGen) motion() (geom.Vec3, geom.Vec3) {
	t, n := g.target()
	p := g.feature(t)
	switch g.rng.IntN(7) {
	case 0: // random
		return g.anywhere(), g.unit()
	case 1: // aimed at a feature from anywhere
		o := g.anywhere()
		return o, p.Sub(o).Normalize()
	case 2: // along an axis at a feature
		d := g.axis()
		return p.AddScaled(d, -g.f(0, 10)), d
	case 3: // grazing: nearly in the triangle's plane
		d := g.perpendicular(n).AddScaled(n, math.Copysign(math.Pow(10, g.f(-12, -2)), g.f(-1, 1))).Normalize()
		return p.AddScaled(d, -g.f(0, 10)), d
	case 4: // starting on the surface
		return p, g.unit()
	case 5: // exactly in the plane
		d := g.perpendicular(n)
		return p.AddScaled(d, -g.f(0, 5)), d
	}
	o := p.AddScaled(g.unit(), g.f(0.1, 5)) // aimed from nearby
	return o, p.Sub(o).Normalize()
}

func meshesForTests() map[string][]Triangle {
	out := map[string][]Triangle{
		"stress":  stressLevel(3, 24, 40),
		"closed":  append(boxMesh(geom.V(-1, -1, -1), geom.V(1, 1, 1), 3), boxMesh(geom.V(2, 0, 0), geom.V(2.05, 3, 4), 1)...),
		"grid":    gridMesh(12, 12, -3, -3, 0.5, func(i, j int) float64 { return float64((i*7+j*3)%5) * 0.125 }, 3),
		"single":  newGen(9).soup(1),
		"soup10":  newGen(10).soup(10),
		"soup100": newGen(11).soup(100),
	}
	if !testing.Short() {
		out["soup1000"] = newGen(12).soup(1000)
		out["soup4000"] = newGen(13).soup(4000)
	}
	return out
}

// TestTreeMatchesBruteForce checks every query against the loop over all
// triangles on random meshes: the same hit or miss, the same t bit for bit,
// the same triangle and the same normal.
func TestTreeMatchesBruteForce(t *testing.T) {
	t.Parallel()
	for name, tris := range meshesForTests() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := mustNew(t, tris)
			g := &queryGen{gen: newGen(uint64(len(tris))), tris: tris, bounds: m.Bounds()}
			const n = 1500
			var hits, zero [3]int
			for i := range n {
				o, d := g.motion()
				maxT, mask := g.maxT(), g.queryMask()
				// Ray.
				h1, ok1 := m.Raycast(o, d, maxT, mask)
				h2, ok2 := m.bruteRaycast(o, d, maxT, mask)
				if !sameHit(h1, ok1, h2, ok2) {
					t.Fatalf("ray %d (o=%v d=%v maxT=%v mask=%d): tree %+v %v, brute %+v %v", i, o, d, maxT, mask, h1, ok1, h2, ok2)
				}
				count(&hits[0], &zero[0], h1, ok1)
				checkNormal(t, "ray", i, h1, ok1)
				// Sphere: sometimes started touching the target's plane.
				r := g.f(0.01, 1)
				c := o
				if g.rng.IntN(4) == 0 {
					tr, nrm := g.target()
					c = g.inTriangle(tr).AddScaled(nrm, r*float64(1-2*g.rng.IntN(2)))
				}
				h1, ok1 = m.SweepSphere(c, r, d, maxT, mask)
				h2, ok2 = m.bruteSweepSphere(c, r, d, maxT, mask)
				if !sameHit(h1, ok1, h2, ok2) {
					t.Fatalf("sphere %d (c=%v r=%v d=%v maxT=%v mask=%d): tree %+v %v, brute %+v %v", i, c, r, d, maxT, mask, h1, ok1, h2, ok2)
				}
				count(&hits[1], &zero[1], h1, ok1)
				checkNormal(t, "sphere", i, h1, ok1)
				// Capsule: vertical, random, parallel to an edge, or a point.
				a, b := g.capsule(o, r)
				h1, ok1 = m.SweepCapsule(a, b, r, d, maxT, mask)
				h2, ok2 = m.bruteSweepCapsule(a, b, r, d, maxT, mask)
				if !sameHit(h1, ok1, h2, ok2) {
					t.Fatalf("capsule %d (a=%v b=%v r=%v d=%v maxT=%v mask=%d): tree %+v %v, brute %+v %v", i, a, b, r, d, maxT, mask, h1, ok1, h2, ok2)
				}
				count(&hits[2], &zero[2], h1, ok1)
				checkNormal(t, "capsule", i, h1, ok1)
				// Overlap, at the capsule's start.
				c1 := m.OverlapCapsule(a, b, r, mask, nil)
				c2 := m.bruteOverlapCapsule(a, b, r, mask, nil)
				if !sameContacts(c1, c2) {
					t.Fatalf("overlap %d (a=%v b=%v r=%v mask=%d): tree %+v, brute %+v", i, a, b, r, mask, c1, c2)
				}
			}
			// The queries must exercise the tree: many hits, some at t = 0.
			for k, kind := range []string{"ray", "sphere", "capsule"} {
				if hits[k] < n/5 || (len(tris) > 1 && zero[k] == 0) {
					t.Errorf("%s: only %d hits of %d, %d at t=0", kind, hits[k], n, zero[k])
				}
			}
		})
	}
}

// capsule returns a segment through or near o: vertical, random, parallel
// to a target triangle's edge, or a point.
func (g *queryGen) capsule(o geom.Vec3, r float64) (geom.Vec3, geom.Vec3) {
	switch g.rng.IntN(5) {
	case 0:
		return o, o.Add(geom.V(0, g.f(0, 2), 0))
	case 1:
		return o, o.AddScaled(g.unit(), g.f(0, 2))
	case 2:
		t, n := g.target()
		e := t.B.Sub(t.A).Normalize()
		a := t.A.Lerp(t.B, g.f(-0.5, 1)).AddScaled(n, r*g.f(0.5, 3))
		return a, a.AddScaled(e, g.f(0.1, 2))
	case 3:
		return o, o
	}
	t, n := g.target() // starting through or touching the triangle
	p := g.inTriangle(t)
	return p.AddScaled(n, g.f(-1, 1)), p.AddScaled(n, g.f(-1, 1)+r)
}

func count(hits, zero *int, h Hit, ok bool) {
	if ok {
		*hits++
		if h.T == 0 {
			*zero++
		}
	}
}

func checkNormal(t *testing.T, kind string, i int, h Hit, ok bool) {
	t.Helper()
	if ok && math.Abs(h.Normal.Len()-1) > 1e-12 {
		t.Fatalf("%s %d: normal %v is not unit", kind, i, h.Normal)
	}
}

func sameContacts(a, b []Contact) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Tri != b[i].Tri || math.Float64bits(a[i].Depth) != math.Float64bits(b[i].Depth) || !sameVec(a[i].Normal, b[i].Normal) {
			return false
		}
	}
	return true
}

func TestNewRefusesBadVertices(t *testing.T) {
	good := Triangle{A: geom.V(0, 0, 0), B: geom.V(1, 0, 0), C: geom.V(0, 0, 1), Mask: 1}
	for _, tt := range []struct {
		name  string
		bad   func(*Triangle)
		index int
		want  string
	}{
		{"NaN", func(t *Triangle) { t.B.Y = math.NaN() }, 3, "triangle 3: vertex B is not finite"},
		{"+Inf", func(t *Triangle) { t.C.Z = math.Inf(1) }, 0, "triangle 0: vertex C is not finite"},
		{"-Inf", func(t *Triangle) { t.A.X = math.Inf(-1) }, 6, "triangle 6: vertex A is not finite"},
		{"far", func(t *Triangle) { t.A.X = -2e6 }, 2, "triangle 2: vertex A"},
	} {
		tris := make([]Triangle, 7)
		for i := range tris {
			tris[i] = good
		}
		tt.bad(&tris[tt.index])
		m, err := New(tris)
		if err == nil || !strings.Contains(err.Error(), tt.want) || m != nil {
			t.Errorf("%s: got %v, %v; want an error containing %q", tt.name, m, err, tt.want)
		}
	}
	// At the limit is fine.
	edge := good
	edge.A.X, edge.B.X = -MaxCoord, MaxCoord
	if _, err := New([]Triangle{edge}); err != nil {
		t.Errorf("vertex at ±MaxCoord: %v", err)
	}
}

func TestDegenerateTrianglesAreLeftOut(t *testing.T) {
	floor := Triangle{A: geom.V(-1, 0, -1), B: geom.V(-1, 0, 1), C: geom.V(1, 0, 0), Mask: 1}
	tris := []Triangle{
		{A: geom.V(0, 1, 0), B: geom.V(0, 1, 0), C: geom.V(0, 1, 0), Mask: 1},    // a point
		{A: geom.V(-1, 2, 0), B: geom.V(1, 2, 0), C: geom.V(0.5, 2, 0), Mask: 1}, // collinear
		{A: geom.V(-1, 3, 0), B: geom.V(1, 3, 0), C: geom.V(-1, 3, 0), Mask: 1},  // repeated vertex
		floor, // index 3
		{A: geom.V(0, 50, 0), B: geom.V(0, 60, 0), C: geom.V(0, 70, 0), Mask: 1},        // collinear, far up
		{A: geom.V(0, 1e-170, 0), B: geom.V(1e-170, 0, 0), C: geom.V(0, 0, 0), Mask: 1}, // area underflows
	}
	// Collinear, but rounded off the line: the cross product is noise, not 0.
	a, b := geom.V(0.1, 0.2, 0.3), geom.V(0.7, 1.3, 2.9)
	noisy := Triangle{A: a, B: b, C: a.Lerp(b, 1.0/3), Mask: 1}
	if noisy.B.Sub(noisy.A).Cross(noisy.C.Sub(noisy.A)) == (geom.Vec3{}) {
		t.Fatal("the noisy collinear triangle's cross product is 0: pick other vertices")
	}
	tris = append(tris, noisy)
	m := mustNew(t, tris)
	if m.Len() != 7 || m.Degenerate() != 6 {
		t.Fatalf("Len %d, Degenerate %d; want 7, 6", m.Len(), m.Degenerate())
	}
	if want := (geom.AABB{Min: geom.V(-1, 0, -1), Max: geom.V(1, 0, 1)}); m.Bounds() != want {
		t.Errorf("Bounds %v, want %v (the degenerate triangles left out)", m.Bounds(), want)
	}
	// Shapes passing through the degenerate triangles reach the floor.
	if h, ok := m.Raycast(geom.V(0, 10, 0), geom.V(0, -1, 0), 100, 1); !ok || h.Tri != 3 || h.T != 10 {
		t.Errorf("ray down: %+v %v, want the floor (3) at 10", h, ok)
	}
	if h, ok := m.SweepSphere(geom.V(0, 10, 0), 0.5, geom.V(0, -1, 0), 100, 1); !ok || h.Tri != 3 || h.T != 9.5 {
		t.Errorf("sphere down: %+v %v, want the floor (3) at 9.5", h, ok)
	}
	if h, ok := m.SweepCapsule(geom.V(0, 10, 0), geom.V(0, 80, 0), 0.5, geom.V(0, -1, 0), 100, 1); !ok || h.Tri != 3 || h.T != 9.5 {
		t.Errorf("capsule down: %+v %v, want the floor (3) at 9.5", h, ok)
	}
	if c := m.OverlapCapsule(geom.V(0, 0.25, 0), geom.V(0, 80, 0), 0.5, 1, nil); len(c) != 1 || c[0].Tri != 3 || c[0].Depth != 0.25 {
		t.Errorf("overlap: %+v, want the floor alone, 0.25 deep", c)
	}
}

func TestEmptyMesh(t *testing.T) {
	for _, tris := range [][]Triangle{nil, {{A: geom.V(1, 1, 1), B: geom.V(1, 1, 1), C: geom.V(2, 2, 2), Mask: 1}}} {
		m := mustNew(t, tris)
		if m.Bounds() != (geom.AABB{}) || m.Len() != len(tris) {
			t.Errorf("%d triangles: Bounds %v, Len %d", len(tris), m.Bounds(), m.Len())
		}
		if _, ok := m.Raycast(geom.V(0, 0, 0), geom.V(1, 0, 0), 10, 0xff); ok {
			t.Error("ray hit an empty mesh")
		}
		if _, ok := m.SweepSphere(geom.V(1, 1, 1), 1, geom.V(1, 0, 0), 10, 0xff); ok {
			t.Error("sphere hit an empty mesh")
		}
		if _, ok := m.SweepCapsule(geom.V(1, 1, 1), geom.V(1, 2, 1), 1, geom.V(1, 0, 0), 10, 0xff); ok {
			t.Error("capsule hit an empty mesh")
		}
		if c := m.OverlapCapsule(geom.V(1, 1, 1), geom.V(1, 2, 1), 1, 0xff, nil); len(c) != 0 {
			t.Errorf("overlap in an empty mesh: %v", c)
		}
	}
}

// TestTiesGoToTheLowestIndex puts two identical floors at indices 2 and 5
// (and a wall elsewhere): every query reports 2, or 5 when the mask leaves
// 2 out.
func TestTiesGoToTheLowestIndex(t *testing.T) {
	floor := func(mask Mask) Triangle {
		return Triangle{A: geom.V(-4, 0, -4), B: geom.V(-4, 0, 4), C: geom.V(4, 0, 0), Mask: mask}
	}
	wall := Triangle{A: geom.V(9, 0, 0), B: geom.V(9, 5, 0), C: geom.V(9, 0, 5), Mask: 3}
	tris := []Triangle{wall, wall, floor(1), wall, wall, floor(3)}
	tris[0].A.X, tris[1].A.X, tris[3].A.X, tris[4].A.X = 10, 11, 12, 13
	m := mustNew(t, tris)
	for _, tt := range []struct {
		mask Mask
		want int
	}{{1, 2}, {3, 2}, {2, 5}} {
		down := geom.V(0, -1, 0)
		if h, ok := m.Raycast(geom.V(0.5, 3, 0.25), down, 10, tt.mask); !ok || h.Tri != tt.want || h.T != 3 {
			t.Errorf("mask %d: ray %+v %v, want triangle %d at 3", tt.mask, h, ok, tt.want)
		}
		if h, ok := m.SweepSphere(geom.V(0.5, 3, 0.25), 0.5, down, 10, tt.mask); !ok || h.Tri != tt.want || h.T != 2.5 {
			t.Errorf("mask %d: sphere %+v %v, want triangle %d at 2.5", tt.mask, h, ok, tt.want)
		}
		if h, ok := m.SweepCapsule(geom.V(0.5, 3, 0.25), geom.V(0.5, 4, 0.25), 0.5, down, 10, tt.mask); !ok || h.Tri != tt.want || h.T != 2.5 {
			t.Errorf("mask %d: capsule %+v %v, want triangle %d at 2.5", tt.mask, h, ok, tt.want)
		}
	}
	if _, ok := m.Raycast(geom.V(0.5, 3, 0.25), geom.V(0, -1, 0), 10, 4); ok {
		t.Error("mask 4 matches no triangle, but the ray hit")
	}
}

func TestQueriesDoNotAllocate(t *testing.T) {
	m := mustNew(t, stressLevel(1, 32, 40))
	g := newGen(5)
	out := make([]Contact, 0, 64)
	type q struct{ o, d geom.Vec3 }
	qs := make([]q, 64)
	for i := range qs {
		qs[i] = q{geom.V(g.f(-16, 16), g.f(0, 5), g.f(-16, 16)), g.unit()}
	}
	i := 0
	for name, f := range map[string]func(){
		"Raycast":     func() { m.Raycast(qs[i%64].o, qs[i%64].d, 50, 2) },
		"SweepSphere": func() { m.SweepSphere(qs[i%64].o, 0.3, qs[i%64].d, 5, 1) },
		"SweepCapsule": func() {
			m.SweepCapsule(qs[i%64].o, qs[i%64].o.Add(geom.V(0, 1, 0)), 0.4, qs[i%64].d, 5, 1)
		},
		"OverlapCapsule": func() {
			out = m.OverlapCapsule(qs[i%64].o, qs[i%64].o.Add(geom.V(0, 1, 0)), 0.4, 1, out[:0])
		},
	} {
		if a := testing.AllocsPerRun(200, func() { f(); i++ }); a != 0 {
			t.Errorf("%s: %v allocs/op", name, a)
		}
	}
}

// Short queries over a level, as a room's projectiles make them: the
// column grid skips the tree for most of them, and never changes an
// answer.
func TestColumnsSkipOnlyEmptyAir(t *testing.T) {
	t.Parallel()
	m := mustNew(t, stressLevel(2, 32, 40))
	g := newGen(41)
	b := m.Bounds()
	var skipped, hits int
	const n = 4000
	for i := range n {
		o := geom.V(g.f(b.Min.X-2, b.Max.X+2), g.f(-1, 7), g.f(b.Min.Z-2, b.Max.Z+2))
		d, maxT, r := g.unit(), g.f(0, 3), g.f(0.01, 0.5)
		mask := Mask(1 + g.rng.IntN(3))
		if m.clear(o, o, r, d, maxT, mask) {
			skipped++
		}
		h1, ok1 := m.SweepSphere(o, r, d, maxT, mask)
		h2, ok2 := m.bruteSweepSphere(o, r, d, maxT, mask)
		if !sameHit(h1, ok1, h2, ok2) {
			t.Fatalf("sphere %d (c=%v r=%v d=%v maxT=%v mask=%d): tree %+v %v, brute %+v %v", i, o, r, d, maxT, mask, h1, ok1, h2, ok2)
		}
		if ok1 {
			hits++
		}
		h1, ok1 = m.Raycast(o, d, maxT, mask)
		h2, ok2 = m.bruteRaycast(o, d, maxT, mask)
		if !sameHit(h1, ok1, h2, ok2) {
			t.Fatalf("ray %d (o=%v d=%v maxT=%v mask=%d): tree %+v %v, brute %+v %v", i, o, d, maxT, mask, h1, ok1, h2, ok2)
		}
	}
	if skipped < n/4 || hits < n/20 {
		t.Errorf("%d of %d sweeps skipped the tree, %d hit: the test does not exercise both", skipped, n, hits)
	}
}
