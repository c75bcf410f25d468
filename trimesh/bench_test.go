package trimesh

import (
	"fmt"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/geom"
)

// benchQuery is a shot (a ray) or a move (a capsule sweep) on a level.
type benchQuery struct {
	a, b, d geom.Vec3
	maxT    float64
}

// benchQueries places players on the level (standing on whatever is below
// a random point) and returns their shots, rays from eye height at a random
// heading and a pitch of -17° to +6° over 100 m, and their moves, capsules
// (radius 0.4, 1.8 m tall) walking 0.3 m (6 m/s for a 20 Hz tick) at a
// random heading, slightly down as gravity pulls.
func benchQueries(m *Mesh, seed uint64, n int) (shots, moves []benchQuery) {
	g := newGen(seed)
	b := m.Bounds()
	for len(shots) < n {
		p := geom.V(g.f(b.Min.X+1, b.Max.X-1), b.Max.Y+1, g.f(b.Min.Z+1, b.Max.Z-1))
		h, ok := m.Raycast(p, geom.V(0, -1, 0), 100, 1)
		if !ok {
			continue
		}
		feet := p.AddScaled(geom.V(0, -1, 0), h.T)
		heading := g.perpendicular(geom.V(0, 1, 0))
		shots = append(shots, benchQuery{a: feet.Add(geom.V(0, 1.6, 0)), d: heading.Add(geom.V(0, g.f(-0.3, 0.1), 0)).Normalize(), maxT: 100})
		a := feet.Add(geom.V(0, 0.41, 0))
		moves = append(moves, benchQuery{a: a, b: a.Add(geom.V(0, 1, 0)), d: heading.Add(geom.V(0, -0.1, 0)).Normalize(), maxT: 0.3})
	}
	return shots, moves
}

// BenchmarkQueries runs the tree and the brute-force loop over all triangles
// on the same queries in the same run: each iteration answers all the
// queries through the tree and one through the brute force (which reads
// every triangle, and so evicts the tree from the caches only once per
// pass over the queries), and the benchmark reports both costs per query
// and their ratio.
func BenchmarkQueries(b *testing.B) {
	for _, level := range []struct {
		name          string
		cells, blocks int
	}{{"small", 12, 12}, {"large", 90, 320}} {
		tris := stressLevel(7, level.cells, level.blocks)
		m := mustNew(b, tris)
		shots, moves := benchQueries(m, 8, 1024)
		for _, kind := range []string{"Raycast", "SweepCapsule"} {
			b.Run(fmt.Sprintf("%s/%s-%dtris", kind, level.name, len(tris)), func(b *testing.B) {
				tree, brute := func(q benchQuery) bool {
					_, ok := m.Raycast(q.a, q.d, q.maxT, 2)
					return ok
				}, func(q benchQuery) bool {
					_, ok := m.bruteRaycast(q.a, q.d, q.maxT, 2)
					return ok
				}
				qs := shots
				if kind == "SweepCapsule" {
					tree, brute = func(q benchQuery) bool {
						_, ok := m.SweepCapsule(q.a, q.b, 0.4, q.d, q.maxT, 1)
						return ok
					}, func(q benchQuery) bool {
						_, ok := m.bruteSweepCapsule(q.a, q.b, 0.4, q.d, q.maxT, 1)
						return ok
					}
					qs = moves
				}
				batch := len(qs)
				var tTree, tBrute time.Duration
				var nTree, nBrute, hits int
				b.ReportAllocs()
				for b.Loop() {
					start := time.Now()
					for range batch {
						if tree(qs[nTree%len(qs)]) {
							hits++
						}
						nTree++
					}
					mid := time.Now()
					brute(qs[nBrute%len(qs)])
					nBrute++
					tTree, tBrute = tTree+mid.Sub(start), tBrute+time.Since(mid)
				}
				perTree := float64(tTree.Nanoseconds()) / float64(nTree)
				perBrute := float64(tBrute.Nanoseconds()) / float64(nBrute)
				b.ReportMetric(perTree, "ns/query")
				b.ReportMetric(perBrute, "brute-ns/query")
				b.ReportMetric(perBrute/perTree, "speedup")
				b.ReportMetric(float64(hits)/float64(nTree), "hits/query")
			})
		}
	}
}

// BenchmarkNew is the build of the large level.
func BenchmarkNew(b *testing.B) {
	tris := stressLevel(7, 90, 320)
	b.ReportAllocs()
	for b.Loop() {
		mustNew(b, tris)
	}
	b.ReportMetric(float64(len(tris)), "tris")
}
