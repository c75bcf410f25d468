package trimesh

import (
	"cmp"
	"math"
	"slices"

	"github.com/rewind-gg/rewind/geom"
)

// Hit is a query's first contact.
type Hit struct {
	T      float64   // distance along the motion, in [0, maxT]
	Normal geom.Vec3 // unit, from the triangle toward the query shape
	Tri    int       // the triangle's index in the slice given to New
}

// Contact is a triangle that a shape overlaps.
type Contact struct {
	Tri    int       // the triangle's index in the slice given to New
	Depth  float64   // how far to move the shape along Normal to clear the triangle
	Normal geom.Vec3 // unit, the direction that pushes the shape out
}

// Raycast returns the first triangle that the ray from o along the unit
// direction d crosses within maxT. Triangles are two-sided: the normal faces
// the ray's origin. A ray that starts on a triangle hits it at t = 0; a ray
// in a triangle's plane does not hit it (its neighbours, which it then
// crosses, do).
//
// The test is watertight: a ray through an edge or a vertex shared by
// triangles hits at least one of them, so no ray passes through the cracks
// of a closed mesh, whatever the rounding.
func (m *Mesh) Raycast(o, d geom.Vec3, maxT float64, mask Mask) (Hit, bool) {
	if d == (geom.Vec3{}) || m.clearPoint(o, 0, d, maxT, mask) {
		return Hit{}, false
	}
	var q probe
	q.setRay(o, d, mask)
	return m.first(&q, maxT)
}

// clear reports whether the segment a–b, swept along d for maxT and grown
// by r, provably touches no triangle of mask: its box meets no height range
// of the column grid (see columns). It is only asked for a query whose
// answer it cannot change.
func (m *Mesh) clear(a, b geom.Vec3, r float64, d geom.Vec3, maxT float64, mask Mask) bool {
	if len(m.tris) == 0 || !(maxT >= 0 && maxT < math.Inf(1)) {
		return false // first answers these
	}
	lo, hi := m.swept(a, b, r, d, maxT)
	return m.cols.empty(lo, hi, mask)
}

// clearPoint is clear for a ray or a sphere: a segment of one point.
func (m *Mesh) clearPoint(o geom.Vec3, r float64, d geom.Vec3, maxT float64, mask Mask) bool {
	if len(m.tris) == 0 || !(maxT >= 0 && maxT < math.Inf(1)) {
		return false // first answers these
	}
	lo, hi := m.sweptPoint(o, r, d, maxT)
	return m.cols.empty(lo, hi, mask)
}

// swept returns the box of the segment a–b, swept along d for maxT and
// grown by r and by twice the pad: every triangle a query of that shape
// can be asked about has a box that meets it (not a finite box when maxT
// is not finite).
func (m *Mesh) swept(a, b geom.Vec3, r float64, d geom.Vec3, maxT float64) (lo, hi geom.Vec3) {
	// Each axis from the lower end plus the motion's negative part to the
	// upper end plus its positive part.
	g := r + 2*m.pad
	ex, ey, ez := d.X*maxT, d.Y*maxT, d.Z*maxT
	lo = geom.Vec3{X: min(a.X, b.X) + min(ex, 0) - g, Y: min(a.Y, b.Y) + min(ey, 0) - g, Z: min(a.Z, b.Z) + min(ez, 0) - g}
	hi = geom.Vec3{X: max(a.X, b.X) + max(ex, 0) + g, Y: max(a.Y, b.Y) + max(ey, 0) + g, Z: max(a.Z, b.Z) + max(ez, 0) + g}
	return lo, hi
}

// sweptPoint is swept(o, o, r, d, maxT), without the min and max of each
// coordinate with itself (which is that coordinate).
func (m *Mesh) sweptPoint(o geom.Vec3, r float64, d geom.Vec3, maxT float64) (lo, hi geom.Vec3) {
	g := r + 2*m.pad
	ex, ey, ez := d.X*maxT, d.Y*maxT, d.Z*maxT
	lo = geom.Vec3{X: o.X + min(ex, 0) - g, Y: o.Y + min(ey, 0) - g, Z: o.Z + min(ez, 0) - g}
	hi = geom.Vec3{X: o.X + max(ex, 0) + g, Y: o.Y + max(ey, 0) + g, Z: o.Z + max(ez, 0) + g}
	return lo, hi
}

// setRay makes q the probe of a ray from o along d. Probes are made in
// place, not returned: one is some 300 bytes, and a query's copies of it
// cost as much as the rest of its setting up.
func (q *probe) setRay(o, d geom.Vec3, mask Mask) {
	*q = probe{kind: kindRay, o: o, d: d, mask: mask, ray: newRay(o, d), bo: o}
	q.complete()
}

// SweepSphere returns the first triangle that a sphere of radius r > 0
// touches while its centre moves from c along the unit direction d for at
// most maxT: the smallest t with distance(c + t·d, triangle) ≤ r. A sphere
// that starts within r of a triangle (touching included) gets t = 0 with
// the normal of the closest-point direction, from the triangle's closest
// point to c, as [Mesh.OverlapCapsule] gives it (the face normal on c's side
// when c lies within 1e-9 m of the triangle, the front when in its plane).
func (m *Mesh) SweepSphere(c geom.Vec3, r float64, d geom.Vec3, maxT float64, mask Mask) (Hit, bool) {
	if !(r > 0) || m.clearPoint(c, r, d, maxT, mask) {
		return Hit{}, false
	}
	var q probe
	q.setSphere(c, r, d, mask)
	return m.first(&q, maxT)
}

// setSphere makes q the probe of a sphere of radius r from c along d.
func (q *probe) setSphere(c geom.Vec3, r float64, d geom.Vec3, mask Mask) {
	*q = probe{kind: kindSphere, o: c, d: d, r: r, mask: mask, bo: c, h: geom.Vec3{X: r, Y: r, Z: r}}
	q.complete()
}

// SweepCapsule returns the first triangle that a capsule (the points within
// r > 0 of the segment a–b) touches while it moves along the unit direction
// d for at most maxT: the smallest t with distance(segment moved by t·d,
// triangle) ≤ r. The segment may have any direction. A capsule that starts
// within r of a triangle (touching included) gets t = 0 with the normal of
// the closest-point direction, as [Mesh.OverlapCapsule] gives it.
//
// The time of impact is exact: it is the earliest of the contacts of the
// end spheres with the triangle's face, edges and vertices, of the
// triangle's vertices with the capsule's side, and of the triangle's edges
// with the capsule's segment (edge–edge); that these cover every first
// contact is shown where they are computed (tri.sweepCapsule).
func (m *Mesh) SweepCapsule(a, b geom.Vec3, r float64, d geom.Vec3, maxT float64, mask Mask) (Hit, bool) {
	if !(r > 0) || m.clear(a, b, r, d, maxT, mask) {
		return Hit{}, false
	}
	var q probe
	q.setCapsule(a, b, r, d, mask)
	return m.first(&q, maxT)
}

// setCapsule makes q the probe of the capsule a–b of radius r along d.
func (q *probe) setCapsule(a, b geom.Vec3, r float64, d geom.Vec3, mask Mask) {
	h := b.Sub(a).Scale(0.5)
	h = geom.Vec3{X: abs(h.X) + r, Y: abs(h.Y) + r, Z: abs(h.Z) + r}
	*q = probe{kind: kindCapsule, o: a, b: b, d: d, r: r, mask: mask, bo: a.Lerp(b, 0.5), h: h}
	q.complete()
}

// complete completes q for the slab test: the inverse direction, each
// axis's near plane and the half extents signed to match. A zero direction
// component gets the largest finite inverse rather than an infinite one:
// the moving box then never crosses that axis's slab, entering it at −∞ or
// +∞ (or at 0, if it starts on the slab's boundary, instead of the NaN that
// 0·∞ would give and the comparisons could not order).
func (q *probe) complete() {
	d, h := q.d.Array(), q.h.Array()
	var hs [3]float64
	for i := range 3 {
		inv := 1 / d[i]
		if d[i] == 0 {
			inv = math.Copysign(math.MaxFloat64, d[i])
		}
		q.inv[i], q.near[i], hs[i] = inv, i, h[i]
		if inv < 0 {
			q.near[i], hs[i] = i+3, -h[i]
		}
	}
	q.hs = geom.FromArray(hs)
}

// OverlapCapsule appends to out a Contact for every triangle closer than r
// to the segment a–b (touching does not count), in increasing triangle
// order, and returns the extended slice; it allocates nothing when out has
// room. Depth is r minus the distance and Normal the direction from the
// triangle's closest point to the segment's: moving the capsule by Depth
// along Normal clears that triangle. A segment that crosses the triangle,
// or touches it (comes within 1e-9 m, where that direction is lost to
// rounding), has no such direction: Normal is then the face normal on the
// side that needs the shorter push to bring the whole segment to that side
// (the front on a tie), and Depth is that push plus r.
func (m *Mesh) OverlapCapsule(a, b geom.Vec3, r float64, mask Mask, out []Contact) []Contact {
	if !(r > 0) || len(m.tris) == 0 {
		return out
	}
	qb := toBox(geom.SegmentBounds(a, b, r))
	start := len(out)
	var stack [stackSize]child
	stack[0] = m.root
	for sp := 1; sp > 0; {
		sp--
		c := &stack[sp]
		if c.mask&mask == 0 || !c.box.overlaps(&qb) {
			continue
		}
		if c.count == 0 {
			nd := &m.nodes[c.ref]
			stack[sp] = child{box: nd.box[1], ref: nd.ref[1], count: nd.count[1], mask: nd.mask[1]}
			stack[sp+1] = child{box: nd.box[0], ref: nd.ref[0], count: nd.count[0], mask: nd.mask[0]}
			sp += 2
			continue
		}
		for k := c.ref; k < c.ref+int32(c.count); k++ {
			t := &m.tris[k]
			if t.mask&mask == 0 || !t.box.overlaps(&qb) {
				continue
			}
			if c, ok := t.overlap(a, b, r); ok {
				out = append(out, c)
			}
		}
	}
	slices.SortFunc(out[start:], func(p, q Contact) int { return cmp.Compare(p.Tri, q.Tri) })
	return out
}

// overlap returns the triangle's contact with the capsule a–b of radius r,
// if closer than r.
func (t *tri) overlap(a, b geom.Vec3, r float64) (Contact, bool) {
	s, n := t.separation(a, b)
	return Contact{Tri: int(t.index), Depth: r - s, Normal: n}, s < r
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

const (
	kindRay = iota
	kindSphere
	kindCapsule
)

// probe is a query: what the per-triangle test needs, and the moving box
// (a centre and half extents moving along d) that the tree's boxes are
// tested against.
type probe struct {
	kind int
	o, b geom.Vec3 // ray origin, sphere centre, or capsule segment o–b
	d    geom.Vec3
	r    float64
	mask Mask
	ray  ray

	bo, h geom.Vec3  // the moving box: centre and half extents
	inv   [3]float64 // 1/d per axis
	near  [3]int     // per axis, the index in a box of the plane met first
	hs    geom.Vec3  // h, negated on the axes where d is negative
}

// test asks the triangle for its first contact within bound (the best so
// far, at most maxT); the tree and the tests' brute force both come through
// here.
func (q *probe) test(t *tri, maxT, bound float64) (float64, geom.Vec3, bool) {
	switch q.kind {
	case kindRay:
		tt, ok := t.raycast(&q.ray, bound)
		if !ok {
			return 0, geom.Vec3{}, false
		}
		return tt, t.rayNormal(q.d), true
	case kindSphere:
		return t.sweepSphere(q.o, q.d, q.r, maxT, bound)
	}
	return t.sweepCapsule(q.o, q.b, q.d, q.r, maxT, bound)
}

// better reports whether a contact at t with triangle index i beats the
// best so far: earlier, or as early with a lower index.
func better(t float64, i int32, best *Hit, found bool) bool {
	return !found || t < best.T || (t == best.T && int(i) < best.Tri)
}

// first runs q down the tree: q's moving box is tested against each
// child's box, and a child is entered only if the box reaches it no later
// than the best contact so far (ties included, for the lowest index to win).
// The nearer child is visited first, so the best contact shrinks early and
// prunes the rest.
func (m *Mesh) first(q *probe, maxT float64) (Hit, bool) {
	var best Hit
	found := false
	if len(m.tris) == 0 || !(maxT >= 0) {
		return best, false
	}
	best.T = maxT
	type entry struct {
		ref   int32
		count uint8
		t     float64
	}
	var stack [stackSize]entry
	sp := 0
	if t, ok := q.enter(&m.root.box, maxT); ok && m.root.mask&q.mask != 0 {
		stack[0], sp = entry{m.root.ref, m.root.count, t}, 1
	}
	for sp > 0 {
		sp--
		e := stack[sp]
		if e.t > best.T {
			continue
		}
		for e.count == 0 {
			nd := &m.nodes[e.ref]
			t0, ok0, t1, ok1 := q.enter2(nd, best.T)
			ok0 = ok0 && nd.mask[0]&q.mask != 0
			ok1 = ok1 && nd.mask[1]&q.mask != 0
			near, far := entry{nd.ref[0], nd.count[0], t0}, entry{nd.ref[1], nd.count[1], t1}
			if ok0 && ok1 {
				if t1 < t0 {
					near, far = far, near
				}
				stack[sp], sp = far, sp+1
				e = near
			} else if ok0 {
				e = near
			} else if ok1 {
				e = far
			} else {
				break
			}
		}
		for k := e.ref; k < e.ref+int32(e.count); k++ {
			t := &m.tris[k]
			if t.mask&q.mask == 0 {
				continue
			}
			if q.kind != kindRay {
				if _, ok := q.enter(&t.box, best.T); !ok {
					continue
				}
			}
			if tt, n, ok := q.test(t, maxT, best.T); ok && better(tt, t.index, &best, found) {
				best, found = Hit{T: tt, Normal: n, Tri: int(t.index)}, true
			}
		}
	}
	return best, found
}

// enter returns the distance in [0, maxT] at which q's moving box first
// touches b (0 if it starts touching it): the slab test, with each axis's
// near and far planes chosen once per query (probe.near) so that it runs
// without branches.
func (q *probe) enter(b *box, maxT float64) (float64, bool) {
	tx0 := (float64(b[q.near[0]]) - q.hs.X - q.bo.X) * q.inv[0]
	tx1 := (float64(b[3-q.near[0]]) + q.hs.X - q.bo.X) * q.inv[0]
	ty0 := (float64(b[q.near[1]]) - q.hs.Y - q.bo.Y) * q.inv[1]
	ty1 := (float64(b[5-q.near[1]]) + q.hs.Y - q.bo.Y) * q.inv[1]
	tz0 := (float64(b[q.near[2]]) - q.hs.Z - q.bo.Z) * q.inv[2]
	tz1 := (float64(b[7-q.near[2]]) + q.hs.Z - q.bo.Z) * q.inv[2]
	tmin := max(max(tx0, ty0), max(tz0, 0))
	tmax := min(min(tx1, ty1), min(tz1, maxT))
	return tmin, tmin <= tmax
}

// enter2 is enter for both of nd's children at once: the traversal's inner
// loop, with the query's planes' offsets shared.
func (q *probe) enter2(nd *node, maxT float64) (float64, bool, float64, bool) {
	nx, ny, nz := q.near[0], q.near[1], q.near[2]
	ox, oy, oz := q.bo.X+q.hs.X, q.bo.Y+q.hs.Y, q.bo.Z+q.hs.Z // near planes move by -hs
	fx, fy, fz := q.bo.X-q.hs.X, q.bo.Y-q.hs.Y, q.bo.Z-q.hs.Z // far planes by +hs
	ix, iy, iz := q.inv[0], q.inv[1], q.inv[2]
	b := &nd.box[0]
	tmin0 := max(max((float64(b[nx])-ox)*ix, (float64(b[ny])-oy)*iy), max((float64(b[nz])-oz)*iz, 0))
	tmax0 := min(min((float64(b[3-nx])-fx)*ix, (float64(b[5-ny])-fy)*iy), min((float64(b[7-nz])-fz)*iz, maxT))
	b = &nd.box[1]
	tmin1 := max(max((float64(b[nx])-ox)*ix, (float64(b[ny])-oy)*iy), max((float64(b[nz])-oz)*iz, 0))
	tmax1 := min(min((float64(b[3-nx])-fx)*ix, (float64(b[5-ny])-fy)*iy), min((float64(b[7-nz])-fz)*iz, maxT))
	return tmin0, tmin0 <= tmax0, tmin1, tmin1 <= tmax1
}

// overlaps reports whether b and o share a point.
func (b *box) overlaps(o *box) bool {
	return b[0] <= o[3] && b[3] >= o[0] && b[1] <= o[4] && b[4] >= o[1] && b[2] <= o[5] && b[5] >= o[2]
}
