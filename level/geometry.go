package level

import "github.com/rewind-gg/rewind/geom"

// closestOnTriangle returns the point of triangle abc nearest to p
// (Ericson, "Real-Time Collision Detection", 5.1.5).
func closestOnTriangle(p, a, b, c geom.Vec3) geom.Vec3 {
	ab, ac, ap := b.Sub(a), c.Sub(a), p.Sub(a)
	d1, d2 := ab.Dot(ap), ac.Dot(ap)
	if d1 <= 0 && d2 <= 0 {
		return a
	}
	bp := p.Sub(b)
	d3, d4 := ab.Dot(bp), ac.Dot(bp)
	if d3 >= 0 && d4 <= d3 {
		return b
	}
	vc := d1*d4 - d3*d2
	if vc <= 0 && d1 >= 0 && d3 <= 0 {
		return a.AddScaled(ab, d1/(d1-d3))
	}
	cp := p.Sub(c)
	d5, d6 := ab.Dot(cp), ac.Dot(cp)
	if d6 >= 0 && d5 <= d6 {
		return c
	}
	vb := d5*d2 - d1*d6
	if vb <= 0 && d2 >= 0 && d6 <= 0 {
		return a.AddScaled(ac, d2/(d2-d6))
	}
	va := d3*d6 - d5*d4
	if va <= 0 && d4-d3 >= 0 && d5-d6 >= 0 {
		return b.AddScaled(c.Sub(b), (d4-d3)/((d4-d3)+(d5-d6)))
	}
	denom := 1 / (va + vb + vc)
	return a.AddScaled(ab, vb*denom).AddScaled(ac, vc*denom)
}

// segmentTriangleDistSq returns the squared distance between segment pq
// and triangle t: zero if the segment passes through it.
func segmentTriangleDistSq(p, q geom.Vec3, t *Triangle) float64 {
	d := q.Sub(p)
	if l := d.Len(); l > 0 {
		if hit, _, ok := rayTriangle(p, d.Scale(1/l), l, t); ok && hit <= l {
			return 0
		}
	}
	best := p.Sub(closestOnTriangle(p, t.A, t.B, t.C)).LenSq()
	best = min(best, q.Sub(closestOnTriangle(q, t.A, t.B, t.C)).LenSq())
	best = min(best, geom.SegmentDistSq(p, q, t.A, t.B))
	best = min(best, geom.SegmentDistSq(p, q, t.B, t.C))
	best = min(best, geom.SegmentDistSq(p, q, t.C, t.A))
	return best
}

// rayTriangle intersects the ray o + s·d (d a unit vector, 0 ≤ s ≤ maxT)
// with t, either side (Möller and Trumbore, "Fast, Minimum Storage
// Ray/Triangle Intersection", 1997). front reports whether the ray meets
// the triangle's front face.
func rayTriangle(o, d geom.Vec3, maxT float64, t *Triangle) (s float64, front, ok bool) {
	e1, e2 := t.B.Sub(t.A), t.C.Sub(t.A)
	pv := d.Cross(e2)
	det := e1.Dot(pv)
	if det > -1e-12 && det < 1e-12 {
		return 0, false, false
	}
	inv := 1 / det
	tv := o.Sub(t.A)
	u := tv.Dot(pv) * inv
	if u < 0 || u > 1 {
		return 0, false, false
	}
	qv := tv.Cross(e1)
	v := d.Dot(qv) * inv
	if v < 0 || u+v > 1 {
		return 0, false, false
	}
	s = e2.Dot(qv) * inv
	if s < 0 || s > maxT {
		return 0, false, false
	}
	// det = −d·(e1×e2): positive when the ray runs against the normal.
	return s, det > 0, true
}

// degenerate reports whether a triangle has (nearly) no area: its height
// over its longest edge is under a micrometre.
func degenerate(t *Triangle) bool {
	ab, bc, ca := t.B.Sub(t.A), t.C.Sub(t.B), t.A.Sub(t.C)
	longest := max(ab.LenSq(), bc.LenSq(), ca.LenSq())
	if longest == 0 {
		return true
	}
	twiceArea := ab.Cross(t.C.Sub(t.A)).Len()
	return twiceArea*twiceArea/longest < 1e-12 // (height)² < (1 µm)²
}
