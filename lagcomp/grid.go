package lagcomp

import (
	"github.com/rewind-gg/rewind/geom"
)

// The broadphase has two parts. Static geometry and shields (many boxes,
// some large, changing rarely) live in a uniform grid; hitboxes (few, small,
// moved at every travel: a 6v6 room travels 13 times a tick) live in a
// sort-and-sweep list along X, re-sorted after every travel.

// grid is a uniform broadphase over the horizontal plane (X, Z): shooters are
// mostly flat, so columns of cells are enough and heights are left to the
// narrow phase. Cells are hashed into a fixed table of slots, each a chain of
// entries; entries remember their cell so a chain shared by two cells is
// filtered exactly. Colliders covering too many cells go to a short list
// checked by every query instead (a ground plane, say).
type grid struct {
	inv     float64 // 1 / cell size
	mask    uint32  // slots − 1
	heads   []int32 // slot → first entry, −1 when empty
	entries []gridEntry
	used    []int32 // slots with entries, for clear
	large   []int32 // colliders covering more than maxCells cells
}

type gridEntry struct {
	cx, cz int32
	col    int32 // index of the collider
	next   int32 // next entry of the same slot, −1 at the end
}

// maxCells is the most cells a collider is entered in before it goes to the
// large list instead.
const maxCells = 256

// cellLimit keeps cell coordinates far from int32 overflow for absurd inputs.
const cellLimit = 1 << 24

func newGrid(cellSize float64, slots int) grid {
	g := grid{inv: 1 / cellSize, mask: uint32(slots - 1), heads: make([]int32, slots)}
	for i := range g.heads {
		g.heads[i] = -1
	}
	return g
}

func (g *grid) cell(v float64) int32 {
	f := v * g.inv
	switch {
	case !(f > -cellLimit): // also catches NaN, which must never reach the loops
		return -cellLimit
	case f >= cellLimit:
		return cellLimit
	}
	c := int32(f) // truncates toward zero: make it a floor
	if float64(c) > f {
		c--
	}
	return c
}

// cells returns the inclusive cell range covered by b.
func (g *grid) cells(b geom.AABB) (x0, z0, x1, z1 int32) {
	return g.cell(b.Min.X), g.cell(b.Min.Z), g.cell(b.Max.X), g.cell(b.Max.Z)
}

func (g *grid) slot(cx, cz int32) uint32 {
	return (uint32(cx)*73856093 ^ uint32(cz)*19349663) & g.mask
}

func (g *grid) insert(col int32, b geom.AABB) {
	x0, z0, x1, z1 := g.cells(b)
	if int64(x1-x0+1)*int64(z1-z0+1) > maxCells {
		g.large = append(g.large, col)
		return
	}
	for cx := x0; cx <= x1; cx++ {
		for cz := z0; cz <= z1; cz++ {
			s := g.slot(cx, cz)
			if g.heads[s] < 0 {
				g.used = append(g.used, int32(s))
			}
			g.entries = append(g.entries, gridEntry{cx: cx, cz: cz, col: col, next: g.heads[s]})
			g.heads[s] = int32(len(g.entries) - 1)
		}
	}
}

// manyCells reports whether the cell range holds more cells than the grid
// has entries: walking the entries is then cheaper (and bounded).
func (g *grid) manyCells(x0, z0, x1, z1 int32) bool {
	return (int64(x1)-int64(x0)+1)*(int64(z1)-int64(z0)+1) > int64(len(g.entries))
}

// each calls yield with every collider entered in a cell that b overlaps
// (some more than once: the callers stamp what they examined), or with every
// entry when b spans so many cells that walking them would cost more.
func (g *grid) each(b geom.AABB, yield func(col int32)) {
	x0, z0, x1, z1 := g.cells(b)
	if g.manyCells(x0, z0, x1, z1) {
		for e := range g.entries {
			yield(g.entries[e].col)
		}
		return
	}
	for cx := x0; cx <= x1; cx++ {
		for cz := z0; cz <= z1; cz++ {
			for e := g.heads[g.slot(cx, cz)]; e >= 0; e = g.entries[e].next {
				if en := &g.entries[e]; en.cx == cx && en.cz == cz {
					yield(en.col)
				}
			}
		}
	}
}

func (g *grid) clear() {
	for _, s := range g.used {
		g.heads[s] = -1
	}
	g.used = g.used[:0]
	g.entries = g.entries[:0]
	g.large = g.large[:0]
}

// sweepX is a one-axis sort-and-sweep broadphase: hitboxes ordered by their
// bounds' Min.X. A query's candidates are the run whose Min.X lies in
// [query Min.X − widest hitbox, query Max.X], found by binary search.
type sweepX struct {
	col    []int32     // collider index, by Min.X
	bounds []geom.AABB // their bounds, packed
	widest float64     // the largest Max.X − Min.X
	union  geom.AABB   // all of them
}

// update re-sorts the list for the colliders of placement epoch: those
// still placed keep their previous order, new ones go at the end, and an
// insertion sort restores the order. Consecutive placements differ little,
// so that is linear. same says that placed holds the list's colliders
// (only moved), which spares looking for new ones and gone ones.
func (s *sweepX) update(cols []Collider, epoch uint64, placed []int32, same bool) {
	if same {
		s.moved(cols, epoch)
		return
	}
	// Locals, stored back at the end: no write barrier's check per append.
	col, bounds := s.col[:0], s.bounds[:0]
	widest, union := 0.0, geom.AABB{}
	add := func(i int32, c *Collider) {
		c.sorted = epoch
		col, bounds = append(col, i), append(bounds, c.bounds)
		widest = max(widest, c.bounds.Max.X-c.bounds.Min.X)
		if len(col) == 1 {
			union = c.bounds
		} else {
			union = union.Union(c.bounds)
		}
	}
	for _, i := range s.col { // col's elements are read before add overwrites them
		if c := &cols[i]; c.Kind == KindHitbox && c.epoch == epoch && c.sorted != epoch {
			add(i, c)
		}
	}
	for _, i := range placed {
		if c := &cols[i]; c.sorted != epoch {
			add(i, c)
		}
	}
	s.col, s.bounds, s.widest = col, bounds, widest
	if len(col) > 0 {
		s.union = union
	}
	s.sort()
}

// moved is update when the list's colliders are the ones placed: in the
// list's order, their bounds refreshed.
func (s *sweepX) moved(cols []Collider, epoch uint64) {
	col, bounds := s.col, s.bounds[:len(s.col)]
	widest := 0.0
	for k, i := range col {
		c := &cols[i]
		c.sorted = epoch
		bounds[k] = c.bounds
		widest = max(widest, c.bounds.Max.X-c.bounds.Min.X)
		if k == 0 {
			s.union = c.bounds
		} else {
			s.union = s.union.Union(c.bounds)
		}
	}
	s.widest = widest
	s.sort()
}

// sort is the insertion sort of the list by Min.X.
func (s *sweepX) sort() {
	col, bounds := s.col, s.bounds
	for k := 1; k < len(col); k++ {
		for j := k; j > 0 && bounds[j].Min.X < bounds[j-1].Min.X; j-- {
			bounds[j], bounds[j-1] = bounds[j-1], bounds[j]
			col[j], col[j-1] = col[j-1], col[j]
		}
	}
}

// span returns the index range of the candidates for a query with bounds q;
// each still needs a full overlap test.
func (s *sweepX) span(q geom.AABB) (int, int) {
	lo, hi := 0, len(s.bounds)
	from := q.Min.X - s.widest
	for lo < hi { // first Min.X ≥ from
		m := int(uint(lo+hi) >> 1)
		if s.bounds[m].Min.X < from {
			lo = m + 1
		} else {
			hi = m
		}
	}
	end := lo
	for end < len(s.bounds) && s.bounds[end].Min.X <= q.Max.X {
		end++
	}
	return lo, end
}
