package level

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/geom"
)

// expectation is what level/testdata/gen/gen.mjs computed, with glTF
// Transform, for a fixture.
type expectation struct {
	Triangles []struct {
		Node   string
		Blocks Blocks
		V      [3][3]float64
	}
	Spawns []struct {
		Node string
		Team uint8
		Pos  [3]float64
		Yaw  float64
	}
	Bounds struct{ Min, Max [3]float64 }
	Kill   []struct {
		Node     string
		Min, Max [3]float64
	}
	Waypoints []struct {
		Node, ID string
		Pos      [3]float64
	}
	Edges [][4]any
}

func loadExpectation(t *testing.T, fixture string) expectation {
	t.Helper()
	name := strings.TrimSuffix(fixture, filepath.Ext(fixture)) + ".expected.json"
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var e expectation
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// near: the reader snaps to Quantum; glTF Transform computes in float32
// and float64 along its own path.
func near(a geom.Vec3, b [3]float64) bool {
	const tol = Quantum
	return math.Abs(a.X-b[0]) <= tol && math.Abs(a.Y-b[1]) <= tol && math.Abs(a.Z-b[2]) <= tol
}

func boxNear(a geom.AABB, min, max [3]float64) bool { return near(a.Min, min) && near(a.Max, max) }

// yawDiff is the angle between two yaws, in (−π, π].
func yawDiff(a, b float64) float64 {
	d := math.Mod(a-b, 2*math.Pi)
	if d > math.Pi {
		d -= 2 * math.Pi
	} else if d <= -math.Pi {
		d += 2 * math.Pi
	}
	return d
}

// The fixtures that an independent tool wrote hold exactly the world-space
// triangles (with their winding, mirrored nodes included), blocks, spawns,
// volumes and waypoints that the same tool computed from its own scene
// graph.
func TestFixturesMatchGLTFTransform(t *testing.T) {
	for _, fixture := range []string{"marked.glb", "collision-only.gltf", "sparse.gltf"} {
		t.Run(fixture, func(t *testing.T) {
			t.Parallel()
			want := loadExpectation(t, fixture)
			l, _, err := ReadFile(filepath.Join("testdata", fixture), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Triangles) != len(want.Triangles) {
				t.Fatalf("%d triangles, want %d", len(l.Triangles), len(want.Triangles))
			}
			used := make([]bool, len(l.Triangles))
			for _, w := range want.Triangles {
				found := false
				for i := range l.Triangles {
					g := &l.Triangles[i]
					if used[i] || g.Blocks != w.Blocks || l.Sources[g.Source].Name != w.Node {
						continue
					}
					// The same vertices in the same cyclic order: the winding holds.
					for r := 0; r < 3 && !found; r++ {
						vs := [3]geom.Vec3{g.A, g.B, g.C}
						found = near(vs[r], w.V[0]) && near(vs[(r+1)%3], w.V[1]) && near(vs[(r+2)%3], w.V[2])
					}
					if found {
						used[i] = true
						break
					}
				}
				if !found {
					t.Errorf("no triangle %v of %s blocking %v", w.V, w.Node, w.Blocks)
				}
			}
			if len(l.Spawns) != len(want.Spawns) {
				t.Fatalf("spawns %+v, want %+v", l.Spawns, want.Spawns)
			}
			for i, w := range want.Spawns {
				g := l.Spawns[i]
				if g.Team != w.Team || !near(g.Pos, w.Pos) || math.Abs(yawDiff(g.Yaw, w.Yaw)) > 1e-4 || l.Sources[g.Source].Name != w.Node {
					t.Errorf("spawn %d: %+v (%s), want %+v", i, g, l.SourceOf(g.Source), w)
				}
			}
			if !boxNear(l.Bounds, want.Bounds.Min, want.Bounds.Max) {
				t.Errorf("bounds %v, want %v", l.Bounds, want.Bounds)
			}
			if len(l.KillVolumes) != len(want.Kill) {
				t.Fatalf("kill volumes %v, want %v", l.KillVolumes, want.Kill)
			}
			for i, w := range want.Kill {
				if g := l.KillVolumes[i]; !boxNear(g.Box, w.Min, w.Max) || l.Sources[g.Source].Name != w.Node {
					t.Errorf("kill volume %d: %v, want %v", i, g, w)
				}
			}
			if len(want.Waypoints) == 0 {
				if l.Waypoints != nil {
					t.Errorf("waypoints %+v, want none", l.Waypoints)
				}
				return
			}
			if l.Waypoints == nil || len(l.Waypoints.Nodes) != len(want.Waypoints) {
				t.Fatalf("waypoints %+v, want %+v", l.Waypoints, want.Waypoints)
			}
			for i, w := range want.Waypoints {
				if g := l.Waypoints.Nodes[i]; g.ID != w.ID || !near(g.Pos, w.Pos) || l.Sources[g.Source].Name != w.Node {
					t.Errorf("waypoint %d: %+v, want %+v", i, g, w)
				}
			}
			var got [][4]any
			for _, e := range l.Waypoints.Edges {
				got = append(got, [4]any{l.Waypoints.Nodes[e.From].ID, l.Waypoints.Nodes[e.To].ID, e.Jump, e.Crouch})
			}
			if !slices.Equal(got, want.Edges) {
				t.Errorf("edges %v, want %v", got, want.Edges)
			}
		})
	}
}

// The marked fixture's warnings: each names its node.
func TestMarkedFixtureWarnings(t *testing.T) {
	_, warns, err := ReadFile("testdata/marked.glb", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`mesh 8 "pillar" primitive 1: mode 1 (LINES) is not triangles: skipped`,
		`node 2 "spawn_room": named like a spawn, but not spawn_t<team>_…: not a spawn`,
		`node 12 "spawn_t1_a" (spawn of team 1): its standing capsule (radius 0.4, height 1.8) overlaps geometry of node 11 "Pillar"`,
		`node 4 "Floor": 10 open edges on walkable surfaces`,
	}
	if len(warns) != len(want) {
		t.Fatalf("warnings %q, want %d", warns, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(warns[i].String(), w) {
			t.Errorf("warning %d: %q, want %q…", i, warns[i], w)
		}
	}
}

// The digest is of the content: the same level laid out differently in a
// file (another node order, another scene graph, other index types,
// reformatted JSON) has the same digest; a change of content does not.
func TestDigestIsOfContent(t *testing.T) {
	l, _, err := ReadFile("testdata/collision-only.gltf", Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := l.Digest()
	shuffled := *l
	shuffled.Name = "another name"
	shuffled.Triangles = slices.Clone(l.Triangles)
	slices.Reverse(shuffled.Triangles)
	for i := range shuffled.Triangles { // start each triangle at another vertex: the same winding
		t := &shuffled.Triangles[i]
		t.A, t.B, t.C, t.Source = t.B, t.C, t.A, -1
	}
	shuffled.Spawns = slices.Clone(l.Spawns)
	slices.Reverse(shuffled.Spawns)
	shuffled.Sources = nil
	shuffled.Waypoints = &Waypoints{Nodes: []Waypoint{{ID: "x"}}}
	if shuffled.Digest() != d {
		t.Errorf("reordered, renamed: digest %v, want %v", shuffled.Digest(), d)
	}
	// The same level in a reformatted file: JSON indented differently,
	// the nodes in another order (the indices rewritten).
	var doc map[string]any
	data, _ := os.ReadFile("testdata/collision-only.gltf")
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	nodes := doc["nodes"].([]any)
	slices.Reverse(nodes)
	remap := func(i any) any { return float64(len(nodes) - 1 - int(i.(float64))) }
	for _, n := range nodes {
		if ch, ok := n.(map[string]any)["children"].([]any); ok {
			for k := range ch {
				ch[k] = remap(ch[k])
			}
		}
	}
	for _, sc := range doc["scenes"].([]any) {
		ns := sc.(map[string]any)["nodes"].([]any)
		for k := range ns {
			ns[k] = remap(ns[k])
		}
	}
	out, _ := json.Marshal(doc)
	bin, _ := os.ReadFile("testdata/collision-only.bin")
	if err := os.WriteFile(filepath.Join(dir, "collision-only.gltf"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "collision-only.bin"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	again, _, err := ReadFile(filepath.Join(dir, "collision-only.gltf"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Digest() != d {
		t.Errorf("reformatted file: digest %v, want %v", again.Digest(), d)
	}
	// The same document written by glTF Transform as a .glb with
	// interleaved attributes and as a .gltf with separate buffer views and
	// data: URIs.
	glb, _, err := ReadFile("testdata/marked.glb", Options{})
	if err != nil {
		t.Fatal(err)
	}
	sep, _, err := ReadFile("testdata/marked-separate.gltf", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if glb.Digest() != sep.Digest() || glb.Name == sep.Name {
		t.Errorf("one level in two layouts: digests %v and %v", glb.Digest(), sep.Digest())
	}
	// Content changes change it: a vertex moved by one quantum, the winding
	// reversed, what a triangle blocks, a spawn's team or yaw step, bounds,
	// a kill volume.
	changes := map[string]func(*Level){
		"vertex":  func(m *Level) { m.Triangles[0].A.X += Quantum },
		"winding": func(m *Level) { m.Triangles[0].B, m.Triangles[0].C = m.Triangles[0].C, m.Triangles[0].B },
		"blocks":  func(m *Level) { m.Triangles[0].Blocks = BlocksShots },
		"team":    func(m *Level) { m.Spawns[0].Team = 3 },
		"yaw":     func(m *Level) { m.Spawns[0].Yaw += 2 * math.Pi / 65536 },
		"bounds":  func(m *Level) { m.Bounds.Max.Y += Quantum },
		"kill":    func(m *Level) { m.KillVolumes = append(m.KillVolumes, Volume{Box: m.Bounds}) },
	}
	for name, change := range changes {
		m := *l
		m.Triangles, m.Spawns = slices.Clone(l.Triangles), slices.Clone(l.Spawns)
		change(&m)
		if m.Digest() == d {
			t.Errorf("%s changed: the digest did not", name)
		}
	}
}

const canonicalExampleDigest = "2700cad2efedd8c28199d3aa5c6880395265d7dc7321a49d3faab87422fa6b6a"

// The canonical encoding, byte by byte, for a level small enough to write
// out: what docs/levels.md describes for other languages.
func TestCanonicalEncoding(t *testing.T) {
	l := &Level{
		Bounds: geom.AABB{Min: geom.V(-1, 0, -1), Max: geom.V(1, 2, 1)},
		Triangles: []Triangle{{A: geom.V(1, 0, 0), B: geom.V(0, 0, 0), C: geom.V(0, 0, 1), Blocks: BlocksMovement},
			{A: geom.V(0, 0, 0), B: geom.V(0, 0, 1), C: geom.V(1, 0, 0), Blocks: BlocksBoth}},
		Spawns:      []Spawn{{Team: 2, Pos: geom.V(0.5, 0, 0.25), Yaw: math.Pi}, {Team: 1, Pos: geom.V(0, 0, 0), Yaw: -math.Pi / 2}},
		KillVolumes: []Volume{{Box: geom.AABB{Min: geom.V(-1, -1, -1), Max: geom.V(1, -0.5, 1)}}},
	}
	i32 := func(v int32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }
	var want []byte
	add := func(bs ...[]byte) {
		for _, b := range bs {
			want = append(want, b...)
		}
	}
	add([]byte("RWLEVEL\x01"))
	add(i32(-1024), i32(0), i32(-1024), i32(1024), i32(2048), i32(1024))
	add(i32(2))
	// Both triangles start at their smallest rotation, (0,0,0) first, then
	// sort by their numbers: the same three vertices, so by blocks.
	add(i32(0), i32(0), i32(0), i32(0), i32(0), i32(1024), i32(1024), i32(0), i32(0), []byte{1})
	add(i32(0), i32(0), i32(0), i32(0), i32(0), i32(1024), i32(1024), i32(0), i32(0), []byte{3})
	add(i32(2))
	add([]byte{1}, i32(0), i32(0), i32(0), []byte{0x00, 0xC0}) // −π/2: 3/4 turn = 49152
	add([]byte{2}, i32(512), i32(0), i32(256), []byte{0x00, 0x80})
	add(i32(1))
	add(i32(-1024), i32(-1024), i32(-1024), i32(1024), i32(-512), i32(1024))
	if got := l.Canonical(); !slices.Equal(got, want) {
		t.Errorf("canonical encoding\n got %x\nwant %x", got, want)
	}
	if got := l.Digest().String(); got != canonicalExampleDigest {
		t.Errorf("digest %s, want %s (docs/levels.md's example)", got, canonicalExampleDigest)
	}
}
