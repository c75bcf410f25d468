package trimesh

import (
	"cmp"
	"math"
	"slices"

	"github.com/rewind-gg/rewind/geom"
)

// NearRoom is how many triangles a [Near] holds: where a query's
// neighbourhood holds more, the query goes to the tree.
const NearRoom = 128

// Near is a cache of a mesh's triangles around where its queries have
// been: one character's, tick after tick (a ground probe, a slide, a step
// and a snap each tick, within a metre of the last tick's), so that they
// test a short list instead of each descending the tree of a large level.
//
// Its queries give the mesh's answers, bit for bit. It holds every
// triangle of its mask whose padded box meets a box (gathered): a query
// whose swept box lies inside tests every triangle whose box meets that,
// the only ones the tree could report, and the answer does not depend on
// the order of the tests (see the package comment). A query beyond the box
// gathers again around it, grown by the margin (twice that on the sides it
// left across); one whose neighbourhood holds more than NearRoom
// triangles, or of another mask, goes to the tree.
//
// A Near holds its list in itself: its queries allocate nothing. It is
// not safe for concurrent use.
type Near struct {
	mesh   *Mesh
	mask   Mask
	margin float64
	tried  bool      // lo–hi was gathered
	ok     bool      // and the list holds every triangle of mask meeting it
	lo, hi geom.Vec3 // the gathered box
	n      int
	boxes  [NearRoom]box   // the triangles' boxes, for a scan that loads nothing else
	slots  [NearRoom]int32 // their places in mesh.tris
	last   lastSweep
}

// lastSweep is the last capsule sweep a Near answered, and its answer. A
// sweep of the same capsule along the same direction, only longer or
// shorter, has the same answer up to its length: the first contact is the
// least (distance, index) over the triangles, each triangle's distance is
// computed the same way whatever the length asked, and a length only
// leaves out the contacts beyond it. Only at a length within rounding of
// a contact can the two differ (the tests that reject a triangle early
// round differently there), so a length within lastSlack of the contact,
// or of the last sweep's length, is asked again. A character sweeps so
// often: a tick's last sweep snaps it down onto the ground, and when that
// leaves the feet where they are, the next tick's first sweep looks for
// the ground from there, a shorter way down.
type lastSweep struct {
	a, b, d geom.Vec3
	r, maxT float64
	mask    Mask
	h       Hit
	hit     bool
	valid   bool
}

// lastSlack is how far, relative to a metre or to the lengths compared,
// a length must be from a contact or from the last sweep's length for the
// last sweep's answer to give its sweep's: far above the rounding of any
// distance in a level.
const lastSlack = 1e-9

// answers returns the answer to the sweep of a–b, radius r, along d for
// maxT, if l's answer gives it: false if it does not.
func (l *lastSweep) answers(a, b geom.Vec3, r float64, d geom.Vec3, maxT float64, mask Mask) (Hit, bool, bool) {
	if !l.valid || a != l.a || b != l.b || r != l.r || d != l.d || mask != l.mask || !(maxT >= 0 && maxT < math.Inf(1)) {
		return Hit{}, false, false
	}
	if maxT == l.maxT {
		return l.h, l.hit, true // the same sweep
	}
	slack := lastSlack * (1 + max(maxT, l.maxT))
	if l.hit {
		if l.h.T > l.maxT-slack {
			return Hit{}, false, false // a contact within rounding of its length
		}
		switch {
		case maxT >= l.h.T+slack:
			return l.h, true, true // the same first contact
		case maxT <= l.h.T-slack:
			return Hit{}, false, true // nothing before the first contact
		}
		return Hit{}, false, false
	}
	if maxT <= l.maxT-slack {
		return Hit{}, false, true // nothing within a longer sweep
	}
	return Hit{}, false, false
}

// NewNear returns an empty cache of m's triangles of mask (none yet: the
// first query gathers), which gathers the box of a query grown by margin
// metres on every side. A nil m is an empty mesh.
func NewNear(m *Mesh, mask Mask, margin float64) *Near {
	return &Near{mesh: m, mask: mask, margin: max(margin, 0)}
}

// Mesh returns the mesh n caches.
func (n *Near) Mesh() *Mesh { return n.mesh }

// Mask returns the mask of the triangles n caches.
func (n *Near) Mask() Mask { return n.mask }

// Len returns how many triangles n holds now.
func (n *Near) Len() int { return n.n }

// around makes sure the list answers a query of mask whose swept box is
// lo–hi, gathering again if it does not: it reports false when the tree
// must answer. A query inside a box that held too many triangles to
// gather goes to the tree without gathering again.
func (n *Near) around(lo, hi geom.Vec3, mask Mask) bool {
	if mask != n.mask {
		return false
	}
	if n.tried && lo.X >= n.lo.X && lo.Y >= n.lo.Y && lo.Z >= n.lo.Z &&
		hi.X <= n.hi.X && hi.Y <= n.hi.Y && hi.Z <= n.hi.Z {
		return n.ok
	}
	if !(lo.X <= hi.X && lo.Y <= hi.Y && lo.Z <= hi.Z) || !(hi.Sub(lo).Len() < MaxCoord) {
		return false // NaN, or a long query: the tree prunes that better
	}
	g := geom.V(n.margin, n.margin, n.margin)
	glo, ghi := lo.Sub(g), hi.Add(g)
	if n.tried {
		// Ahead: a query that left the box across a side (a character
		// running on) will likely leave the next one across it too, so
		// the box reaches a margin further that way; it then gathers a
		// third less often for a fifth more triangles.
		if lo.X < n.lo.X {
			glo.X -= n.margin
		}
		if hi.X > n.hi.X {
			ghi.X += n.margin
		}
		if lo.Z < n.lo.Z {
			glo.Z -= n.margin
		}
		if hi.Z > n.hi.Z {
			ghi.Z += n.margin
		}
	}
	n.gather(glo, ghi)
	return n.ok
}

// gather makes the list the triangles of the mask whose boxes meet lo–hi,
// if there are at most NearRoom.
func (n *Near) gather(lo, hi geom.Vec3) {
	n.lo, n.hi, n.n, n.tried, n.ok = lo, hi, 0, true, false
	m := n.mesh
	qb := toBox(geom.AABB{Min: lo, Max: hi}) // rounded outward: it holds lo–hi
	// Depth first, the first child before the second, as OverlapCapsule;
	// a node's children are tested from the node, and only those that
	// meet qb are entered.
	type entry struct {
		ref   int32
		count uint8
	}
	var stack [stackSize]entry
	sp := 0
	if m.root.mask&n.mask != 0 && m.root.box.overlaps(&qb) {
		stack[0], sp = entry{m.root.ref, m.root.count}, 1
	}
	for sp > 0 {
		sp--
		e := stack[sp]
		for e.count == 0 {
			nd := &m.nodes[e.ref]
			ok0 := nd.mask[0]&n.mask != 0 && nd.box[0].overlaps(&qb)
			ok1 := nd.mask[1]&n.mask != 0 && nd.box[1].overlaps(&qb)
			if ok1 {
				if ok0 {
					stack[sp], sp = entry{nd.ref[1], nd.count[1]}, sp+1
				} else {
					e = entry{nd.ref[1], nd.count[1]}
					continue
				}
			}
			if !ok0 {
				break
			}
			e = entry{nd.ref[0], nd.count[0]}
		}
		for k := e.ref; k < e.ref+int32(e.count); k++ {
			t := &m.tris[k]
			if t.mask&n.mask == 0 || !t.box.overlaps(&qb) {
				continue
			}
			if n.n == NearRoom {
				n.n = 0
				return
			}
			n.boxes[n.n], n.slots[n.n] = t.box, k
			n.n++
		}
	}
	n.ok = true
}

// Raycast is [Mesh.Raycast].
func (n *Near) Raycast(o, d geom.Vec3, maxT float64, mask Mask) (Hit, bool) {
	m := n.mesh
	if m == nil || len(m.tris) == 0 {
		return Hit{}, false
	}
	lo, hi := m.sweptPoint(o, 0, d, maxT)
	if d == (geom.Vec3{}) || !n.around(lo, hi, mask) {
		return m.Raycast(o, d, maxT, mask)
	}
	var q probe
	q.setRay(o, d, mask)
	return n.first(&q, toBox(geom.AABB{Min: lo, Max: hi}), maxT)
}

// SweepCapsule is [Mesh.SweepCapsule].
func (n *Near) SweepCapsule(a, b geom.Vec3, r float64, d geom.Vec3, maxT float64, mask Mask) (Hit, bool) {
	m := n.mesh
	if m == nil || len(m.tris) == 0 {
		return Hit{}, false
	}
	if h, hit, ok := n.last.answers(a, b, r, d, maxT, mask); ok {
		return h, hit
	}
	var h Hit
	var hit bool
	lo, hi := m.swept(a, b, r, d, maxT)
	if !(r > 0) || !n.around(lo, hi, mask) {
		h, hit = m.SweepCapsule(a, b, r, d, maxT, mask)
	} else {
		var q probe
		q.setCapsule(a, b, r, d, mask)
		h, hit = n.first(&q, toBox(geom.AABB{Min: lo, Max: hi}), maxT)
	}
	if maxT >= 0 && maxT < math.Inf(1) {
		n.last = lastSweep{a: a, b: b, d: d, r: r, maxT: maxT, mask: mask, h: h, hit: hit, valid: true}
	}
	return h, hit
}

// OverlapCapsule is [Mesh.OverlapCapsule].
func (n *Near) OverlapCapsule(a, b geom.Vec3, r float64, mask Mask, out []Contact) []Contact {
	m := n.mesh
	if m == nil || len(m.tris) == 0 {
		return out
	}
	bb := geom.SegmentBounds(a, b, r)
	if !(r > 0) || !n.around(bb.Min, bb.Max, mask) {
		return m.OverlapCapsule(a, b, r, mask, out)
	}
	qb := toBox(bb)
	start := len(out)
	for i := range n.n {
		if !n.boxes[i].overlaps(&qb) {
			continue
		}
		if c, ok := m.tris[n.slots[i]].overlap(a, b, r); ok {
			out = append(out, c)
		}
	}
	slices.SortFunc(out[start:], func(p, q Contact) int { return cmp.Compare(p.Tri, q.Tri) })
	return out
}

// first is Mesh.first over the list: of the triangles whose boxes meet
// qb, the query's swept box, every one whose box q reaches no later than
// the best contact so far is asked.
func (n *Near) first(q *probe, qb box, maxT float64) (Hit, bool) {
	var best Hit
	found := false
	if !(maxT >= 0) {
		return best, false
	}
	best.T = maxT
	boxes, slots, tris := n.boxes[:n.n], n.slots[:n.n], n.mesh.tris
	x0, y0, z0, x1, y1, z1 := qb[0], qb[1], qb[2], qb[3], qb[4], qb[5]
	for i := range boxes {
		if b := &boxes[i]; b[0] > x1 || b[3] < x0 || b[2] > z1 || b[5] < z0 || b[1] > y1 || b[4] < y0 {
			continue // the box does not meet qb (overlaps, X and Z first: a level is wide)
		}
		t := &tris[slots[i]]
		if _, ok := q.enter(&t.box, best.T); !ok {
			continue
		}
		if tt, nn, ok := q.test(t, maxT, best.T); ok && better(tt, t.index, &best, found) {
			best, found = Hit{T: tt, Normal: nn, Tri: int(t.index)}, true
		}
	}
	return best, found
}
