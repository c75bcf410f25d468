package tests

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/internal/leveltest"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/ticks"
	"github.com/rewind-gg/rewind/tune"
	"github.com/rewind-gg/rewind/view"
)

// Heights of the overlook's geometry, metres.
const (
	wallTop  = 12 // the wall between the tower and team 2
	towerTop = 6  // where team 1 stands
)

// overlook writes a level a studio could have exported: a 40 m floor; a
// wall 8 m wide and 12 m high across the middle (x −4..4, z −0.5..0.5);
// team 1's spawn on a 6 m tower (0, 6, −12); team 2's spawns at (0, 0, 8),
// behind the wall as seen from the tower, and (10, 0, 8), in the open. It
// returns the file's path.
func overlook(t testing.TB) string {
	t.Helper()
	data := leveltest.GLTF(
		leveltest.Node("col_floor", "mesh", leveltest.FloorMesh, "scale", []any{2, 1, 2}),
		leveltest.Box("col_wall", [3]float64{-4, 0, -0.5}, [3]float64{4, wallTop, 0.5}),
		leveltest.Box("col_tower", [3]float64{-1, 0, -13}, [3]float64{1, towerTop, -11}),
		leveltest.Node("spawn_t1_tower", "translation", []any{0, towerTop, -12}),
		leveltest.Node("spawn_t2_hidden", "translation", []any{0, 0, 8}),
		leveltest.Node("spawn_t2_open", "translation", []any{10, 0, 8}),
		leveltest.Node("bounds", "translation", []any{0, 5, 0}, "scale", []any{20, 10, 20}),
	)
	path := filepath.Join(t.TempDir(), "overlook.gltf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A client holding another level than the server plays is refused before
// it plays, with both levels named and both digests: a studio's level
// against the arena, the arena against the sample map.
func TestLevelMismatchIsRefused(t *testing.T) {
	t.Parallel()
	file := overlook(t)
	srv := startServer(t, nil) // the built-in arena
	arena := level.DefaultArena()
	mine, err := client.LoadLevel(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = client.Dial(ctx, client.Config{Addr: srv.Addr().String(), Room: "m", Name: "a", ServerCertSHA256: srv.CertSHA256(),
		Input: scripted(func(*client.View) client.Intent { return client.Intent{} }), Level: file})
	var le *client.LevelError
	want := "level: the server plays arena (digest " + arena.Digest().String() + "), this client holds overlook (digest " + mine.Digest.String() + ")"
	if !errors.As(err, &le) || err.Error() != want {
		t.Fatalf("dial with another level: %v\nwant %s", err, want)
	}
	// The same client with the server's level plays.
	c := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "m", Name: "b", Input: scripted(func(*client.View) client.Intent { return client.Intent{} })})
	if w := c.Welcome(); w.Level != "arena" || level.Digest(w.LevelDigest) != arena.Digest() {
		t.Errorf("Welcome: level %q digest %x", w.Level, w.LevelDigest)
	}

	// A server on the sample map (as the demo plays it) refuses a client
	// holding the arena, and plays with one holding the sample map.
	lc, yard := courtyard(t)
	srv = startServer(t, func(c *server.Config) { c.Level = lc })
	_, err = client.Dial(ctx, client.Config{Addr: srv.Addr().String(), Room: "m", Name: "a", ServerCertSHA256: srv.CertSHA256(),
		Input: scripted(func(*client.View) client.Intent { return client.Intent{} }), Level: level.ArenaName})
	want = "level: the server plays courtyard (digest " + yard.Digest.String() + "), this client holds arena (digest " + arena.Digest().String() + ")"
	if !errors.As(err, &le) || err.Error() != want {
		t.Fatalf("dial the sample map with the arena: %v\nwant %s", err, want)
	}
	c = dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "m", Name: "b", Loaded: yard, Input: scripted(func(*client.View) client.Intent { return client.Intent{} })})
	if w := c.Welcome(); w.Level != "courtyard" || level.Digest(w.LevelDigest) != yard.Digest {
		t.Errorf("Welcome on the sample map: level %q digest %x", w.Level, w.LevelDigest)
	}
}

// A server refuses to start on a level it cannot play, naming the key and
// the level's own error: a file that is not glTF, and a level without a
// spawn for team 2.
func TestBadLevelRefusesToStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.glb")
	if err := os.WriteFile(garbage, []byte("not a level"), 0o644); err != nil {
		t.Fatal(err)
	}
	oneTeam := filepath.Join(dir, "oneteam.gltf")
	if err := os.WriteFile(oneTeam, leveltest.GLTF(leveltest.Node("col_floor", "mesh", leveltest.FloorMesh),
		leveltest.Node("spawn_t1_a"), leveltest.Node("bounds", "scale", []any{10, 10, 10})), 0o644); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		garbage:                     "config: level.file: level: garbage.glb:",
		oneTeam:                     "config: level.file: level: oneteam.gltf: team 2 has no spawn",
		filepath.Join(dir, "x.glb"): "config: level.file: level:",
	} {
		cfg := server.DefaultConfig()
		cfg.Listen, cfg.Admin.Listen = "127.0.0.1:0", ""
		cfg.Level.File = file
		srv, err := server.New(cfg, zerolog.Nop())
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			if srv != nil {
				srv.Shutdown(context.Background())
			}
			t.Errorf("level.file %s: %v; want an error starting %q", filepath.Base(file), err, want)
		}
	}
}

// The server, its clients and its recording on a studio's level: from the
// top of the tower, a shot at a player behind the wall is stopped by the
// wall 3.6 m up, where the arena's 3 m boxes would have let it pass, at
// the shooter's view time; a shot at the player in the open hits. The
// recording carries the level: it replays exactly, and the view and the
// tuning sweep read its geometry.
func TestShotsOnALevel(t *testing.T) {
	t.Parallel()
	file := overlook(t)
	dir := t.TempDir()
	srv := startServer(t, func(c *server.Config) {
		c.Level.File = file
		c.Record.Dir = dir
	})
	lvl, err := client.LoadLevel(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	still := scripted(func(*client.View) client.Intent { return client.Intent{} })
	hidden := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "yard", Name: "hidden", Team: 2, Input: still, Loaded: lvl})
	open := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "yard", Name: "open", Team: 2, Input: still, Loaded: lvl})
	// The shooter aims at each target's chest as its screen shows it, and
	// fires until it has fired once at each: first the hidden one, then the
	// one in the open.
	var tower *client.Client
	var ready atomic.Bool
	shooter := scripted(func(v *client.View) client.Intent {
		in := client.Intent{Weapon: v.Welcome.Loadout[0]}
		n := tower.Stats().ShotsFired
		if !ready.Load() || len(v.Players) < 2 || n >= 2 {
			return in
		}
		target := nearestOnX(v, []float64{0, 10}[n])
		c := v.Capsule(target)
		d := c.A.Lerp(c.B, 0.5).Sub(v.Eye())
		in.Yaw, in.Pitch = math.Atan2(d.X, d.Z), math.Atan2(d.Y, math.Hypot(d.X, d.Z))
		in.Fire = true
		return in
	})
	tower = dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "yard", Name: "tower", Team: 1, Input: shooter, Loaded: lvl})
	ready.Store(true)
	if w := tower.Welcome(); w.Spawn != [3]float64{0, towerTop, -12} || w.Level != "overlook" || level.Digest(w.LevelDigest) != lvl.Digest {
		t.Fatalf("the shooter's Welcome: spawn %v, level %q", w.Spawn, w.Level)
	}
	stop := start(hidden, open, tower)
	until(t, 20*time.Second, "the shooter never hit the player in the open", func() bool {
		return tower.Stats().ShotsFired == 2 && playerStats(t, srv, "yard", tower.ID()).Hits >= 1
	})
	waitTicks(t, srv, "yard", 2)
	stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil { // closes the recording
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "yard-*"+replay.Extension))
	if len(files) != 1 {
		t.Fatalf("recordings %v, want one", files)
	}

	// The recording replays exactly on the level it carries.
	res, shots, levelEntity := replayShots(t, files[0])
	if ref := res.Setup.LevelRef; ref == nil || ref.Name != "overlook" || ref.Digest != lvl.Digest.String() || res.Setup.Level == nil {
		t.Fatalf("the recording's level: %+v", ref)
	}
	triangles := res.Setup.Level.Triangles
	if len(shots) != 2 {
		t.Fatalf("shot events %+v, want two", shots)
	}
	wall, hit := shots[0], shots[1]
	if wall.Result != ecs.ResultBlocked || wall.By != levelEntity || triangles[wall.Tri].Bounds().Max.Y != wallTop ||
		!(wall.Point.Y > 3.3 && wall.Point.Y < 3.9) || math.Abs(wall.Point.Z+0.5) > 1e-9 {
		t.Errorf("the shot at the hidden player: %+v; want it blocked by the wall's near face, 3.6 m up", wall)
	}
	if wall.ViewTime.Ticks() >= float64(wall.Tick) {
		t.Errorf("the blocked shot was resolved at %v, tick %d: want the shooter's view time, in the past", wall.ViewTime.Ticks(), wall.Tick)
	}
	if hit.Result != ecs.ResultHit {
		t.Errorf("the shot at the player in the open: %+v; want a hit", hit)
	}

	// The view draws the level the recording carries.
	f, err := view.Load(files[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := f.Match(0)
	if m.Level == nil || m.Level.Name != "overlook" || len(m.Level.Tris) != len(triangles) || m.Level.High != wallTop {
		t.Errorf("the view's level: %+v", m.Level)
	}
	// The sweep judges the recorded hit in the recorded geometry: the
	// player in the open was in sight in its own present, so not disputed.
	rep, err := tune.Sweep(context.Background(), files, tune.Config{Windows: []ticks.Span{{InTicks: true}, {N: 30, InTicks: true}}, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	judged := false
	for _, r := range rep.Rows {
		if r.By == tune.ByAll && r.Setting.Window.N == 30 {
			judged = true
			if r.Hits != 1 || r.Disputed != 0 {
				t.Errorf("window 30: %d hits, %d disputed; want the hit in the open, undisputed", r.Hits, r.Disputed)
			}
		}
	}
	if !judged {
		t.Error("no row of window 30")
	}
}

// replayShots replays the recording at path, which must reproduce its
// match exactly, and returns the result, the shot events (those with a
// result) in order, and the level's entity.
func replayShots(t *testing.T, path string) (replay.Result, []ecs.ShotEvent, ecs.Entity) {
	t.Helper()
	var shots []ecs.ShotEvent
	var levelEntity ecs.Entity
	res, err := replayFile(t, path, replay.Config{OnTick: func(tk *replay.Tick) error {
		levelEntity = tk.Sim.Level()
		for _, ev := range tk.Sim.Events.Shots {
			if ev.Result != ecs.ResultInvalid {
				shots = append(shots, ev)
			}
		}
		return nil
	}})
	if err != nil || !res.Verified {
		t.Fatalf("replay: %+v %v", res, err)
	}
	return res, shots, levelEntity
}

// nearestOnX returns the remote player standing nearest x on X.
func nearestOnX(v *client.View, x float64) *client.Player {
	var best *client.Player
	for i := range v.Players {
		if p := &v.Players[i]; best == nil || math.Abs(p.Pos.X-x) < math.Abs(best.Pos.X-x) {
			best = p
		}
	}
	return best
}
