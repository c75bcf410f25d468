package trimesh

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/stresslevel"
)

// The brute-force queries ask every triangle through the same per-triangle
// functions as the tree (probe.test, tri.overlap), each with the query's own
// maxT rather than the best so far, and keep the earliest contact (the
// lowest index on a tie). The tree must give the same answer bit for bit:
// it may only skip triangles that cannot beat the best, and a triangle's
// answer must not depend on the bound it is asked with.

func (m *Mesh) bruteFirst(q *probe, maxT float64) (Hit, bool) {
	var best Hit
	found := false
	if !(maxT >= 0) {
		return best, false
	}
	for i := range m.tris {
		t := &m.tris[i]
		if t.mask&q.mask == 0 {
			continue
		}
		if tt, n, ok := q.test(t, maxT, maxT); ok && better(tt, t.index, &best, found) {
			best, found = Hit{T: tt, Normal: n, Tri: int(t.index)}, true
		}
	}
	return best, found
}

func (m *Mesh) bruteRaycast(o, d geom.Vec3, maxT float64, mask Mask) (Hit, bool) {
	if d == (geom.Vec3{}) {
		return Hit{}, false
	}
	var q probe
	q.setRay(o, d, mask)
	return m.bruteFirst(&q, maxT)
}

func (m *Mesh) bruteSweepSphere(c geom.Vec3, r float64, d geom.Vec3, maxT float64, mask Mask) (Hit, bool) {
	if !(r > 0) {
		return Hit{}, false
	}
	var q probe
	q.setSphere(c, r, d, mask)
	return m.bruteFirst(&q, maxT)
}

func (m *Mesh) bruteSweepCapsule(a, b geom.Vec3, r float64, d geom.Vec3, maxT float64, mask Mask) (Hit, bool) {
	if !(r > 0) {
		return Hit{}, false
	}
	var q probe
	q.setCapsule(a, b, r, d, mask)
	return m.bruteFirst(&q, maxT)
}

func (m *Mesh) bruteOverlapCapsule(a, b geom.Vec3, r float64, mask Mask, out []Contact) []Contact {
	if !(r > 0) {
		return out
	}
	start := len(out)
	for i := range m.tris {
		t := &m.tris[i]
		if t.mask&mask == 0 {
			continue
		}
		if c, ok := t.overlap(a, b, r); ok {
			out = append(out, c)
		}
	}
	slices.SortFunc(out[start:], func(p, q Contact) int { return cmp.Compare(p.Tri, q.Tri) })
	return out
}

// gen makes random geometry from a fixed seed.
type gen struct{ rng *rand.Rand }

func newGen(seed uint64) *gen { return &gen{rand.New(rand.NewPCG(seed, 0x7269))} }

func (g *gen) f(lo, hi float64) float64 { return lo + g.rng.Float64()*(hi-lo) }

func (g *gen) v(lo, hi float64) geom.Vec3 { return geom.V(g.f(lo, hi), g.f(lo, hi), g.f(lo, hi)) }

// unit returns a random unit vector.
func (g *gen) unit() geom.Vec3 {
	for {
		if v := geom.V(g.rng.NormFloat64(), g.rng.NormFloat64(), g.rng.NormFloat64()); v.LenSq() > 1e-6 {
			return v.Normalize()
		}
	}
}

// perpendicular returns a unit vector perpendicular to the unit vector n.
func (g *gen) perpendicular(n geom.Vec3) geom.Vec3 {
	for {
		if p := g.unit().Cross(n); p.LenSq() > 1e-6 {
			return p.Normalize()
		}
	}
}

// inTriangle returns a random point of the triangle.
func (g *gen) inTriangle(t Triangle) geom.Vec3 {
	u, v := g.rng.Float64(), g.rng.Float64()
	if u+v > 1 {
		u, v = 1-u, 1-v
	}
	return t.A.AddScaled(t.B.Sub(t.A), u).AddScaled(t.C.Sub(t.A), v)
}

// feature returns a point of the triangle that rays and sweeps find hard:
// a vertex, a point on an edge, or a point inside.
func (g *gen) feature(t Triangle) geom.Vec3 {
	switch g.rng.IntN(4) {
	case 0:
		return [3]geom.Vec3{t.A, t.B, t.C}[g.rng.IntN(3)]
	case 1:
		e := [3][2]geom.Vec3{{t.A, t.B}, {t.B, t.C}, {t.C, t.A}}[g.rng.IntN(3)]
		return e[0].Lerp(e[1], g.rng.Float64())
	}
	return g.inTriangle(t)
}

func (g *gen) mask() Mask { return Mask(1 + g.rng.IntN(3)) }

// soup returns n random triangles in a 20 m cube: most of ordinary sizes,
// and the awkward kinds: tiny ones, slivers, degenerate ones (collinear or
// with a repeated vertex), and exact duplicates of earlier ones.
func (g *gen) soup(n int) []Triangle {
	out := make([]Triangle, 0, n)
	for len(out) < n {
		c := g.v(-10, 10)
		var t Triangle
		switch k := g.rng.IntN(20); {
		case k < 14:
			s := g.f(0.2, 3)
			t = Triangle{A: c, B: c.AddScaled(g.unit(), s), C: c.AddScaled(g.unit(), s)}
		case k < 16:
			s := math.Pow(10, g.f(-6, -3))
			t = Triangle{A: c, B: c.AddScaled(g.unit(), s), C: c.AddScaled(g.unit(), s)}
		case k < 18:
			b := c.AddScaled(g.unit(), g.f(0.5, 3))
			off := g.perpendicular(b.Sub(c).Normalize()).Scale(math.Pow(10, g.f(-9, -5)))
			t = Triangle{A: c, B: b, C: c.Lerp(b, g.f(0, 1)).Add(off)}
		case k < 19:
			b := c.AddScaled(g.unit(), g.f(0.5, 3))
			t = Triangle{A: c, B: b, C: b}
			if g.rng.IntN(2) == 0 {
				t.C = c.Lerp(b, 0.5) // collinear, and so of zero area only if rounding agrees
			}
		default:
			if len(out) == 0 {
				continue
			}
			t = out[g.rng.IntN(len(out))]
		}
		t.Mask = g.mask()
		out = append(out, t)
	}
	return out
}

// boxMesh, gridMesh and stressLevel are the geometry of package
// stresslevel as this package's triangles.

func boxMesh(lo, hi geom.Vec3, mask Mask) []Triangle {
	return fromStress(stresslevel.Box(lo, hi, uint8(mask)))
}

func gridMesh(nx, nz int, x0, z0, cell float64, h func(i, j int) float64, mask Mask) []Triangle {
	return fromStress(stresslevel.Grid(nx, nz, x0, z0, cell, h, uint8(mask)))
}

func stressLevel(seed uint64, cells, boxes int) []Triangle {
	return fromStress(stresslevel.Level(seed, cells, boxes))
}

func fromStress(ts []stresslevel.Triangle) []Triangle {
	out := make([]Triangle, len(ts))
	for i, t := range ts {
		out[i] = Triangle{A: t.A, B: t.B, C: t.C, Mask: Mask(t.Mask)}
	}
	return out
}

func mustNew(tb testing.TB, tris []Triangle) *Mesh {
	tb.Helper()
	m, err := New(tris)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// sameHit reports whether two query results agree bit for bit.
func sameHit(h1 Hit, ok1 bool, h2 Hit, ok2 bool) bool {
	if ok1 != ok2 {
		return false
	}
	return !ok1 || (math.Float64bits(h1.T) == math.Float64bits(h2.T) && h1.Tri == h2.Tri && sameVec(h1.Normal, h2.Normal))
}

func sameVec(a, b geom.Vec3) bool {
	return math.Float64bits(a.X) == math.Float64bits(b.X) &&
		math.Float64bits(a.Y) == math.Float64bits(b.Y) &&
		math.Float64bits(a.Z) == math.Float64bits(b.Z)
}
