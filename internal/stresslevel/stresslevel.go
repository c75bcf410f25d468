// Package stresslevel builds procedural collision geometry for tests and
// benchmarks: boxes, heightfield grids, and a stress level of rolling hills
// with crates, walls and pillars on it, the same triangles from the same
// seed on every run.
//
// It returns its own Triangle rather than trimesh's so that trimesh's own
// tests can use it without an import cycle; a caller converts.
package stresslevel

import (
	"math/rand/v2"

	"github.com/rewind-gg/rewind/geom"
)

// Triangle is a triangle of generated geometry, with the mask bits a
// trimesh.Triangle takes: 1 blocks movement, 2 blocks shots.
type Triangle struct {
	A, B, C geom.Vec3
	Mask    uint8
}

// Box returns the 12 triangles of the box lo–hi, wound outward.
func Box(lo, hi geom.Vec3, mask uint8) []Triangle {
	c := func(i int) geom.Vec3 { // corner i: bit 0 x, bit 1 y, bit 2 z
		v := lo
		if i&1 != 0 {
			v.X = hi.X
		}
		if i&2 != 0 {
			v.Y = hi.Y
		}
		if i&4 != 0 {
			v.Z = hi.Z
		}
		return v
	}
	quads := [6][4]int{
		{0, 4, 6, 2}, {1, 3, 7, 5}, // -x, +x
		{0, 1, 5, 4}, {2, 6, 7, 3}, // -y, +y
		{0, 2, 3, 1}, {4, 5, 7, 6}, // -z, +z
	}
	out := make([]Triangle, 0, 12)
	for _, q := range quads {
		out = append(out,
			Triangle{A: c(q[0]), B: c(q[1]), C: c(q[2]), Mask: mask},
			Triangle{A: c(q[0]), B: c(q[2]), C: c(q[3]), Mask: mask})
	}
	return out
}

// Grid returns a heightfield of nx × nz square cells of size cell from
// (x0, z0), with the heights h(i, j) at the grid's vertices and the cells'
// diagonals alternating, wound with the normal up.
func Grid(nx, nz int, x0, z0, cell float64, h func(i, j int) float64, mask uint8) []Triangle {
	p := func(i, j int) geom.Vec3 { return geom.V(x0+float64(i)*cell, h(i, j), z0+float64(j)*cell) }
	out := make([]Triangle, 0, 2*nx*nz)
	for i := range nx {
		for j := range nz {
			a, b, c, d := p(i, j), p(i+1, j), p(i+1, j+1), p(i, j+1)
			if (i+j)%2 == 0 {
				out = append(out, Triangle{A: a, B: c, C: b, Mask: mask}, Triangle{A: a, B: d, C: c, Mask: mask})
			} else {
				out = append(out, Triangle{A: a, B: d, C: b, Mask: mask}, Triangle{A: b, B: d, C: c, Mask: mask})
			}
		}
	}
	return out
}

// Level is a procedural level for benchmarks and random tests: a
// cells × cells heightfield of 1 m cells centred on the origin (rolling
// hills from 0 to 4 m high, from a coarse random lattice bilinearly
// interpolated) and boxes (crates, walls and pillars) standing on it. The
// terrain and most boxes block both movement and shots (mask 3), a tenth of
// the boxes only movement (1, a clip brush) and a tenth only shots (2, a
// fence). Level(7, 90, 320) has 20,040 triangles.
func Level(seed uint64, cells, boxes int) []Triangle {
	rng := rand.New(rand.NewPCG(seed, 0x7269))
	f := func(lo, hi float64) float64 { return lo + rng.Float64()*(hi-lo) }
	const coarse = 8
	lattice := make([][]float64, cells/coarse+2)
	for i := range lattice {
		lattice[i] = make([]float64, cells/coarse+2)
		for j := range lattice[i] {
			lattice[i][j] = f(0, 4)
		}
	}
	height := func(i, j int) float64 {
		ci, cj := i/coarse, j/coarse
		u, v := float64(i%coarse)/coarse, float64(j%coarse)/coarse
		return (1-u)*(1-v)*lattice[ci][cj] + u*(1-v)*lattice[ci+1][cj] + (1-u)*v*lattice[ci][cj+1] + u*v*lattice[ci+1][cj+1]
	}
	half := float64(cells) / 2
	out := Grid(cells, cells, -half, -half, 1, height, 3)
	for range boxes {
		x, z := f(-half, half-3), f(-half, half-3)
		y := height(int(x+half), int(z+half)) - 0.5
		var size geom.Vec3
		switch rng.IntN(3) {
		case 0: // crate
			s := f(0.5, 1.5)
			size = geom.V(s, s, s)
		case 1: // wall
			size = geom.V(f(2, 3), f(2, 4), f(0.05, 0.3))
			if rng.IntN(2) == 0 {
				size.X, size.Z = size.Z, size.X
			}
		default: // pillar
			s := f(0.3, 0.8)
			size = geom.V(s, f(3, 8), s)
		}
		mask := uint8(3)
		if k := rng.IntN(10); k == 0 {
			mask = 1 // a clip brush: blocks movement, not shots
		} else if k == 1 {
			mask = 2 // a fence: blocks shots, not movement
		}
		lo := geom.V(x, y, z)
		out = append(out, Box(lo, lo.Add(size), mask)...)
	}
	return out
}
