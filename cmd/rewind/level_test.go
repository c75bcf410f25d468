package main

import (
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/examples/levels"
	"github.com/rewind-gg/rewind/level"
)

func TestLevelInspectArena(t *testing.T) {
	code, stdout, stderr := runCmd(t, "level", "inspect", "arena")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	saysAll(t, stdout,
		"level      arena\n",
		"digest     04311dce3736fe3efa9b1a16bef99dea1fb292c22e9640823020f017e404fdb0\n",
		"triangles  58 (blocking movement 58, blocking shots 50)\n",
		"bounds     (-30, -10, -30) to (30, 10, 30)\n",
		"spawns     12 (team 1: 6, team 2: 6)\n",
		"  team 1  (-10, 0, -18) yaw 0°\n",
		"  team 2  (10, 0, 18) yaw 180°\n",
		"waypoints  none\n",
		"warnings   0\n")
}

// The sample map built into the binary, by name from any directory, as
// --level takes it: the committed file's level.
func TestLevelInspectCourtyard(t *testing.T) {
	code, stdout, stderr := runCmd(t, "level", "inspect", "courtyard")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	file, data, ok := levels.Lookup("courtyard")
	if !ok {
		t.Fatal("no courtyard built in")
	}
	l, _, err := level.ReadBytes(file, data, level.Options{})
	if err != nil {
		t.Fatal(err)
	}
	saysAll(t, stdout,
		"level      courtyard\n",
		"digest     "+l.Digest().String()+"\n",
		"spawns     12 (team 1: 6, team 2: 6)\n",
		"  team 1  (-10, 0, -20) yaw 0°  node 38 \"spawn_t1_a\"\n",
		"waypoints  32, 84 edges\n",
		"warnings   0\n")
}

// saysAll fails t for each of wants that out does not contain.
func saysAll(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

func TestLevelInspectFile(t *testing.T) {
	code, stdout, stderr := runCmd(t, "level", "inspect", "../../level/testdata/marked.glb")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	saysAll(t, stdout,
		"level      marked\n",
		"triangles  48 (blocking movement 46, blocking shots 44)\n",
		"spawns     4 (team 1: 2, team 2: 2)\n",
		"  team 1  (-5, 0, -5) yaw 30°  node 12 \"spawn_t1_a\"\n",
		"  team 2  (3, 0, 5) yaw -90°  node 16 \"Marker.003\"\n",
		"  (-10, -7.5, -10) to (10, -3.5, 10)  node 18 \"killvolume_pit\"\n",
		"waypoints  3, 5 edges\n",
		"  c        (5, 1, 0) → a (jump), b (crouch)  node 21 \"WP C\"\n",
		"warnings   4\n",
		"  node 12 \"spawn_t1_a\" (spawn of team 1): its standing capsule (radius 0.4, height 1.8) overlaps geometry of node 11 \"Pillar\"\n")
	// Three teams asked for: the third has no spawn, so the level is
	// refused, and the warnings come with the error.
	code, stdout, stderr = runCmd(t, "level", "inspect", "../../level/testdata/marked.glb", "--teams", "3")
	if code != 1 || stdout != "" || !strings.Contains(stderr, "team 3 has no spawn") || !strings.Contains(stderr, "warning: node 12 \"spawn_t1_a\"") {
		t.Errorf("--teams 3: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestLevelInspectRefuses(t *testing.T) {
	bad := writeFile(t, "bad.gltf", `{"asset": {"version": "2.0"}, "extensionsRequired": ["KHR_draco_mesh_compression"]}`)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"level", "inspect", bad}, 1, "KHR_draco_mesh_compression"},
		{[]string{"level", "inspect", writeFile(t, "empty.glb", "")}, 1, "JSON"},
		{[]string{"level", "inspect", "/nonexistent/x.glb"}, 1, "no such file"},
		{[]string{"level", "inspect"}, 2, "expected one argument"},
		{[]string{"level", "inspect", "arena", "--radius", "x"}, 2, "--radius"},
	} {
		code, stdout, stderr := runCmd(t, c.args...)
		if code != c.code || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d saying %q", c.args, code, stdout, stderr, c.code, c.want)
		}
	}
}

// rewind serve, rewind demo and a scenario on a level that cannot be read:
// each says which key or field and what is wrong, and exits 2 before
// anything listens or runs.
func TestBadLevelFlag(t *testing.T) {
	bad := writeFile(t, "bad.glb", "not a level")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--level", bad, "--listen", "127.0.0.1:0", "--admin", ""}, "config: level.file: level: bad.glb:"},
		{[]string{"demo", "--level", bad, "--duration", "1s"}, "demo: config: level.file: level: bad.glb:"},
		{[]string{"scenario", writeFile(t, "s.json", `{"ticks": 1, "entities": [], "level": "bad.glb"}`)}, "scenario: level: level: bad.glb:"},
	} {
		code, stdout, stderr := runCmd(t, c.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 saying %q", c.args[0], code, stdout, stderr, c.want)
		}
	}
}
