package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/trimesh"
)

const dir = "../"

// The committed map is what its source gives: running the generator again
// changes no byte (edit the .toml, then go run ./examples/levels/gen).
func TestMapsAreGenerated(t *testing.T) {
	sources, err := filepath.Glob(filepath.Join(dir, "*.toml"))
	if err != nil || len(sources) == 0 {
		t.Fatalf("no sources: %v", err)
	}
	for _, src := range sources {
		out := filepath.Join(t.TempDir(), "map.glb")
		if err := generate(src, out); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		committed := src[:len(src)-len(".toml")] + ".glb"
		want, err := os.ReadFile(committed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what %s gives: run go run ./examples/levels/gen", committed, src)
		}
	}
}

func courtyard(t *testing.T) *level.Level {
	t.Helper()
	l, warns, err := level.ReadFile(filepath.Join(dir, "courtyard.glb"), level.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warns {
		t.Errorf("warning: %v", w)
	}
	return l
}

// The sample map has what the issue asks of it: two floors joined by a
// ramp and stairs, cover, a window that blocks movement and not shots,
// spawns for two teams, and waypoints for bots; it loads without a
// warning.
func TestCourtyard(t *testing.T) {
	l := courtyard(t)
	if n := len(l.SpawnsOf(1)); n != 6 {
		t.Errorf("team 1: %d spawns", n)
	}
	if n := len(l.SpawnsOf(2)); n != 6 {
		t.Errorf("team 2: %d spawns", n)
	}
	window := 0
	for _, tri := range l.Triangles {
		if tri.Blocks == level.BlocksMovement {
			window++
		}
	}
	if window != 24 { // two panes of 12 triangles
		t.Errorf("%d triangles block movement only, want the two panes' 24", window)
	}
	mesh := meshOf(t, l)
	// A shot through a pane flies on; a player walking into it stops.
	from, dir := geom.V(0, 1.6, -16), geom.V(0, 0, 1)
	if h, ok := mesh.Raycast(from, dir, 8, trimesh.Mask(level.BlocksShots)); ok {
		t.Errorf("a shot through the south window hit triangle %d at %v m", h.Tri, h.T)
	}
	if _, ok := mesh.Raycast(from, dir, 8, trimesh.Mask(level.BlocksMovement)); !ok {
		t.Error("the south window does not block movement")
	}
	if l.Waypoints == nil || len(l.Waypoints.Nodes) == 0 {
		t.Fatal("no waypoints")
	}
}

func meshOf(t *testing.T, l *level.Level) *trimesh.Mesh {
	t.Helper()
	tris := make([]trimesh.Triangle, len(l.Triangles))
	for i, tr := range l.Triangles {
		tris[i] = trimesh.Triangle{A: tr.A, B: tr.B, C: tr.C, Mask: trimesh.Mask(tr.Blocks)}
	}
	m, err := trimesh.New(tris)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Every waypoint edge can be walked with the movement controller: a
// player standing on its first waypoint, running straight at the second
// (jumping when the edge says jump, crouched when it says crouch), gets
// there, at 20 Hz, within twice the time a straight run takes and a second.
// The walls and the hurdle really stop a walker: the same runs without the
// jump or the crouch fail where the edge needs them.
func TestWaypointEdgesAreWalkable(t *testing.T) {
	l := courtyard(t)
	mesh := meshOf(t, l)
	c := movement.DefaultCharacter()
	const rate = 20
	dt := 1.0 / rate
	walk := func(e level.Edge, jump, crouch bool) (bool, geom.Vec3) {
		a, b := l.Waypoints.Nodes[e.From].Pos, l.Waypoints.Nodes[e.To].Pos
		s := movement.State{Pos: a}
		flat := math.Hypot(b.X-a.X, b.Z-a.Z)
		ticks := int((2*flat/c.CrouchSpeed + 1) * rate)
		for i := range ticks {
			d := b.Sub(s.Pos)
			if math.Hypot(d.X, d.Z) < 0.5 && math.Abs(d.Y) < 0.5 {
				return true, s.Pos
			}
			in := movement.Input{MoveZ: 1, Yaw: math.Atan2(d.X, d.Z), Crouch: crouch, Jump: jump && i%2 == 0}
			movement.Move(&c, &s, in, dt, mesh, trimesh.Mask(level.BlocksMovement))
		}
		return false, s.Pos
	}
	name := func(i int32) string { return l.Waypoints.Nodes[i].ID }
	for _, e := range l.Waypoints.Edges {
		if ok, at := walk(e, e.Jump, e.Crouch); !ok {
			t.Errorf("%s → %s (jump %v, crouch %v): stuck at %v", name(e.From), name(e.To), e.Jump, e.Crouch, at)
		}
		if e.Jump || e.Crouch {
			if ok, _ := walk(e, false, false); ok {
				t.Errorf("%s → %s is walked without a jump or a crouch: the edge need not say so", name(e.From), name(e.To))
			}
		}
	}
}
