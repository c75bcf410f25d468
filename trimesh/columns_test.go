package trimesh

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rewind-gg/rewind/geom"
)

// meets reports whether the padded box of some triangle of mask meets
// lo–hi: what the column grid must never rule out.
func (m *Mesh) meets(lo, hi geom.Vec3, mask Mask) bool {
	for i := range m.tris {
		b := &m.tris[i].box
		if m.tris[i].mask&mask != 0 && float64(b[0]) <= hi.X && float64(b[3]) >= lo.X &&
			float64(b[1]) <= hi.Y && float64(b[4]) >= lo.Y && float64(b[2]) <= hi.Z && float64(b[5]) >= lo.Z {
			return true
		}
	}
	return false
}

// coarseMeets reports whether a cell lo–hi covers has a height range of
// mask's bits that meets lo–hi's: the grid then rules the box out only by
// the cells' sub-cells.
func (c *columns) coarseMeets(lo, hi geom.Vec3, mask Mask) bool {
	i0, i1, j0, j1, ok := c.span(lo.X, hi.X, lo.Z, hi.Z)
	if !ok {
		return false
	}
	ylo, yhi := c.level(lo.Y), c.level(hi.Y)
	for b := range 8 {
		s := c.slot[b]
		if mask&(1<<b) == 0 || s < 0 {
			continue
		}
		for i := i0; i <= i1; i++ {
			for j := j0; j <= j1; j++ {
				if y := c.cells[int(s)*c.nx*c.nz+i*c.nz+j]; y.lo <= yhi && y.hi >= ylo {
					return true
				}
			}
		}
	}
	return false
}

// stepGen makes the short queries of a room's projectiles over a mesh: a
// step of up to 3 m from anywhere around it, or skimming a surface (from
// just above or beside a point of a triangle, nearly along it), the
// queries the column grid's sub-cells decide.
type stepGen struct {
	*queryGen
}

func (g stepGen) step() (o, d geom.Vec3, maxT, r float64) {
	r, maxT = g.f(0.01, 0.4), g.f(0, 3)
	if g.rng.IntN(3) == 0 {
		return g.anywhere(), g.unit(), maxT, r
	}
	t, n := g.target()
	d = g.perpendicular(n).AddScaled(n, g.f(-0.3, 0.3)).Normalize()
	o = g.inTriangle(t).AddScaled(n, r+math.Pow(10, g.f(-4, 0.3))*float64(1-2*g.rng.IntN(2))).AddScaled(d, -g.f(0, 2))
	return o, d, maxT, r
}

func columnsMeshes() map[string][]Triangle {
	out := meshesForTests()
	out["stress-large"] = stressLevel(7, 90, 320)
	return out
}

// The column grid rules out a box only where no triangle's padded box
// meets it (the boxes the tree tests), however it decides: by the cells'
// height ranges or by their sub-cells'.
func TestColumnsRuleOutOnlyEmptyBoxes(t *testing.T) {
	t.Parallel()
	for name, tris := range columnsMeshes() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := mustNew(t, tris)
			g := stepGen{&queryGen{gen: newGen(uint64(len(tris)) + 7), tris: tris, bounds: m.Bounds()}}
			const n = 4000
			var empty, bySubs int
			for i := range n {
				o, d, maxT, r := g.step()
				mask := g.queryMask()
				lo, hi := m.swept(o, o, r, d, maxT)
				if !m.cols.empty(lo, hi, mask) {
					continue
				}
				empty++
				if m.cols.coarseMeets(lo, hi, mask) {
					bySubs++
				}
				if m.meets(lo, hi, mask) {
					t.Fatalf("box %d (%v–%v, mask %d) ruled out, but a triangle's box meets it", i, lo, hi, mask)
				}
			}
			if empty < n/5 || (len(tris) > 100 && bySubs < n/100) {
				t.Errorf("%d of %d boxes ruled out, %d by sub-cells: the test does not exercise both", empty, n, bySubs)
			}
		})
	}
}

// A projectile's steps (swept spheres and rays of up to 3 m, many
// skimming a surface) get the brute force's answers bit for bit, on the
// stress level as large as the benchmarks' and on the random meshes,
// where the grid rules them out and where the tree answers.
func TestProjectileStepsMatchBruteForce(t *testing.T) {
	t.Parallel()
	for name, tris := range columnsMeshes() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := mustNew(t, tris)
			g := stepGen{&queryGen{gen: newGen(uint64(len(tris)) + 8), tris: tris, bounds: m.Bounds()}}
			n := 3000
			if len(tris) > 10000 {
				n = 1000 // the brute force asks 20,000 triangles each time
			}
			var hits, skipped int
			for i := range n {
				o, d, maxT, r := g.step()
				mask := g.queryMask()
				if m.clear(o, o, r, d, maxT, mask) {
					skipped++
				}
				h1, ok1 := m.SweepSphere(o, r, d, maxT, mask)
				h2, ok2 := m.bruteSweepSphere(o, r, d, maxT, mask)
				if !sameHit(h1, ok1, h2, ok2) {
					t.Fatalf("sphere %d (c=%v r=%v d=%v maxT=%v mask=%d): tree %+v %v, brute %+v %v", i, o, r, d, maxT, mask, h1, ok1, h2, ok2)
				}
				if ok1 {
					hits++
				}
				h1, ok1 = m.Raycast(o, d, maxT, mask)
				h2, ok2 = m.bruteRaycast(o, d, maxT, mask)
				if !sameHit(h1, ok1, h2, ok2) {
					t.Fatalf("ray %d (o=%v d=%v maxT=%v mask=%d): tree %+v %v, brute %+v %v", i, o, d, maxT, mask, h1, ok1, h2, ok2)
				}
			}
			if skipped < n/10 || hits < n/10 {
				t.Errorf("%d of %d steps skipped the tree, %d hit: the test does not exercise both", skipped, n, hits)
			}
		})
	}
}

// A Near gathers exactly the triangles of its mask whose boxes meet the
// box, in the tree's leaf order, or nothing (the tree answers) when they
// are more than NearRoom.
func TestNearGathersEveryTriangle(t *testing.T) {
	t.Parallel()
	for name, tris := range columnsMeshes() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := mustNew(t, tris)
			g := newGen(uint64(len(tris)) + 9)
			b := m.Bounds().Expand(1)
			var full, gathered int
			for i := range 500 {
				lo := geom.V(g.f(b.Min.X, b.Max.X), g.f(b.Min.Y, b.Max.Y), g.f(b.Min.Z, b.Max.Z))
				hi := lo.Add(g.v(0, 3))
				if i%8 == 0 {
					hi = lo.Add(g.v(0, 15)) // more than NearRoom, where the mesh is dense
				}
				mask := Mask(g.rng.IntN(4))
				nr := NewNear(m, mask, 0)
				nr.gather(lo, hi)
				qb := toBox(geom.AABB{Min: lo, Max: hi})
				var want []int32
				for k := range m.tris {
					if m.tris[k].mask&mask != 0 && m.tris[k].box.overlaps(&qb) {
						want = append(want, int32(k))
					}
				}
				if len(want) > NearRoom {
					full++
					if nr.ok {
						t.Fatalf("box %d (%v–%v, mask %d): gathered %d of %d triangles, more than NearRoom", i, lo, hi, mask, nr.n, len(want))
					}
					continue
				}
				gathered += len(want)
				if !nr.ok || !slices.Equal(nr.slots[:nr.n], want) {
					t.Fatalf("box %d (%v–%v, mask %d): gathered %v (ok %v), want %v", i, lo, hi, mask, nr.slots[:nr.n], nr.ok, want)
				}
			}
			if gathered == 0 || (len(tris) > 1000 && full == 0) {
				t.Errorf("%d triangles gathered, %d boxes too full: the test does not exercise both", gathered, full)
			}
		})
	}
}

// TestSweptPointIsSwept compares a point's swept box with the segment's
// of the point to itself, bit for bit (a NaN as a NaN), over coordinates
// and directions of either zero, NaN and infinity.
func TestSweptPointIsSwept(t *testing.T) {
	m, err := New([]Triangle{{A: geom.V(0, 0, 0), B: geom.V(1, 0, 0), C: geom.V(0, 0, 1), Mask: 1}})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 40))
	pick := func() float64 {
		switch rng.IntN(10) {
		case 0:
			return 0
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return math.NaN()
		case 3:
			return math.Inf(1 - 2*rng.IntN(2))
		}
		return rng.Float64()*20 - 10
	}
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) || (x != x && y != y) }
	for i := range 100000 {
		o, d := geom.V(pick(), pick(), pick()), geom.V(pick(), pick(), pick())
		r, maxT := math.Abs(pick()), pick()
		lo, hi := m.sweptPoint(o, r, d, maxT)
		wlo, whi := m.swept(o, o, r, d, maxT)
		for k, pair := range [][2]float64{{lo.X, wlo.X}, {lo.Y, wlo.Y}, {lo.Z, wlo.Z}, {hi.X, whi.X}, {hi.Y, whi.Y}, {hi.Z, whi.Z}} {
			if !same(pair[0], pair[1]) {
				t.Fatalf("case %d, coordinate %d: sweptPoint(%v, %v, %v, %v) gives %v, swept %v", i, k, o, r, d, maxT, pair[0], pair[1])
			}
		}
	}
}
