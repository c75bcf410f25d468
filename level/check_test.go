package level

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/leveltest"
)

// The server's default arena boxes (server.DefaultConfig).
var pillars = []geom.AABB{
	{Min: geom.V(-12, 0, -12), Max: geom.V(-10, 3, -10)},
	{Min: geom.V(10, 0, -12), Max: geom.V(12, 3, -10)},
	{Min: geom.V(-12, 0, 10), Max: geom.V(-10, 3, 12)},
	{Min: geom.V(10, 0, 10), Max: geom.V(12, 3, 12)},
}

// arenaDigest pins the built-in arena: a change to it is a change of map
// that every client holding the old one must learn of.
const arenaDigest = "04311dce3736fe3efa9b1a16bef99dea1fb292c22e9640823020f017e404fdb0"

func TestArena(t *testing.T) {
	l := Arena(60, pillars)
	warns, err := l.Check(CheckConfig{})
	if err != nil || len(warns) != 0 {
		t.Fatalf("the arena fails its checks: %v %q", err, warns)
	}
	total, movement, shots := l.Counts()
	// Floor 2, walls 4×2 (movement only), pillars 4×12.
	if total != 58 || movement != 58 || shots != 50 {
		t.Errorf("counts %d %d %d, want 58 58 50", total, movement, shots)
	}
	// Spawns where server/room.go's spawnPoint places the n-th player of
	// a team: x = (n%6 − 2.5)·min(4, size/8), z = ∓0.3·size.
	for team := uint8(1); team <= 2; team++ {
		sp := l.SpawnsOf(team)
		if len(sp) != 6 {
			t.Fatalf("team %d: %d spawns", team, len(sp))
		}
		for n, s := range sp {
			z := -18.0
			if team == 2 {
				z = 18
			}
			if want := geom.V((float64(n)-2.5)*4, 0, z); s.Pos != want {
				t.Errorf("team %d spawn %d at %v, want %v", team, n, s.Pos, want)
			}
		}
	}
	if l.SpawnsOf(1)[0].Yaw != 0 || l.SpawnsOf(2)[0].Yaw != math.Pi {
		t.Errorf("yaws %v %v: each team faces the other", l.SpawnsOf(1)[0].Yaw, l.SpawnsOf(2)[0].Yaw)
	}
	if l.Bounds != (geom.AABB{Min: geom.V(-30, -ArenaDepth, -30), Max: geom.V(30, ArenaWallHeight, 30)}) {
		t.Errorf("bounds %v", l.Bounds)
	}
	if got := l.Digest().String(); got != arenaDigest {
		t.Errorf("arena digest %s, want %s", got, arenaDigest)
	}
	if Arena(60, pillars).Digest() != l.Digest() || Arena(40, pillars).Digest() == l.Digest() {
		t.Error("the digest does not follow the arena")
	}
}

func floorQuad(h, y float64) []Triangle {
	a, b, c, d := geom.V(-h, y, -h), geom.V(-h, y, h), geom.V(h, y, h), geom.V(h, y, -h)
	return []Triangle{{A: a, B: b, C: c, Blocks: BlocksBoth, Source: -1}, {A: a, B: c, C: d, Blocks: BlocksBoth, Source: -1}}
}

// small is a valid level: a 20 m floor, bounds around it, a spawn a team.
func small() *Level {
	return &Level{
		Triangles: floorQuad(10, 0),
		Spawns:    []Spawn{{Team: 1, Pos: geom.V(-5, 0, 0), Source: -1}, {Team: 2, Pos: geom.V(5, 0, 0), Source: -1}},
		Bounds:    geom.AABB{Min: geom.V(-10, -5, -10), Max: geom.V(10, 10, 10)},
	}
}

func TestCheckErrors(t *testing.T) {
	cases := map[string]struct {
		change func(*Level)
		want   string
	}{
		"no triangles":     {func(l *Level) { l.Triangles = nil }, "no triangles block movement"},
		"only shot clips":  {func(l *Level) { l.Triangles[0].Blocks, l.Triangles[1].Blocks = BlocksShots, BlocksShots }, "no triangles block movement"},
		"no spawn, team 2": {func(l *Level) { l.Spawns = l.Spawns[:1] }, "team 2 has no spawn"},
		"spawn outside":    {func(l *Level) { l.Spawns[1].Pos.X = 11 }, "outside the bounds"},
		"spawn in a kill": {func(l *Level) {
			l.KillVolumes = []Volume{{Box: geom.AABB{Min: geom.V(4, -1, -1), Max: geom.V(6, 1, 1)}, Source: -1}}
		}, "inside the kill volume"},
		"no bounds":         {func(l *Level) { l.Bounds = geom.AABB{} }, "bounds"},
		"inverted kill":     {func(l *Level) { l.KillVolumes = []Volume{{Box: geom.AABB{Min: geom.V(1, 1, 1)}, Source: -1}} }, "is not a box"},
		"non-finite vertex": {func(l *Level) { l.Triangles[0].A.X = math.NaN() }, "not finite"},
		"no blocks":         {func(l *Level) { l.Triangles[0].Blocks = 0 }, "neither movement nor shots"},
		"bad edge": {func(l *Level) {
			l.Waypoints = &Waypoints{Nodes: []Waypoint{{ID: "a"}}, Edges: []Edge{{From: 0, To: 3}}}
		}, "waypoint edge 0→3"},
	}
	if _, err := small().Check(CheckConfig{}); err != nil {
		t.Fatalf("the base level: %v", err)
	}
	for name, c := range cases {
		l := small()
		c.change(l)
		_, err := l.Check(CheckConfig{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
	// Three teams asked for: the third's missing spawn is an error.
	if _, err := small().Check(CheckConfig{Teams: 3}); err == nil || !strings.Contains(err.Error(), "team 3 has no spawn") {
		t.Errorf("three teams: %v", err)
	}
}

func TestCheckWarnings(t *testing.T) {
	warnsOf := func(l *Level, c CheckConfig) []string {
		t.Helper()
		ws, err := l.Check(c)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, w := range ws {
			out = append(out, w.String())
		}
		return out
	}
	has := func(ws []string, s string) bool {
		for _, w := range ws {
			if strings.Contains(w, s) {
				return true
			}
		}
		return false
	}
	// A floor with walls around (no open edge) and nothing near the spawns: clean.
	closed := Arena(20, nil)
	if ws := warnsOf(closed, CheckConfig{}); len(ws) != 0 {
		t.Errorf("clean level: %q", ws)
	}
	// A spawn standing inside a closed box: its capsule overlaps it, and
	// it is enclosed.
	l := Arena(20, []geom.AABB{{Min: geom.V(-1, 0, -1), Max: geom.V(1, 3, 1)}})
	l.Spawns[2].Pos = geom.V(-0.7, 0, 0)
	l.Sources = []Source{{Node: 7, Name: "spawn_t1_c"}}
	l.Spawns[2].Source = 0
	ws := warnsOf(l, CheckConfig{})
	if !has(ws, `node 7 "spawn_t1_c" (spawn of team 1): its standing capsule (radius 0.4, height 1.8) overlaps geometry`) ||
		!has(ws, `node 7 "spawn_t1_c" (spawn of team 1): inside geometry`) {
		t.Errorf("spawn in a box: %q", ws)
	}
	// A bigger capsule (a parameter) touches a pillar a normal one clears.
	near := Arena(60, pillars)
	near.Spawns[0].Pos = geom.V(-9.5, 0, -11)
	if ws := warnsOf(near, CheckConfig{}); len(ws) != 0 {
		t.Errorf("0.5 m from a pillar, radius 0.4: %q", ws)
	}
	if ws := warnsOf(near, CheckConfig{Radius: 0.6}); !has(ws, "overlaps geometry") {
		t.Errorf("0.5 m from a pillar, radius 0.6: %q", ws)
	}
	// A spawn 3 m above the floor: no floor within 2 m, but within 4.
	high := Arena(20, nil)
	high.Spawns[0].Pos.Y = 3
	if ws := warnsOf(high, CheckConfig{}); !has(ws, "no floor within 2 m under its feet") {
		t.Errorf("spawn in the air: %q", ws)
	}
	if ws := warnsOf(high, CheckConfig{FloorDistance: 4}); has(ws, "no floor") {
		t.Errorf("spawn 3 m up, 4 m allowed: %q", ws)
	}
	// A floor alone: its 4 edges are open. A floor with a hole (a
	// missing triangle of a 2×2 grid) has open edges inside.
	if ws := warnsOf(small(), CheckConfig{}); !has(ws, "level: 4 open edges on walkable surfaces") {
		t.Errorf("lone floor: %q", ws)
	}
	// A degenerate triangle, a kill volume outside the bounds, a spawn of
	// a team not checked for.
	odd := small()
	odd.Triangles = append(odd.Triangles, Triangle{A: geom.V(0, 1, 0), B: geom.V(1, 1, 0), C: geom.V(2, 1, 0), Blocks: BlocksBoth, Source: -1})
	odd.KillVolumes = []Volume{{Box: geom.AABB{Min: geom.V(50, 0, 0), Max: geom.V(60, 1, 1)}, Source: -1}}
	odd.Spawns = append(odd.Spawns, Spawn{Team: 3, Pos: geom.V(0, 0, 5), Source: -1})
	ws = warnsOf(odd, CheckConfig{})
	for _, want := range []string{"level: 1 degenerate triangles", "kill volume outside the bounds", "team 3: the level is checked for teams 1..2"} {
		if !has(ws, want) {
			t.Errorf("%q: no %q", ws, want)
		}
	}
}

// ---- levels from hand-made glTF ---------------------------------------------

// levelGLTF is a .gltf with two meshes, a 1 m box (mesh 0) and a 20 m
// floor at y = 0 (mesh 1), and the given nodes, all roots of its scene.
func levelGLTF(nodes ...map[string]any) []byte { return leveltest.GLTF(nodes...) }

func node(name string, kv ...any) map[string]any { return leveltest.Node(name, kv...) }

// basics are the nodes every valid test level has: a floor, a spawn a
// team, bounds.
func basics() []map[string]any {
	return []map[string]any{
		node("col_floor", "mesh", 1),
		node("spawn_t1_a", "translation", []any{-5, 0, 0}),
		node("spawn_t2_a", "translation", []any{5, 0, 0}),
		node("bounds", "translation", []any{0, 5, 0}, "scale", []any{10, 10, 10}),
	}
}

func readLevel(data []byte, o Options) (*Level, []Warning, error) {
	return Read(fstest.MapFS{"test.gltf": {Data: data}}, "test.gltf", o)
}

func TestConventionRefusals(t *testing.T) {
	cases := map[string]struct {
		nodes []map[string]any
		want  string
	}{
		"two bounds":          {append(basics(), node("bounds.001", "scale", []any{1, 1, 1})), `node 3 "bounds" and node 4 "bounds.001" are both marked bounds`},
		"no bounds":           {basics()[:3], "no bounds: mark the playable space"},
		"flat bounds":         {append(basics()[:3], node("bounds", "scale", []any{10, 0, 10})), `node 3 "bounds": box from`},
		"no team 2":           {[]map[string]any{basics()[0], basics()[1], basics()[3]}, "team 2 has no spawn"},
		"spawn outside":       {append(basics(), node("spawn_t1_far", "translation", []any{50, 0, 0})), `node 4 "spawn_t1_far" (spawn of team 1): at {50 0 0}, outside the bounds`},
		"bad extras kind":     {append(basics(), node("x", "extras", map[string]any{"rewind": "lava"})), `node 4 "x": extras rewind "lava" is not one of`},
		"spawn without team":  {append(basics(), node("x", "extras", map[string]any{"rewind": "spawn"})), `node 4 "x": extras rewind spawn without rewind_team`},
		"team out of range":   {append(basics(), node("x", "extras", map[string]any{"rewind": "spawn", "rewind_team": 300})), "not a team in 1..255"},
		"bad blocks":          {append(basics(), node("x", "mesh", 0, "extras", map[string]any{"rewind": "collision", "rewind_blocks": "bullets"})), `rewind_blocks "bullets"`},
		"duplicate waypoint":  {append(basics(), node("wp_a"), node("wp_a.001")), `node 4 "wp_a" and node 5 "wp_a.001" are both waypoint "a"`},
		"unknown link":        {append(basics(), node("wp_a__zz")), `node 4 "wp_a__zz": link to waypoint "zz"`},
		"bad link flag":       {append(basics(), node("wp_a"), node("wp_b__a_fly")), `"fly" is not jump, crouch or oneway`},
		"waypoint without id": {append(basics(), node("Empty", "extras", map[string]any{"rewind": "waypoint"})), `node 4 "Empty": a waypoint needs an id`},
		"singular mesh":       {append(basics(), node("col_flat", "mesh", 0, "scale", []any{1, 0, 1})), `node 4 "col_flat": its world transform is singular`},
		"spawn facing up":     {append(basics()[:3], basics()[3], node("spawn_t1_b", "rotation", []any{-math.Sqrt2 / 2, 0, 0, math.Sqrt2 / 2})), `node 4 "spawn_t1_b": its +Z axis points straight up or down`},
		"vertex too far":      {append(basics(), node("col_far", "mesh", 0, "translation", []any{2e6, 0, 0})), `node 4 "col_far": vertex`},
	}
	if _, _, err := readLevel(levelGLTF(basics()...), Options{}); err != nil {
		t.Fatalf("the base level: %v", err)
	}
	for name, c := range cases {
		l, _, err := readLevel(levelGLTF(c.nodes...), Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (level %v), want an error saying %q", name, err, l != nil, c.want)
		}
	}
}

// Marks by name and by extras, inherited down the hierarchy, and the
// switch between "a file that is only collision" and "a file that marks
// its collision".
func TestCollisionMarking(t *testing.T) {
	blocks := func(nodes ...map[string]any) map[string]Blocks {
		t.Helper()
		l, _, err := readLevel(levelGLTF(append(basics(), nodes...)...), Options{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]Blocks{}
		for _, tr := range l.Triangles {
			out[l.Sources[tr.Source].Name] |= tr.Blocks
		}
		return out
	}
	got := blocks(
		node("Rock", "mesh", 0, "translation", []any{3, 0, 3}),          // unmarked: render-only here
		node("col_window_2", "mesh", 0, "translation", []any{-3, 0, 3}), // movement only
		node("Col-Shot 3", "mesh", 0, "translation", []any{3, 0, -3}),   // shots only
		node("Clip", "mesh", 0, "extras", map[string]any{"rewind": "collision", "rewind_blocks": "movement"}),
		node("render_tree", "mesh", 0, "translation", []any{-3, 0, -3}),
	)
	want := map[string]Blocks{"col_floor": BlocksBoth, "col_window_2": BlocksMovement, "Col-Shot 3": BlocksShots, "Clip": BlocksMovement}
	if len(got) != len(want) {
		t.Errorf("collision %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s blocks %v, want %v", k, got[k], v)
		}
	}
	// Nothing marked as collision: every mesh is, except render_ ones and
	// markers' meshes (here the bounds').
	nodes := basics()
	nodes[0] = node("Floor", "mesh", 1)
	nodes[3] = node("bounds", "mesh", 0, "translation", []any{-10, -5, -10}, "scale", []any{20, 20, 20})
	l, _, err := readLevel(levelGLTF(append(nodes, node("Rock", "mesh", 0, "translation", []any{3, 0, 3}), node("render_tree", "mesh", 0))...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, tr := range l.Triangles {
		names[l.Sources[tr.Source].Name]++
	}
	if len(names) != 2 || names["Floor"] != 2 || names["Rock"] != 12 {
		t.Errorf("collision-only file: triangles by node %v", names)
	}
	if l.Bounds != (geom.AABB{Min: geom.V(-10, -5, -10), Max: geom.V(10, 15, 10)}) {
		t.Errorf("bounds from a mesh: %v", l.Bounds)
	}
	// Only a window marked: the unmarked meshes become render-only, which
	// is likely a mistake, and said.
	nodes = basics()
	nodes[0] = node("Floor", "mesh", 1)
	_, warns, err := readLevel(levelGLTF(append(nodes, node("col_window", "mesh", 0))...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range warns {
		found = found || w.String() == "level: only movement-only or shots-only collision is marked, so the 1 unmarked meshes are render-only: mark solid collision col_… (or put everything under a col_ node)"
	}
	if !found {
		t.Errorf("only a window marked: %q", warns)
	}
}

// A mesh used by many nodes counts once per node against MaxTriangles,
// before the triangles are made.
func TestTriangleBound(t *testing.T) {
	crates := func(name string) []byte {
		nodes := basics()
		for i := range 4000 {
			nodes = append(nodes, node(name, "mesh", 0, "translation", []any{i % 10, 0, i / 10}))
		}
		return levelGLTF(nodes...)
	}
	allocs := func(data []byte, o Options) (uint64, error) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, _, err := readLevel(data, o)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, err
	}
	// The same file with the crates render-only is the cost of the JSON.
	base, err := allocs(crates("nop_crate"), Options{MaxTriangles: 10000})
	if err != nil {
		t.Fatal(err)
	}
	data := crates("col_crate")
	grew, err := allocs(data, Options{MaxTriangles: 10000})
	if err == nil || !strings.Contains(err.Error(), "over 10000 collision triangles") {
		t.Errorf("48002 triangles, limit 10000: %v", err)
	}
	// 48002 triangles would be 3.8 MB.
	if grew > base+1<<20 {
		t.Errorf("refusing it allocated %d bytes, reading the file %d", grew, base)
	}
	if _, _, err := readLevel(data, Options{}); err != nil {
		t.Errorf("within the default limit: %v", err)
	}
}

// FuzzRead reads arbitrary bytes as a level: never a panic, and what loads
// passes its own checks.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"marked.glb", "collision-only.gltf", "sparse.gltf"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(levelGLTF(basics()...))
	bin, err := os.ReadFile("testdata/collision-only.bin")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{"f.gltf": {Data: data}, "collision-only.bin": {Data: bin}}
		l, _, err := Read(fsys, "f.gltf", Options{MaxBytes: 1 << 20, MaxTriangles: 1 << 14})
		if err != nil {
			return
		}
		if _, err := l.Check(CheckConfig{}); err != nil {
			t.Fatalf("a level that loaded fails its checks: %v", err)
		}
		if len(l.Triangles) > 1<<14 {
			t.Fatalf("%d triangles, over the limit", len(l.Triangles))
		}
	})
}
