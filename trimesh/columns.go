package trimesh

import (
	"math"
	"math/bits"

	"github.com/rewind-gg/rewind/geom"
)

// columns is a coarse grid over the mesh's extent on X and Z: for every
// cell, and every mask bit the triangles use, the range of heights of the
// triangles with that bit whose (padded) boxes reach into the cell. A short
// query whose swept box meets none of those ranges in the cells it covers
// can touch no triangle, and skips the tree. In a room most queries are
// such: a projectile's step of a metre or two through open air, above a
// floor or beside a wall, which the tree would descend several levels to
// rule out.
//
// It only ever skips what the tree would not report: a triangle's range
// covers its padded box, the very box the traversal tests.
type columns struct {
	x0, z0 float64 // the grid's corner
	inv    float64 // cells per metre
	nx, nz int
	slot   [8]int8 // each mask bit's index among the used bits, -1: unused
	slots  int
	// ys holds, for cell (i, j) and slot s, at (i*nz+j)*slots+s, the
	// lowest and highest heights reached (an empty cell: +Inf, −Inf).
	ys [][2]float32
}

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
	for b := range 8 {
		if used&(1<<b) != 0 {
			c.slot[b] = int8(c.slots)
			c.slots++
		}
	}
	ext := max(bounds.Max.X-bounds.Min.X, bounds.Max.Z-bounds.Min.Z)
	cell := max(minColumn, ext/maxColumns)
	c.x0, c.z0, c.inv = bounds.Min.X, bounds.Min.Z, 1/cell
	c.nx = min(int((bounds.Max.X-bounds.Min.X)*c.inv)+1, maxColumns+1)
	c.nz = min(int((bounds.Max.Z-bounds.Min.Z)*c.inv)+1, maxColumns+1)
	c.ys = make([][2]float32, c.nx*c.nz*c.slots)
	for i := range c.ys {
		c.ys[i] = [2]float32{float32(math.Inf(1)), float32(math.Inf(-1))}
	}
	for k := range tris {
		t := &tris[k]
		i0, i1, j0, j1 := c.span(float64(t.box[0]), float64(t.box[3]), float64(t.box[2]), float64(t.box[5]))
		for m := t.mask; m != 0; m &= m - 1 {
			s := int(c.slot[bits.TrailingZeros8(uint8(m))])
			for i := i0; i <= i1; i++ {
				for j := j0; j <= j1; j++ {
					y := &c.ys[(i*c.nz+j)*c.slots+s]
					y[0], y[1] = min(y[0], t.box[1]), max(y[1], t.box[4])
				}
			}
		}
	}
	return c
}

// span returns the cells from x0 to x1 and from z0 to z1, clamped to the
// grid (an empty span when the range lies off it).
func (c *columns) span(x0, x1, z0, z1 float64) (i0, i1, j0, j1 int) {
	return max(cell((x0-c.x0)*c.inv, c.nx), 0), min(cell((x1-c.x0)*c.inv, c.nx), c.nx-1),
		max(cell((z0-c.z0)*c.inv, c.nz), 0), min(cell((z1-c.z0)*c.inv, c.nz), c.nz-1)
}

// cell returns ⌊v⌋ clamped to −1..n.
func cell(v float64, n int) int {
	switch {
	case v < 0:
		return -1
	case v >= float64(n):
		return n
	}
	return int(v)
}

// empty reports whether no triangle of mask can lie in the box lo–hi: the
// box covers at most queryCells cells, and in none of them does a height
// range of mask's bits meet the box's. A box covering more cells is not
// ruled out (false).
func (c *columns) empty(lo, hi geom.Vec3, mask Mask) bool {
	if c.slots == 0 {
		return true
	}
	if !(lo.X <= hi.X && lo.Y <= hi.Y && lo.Z <= hi.Z) { // NaN: let the tree decide
		return false
	}
	i0, i1, j0, j1 := c.span(lo.X, hi.X, lo.Z, hi.Z)
	if i0 > i1 || j0 > j1 {
		return true // off the grid: no triangle there
	}
	if (i1-i0+1)*(j1-j0+1) > queryCells {
		return false
	}
	for i := i0; i <= i1; i++ {
		for j := j0; j <= j1; j++ {
			base := (i*c.nz + j) * c.slots
			for m := mask; m != 0; m &= m - 1 {
				s := c.slot[bits.TrailingZeros8(uint8(m))]
				if s < 0 {
					continue
				}
				y := c.ys[base+int(s)]
				if float64(y[0]) <= hi.Y && float64(y[1]) >= lo.Y {
					return false
				}
			}
		}
	}
	return true
}
