package trimesh

import (
	"math"
	"testing"

	"github.com/rewind-gg/rewind/geom"
)

// The references below are written apart from the package's functions and
// on other principles: distances by projection and clamping and by
// golden-section search over the segment, times of impact by searching the
// distance along the motion, and rays by Möller–Trumbore.

// refOnSegment returns the point of the segment a–b nearest p.
func refOnSegment(p, a, b geom.Vec3) geom.Vec3 {
	ab := b.Sub(a)
	s := p.Sub(a).Dot(ab) / ab.LenSq()
	return a.AddScaled(ab, math.Max(0, math.Min(1, s)))
}

// refClosest returns the point of the triangle nearest p: the projection on
// the plane when its barycentric coordinates (from sub-areas) are all
// non-negative, else the nearest of the edges' nearest points.
func refClosest(p geom.Vec3, t Triangle) geom.Vec3 {
	n := t.B.Sub(t.A).Cross(t.C.Sub(t.A))
	nn := n.LenSq()
	q := p.Sub(n.Scale(n.Dot(p.Sub(t.A)) / nn))
	u := t.C.Sub(t.B).Cross(q.Sub(t.B)).Dot(n) / nn
	v := t.A.Sub(t.C).Cross(q.Sub(t.C)).Dot(n) / nn
	if u >= 0 && v >= 0 && 1-u-v >= 0 {
		return q
	}
	best := refOnSegment(p, t.A, t.B)
	for _, c := range []geom.Vec3{refOnSegment(p, t.B, t.C), refOnSegment(p, t.C, t.A)} {
		if p.Sub(c).LenSq() < p.Sub(best).LenSq() {
			best = c
		}
	}
	return best
}

// golden returns where the convex function f is least on [lo, hi].
func golden(f func(float64) float64, lo, hi float64, iters int) float64 {
	const g = 0.6180339887498949
	x1, x2 := hi-g*(hi-lo), lo+g*(hi-lo)
	f1, f2 := f(x1), f(x2)
	for range iters {
		if f1 <= f2 {
			hi, x2, f2 = x2, x1, f1
			x1 = hi - g*(hi-lo)
			f1 = f(x1)
		} else {
			lo, x1, f1 = x1, x2, f2
			x2 = lo + g*(hi-lo)
			f2 = f(x2)
		}
	}
	best, fb := x1, f1
	for _, x := range []float64{x2, lo, hi} {
		if fx := f(x); fx < fb {
			best, fb = x, fx
		}
	}
	return best
}

// refSegment returns the distance between the segment p–q and the triangle
// and the closest points on each, by golden-section search over the
// segment (the distance to a convex set is convex along a segment).
func refSegment(p, q geom.Vec3, t Triangle) (float64, geom.Vec3, geom.Vec3) {
	dist := func(s float64) float64 {
		x := p.Lerp(q, s)
		return x.Sub(refClosest(x, t)).Len()
	}
	s := 0.0
	if p != q {
		s = golden(dist, 0, 1, 70)
	}
	x := p.Lerp(q, s)
	c := refClosest(x, t)
	return x.Sub(c).Len(), x, c
}

// refTOI returns the smallest t in [0, maxT] with dist(t) ≤ r, for a dist
// convex in t: its minimum by golden-section search, then bisection before
// it. It skips (skip true) the cases a tiny error decides: a closest
// approach within 1e-7 of r, or a contact where the distance falls slower
// than 1e-3 per metre.
func refTOI(dist func(float64) float64, r, maxT float64) (t float64, hit, skip bool) {
	if dist(0) <= r {
		return 0, true, false
	}
	tm := golden(dist, 0, maxT, 90)
	fm := dist(tm)
	if math.Abs(fm-r) < 1e-7 {
		return 0, false, true
	}
	if fm > r {
		return 0, false, false
	}
	lo, hi := 0.0, tm
	for range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if dist(mid) <= r {
			hi = mid
		} else {
			lo = mid
		}
	}
	const h = 1e-6
	if hi < h || (dist(hi-h)-dist(hi))/h < 1e-3 {
		return 0, false, true
	}
	return hi, true, false
}

// refTriangle returns a random triangle: ordinary, small, or a sliver.
func (g *gen) refTriangle() Triangle {
	c := g.v(-2, 2)
	switch g.rng.IntN(6) {
	case 0:
		s := g.f(0.001, 0.01)
		return Triangle{A: c, B: c.AddScaled(g.unit(), s), C: c.AddScaled(g.unit(), s), Mask: 1}
	case 1:
		b := c.AddScaled(g.unit(), g.f(0.5, 3))
		off := g.perpendicular(b.Sub(c).Normalize()).Scale(g.f(1e-4, 1e-2))
		return Triangle{A: c, B: b, C: c.Lerp(b, g.f(0, 1)).Add(off), Mask: 1}
	}
	return Triangle{A: c, B: c.AddScaled(g.unit(), g.f(0.3, 3)), C: c.AddScaled(g.unit(), g.f(0.3, 3)), Mask: 1}
}

// refShape returns a capsule's segment and radius and a motion that often
// meets the triangle, at its face, an edge or a vertex, head on, at an
// angle, or with the segment parallel or nearly parallel to an edge.
func (g *gen) refShape(t Triangle) (a, b geom.Vec3, r float64, d geom.Vec3, maxT float64) {
	r = g.f(0.05, 1)
	target := g.feature(t)
	switch g.rng.IntN(4) {
	case 0:
		a = g.v(-5, 5)
		d = g.unit()
	case 1:
		a = target.AddScaled(g.unit(), g.f(r, 6))
		d = target.Sub(a).Normalize()
	default:
		a = target.AddScaled(g.unit(), g.f(r, 6))
		d = target.Sub(a).Add(g.v(-r, r)).Normalize()
	}
	switch g.rng.IntN(5) {
	case 0:
		b = a
	case 1:
		b = a.Add(geom.V(0, g.f(0.2, 2), 0))
	case 2: // parallel, or nearly, to an edge
		e := [3][2]geom.Vec3{{t.A, t.B}, {t.B, t.C}, {t.C, t.A}}[g.rng.IntN(3)]
		dir := e[1].Sub(e[0]).Normalize()
		if g.rng.IntN(2) == 0 {
			dir = dir.AddScaled(g.perpendicular(dir), math.Pow(10, g.f(-7, -2))).Normalize()
		}
		b = a.AddScaled(dir, g.f(0.2, 3))
	default:
		b = a.AddScaled(g.unit(), g.f(0.2, 3))
	}
	// Centre the segment on the aim, so its middle meets the target.
	if g.rng.IntN(2) == 0 {
		mid := b.Sub(a).Scale(0.5)
		a, b = a.Sub(mid), b.Sub(mid)
	}
	return a, b, r, d, g.f(0.5, 12)
}

func TestSweepsAgainstReference(t *testing.T) {
	t.Parallel()
	for _, capsule := range []bool{false, true} {
		name := "sphere"
		if capsule {
			name = "capsule"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := newGen(21)
			n := 3000
			if testing.Short() {
				n = 500
			}
			var hits, misses, zero, skipped int
			for i := range n {
				tr := g.refTriangle()
				m := mustNew(t, []Triangle{tr})
				a, b, r, d, maxT := g.refShape(tr)
				var h Hit
				var ok bool
				if capsule {
					h, ok = m.SweepCapsule(a, b, r, d, maxT, 1)
				} else {
					b = a
					h, ok = m.SweepSphere(a, r, d, maxT, 1)
				}
				at := func(t float64) (float64, geom.Vec3, geom.Vec3) {
					return refSegment(a.AddScaled(d, t), b.AddScaled(d, t), tr)
				}
				want, wantOK, skip := refTOI(func(t float64) float64 { l, _, _ := at(t); return l }, r, maxT)
				if skip {
					skipped++
					continue
				}
				if ok != wantOK || (ok && math.Abs(h.T-want) > 1e-9) {
					t.Fatalf("case %d: tri %+v a=%v b=%v r=%v d=%v maxT=%v: got %+v %v, reference t=%v %v", i, tr, a, b, r, d, maxT, h, ok, want, wantOK)
				}
				if !ok {
					misses++
					continue
				}
				hits++
				if h.T == 0 {
					zero++
				}
				// The normal is the closest-point direction at the contact.
				if l, onSeg, onTri := at(want); l > 1e-6 {
					if wantN := onSeg.Sub(onTri).Scale(1 / l); h.Normal.Sub(wantN).Len() > 1e-6 {
						t.Fatalf("case %d: tri %+v a=%v b=%v r=%v d=%v: normal %v, reference %v", i, tr, a, b, r, d, h.Normal, wantN)
					}
				}
			}
			t.Logf("%d hits (%d at t=0), %d misses, %d skipped as ill-conditioned", hits, zero, misses, skipped)
			if hits < n/4 || misses < n/10 || zero < n/50 || skipped > n/20 {
				t.Errorf("poor coverage: %d hits (%d at t=0), %d misses, %d skipped of %d", hits, zero, misses, skipped, n)
			}
		})
	}
}

func TestOverlapAgainstReference(t *testing.T) {
	t.Parallel()
	g := newGen(22)
	var contacts, pierced, apart int
	for i := range 3000 {
		tr := g.refTriangle()
		m := mustNew(t, []Triangle{tr})
		a, b, r, d, maxT := g.refShape(tr)
		a, b = a.AddScaled(d, g.f(0, maxT)), b.AddScaled(d, g.f(0, maxT)) // somewhere along the motion
		got := m.OverlapCapsule(a, b, r, 1, nil)
		dist, onSeg, onTri := refSegment(a, b, tr)
		if math.Abs(dist-r) < 1e-9 {
			continue
		}
		if (len(got) == 1) != (dist < r) || len(got) > 1 {
			t.Fatalf("case %d: tri %+v a=%v b=%v r=%v: got %+v, reference distance %v", i, tr, a, b, r, got, dist)
		}
		if len(got) == 0 {
			apart++
			continue
		}
		contacts++
		c := got[0]
		// The reference's closest points come from a search over a distance
		// known to about 1e-16 m, which places them to about the square
		// root of 1e-16/dist in direction: its normal is checked only where
		// that is well below the tolerance; the push-out below checks all.
		if dist > 1e-6 && math.Abs(c.Depth-(r-dist)) > 1e-9 {
			t.Fatalf("case %d: tri %+v a=%v b=%v r=%v: got %+v, reference depth %v", i, tr, a, b, r, c, r-dist)
		}
		if wantN := onSeg.Sub(onTri).Scale(1 / dist); dist > 1e-2 && c.Normal.Sub(wantN).Len() > 1e-6 {
			t.Fatalf("case %d: tri %+v a=%v b=%v r=%v: got %+v, reference normal %v", i, tr, a, b, r, c, wantN)
		}
		if dist < 1e-6 {
			pierced++
		}
		// Pushing the capsule out by Depth along Normal clears the triangle.
		if after, _, _ := refSegment(a.AddScaled(c.Normal, c.Depth), b.AddScaled(c.Normal, c.Depth), tr); after < r-1e-9 {
			t.Fatalf("case %d: tri %+v a=%v b=%v r=%v: pushed out by %+v, still %v away", i, tr, a, b, r, c, after)
		}
	}
	t.Logf("%d contacts (%d touching or pierced), %d apart", contacts, pierced, apart)
	if contacts < 300 || apart < 300 || pierced < 10 {
		t.Errorf("poor coverage: %d contacts (%d pierced), %d apart", contacts, pierced, apart)
	}
}

// refRay is Möller and Trumbore's test ("Fast, Minimum Storage Ray/Triangle
// Intersection", 1997), with the barycentric coordinates and the
// determinant's sine for the caller to skip the borderline cases.
func refRay(o, d geom.Vec3, t Triangle) (tt, u, v, sin float64) {
	e1, e2 := t.B.Sub(t.A), t.C.Sub(t.A)
	p := d.Cross(e2)
	det := e1.Dot(p)
	s := o.Sub(t.A)
	q := s.Cross(e1)
	return e2.Dot(q) / det, s.Dot(p) / det, d.Dot(q) / det, math.Abs(det) / e1.Cross(e2).Len()
}

func TestRaycastAgainstReference(t *testing.T) {
	t.Parallel()
	g := newGen(23)
	var hits, misses int
	for i := range 20000 {
		tr := g.refTriangle()
		m := mustNew(t, []Triangle{tr})
		o := g.v(-5, 5)
		d := g.unit()
		if i%2 == 0 {
			d = g.inTriangle(tr).Sub(o).Normalize()
		}
		maxT := g.f(0, 12)
		h, ok := m.Raycast(o, d, maxT, 1)
		want, u, v, sin := refRay(o, d, tr)
		const margin = 1e-9
		if sin < 1e-6 || math.Abs(u) < margin || math.Abs(v) < margin || math.Abs(1-u-v) < margin ||
			math.Abs(want) < margin || math.Abs(want-maxT) < margin {
			continue // grazing, or within rounding of an edge or an end
		}
		wantOK := u > 0 && v > 0 && u+v < 1 && want > 0 && want < maxT
		if ok != wantOK || (ok && math.Abs(h.T-want) > 1e-9) {
			t.Fatalf("case %d: tri %+v o=%v d=%v maxT=%v: got %+v %v, reference t=%v %v", i, tr, o, d, maxT, h, ok, want, wantOK)
		}
		if !ok {
			misses++
			continue
		}
		hits++
		n := tr.B.Sub(tr.A).Cross(tr.C.Sub(tr.A)).Normalize()
		if n.Dot(d) > 0 {
			n = n.Scale(-1)
		}
		if h.Normal.Sub(n).Len() > 1e-12 {
			t.Fatalf("case %d: normal %v, want %v (facing the origin)", i, h.Normal, n)
		}
	}
	t.Logf("%d hits, %d misses", hits, misses)
	if hits < 5000 || misses < 5000 {
		t.Errorf("poor coverage: %d hits, %d misses", hits, misses)
	}
}
