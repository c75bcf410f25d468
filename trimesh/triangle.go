package trimesh

import (
	"math"

	"github.com/rewind-gg/rewind/geom"
)

// tri is a triangle as the queries see it, in the tree's leaf order.
type tri struct {
	a, b, c geom.Vec3
	n       geom.Vec3 // unit normal along (b−a)×(c−a): the front side
	box     box       // padded bounding box
	index   int32     // index in the slice given to New
	mask    Mask
}

// The per-triangle functions below are the whole definition of each query:
// the tree only chooses which triangles to ask, and the tests' brute force
// asks every triangle through the same functions. They are kept out of line
// so that each is compiled once: were one inlined into two callers, the
// compiler could fuse its arithmetic differently in each (see the package
// comment), and the tree and the brute force could differ in a last bit.

// raycast returns the distance at which the ray q crosses the triangle, if
// in [0, maxT]. It is the watertight test of Woop, Benthin and Wald
// ("Watertight Ray/Triangle Intersection", JCGT 2(1), 2013): the vertices
// are moved into a frame where the ray is the +z axis, and the point is
// inside when the three 2D edge functions agree in sign (zero counting as
// either). Each vertex is moved by the same arithmetic whichever triangle
// it belongs to, and each edge function's sign is exact for the moved
// vertices (det2), so an edge shared by two triangles gets exactly opposite
// signs in both: a ray through the edge, or through a shared vertex, is
// inside at least one of them, and no ray leaks through the cracks of a
// closed mesh. The exact signs also keep a ray nearly in the triangle's
// plane, where the edge functions nearly cancel, from a false hit.
//
//go:noinline
func (t *tri) raycast(q *ray, maxT float64) (float64, bool) {
	ax, ay, az := q.shear(t.a)
	bx, by, bz := q.shear(t.b)
	cx, cy, cz := q.shear(t.c)
	u, v, w := det2(cx, cy, bx, by), det2(ax, ay, cx, cy), det2(bx, by, ax, ay)
	if (u < 0 || v < 0 || w < 0) && (u > 0 || v > 0 || w > 0) {
		return 0, false
	}
	det := u + v + w
	if det == 0 {
		return 0, false // the ray lies in the triangle's plane
	}
	d := (u*az + v*bz + w*cz) / det
	if !(d >= 0 && d <= maxT) {
		return 0, false
	}
	return d + 0, true // + 0 turns a -0 into 0
}

// det2 returns a·d − b·c within 2 units in the last place, so with its exact
// sign, and exactly 0 when a·d = b·c (Kahan's algorithm: the rounding error
// of b·c is recovered exactly by a fused multiply-add and added back; see
// Jeannerod, Louvet and Muller, "Further analysis of Kahan's algorithm for
// the accurate computation of 2×2 determinants", Math. Comp. 82, 2013).
// math.FMA is exact on every processor; the conversion keeps the compiler
// from fusing b·c into anything else.
func det2(a, b, c, d float64) float64 {
	w := float64(b * c)
	return math.FMA(a, d, -w) + math.FMA(-b, c, w)
}

// rayNormal is the normal a ray along d sees on the triangle: the face
// normal turned toward the ray's origin.
func (t *tri) rayNormal(d geom.Vec3) geom.Vec3 {
	if t.n.Dot(d) > 0 {
		return t.n.Scale(-1)
	}
	return t.n
}

// ray is a ray prepared for the watertight test: kz is the axis along which
// the direction is largest, kx and ky the other two (swapped when d[kz] is
// negative, to keep the frame's handedness), and s the shear that maps the
// direction to the +z axis.
type ray struct {
	o          [3]float64
	kx, ky, kz int
	sx, sy, sz float64
}

func newRay(o, d geom.Vec3) ray {
	da := d.Array()
	kz := 0
	if math.Abs(da[1]) > math.Abs(da[kz]) {
		kz = 1
	}
	if math.Abs(da[2]) > math.Abs(da[kz]) {
		kz = 2
	}
	kx, ky := (kz+1)%3, (kz+2)%3
	if da[kz] < 0 {
		kx, ky = ky, kx
	}
	return ray{
		o:  o.Array(),
		kx: kx, ky: ky, kz: kz,
		sx: da[kx] / da[kz], sy: da[ky] / da[kz], sz: 1 / da[kz],
	}
}

// shear returns the vertex p in the ray's frame. The conversions keep the
// compiler from fusing the shear into a multiply-add in one of the three
// places raycast uses it and not in another: a vertex must move the same
// way in every triangle it belongs to.
func (q *ray) shear(p geom.Vec3) (x, y, z float64) {
	pa := p.Array()
	px, py, pz := pa[q.kx]-q.o[q.kx], pa[q.ky]-q.o[q.ky], pa[q.kz]-q.o[q.kz]
	return px - float64(q.sx*pz), py - float64(q.sy*pz), q.sz * pz
}

// first collects the earliest of a triangle's candidate contacts: a later
// candidate replaces it only if strictly earlier, so the order in which the
// features are tried breaks ties.
type first struct {
	t  float64 // the bound: maxT until a contact is found
	n  geom.Vec3
	ok bool
}

func (f *first) earlier(t float64) bool { return !f.ok || t < f.t }

func (f *first) set(t float64, n geom.Vec3) { f.t, f.n, f.ok = t, n, true }

// sweepSphere returns the first contact within bound of a sphere of radius r
// whose centre moves from c along the unit direction d: the smallest t with
// distance(c + t·d, triangle) ≤ r. The query's maxT (at least bound) only
// lets it reject the triangle early: the answer must not depend on the
// bound, which is the best contact so far and so depends on the tree.
//
//go:noinline
func (t *tri) sweepSphere(c, d geom.Vec3, r, maxT, bound float64) (float64, geom.Vec3, bool) {
	f := first{t: bound}
	if t.beyond(c, d, r, maxT) != 0 {
		return 0, geom.Vec3{}, false // the triangle, edges and vertices included, lies in its plane
	}
	t.sphereFeatures(&f, c, d, r)
	if f.ok && f.t == 0 {
		_, f.n = t.separation(c, c)
	}
	return f.t, f.n, f.ok
}

// sphereFeatures offers f the contacts of a sphere of radius r whose centre
// moves from c along d. The triangle grown by r (the set of centres within
// r of it) is the union of the triangle's slab (its points within r of the
// plane whose projection lies inside it) and three capsules, one per edge,
// whose end spheres are the vertices grown by r. A centre starting outside
// that union first enters it through the slab's face or a capsule (the
// slab's sides lie inside the capsules), so the first contact is the
// earliest of the face, the three edges' cylinders and the three vertices'
// spheres. Each feature reports t = 0 when the centre starts inside it.
func (t *tri) sphereFeatures(f *first, c, d geom.Vec3, r float64) {
	if tt, side, ok := t.face(c, d, r, f.t); ok && f.earlier(tt) {
		f.set(tt, t.n.Scale(side))
		// Nothing is earlier than a start touching, nor than the face met
		// well inside (the sphere meets the plane there first, and the
		// edges and vertices, in the plane, only later: by at least
		// faceDeep²/2r / |along|, far above any rounding): later features
		// replace only a strictly earlier contact, so they cannot change
		// the answer.
		if tt == 0 || t.deep(c.AddScaled(d, tt)) {
			return
		}
	}
	t.edgeCylinder(f, c, d, r, t.a, t.b)
	t.edgeCylinder(f, c, d, r, t.b, t.c)
	t.edgeCylinder(f, c, d, r, t.c, t.a)
	t.vertexSphere(f, c, d, r, t.a)
	t.vertexSphere(f, c, d, r, t.b)
	t.vertexSphere(f, c, d, r, t.c)
}

// beyond returns +1 if the point moving from c along d for maxT stays more
// than r in front of the triangle's plane, −1 if more than r behind it, and
// 0 otherwise: a shape of radius r around it cannot touch the triangle
// unless it is 0. A point's distance to the plane is linear in t, so its
// ends decide.
func (t *tri) beyond(c, d geom.Vec3, r, maxT float64) int {
	dist, along := t.n.Dot(c.Sub(t.a)), t.n.Dot(d)
	end := dist
	if along != 0 {
		end += along * maxT
	}
	switch {
	case dist > r && end > r:
		return 1
	case dist < -r && end < -r:
		return -1
	}
	return 0
}

// face returns when a sphere of radius r whose centre moves from c along d
// first touches the inside of the triangle's face, and the side (+1 front,
// −1 back) it touches.
func (t *tri) face(c, d geom.Vec3, r, maxT float64) (float64, float64, bool) {
	dist, along := t.n.Dot(c.Sub(t.a)), t.n.Dot(d)
	var tt, side float64
	switch {
	case dist > r:
		if along >= 0 {
			return 0, 0, false
		}
		tt, side = (dist-r)/-along, 1
	case dist < -r:
		if along <= 0 {
			return 0, 0, false
		}
		tt, side = (-dist-r)/along, -1
	default: // already within r of the plane
		tt, side = 0, 1
		if dist < 0 {
			side = -1
		}
	}
	if tt > maxT || !t.inside(c.AddScaled(d, tt)) {
		return 0, 0, false
	}
	return tt, side, true
}

// deep reports whether p projects onto the triangle at least faceDeep from
// each of its edges.
func (t *tri) deep(p geom.Vec3) bool {
	return t.deepOf(p, t.a, t.b) && t.deepOf(p, t.b, t.c) && t.deepOf(p, t.c, t.a)
}

// deepOf reports whether p lies faceDeep or more inside the edge e0–e1 (an
// edge of the triangle taken one way round: the edges are written out, not
// looped over, on the path of every face contact).
func (t *tri) deepOf(p, e0, e1 geom.Vec3) bool {
	edge := e1.Sub(e0)
	return !(edge.Cross(p.Sub(e0)).Dot(t.n) < faceDeep*edge.Len())
}

// faceDeep is how far inside its triangle, in metres, a face contact
// stands for the triangle's first (deep).
const faceDeep = 1e-3

// inside reports whether p projects onto the triangle (its edges included).
func (t *tri) inside(p geom.Vec3) bool {
	return t.b.Sub(t.a).Cross(p.Sub(t.a)).Dot(t.n) >= 0 &&
		t.c.Sub(t.b).Cross(p.Sub(t.b)).Dot(t.n) >= 0 &&
		t.a.Sub(t.c).Cross(p.Sub(t.c)).Dot(t.n) >= 0
}

// edgeCylinder offers f the contact of a sphere of radius r moving from c
// along d with the side of the edge e0–e1's capsule.
func (t *tri) edgeCylinder(f *first, c, d geom.Vec3, r float64, e0, e1 geom.Vec3) {
	if tt, ok := cylinder(c, d, e0, e1.Sub(e0), r, f.t); ok && f.earlier(tt) {
		p := c.AddScaled(d, tt)
		f.set(tt, t.away(p.Sub(geom.ClosestOnSegment(p, e0, e1))))
	}
}

// vertexSphere offers f the contact of a sphere of radius r moving from c
// along d with the vertex v.
func (t *tri) vertexSphere(f *first, c, d geom.Vec3, r float64, v geom.Vec3) {
	if tt, ok := geom.RaySphere(c, d, f.t, v, r); ok && f.earlier(tt) {
		f.set(tt, t.away(c.AddScaled(d, tt).Sub(v)))
	}
}

// away returns v made unit, or the face normal if v has no length (a
// contact at distance 0, which only a start inside can give and which
// separation then settles).
func (t *tri) away(v geom.Vec3) geom.Vec3 {
	if l := v.Len(); l > 0 {
		return v.Scale(1 / l)
	}
	return t.n
}

// cylinder returns the distance t in [0, maxT] at which the ray from o along
// the unit direction d first comes within r of the segment e0–e0+e through
// the segment's side: at a point whose projection on the segment's line lies
// between its ends. It reports t = 0 when o starts there. The end spheres
// are left to the caller.
//
// The distance of o + t·d from the line, times |e|, is |w + t·v| with
// w = (o−e0)×e and v = d×e, so the contact solves the quadratic
// |w + t·v|² = r²|e|², whose coefficients this way come without the
// cancellation of the dot-product form; its smaller root is taken in the
// form that does not cancel either.
func cylinder(o, d, e0, e geom.Vec3, r, maxT float64) (float64, bool) {
	ee := e.LenSq()
	if ee == 0 {
		return 0, false
	}
	m := o.Sub(e0)
	w := m.Cross(e)
	c := w.LenSq() - r*r*ee
	if c <= 0 { // within r of the line already
		s := m.Dot(e)
		return 0, s >= 0 && s <= ee
	}
	v := d.Cross(e)
	b := w.Dot(v)
	if b >= 0 {
		return 0, false // not closing on the line
	}
	disc := b*b - v.LenSq()*c
	if disc < 0 {
		return 0, false
	}
	t := c / (math.Sqrt(disc) - b)
	if t > maxT {
		return 0, false
	}
	if s := m.AddScaled(d, t).Dot(e); s < 0 || s > ee {
		return 0, false
	}
	return t, true
}

// sweepCapsule returns the first contact within maxT of a capsule (segment
// a–b, radius r) moving along the unit direction d: the smallest t with
// distance(segment moved by t·d, triangle) ≤ r.
//
// The capsule touches the triangle at t when t·d lies in the triangle minus
// the segment, grown by r. The triangle minus the segment is a convex prism
// whose boundary is the triangle at −a and at −b and one parallelogram per
// edge (the edge minus the segment); grown by r, each parallelogram becomes
// a slab over its face plus capsules around its four sides: the edge minus a,
// the edge minus b (the end spheres' edge cylinders) and the edge's two
// vertices minus the segment. So the first contact is the earliest of:
//   - the end spheres at a and at b swept against the triangle's face, edges
//     and vertices (sphereFeatures);
//   - each vertex against the capsule's side: the ray from the vertex along
//     −d against the cylinder around a–b;
//   - each edge against the segment (edge–edge): the segment's line reaches
//     distance r from the edge's line with both closest points inside the
//     segment and the edge.
//
// With r > 0 the prism's inside can only be reached through that shell, but
// a capsule that starts with its segment through the triangle is inside
// without touching any of it: that case is tested first.
//
// As sweepSphere, it rejects the triangle early by maxT and answers within
// bound.
//
//go:noinline
func (t *tri) sweepCapsule(a, b, d geom.Vec3, r, maxT, bound float64) (float64, geom.Vec3, bool) {
	f := first{t: bound}
	sideA, sideB := t.beyond(a, d, r, maxT), t.beyond(b, d, r, maxT)
	if sideA != 0 && sideA == sideB {
		return 0, geom.Vec3{}, false // the whole capsule stays on one side, beyond r
	}
	if t.pierced(a, b) {
		f.set(0, geom.Vec3{})
	} else {
		if sideA == 0 {
			t.sphereFeatures(&f, a, d, r)
		}
		if sideB == 0 {
			t.sphereFeatures(&f, b, d, r)
		}
		s, back := b.Sub(a), d.Scale(-1)
		// A capsule moving along its own axis (a vertical one moving up or
		// down, as a character's ground probes) keeps its side on the same
		// infinite cylinder: the vertices against the side and the edges
		// against the segment can only give contacts at t = 0, when the
		// capsule starts within r of the triangle. Starting with the whole
		// segment beyond r of the plane, it does not, and they are skipped.
		side := true
		if s.Cross(d) == (geom.Vec3{}) {
			da, db := t.n.Dot(a.Sub(t.a)), t.n.Dot(b.Sub(t.a))
			side = !((da > r && db > r) || (da < -r && db < -r))
		}
		if side {
			t.sideEdge(&f, a, s, d, back, r, t.a, t.b)
			t.sideEdge(&f, a, s, d, back, r, t.b, t.c)
			t.sideEdge(&f, a, s, d, back, r, t.c, t.a)
		}
	}
	if f.ok && f.t == 0 {
		_, f.n = t.separation(a, b)
	}
	return f.t, f.n, f.ok
}

// sideEdge offers f the contacts of the capsule a–a+s of radius r moving
// along d (back is −d) with the triangle's edge e0–e1: of the vertex e0
// with the capsule's side, and of the edge with the segment (edge–edge).
// sweepCapsule asks it of each edge in turn, written out rather than
// looped over.
func (t *tri) sideEdge(f *first, a, s, d, back geom.Vec3, r float64, e0, e1 geom.Vec3) {
	if tt, ok := cylinder(e0, back, a, s, r, f.t); ok && f.earlier(tt) {
		at := a.AddScaled(d, tt)
		f.set(tt, t.away(geom.ClosestOnSegment(e0, at, at.Add(s)).Sub(e0)))
	}
	if tt, n, ok := edgeEdge(a, s, e0, e1.Sub(e0), d, r, f.t); ok && f.earlier(tt) {
		f.set(tt, n)
	}
}

// edgeEdge returns when the segment a–a+s, moving along d, first comes
// within r of the edge e0–e0+e with the closest points of the two lines
// inside both (the face of the rounded parallelogram of sweepCapsule), and
// the normal there: the unit common perpendicular, turned toward the
// segment. Near-parallel lines (sin² of their angle below 1e-12) are left to
// the capsules: the face they would add is less than 1e-6 of their length
// wide, which moves the contact by under its square over 8r.
func edgeEdge(a, s, e0, e, d geom.Vec3, r, maxT float64) (float64, geom.Vec3, bool) {
	m := s.Cross(e)
	ss, ee, mm := s.LenSq(), e.LenSq(), m.LenSq()
	if !(mm > 1e-12*ss*ee) {
		return 0, geom.Vec3{}, false
	}
	m = m.Scale(1 / math.Sqrt(mm))
	dist, along := m.Dot(a.Sub(e0)), m.Dot(d)
	var t float64
	switch {
	case dist > r:
		if along >= 0 {
			return 0, geom.Vec3{}, false
		}
		t = (dist - r) / -along
	case dist < -r:
		if along <= 0 {
			return 0, geom.Vec3{}, false
		}
		t, m = (-dist-r)/along, m.Scale(-1)
	default:
		if dist < 0 {
			m = m.Scale(-1)
		}
	}
	if t > maxT {
		return 0, geom.Vec3{}, false
	}
	// The lines' closest points at t: parameters solving the 2×2 normal
	// equations, whose determinant is |s×e|².
	w := a.AddScaled(d, t).Sub(e0)
	se, sw, ew := s.Dot(e), s.Dot(w), e.Dot(w)
	if u := (se*ew - sw*ee) / mm; u < 0 || u > 1 {
		return 0, geom.Vec3{}, false
	}
	if v := (ss*ew - se*sw) / mm; v < 0 || v > 1 {
		return 0, geom.Vec3{}, false
	}
	return t, m, true
}

// pierced reports whether the segment p–q crosses the triangle's plane at a
// point inside the triangle.
func (t *tri) pierced(p, q geom.Vec3) bool {
	dp, dq := t.n.Dot(p.Sub(t.a)), t.n.Dot(q.Sub(t.a))
	if dp == dq || (dp > 0 && dq > 0) || (dp < 0 && dq < 0) {
		return false
	}
	return t.inside(p.Lerp(q, dp/(dp-dq)))
}

// separation returns how far the segment p–q (a point when p = q) is from
// the triangle, and the unit direction that moves it away: from the
// triangle's closest point to the segment's. Moving the segment by δ along
// that direction raises the distance by at least δ (the distance between
// convex sets is convex in the translation, and this is its gradient).
//
// When the segment crosses the triangle, or touches it (is within touching
// of it, where the direction between the closest points is lost to
// rounding), the direction is the face normal instead, on the side that
// needs the shorter push to bring both ends of the segment to that side of
// the plane (the front on a tie), and the separation is minus that push's
// length to the plane, so that r − separation is still a push that clears
// the shape of radius r.
func (t *tri) separation(p, q geom.Vec3) (float64, geom.Vec3) {
	if !t.pierced(p, q) {
		onSeg, onTri := p, t.closestPoint(p)
		best := onSeg.Sub(onTri).LenSq()
		if q != p {
			if c := t.closestPoint(q); q.Sub(c).LenSq() < best {
				onSeg, onTri, best = q, c, q.Sub(c).LenSq()
			}
			for _, e := range [3][2]geom.Vec3{{t.a, t.b}, {t.b, t.c}, {t.c, t.a}} {
				s, u := geom.SegmentClosest(p, q, e[0], e[1])
				ps, pe := p.Lerp(q, s), e[0].Lerp(e[1], u)
				if l := ps.Sub(pe).LenSq(); l < best {
					onSeg, onTri, best = ps, pe, l
				}
			}
		}
		if best > touching*touching {
			l := math.Sqrt(best)
			return l, onSeg.Sub(onTri).Scale(1 / l)
		}
	}
	dp, dq := t.n.Dot(p.Sub(t.a)), t.n.Dot(q.Sub(t.a))
	up, down := -min(dp, dq), max(dp, dq) // pushes to the plane along +n and −n
	if up <= down {
		return -up, t.n
	}
	return -down, t.n.Scale(-1)
}

// touching is the distance, in metres, below which separation takes a segment
// to touch the triangle: the direction between two points this close is
// mostly rounding error (a unit in the last place of a coordinate of a
// kilometre-wide level is 1e-13 m).
const touching = 1e-9

// closestPoint returns the point of the triangle nearest to p: p's
// projection on the plane when it falls inside the triangle, else the
// nearest of the edges' nearest points. (Ericson's classification by
// barycentric regions, in Real-Time Collision Detection, 5.1.5, is cheaper
// but misclassifies points around slivers, where its sub-determinants
// cancel; this way every answer is a point of the triangle to rounding.)
func (t *tri) closestPoint(p geom.Vec3) geom.Vec3 {
	if q := p.AddScaled(t.n, -t.n.Dot(p.Sub(t.a))); t.inside(q) {
		return q
	}
	best := geom.ClosestOnSegment(p, t.a, t.b)
	bestSq := p.Sub(best).LenSq()
	for _, e := range [2][2]geom.Vec3{{t.b, t.c}, {t.c, t.a}} {
		if c := geom.ClosestOnSegment(p, e[0], e[1]); p.Sub(c).LenSq() < bestSq {
			best, bestSq = c, p.Sub(c).LenSq()
		}
	}
	return best
}
