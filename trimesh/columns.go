package trimesh

import (
	"math"
	"math/bits"

	"github.com/rewind-gg/rewind/geom"
)

// columns is a coarse grid over the mesh's extent on X and Z: for every
// cell, and every mask bit the triangles use, the range of heights of the
// triangles with that bit whose (padded) boxes reach into the cell, and the
// same for each of the cell's 4×4 sub-cells. A short query whose swept box
// meets none of those ranges in the cells it covers, or, where it meets a
// cell's, none in the sub-cells it covers there, can touch no triangle,
// and skips the tree. In a room most queries are such: a projectile's step
// of a metre or two through open air, above a floor or beside a wall,
// which the tree would descend several levels to rule out.
//
// It only ever skips what the tree would not report: a triangle's range
// covers its padded box, the very box the traversal tests, in every cell
// and sub-cell the box reaches, and the cells (sub-cells, levels) of a
// coordinate never decrease with it, so a box that meets a triangle's
// meets it in a cell and a sub-cell that both cover.
//
// A room asks it hundreds of times a tick between other work that takes
// the cache, so the cells are small: heights are kept as 16-bit levels of
// the mesh's height (rounded outward, as the boxes are), each mask bit's
// grid on its own (33 KB a bit for the benchmarks' 90 m level). The
// sub-cells, 16 times as many, are only read where a query meets a cell's
// range: one cache line a cell.
type columns struct {
	x0, z0 float64 // the grid's corner
	inv    float64 // cells per metre
	nx, nz int
	fx, fz float64 // nx−1 and nz−1, the last cells
	y0     float64 // the height of level 0
	yinv   float64 // levels per metre
	slot   [8]int8 // each mask bit's index among the used bits, -1: unused
	// cells holds slot s's grid from s*nx*nz, cell (i, j) at i*nz+j, so
	// that the cells a query covers along Z lie side by side.
	cells []span16
	// subs holds, for each of cells, its subs×subs sub-cells' ranges (sub
	// (a, b), along X and Z, at a*subs+b): a query that meets a cell's
	// range is asked again of the sub-cells it covers, one cache line.
	subs [][subs * subs]span16
}

// span16 is a cell's range of heights, in levels: an empty cell's is
// maxLevel to 0, which no query's range meets but one spanning every level.
type span16 struct{ lo, hi uint16 }

// Cells of the column grid: at least minColumn metres, and at most
// maxColumns a side (a kilometre-wide level gets 4 m cells). A metre is
// about a rocket's step at 20 Hz and a character's width: on rolling
// ground a cell's height range is then little more than the ground's, and
// a step that passes above it skips the tree.
const (
	minColumn  = 1.0
	maxColumns = 256
	// queryCells bounds the cells a query's swept box may cover for the
	// grid to be asked first: a longer query (a 100 m shot) goes straight
	// to the tree, which prunes better over a distance.
	queryCells = 16
	// maxLevel is the highest of the height levels: the mesh's height is
	// cut into about 65,000 (a third of a millimetre on a 20 m high level).
	maxLevel = math.MaxUint16
	// subs is how many sub-cells a cell has along X and along Z. Rolling
	// ground rises within a cell: a rocket that skims it meets the
	// cell's range but seldom a quarter metre's.
	subs = 4
)

func newColumns(tris []tri, bounds geom.AABB) columns {
	var c columns
	for i := range c.slot {
		c.slot[i] = -1
	}
	var used Mask
	for i := range tris {
		used |= tris[i].mask
	}
	slots := 0
	for b := range 8 {
		if used&(1<<b) != 0 {
			c.slot[b] = int8(slots)
			slots++
		}
	}
	ext := max(bounds.Max.X-bounds.Min.X, bounds.Max.Z-bounds.Min.Z)
	cell := max(minColumn, ext/maxColumns)
	c.x0, c.z0, c.inv = bounds.Min.X, bounds.Min.Z, 1/cell
	c.nx = min(int((bounds.Max.X-bounds.Min.X)*c.inv)+1, maxColumns+1)
	c.nz = min(int((bounds.Max.Z-bounds.Min.Z)*c.inv)+1, maxColumns+1)
	c.fx, c.fz = float64(c.nx-1), float64(c.nz-1)
	// Level 0 and the top level are left for the heights a little below
	// and above the mesh's, where the boxes' pads reach.
	c.y0, c.yinv = bounds.Min.Y, 1.0
	if h := bounds.Max.Y - bounds.Min.Y; h > 0 {
		c.yinv = (maxLevel - 2) / h
	}
	c.y0 -= 1 / c.yinv
	c.cells = make([]span16, c.nx*c.nz*slots)
	c.subs = make([][subs * subs]span16, len(c.cells))
	for i := range c.cells {
		c.cells[i] = span16{lo: maxLevel}
		for k := range c.subs[i] {
			c.subs[i][k] = span16{lo: maxLevel}
		}
	}
	for k := range tris {
		t := &tris[k]
		i0, i1, j0, j1, ok := c.span(float64(t.box[0]), float64(t.box[3]), float64(t.box[2]), float64(t.box[5]))
		if !ok {
			continue
		}
		lo, hi := c.level(float64(t.box[1])), c.level(float64(t.box[4]))
		for m := t.mask; m != 0; m &= m - 1 {
			base := int(c.slot[bits.TrailingZeros8(uint8(m))]) * c.nx * c.nz
			for i := i0; i <= i1; i++ {
				for j := j0; j <= j1; j++ {
					k := base + i*c.nz + j
					y := &c.cells[k]
					y.lo, y.hi = min(y.lo, lo), max(y.hi, hi)
					a0, a1, b0, b1 := c.subSpan(i, j, float64(t.box[0]), float64(t.box[3]), float64(t.box[2]), float64(t.box[5]))
					for a := a0; a <= a1; a++ {
						for b := b0; b <= b1; b++ {
							y := &c.subs[k][a*subs+b]
							y.lo, y.hi = min(y.lo, lo), max(y.hi, hi)
						}
					}
				}
			}
		}
	}
	return c
}

// subSpan returns the sub-cells of cell (i, j) from x0 to x1 and from z0
// to z1 (neither NaN), clamped to the cell's. A sub-cell's index never
// decreases with the coordinate.
func (c *columns) subSpan(i, j int, x0, x1, z0, z1 float64) (a0, a1, b0, b1 int) {
	fi, fj := float64(subs*i), float64(subs*j)
	const last = subs - 1
	return int(min(max((x0-c.x0)*c.inv*subs-fi, 0), last)), int(min(max((x1-c.x0)*c.inv*subs-fi, 0), last)),
		int(min(max((z0-c.z0)*c.inv*subs-fj, 0), last)), int(min(max((z1-c.z0)*c.inv*subs-fj, 0), last))
}

// level returns the height level of y (not NaN), clamped to 0..maxLevel. A
// level never decreases with the height, so two ranges of heights that
// meet have ranges of levels that meet.
func (c *columns) level(y float64) uint16 {
	return uint16(min(max((y-c.y0)*c.yinv, 0), maxLevel))
}

// span returns the cells from x0 to x1 and from z0 to z1 (neither NaN),
// clamped to the grid, and false when the range lies off it. A cell's
// index never decreases with the coordinate.
func (c *columns) span(x0, x1, z0, z1 float64) (i0, i1, j0, j1 int, ok bool) {
	u0, u1 := (x0-c.x0)*c.inv, (x1-c.x0)*c.inv
	v0, v1 := (z0-c.z0)*c.inv, (z1-c.z0)*c.inv
	if u1 < 0 || v1 < 0 || u0 >= c.fx+1 || v0 >= c.fz+1 {
		return 0, 0, 0, 0, false
	}
	return int(max(u0, 0)), int(min(u1, c.fx)), int(max(v0, 0)), int(min(v1, c.fz)), true
}

// empty reports whether no triangle of mask can lie in the box lo–hi: the
// box covers at most queryCells cells, and in none of them does a height
// range of mask's bits meet the box's. A box covering more cells is not
// ruled out (false).
func (c *columns) empty(lo, hi geom.Vec3, mask Mask) bool {
	if len(c.cells) == 0 {
		return true
	}
	if !(lo.X <= hi.X && lo.Y <= hi.Y && lo.Z <= hi.Z) { // NaN: let the tree decide
		return false
	}
	i0, i1, j0, j1, ok := c.span(lo.X, hi.X, lo.Z, hi.Z)
	if !ok {
		return true // off the grid: no triangle there
	}
	if (i1-i0+1)*(j1-j0+1) > queryCells {
		return false
	}
	ylo, yhi := c.level(lo.Y), c.level(hi.Y)
	for m := mask; m != 0; m &= m - 1 {
		s := int(c.slot[bits.TrailingZeros8(uint8(m))])
		if s < 0 {
			continue
		}
		base := s * c.nx * c.nz
		for i := i0; i <= i1; i++ {
			for j := j0; j <= j1; j++ {
				k := base + i*c.nz + j
				if y := c.cells[k]; y.lo <= yhi && y.hi >= ylo && !c.subsEmpty(k, i, j, lo, hi, ylo, yhi) {
					return false
				}
			}
		}
	}
	return true
}

// subsEmpty reports whether cell k, (i, j), has no sub-cell in lo–hi
// whose range meets the levels ylo–yhi.
func (c *columns) subsEmpty(k, i, j int, lo, hi geom.Vec3, ylo, yhi uint16) bool {
	a0, a1, b0, b1 := c.subSpan(i, j, lo.X, hi.X, lo.Z, hi.Z)
	sub := &c.subs[k]
	for a := a0; a <= a1; a++ {
		for _, y := range sub[a*subs+b0 : a*subs+b1+1] {
			if y.lo <= yhi && y.hi >= ylo {
				return false
			}
		}
	}
	return true
}
