package trimesh

import (
	"testing"

	"github.com/rewind-gg/rewind/geom"
)

// A Near answers as the tree does, bit for bit: every query of
// TestTreeMatchesBruteForce's kinds, short and long, one after another
// through caches of each mask with margins from none to one so wide that
// its box holds more than NearRoom triangles (the tree answers), and of
// other masks (the tree answers). Most of the short ones come from the list.
func TestNearMatchesTree(t *testing.T) {
	t.Parallel()
	for name, tris := range meshesForTests() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := mustNew(t, tris)
			g := &queryGen{gen: newGen(uint64(len(tris)) + 1), tris: tris, bounds: m.Bounds()}
			margins := []float64{0, 0.5, 2, 50}
			var nears [4][4]*Near // by mask 0–3 and margin
			for k := range nears {
				for j, margin := range margins {
					nears[k][j] = NewNear(m, Mask(k), margin)
				}
			}
			const n = 3000
			listed := 0
			var a, b geom.Vec3
			for i := range n {
				o, d := g.motion()
				maxT, mask := g.maxT(), g.queryMask()
				nr := nears[int(mask)%4][g.rng.IntN(len(margins))]
				if mask > 3 && g.rng.IntN(2) == 0 {
					nr = nears[3][1] // another mask than the query's
				}
				r := g.f(0.01, 1)
				if i%4 == 0 {
					a, b = g.capsule(o, r)
				} else { // short, beside the last: a character's probes
					step := g.v(-0.1, 0.1)
					a, b, o, maxT = a.Add(step), b.Add(step), a.Add(step), g.f(0, 0.5)
					nr = nears[1][1+g.rng.IntN(2)]
					mask = 1
				}
				h1, ok1 := nr.SweepCapsule(a, b, r, d, maxT, mask)
				if lo, hi := m.swept(a, b, r, d, maxT); nr.tried && nr.ok && nr.mask == mask && lo.X >= nr.lo.X && lo.Y >= nr.lo.Y && lo.Z >= nr.lo.Z && hi.X <= nr.hi.X && hi.Y <= nr.hi.Y && hi.Z <= nr.hi.Z {
					listed++
				}
				h2, ok2 := m.SweepCapsule(a, b, r, d, maxT, mask)
				if !sameHit(h1, ok1, h2, ok2) {
					t.Fatalf("capsule %d (a=%v b=%v r=%v d=%v maxT=%v mask=%d): near %+v %v, tree %+v %v", i, a, b, r, d, maxT, mask, h1, ok1, h2, ok2)
				}
				// The same sweep again, longer or shorter: the last one's
				// answer gives it, or it is asked.
				for _, k := range []float64{1, 0.5, 2, 0} {
					l := maxT * k
					switch i % 8 {
					case 1:
						l = h2.T + (k-1)*1e-12 // just short of, at and past the contact
					case 2:
						l = h2.T + (k-1)*1e-6
					case 3:
						l = maxT + (k-1)*1e-12
					}
					h1, ok1 = nr.SweepCapsule(a, b, r, d, l, mask)
					h2, ok2 := m.SweepCapsule(a, b, r, d, l, mask)
					if !sameHit(h1, ok1, h2, ok2) {
						t.Fatalf("capsule %d again for %v (a=%v b=%v r=%v d=%v mask=%d): near %+v %v, tree %+v %v", i, l, a, b, r, d, mask, h1, ok1, h2, ok2)
					}
				}
				h1, ok1 = nr.Raycast(o, d, maxT, mask)
				h2, ok2 = m.Raycast(o, d, maxT, mask)
				if !sameHit(h1, ok1, h2, ok2) {
					t.Fatalf("ray %d (o=%v d=%v maxT=%v mask=%d): near %+v %v, tree %+v %v", i, o, d, maxT, mask, h1, ok1, h2, ok2)
				}
				c1 := nr.OverlapCapsule(a, b, r, mask, nil)
				c2 := m.OverlapCapsule(a, b, r, mask, nil)
				if !sameContacts(c1, c2) {
					t.Fatalf("overlap %d (a=%v b=%v r=%v mask=%d): near %+v, tree %+v", i, a, b, r, mask, c1, c2)
				}
			}
			if listed < n/2 {
				t.Errorf("only %d of %d capsule sweeps were answered from a near's list", listed, n)
			}
		})
	}
}

// An empty Near (of a nil mesh) finds nothing, as an empty world.
func TestNearOfNoMesh(t *testing.T) {
	n := NewNear(nil, 1, 1)
	if _, ok := n.SweepCapsule(geom.V(0, 0, 0), geom.V(0, 1, 0), 0.5, geom.V(0, -1, 0), 1, 1); ok {
		t.Error("a capsule hit something in no mesh")
	}
	if _, ok := n.Raycast(geom.V(0, 0, 0), geom.V(0, -1, 0), 1, 1); ok {
		t.Error("a ray hit something in no mesh")
	}
	if c := n.OverlapCapsule(geom.V(0, 0, 0), geom.V(0, 1, 0), 0.5, 1, nil); len(c) != 0 {
		t.Errorf("overlap in no mesh: %v", c)
	}
}

// A query through a Near allocates nothing, gathering included.
func TestNearAllocatesNothing(t *testing.T) {
	m := mustNew(t, stressLevel(3, 24, 40))
	nr := NewNear(m, 1, 0.5)
	x := 0.0
	if a := testing.AllocsPerRun(500, func() {
		x = float64(int(x*7+3) % 20)
		o := geom.V(x-10, 5, 0)
		nr.SweepCapsule(o, o.Add(geom.V(0, 1.8, 0)), 0.4, geom.V(0, -1, 0), 6, 1)
		var buf [8]Contact
		nr.OverlapCapsule(o, o.Add(geom.V(0, 1.8, 0)), 0.4, 1, buf[:0])
	}); a != 0 {
		t.Errorf("%v allocations per query", a)
	}
}
