package geom

import "math"

// ClosestOnSegment returns the point of the segment a–b nearest to p.
func ClosestOnSegment(p, a, b Vec3) Vec3 {
	ab := b.Sub(a)
	l := ab.LenSq()
	if l == 0 {
		return a
	}
	return a.AddScaled(ab, clamp01(p.Sub(a).Dot(ab)/l))
}

// SegmentDistSq returns the squared distance between the segments p1–q1 and
// p2–q2 (Ericson, Real-Time Collision Detection, 5.1.9).
func SegmentDistSq(p1, q1, p2, q2 Vec3) float64 {
	s, t := SegmentClosest(p1, q1, p2, q2)
	return p1.AddScaled(q1.Sub(p1), s).Sub(p2.AddScaled(q2.Sub(p2), t)).LenSq()
}

// SegmentClosest returns the parameters s and t in [0, 1] of a closest pair
// of points p1 + s(q1−p1) and p2 + t(q2−p2) of the segments p1–q1 and p2–q2
// (Ericson, Real-Time Collision Detection, 5.1.9). Parallel segments have
// many closest pairs; it returns one with s at an end of the first or t at an
// end of the second, and a degenerate segment (a point) gets parameter 0.
func SegmentClosest(p1, q1, p2, q2 Vec3) (s, t float64) {
	const eps = 1e-12
	d1, d2, r := q1.Sub(p1), q2.Sub(p2), p1.Sub(p2)
	a, e, f := d1.LenSq(), d2.LenSq(), d2.Dot(r)
	switch {
	case a <= eps && e <= eps:
		return 0, 0
	case a <= eps:
		return 0, clamp01(f / e)
	}
	c := d1.Dot(r)
	if e <= eps {
		return clamp01(-c / a), 0
	}
	b := d1.Dot(d2)
	if denom := a*e - b*b; denom != 0 {
		s = clamp01((b*f - c*e) / denom)
	}
	t = (b*s + f) / e
	if t < 0 {
		t, s = 0, clamp01(-c/a)
	} else if t > 1 {
		t, s = 1, clamp01((b-c)/a)
	}
	return s, t
}

func clamp01(f float64) float64 { return min(max(f, 0), 1) }

// RaySphere returns the distance t in [0, maxT] at which the ray from o along
// the unit direction d first touches the sphere (c, r); t is 0 when o starts
// inside it.
func RaySphere(o, d Vec3, maxT float64, c Vec3, r float64) (float64, bool) {
	m := o.Sub(c)
	cc := m.LenSq() - r*r
	if cc <= 0 {
		return 0, true
	}
	b := m.Dot(d)
	if b > 0 {
		return 0, false // outside and pointing away
	}
	disc := b*b - cc
	if disc < 0 {
		return 0, false
	}
	t := -b - math.Sqrt(disc)
	if t > maxT {
		return 0, false
	}
	return max(t, 0), true
}

// RayCapsule returns the distance t in [0, maxT] at which the ray from o
// along the unit direction d first touches the capsule; t is 0 when o starts
// inside it.
func RayCapsule(o, d Vec3, maxT float64, c Capsule) (float64, bool) {
	r2 := c.Radius * c.Radius
	if o.Sub(ClosestOnSegment(o, c.A, c.B)).LenSq() <= r2 {
		return 0, true
	}
	// The capsule is the union of a cylinder and two end spheres; the ray
	// starts outside all three, so its first entry is the earliest entry into
	// any of them. A finite cylinder's flat caps lie inside the end spheres,
	// so only its side needs testing.
	best, hit := math.Inf(1), false
	ba, oa := c.B.Sub(c.A), o.Sub(c.A)
	baba, bard, baoa := ba.LenSq(), ba.Dot(d), ba.Dot(oa)
	if a := baba - bard*bard; a > 1e-12*baba && baba > 0 {
		b := baba*d.Dot(oa) - baoa*bard
		cc := baba*oa.LenSq() - baoa*baoa - r2*baba
		if h := b*b - a*cc; h >= 0 {
			t := (-b - math.Sqrt(h)) / a
			y := baoa + t*bard
			if t >= 0 && t <= maxT && y > 0 && y < baba {
				best, hit = t, true
			}
		}
	}
	if t, ok := RaySphere(o, d, maxT, c.A, c.Radius); ok && t < best {
		best, hit = t, true
	}
	if t, ok := RaySphere(o, d, maxT, c.B, c.Radius); ok && t < best {
		best, hit = t, true
	}
	return best, hit
}

// SweepSphereCapsule returns the distance t in [0, maxT] at which a sphere of
// radius r moving from o along the unit direction d first touches the capsule.
func SweepSphereCapsule(o, d Vec3, maxT, r float64, c Capsule) (float64, bool) {
	c.Radius += r
	return RayCapsule(o, d, maxT, c)
}

// RayAABB returns the distance t in [0, maxT] at which the ray from o along
// the unit direction d first touches the box; t is 0 when o starts inside it.
func RayAABB(o, d Vec3, maxT float64, b AABB) (float64, bool) {
	tmin, _, ok := RaySpan(o, d, maxT, b)
	return tmin, ok
}

// RaySpan returns the part [tmin, tmax] of the ray from o along the unit
// direction d, within [0, maxT], that lies in the box.
func RaySpan(o, d Vec3, maxT float64, b AABB) (float64, float64, bool) {
	tmin, tmax, ok := slab(o.X, d.X, b.Min.X, b.Max.X, 0, maxT)
	if ok {
		tmin, tmax, ok = slab(o.Y, d.Y, b.Min.Y, b.Max.Y, tmin, tmax)
	}
	if ok {
		tmin, tmax, ok = slab(o.Z, d.Z, b.Min.Z, b.Max.Z, tmin, tmax)
	}
	if !ok {
		return 0, 0, false
	}
	return tmin, tmax, true
}

// slab narrows the ray's span [tmin, tmax] to the slab lo–hi of one axis,
// along which the ray starts at oi and moves by di; false when nothing is
// left. RaySpan takes the axes in turn, written out: it is on every
// sweep's path.
func slab(oi, di, lo, hi, tmin, tmax float64) (float64, float64, bool) {
	if di == 0 {
		return tmin, tmax, !(oi < lo || oi > hi)
	}
	inv := 1 / di
	t1, t2 := (lo-oi)*inv, (hi-oi)*inv
	if t1 > t2 {
		t1, t2 = t2, t1
	}
	tmin, tmax = max(tmin, t1), min(tmax, t2)
	return tmin, tmax, !(tmin > tmax)
}

func comp(v Vec3, axis int) float64 {
	switch axis {
	case 0:
		return v.X
	case 1:
		return v.Y
	}
	return v.Z
}

// SweepSphereAABB returns the distance t in [0, maxT] at which a sphere of
// radius r moving from o along the unit direction d first touches the box.
// It is exact: the box grown by r has rounded edges and corners, which are
// tested as capsules (Ericson, Real-Time Collision Detection, 5.5.7).
func SweepSphereAABB(o, d Vec3, maxT, r float64, b AABB) (float64, bool) {
	if o.Sub(b.ClosestPoint(o)).LenSq() <= r*r {
		return 0, true
	}
	t, ok := RayAABB(o, d, maxT, b.Expand(r))
	if !ok {
		return 0, false
	}
	p := o.AddScaled(d, t)
	var below, above int // bit i set: p is beyond the box on axis i
	for axis := range 3 {
		if pi := comp(p, axis); pi < comp(b.Min, axis) {
			below |= 1 << axis
		} else if pi > comp(b.Max, axis) {
			above |= 1 << axis
		}
	}
	m := below | above
	switch {
	case m&(m-1) == 0: // face region (one axis outside): the grown box is flat there
		return t, true
	case m == 7: // corner region: the three rounded edges that meet at this corner
		best, hit := math.Inf(1), false
		for _, bit := range [3]int{1, 2, 4} {
			c := Capsule{A: b.Corner(above), B: b.Corner(above ^ bit), Radius: r}
			if t, ok := RayCapsule(o, d, maxT, c); ok && t < best {
				best, hit = t, true
			}
		}
		return best, hit
	default: // edge region: the rounded edge along the remaining axis
		return RayCapsule(o, d, maxT, Capsule{A: b.Corner(below ^ 7), B: b.Corner(above), Radius: r})
	}
}

// SphereOverlapsCapsule reports whether the sphere and the capsule intersect.
func SphereOverlapsCapsule(s Sphere, c Capsule) bool {
	r := s.Radius + c.Radius
	return s.Center.Sub(ClosestOnSegment(s.Center, c.A, c.B)).LenSq() <= r*r
}

// SphereOverlapsAABB reports whether the sphere and the box intersect.
func SphereOverlapsAABB(s Sphere, b AABB) bool {
	return s.Center.Sub(b.ClosestPoint(s.Center)).LenSq() <= s.Radius*s.Radius
}

// CapsuleOverlapsCapsule reports whether the two capsules intersect.
func CapsuleOverlapsCapsule(a, b Capsule) bool {
	r := a.Radius + b.Radius
	return SegmentDistSq(a.A, a.B, b.A, b.B) <= r*r
}
