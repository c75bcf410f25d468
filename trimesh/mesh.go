package trimesh

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/rewind-gg/rewind/geom"
)

// Mask is a set of bits the caller defines; a query considers only the
// triangles whose Mask has a bit in common with the query's.
type Mask uint8

// Triangle is one triangle of a level, with the vertices in metres.
type Triangle struct {
	A, B, C geom.Vec3
	Mask    Mask
}

// MaxCoord bounds the vertices' coordinates: a level is at most kilometres
// across, so a vertex further than this from the origin on an axis is a
// unit or export error, and the bound keeps every product the queries form
// far from overflow.
const MaxCoord = 1e6

// Mesh is a static triangle mesh in a bounding-volume hierarchy. It is never
// modified after New: any number of goroutines may query it at once.
type Mesh struct {
	root       child
	nodes      []node
	tris       []tri // in leaf order: a leaf holds a run of them
	bounds     geom.AABB
	n          int
	degenerate int
	pad        float64 // how far every box is padded
	cols       columns // the height ranges per cell, for short queries
	slot       []int32 // by index given to New: the triangle's place in tris, −1 if degenerate
}

// node is an inner node of the hierarchy. It holds its two children's boxes,
// so that a traversal tests both from the one node it has already loaded
// (a cache line) and loads a child only to enter it.
type node struct {
	box   [2]box
	ref   [2]int32 // a node's index, or a leaf's first triangle
	count [2]uint8 // 0 for a node, else the leaf's number of triangles
	mask  [2]Mask  // the union of the masks below
	_     [4]byte  // 64 bytes in all
}

// child is one of a node's children, or the root.
type child struct {
	box   box
	ref   int32
	count uint8
	mask  Mask
}

// box is an axis-aligned box as min x, y, z then max x, y, z, in float32
// rounded outward: it only decides what a query may skip, and half the size
// keeps more of the tree in the cache.
type box [6]float32

// normal returns the unit normal of t, along (B−A)×(C−A), or false if t has
// zero area to within rounding: the cross product is below 2⁻⁵⁰ (four units
// in the last place) of the product of the edges' lengths, so that its
// direction is rounding noise. Exactly collinear vertices can give such
// noise rather than 0 (a vertex halfway along an edge is rounded off it,
// and where the compiler fuses v.Y·v.Z − v.Z·v.Y into one multiply-add even
// v×v is not 0), and a normal the queries rely on must mean something. The
// conversions keep the compiler from fusing anything here, so that the same
// triangles are kept, with the same normals, on every processor.
func normal(t Triangle) (geom.Vec3, bool) {
	e1, e2 := t.B.Sub(t.A), t.C.Sub(t.A)
	n := geom.Vec3{
		X: float64(e1.Y*e2.Z) - float64(e1.Z*e2.Y),
		Y: float64(e1.Z*e2.X) - float64(e1.X*e2.Z),
		Z: float64(e1.X*e2.Y) - float64(e1.Y*e2.X),
	}
	l := math.Sqrt(sumSq(n))
	if !(l > 0x1p-50*math.Sqrt(sumSq(e1))*math.Sqrt(sumSq(e2))) {
		return geom.Vec3{}, false
	}
	return n.Scale(1 / l), true
}

// sumSq is v·v rounded product by product.
func sumSq(v geom.Vec3) float64 {
	return float64(v.X*v.X) + float64(v.Y*v.Y) + float64(v.Z*v.Z)
}

func toBox(b geom.AABB) box {
	return box{down(b.Min.X), down(b.Min.Y), down(b.Min.Z), up(b.Max.X), up(b.Max.Y), up(b.Max.Z)}
}

// down returns the largest float32 not above x; up the smallest not below.
func down(x float64) float32 {
	f := float32(x)
	if float64(f) > x {
		f = math.Nextafter32(f, float32(math.Inf(-1)))
	}
	return f
}

func up(x float64) float32 {
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// New builds the mesh of tris; the queries report triangles by their index
// in tris. A triangle with a vertex that is not finite, or further than
// MaxCoord from the origin on an axis, is refused with an error naming it.
// A triangle of zero area (to within rounding: its vertices collinear up to
// about 1e-15 of its size) is left out (see [Mesh.Degenerate]).
//
// The hierarchy is built top-down with the surface area heuristic (SAH,
// MacDonald and Booth, "Heuristics for ray tracing using space
// subdivision", 1990), evaluating every split between sorted centroids on
// all three axes (the "sweep" build; Wald, Boulos and Shirley, "Ray Tracing
// Deformable Scenes using Dynamic Bounding Volume Hierarchies", 2007). A
// level is built once, when it is loaded, so the build can afford the full
// sweep (O(n log² n): about 0.13 s for the benchmarks' 20,000 triangles) that
// binned SAH approximates to rebuild in real time; the sweep gives the best
// trees of the greedy top-down builds, and every query's cost follows the
// tree's quality. Ties in the sort fall back to the triangle's index, so the
// same triangles always give the same tree.
func New(tris []Triangle) (*Mesh, error) {
	if len(tris) > math.MaxInt32 {
		return nil, fmt.Errorf("trimesh: %d triangles, more than %d", len(tris), math.MaxInt32)
	}
	m := &Mesh{n: len(tris)}
	all := make([]tri, 0, len(tris))
	reach := 0.0 // the largest coordinate's magnitude
	for i, in := range tris {
		for k, v := range [3]geom.Vec3{in.A, in.B, in.C} {
			if !v.IsFinite() {
				return nil, fmt.Errorf("trimesh: triangle %d: vertex %c is not finite: %v", i, "ABC"[k], v)
			}
			for _, x := range v.Array() {
				if math.Abs(x) > MaxCoord {
					return nil, fmt.Errorf("trimesh: triangle %d: vertex %c = %v lies more than %g m from the origin on an axis", i, "ABC"[k], v, float64(MaxCoord))
				}
				reach = max(reach, math.Abs(x))
			}
		}
		n, ok := normal(in)
		if !ok {
			m.degenerate++
			continue
		}
		all = append(all, tri{a: in.A, b: in.B, c: in.C, n: n, index: int32(i), mask: in.Mask})
	}
	if len(all) == 0 {
		return m, nil
	}
	// Every box is padded so that rounding in the box tests, which the
	// per-triangle functions do not share, can never skip a triangle those
	// functions would report: the pad is far above the rounding of any
	// coordinate in the level.
	pad := 1e-9 * (1 + reach)
	m.pad = pad
	b := builder{prims: make([]prim, len(all)), scratch: make([]float64, len(all))}
	for i := range all {
		t := &all[i]
		bb := geom.AABB{Min: t.a.Min(t.b).Min(t.c), Max: t.a.Max(t.b).Max(t.c)}
		if i == 0 {
			m.bounds = bb
		}
		m.bounds = m.bounds.Union(bb)
		bb = bb.Expand(pad)
		t.box = toBox(bb)
		b.prims[i] = prim{box: bb, centroid: t.a.Add(t.b).Add(t.c), index: int32(i), mask: t.mask}
	}
	m.root = b.build(0, len(all), 0)
	m.nodes = b.nodes
	m.tris = make([]tri, len(all))
	m.slot = make([]int32, len(tris))
	for i := range m.slot {
		m.slot[i] = -1
	}
	for i, p := range b.prims {
		m.tris[i] = all[p.index]
		m.slot[all[p.index].index] = int32(i)
	}
	m.cols = newColumns(m.tris, m.bounds)
	return m, nil
}

// Len returns the number of triangles given to New, degenerate ones
// included: the queries' triangle indices are below it.
func (m *Mesh) Len() int { return m.n }

// Triangle returns triangle i as given to New; false for a degenerate one
// or an index out of range.
func (m *Mesh) Triangle(i int) (Triangle, bool) {
	if i < 0 || i >= len(m.slot) || m.slot[i] < 0 {
		return Triangle{}, false
	}
	t := &m.tris[m.slot[i]]
	return Triangle{A: t.a, B: t.b, C: t.c, Mask: t.mask}, true
}

// Normal returns the unit normal of triangle i (its index given to New), on
// its front: along (B−A)×(C−A), exactly as the queries compute it: a Hit on
// the inside of a triangle's face has this normal or its opposite, bit for
// bit. False for a degenerate triangle or an index out of range.
func (m *Mesh) Normal(i int) (geom.Vec3, bool) {
	if i < 0 || i >= len(m.slot) || m.slot[i] < 0 {
		return geom.Vec3{}, false
	}
	return m.tris[m.slot[i]].n, true
}

// Degenerate returns how many of the triangles given to New have zero area
// and were left out: no query reports them.
func (m *Mesh) Degenerate() int { return m.degenerate }

// Bounds returns the bounding box of the mesh's triangles (the degenerate
// ones left out); the zero box when there are none.
func (m *Mesh) Bounds() geom.AABB { return m.bounds }

// The SAH's costs: a box test against a triangle test. A triangle test costs
// from about one box test (a ray) to tens of them (a capsule); 1, 2 and 4
// gave queries within 5% of each other on the benchmarks' level.
const (
	costBox  = 1.0
	costTri  = 2.0
	maxLeaf  = 8  // a leaf holds at most this many triangles
	sahDepth = 64 // below this depth, split at the median: the tree stays under stackSize deep
)

// stackSize bounds the traversal stacks: the tree is at most sahDepth plus
// the 31 median splits that 2³¹ triangles allow deep, and a traversal keeps
// at most one entry per level, plus one.
const stackSize = sahDepth + 40

type builder struct {
	prims   []prim
	scratch []float64 // the areas of the prefixes' boxes, for the sweep
	nodes   []node
}

type prim struct {
	box      geom.AABB
	centroid geom.Vec3 // a+b+c: the centroid times 3, enough to sort by
	index    int32
	mask     Mask
}

// build appends the subtree of b.prims[lo:hi], which it reorders, and
// returns it as a child: a leaf, or the node at its root.
func (b *builder) build(lo, hi, depth int) child {
	ps := b.prims[lo:hi]
	bounds, mask := ps[0].box, Mask(0)
	for _, p := range ps {
		bounds, mask = bounds.Union(p.box), mask|p.mask
	}
	leaf := child{box: toBox(bounds), ref: int32(lo), count: uint8(len(ps)), mask: mask}
	if len(ps) == 1 {
		return leaf
	}
	axis, split, sorted := 0, len(ps)/2, -1
	if depth < sahDepth {
		bestCost := math.Inf(1)
		for a := range 3 {
			sortAxis(ps, a)
			acc := ps[0].box
			for i := 1; i < len(ps); i++ {
				b.scratch[i] = area(acc) * float64(i)
				acc = acc.Union(ps[i].box)
			}
			acc = ps[len(ps)-1].box
			for i := len(ps) - 1; i > 0; i-- {
				if c := b.scratch[i] + area(acc)*float64(len(ps)-i); c < bestCost {
					bestCost, axis, split = c, a, i
				}
				acc = acc.Union(ps[i-1].box)
			}
		}
		sorted = 2
		leafCost := costTri * float64(len(ps))
		splitCost := costBox + costTri*bestCost/area(bounds)
		if len(ps) <= maxLeaf && leafCost <= splitCost {
			return leaf
		}
	} else {
		c := geom.AABB{Min: ps[0].centroid, Max: ps[0].centroid}
		for _, p := range ps {
			c = c.Union(geom.AABB{Min: p.centroid, Max: p.centroid})
		}
		ext := c.Max.Sub(c.Min)
		if ext.Y > ext.X {
			axis = 1
		}
		if ext.Z > max(ext.X, ext.Y) {
			axis = 2
		}
	}
	if axis != sorted {
		sortAxis(ps, axis)
	}
	self := len(b.nodes)
	b.nodes = append(b.nodes, node{})
	l, r := b.build(lo, lo+split, depth+1), b.build(lo+split, hi, depth+1)
	b.nodes[self] = node{
		box:   [2]box{l.box, r.box},
		ref:   [2]int32{l.ref, r.ref},
		count: [2]uint8{l.count, r.count},
		mask:  [2]Mask{l.mask, r.mask},
	}
	return child{box: leaf.box, ref: int32(self), mask: mask}
}

func sortAxis(ps []prim, axis int) {
	slices.SortFunc(ps, func(p, q prim) int {
		if c := cmp.Compare(p.centroid.Array()[axis], q.centroid.Array()[axis]); c != 0 {
			return c
		}
		return cmp.Compare(p.index, q.index)
	})
}

// area returns half the surface area of b: the SAH needs only ratios.
func area(b geom.AABB) float64 {
	e := b.Max.Sub(b.Min)
	return e.X*e.Y + e.Y*e.Z + e.Z*e.X
}
