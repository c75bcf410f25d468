package tune

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlange-42/arche/generic"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/matchtest"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/systems"
	"github.com/rewind-gg/rewind/ticks"
	"github.com/rewind-gg/rewind/weapons"
)

// tk returns windows in ticks.
func tk(ns ...int) []ticks.Span {
	var out []ticks.Span
	for _, n := range ns {
		out = append(out, ticks.Span{N: float64(n), InTicks: true})
	}
	return out
}

func TestSettings(t *testing.T) {
	c := Config{Windows: tk(0, 4), MaxRewind: map[string][]ticks.Span{"rifle": tk(2, 0), "bite": tk(1)}}
	var got []string
	for _, s := range c.Settings() {
		got = append(got, s.String())
	}
	want := []string{
		"window=0 bite.max_rewind=1 rifle.max_rewind=2", "window=4 bite.max_rewind=1 rifle.max_rewind=2",
		"window=0 bite.max_rewind=1 rifle.max_rewind=0", "window=4 bite.max_rewind=1 rifle.max_rewind=0",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("settings %q, want %q", got, want)
	}
	for _, bad := range []Config{{}, {Windows: tk(-1)}, {Windows: tk(2000)}, {Windows: tk(1), MaxRewind: map[string][]ticks.Span{"x": {}}},
		{Windows: tk(1), MaxRewind: map[string][]ticks.Span{"x": tk(-1)}}, {Windows: []ticks.Span{{N: 1.5, InTicks: true}}}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v: valid", bad)
		}
	}
}

// behindTheWall records the shot a victim disputes: bob runs along +x
// behind a wall as alice, 20 m away, sees him 8 ticks late. At tick 15
// she fires at where he was at tick 7, in the open; in his own present he
// is behind the wall. With a window of 8 ticks or more the server grants
// her view and bob takes the hit behind the wall; with 4, bob is 1.2 m
// from where she aimed, and the shot misses.
func behindTheWall(t *testing.T) string {
	t.Helper()
	return behindTheWallIn(t, t.TempDir())
}

func behindTheWallIn(t *testing.T, dir string) string {
	t.Helper()
	sc, _ := matchtest.RoomConfig(t)
	sc.LagComp = lagcomp.Config{WindowTicks: 30, Bucketing: true, CellSize: 4}
	path := filepath.Join(dir, "wall"+replay.Extension)
	r := matchtest.NewRecorded(t, sc, matchtest.Level(geom.AABB{Min: geom.V(-1, 0, -1), Max: geom.V(1, 3, 1)}), replay.RecorderConfig{Path: path})
	sim := r.Sim
	rifle, _ := sim.Catalog.Lookup("rifle")
	alice := r.Spawn(matchtest.Player("alice", 1, geom.V(0, 0, -15), rifle))
	bob := r.Spawn(matchtest.Player("bob", 2, geom.V(-4.5, 0, 5), rifle))
	for tick := int64(0); tick < 30; tick++ {
		a := ecs.Input{Tick: tick, Weapon: rifle, ViewTime: ecs.ViewTime{Tick: max(tick-8, 0)}}
		if tick == 15 {
			then, _ := sim.History.PoseAt(7, bob)
			d := then.Pos.Add(geom.V(0, 1.1, 0)).Sub(geom.V(0, 1.6, -15))
			a.Yaw, a.Pitch = math.Atan2(d.X, d.Z), math.Atan2(d.Y, math.Hypot(d.X, d.Z))
			a.Buttons, a.Shot = ecs.ButtonFire, 1
		}
		r.Queue(alice, a)
		r.Queue(bob, ecs.Input{Tick: tick, MoveX: 1, ViewTime: ecs.ViewTime{Tick: tick}})
		r.Step()
		if tick == 15 {
			if now, _ := sim.History.PoseAt(15, bob); math.Abs(now.Pos.X) > 0.5 {
				t.Fatalf("bob at %v at tick 15: the script wants him behind the wall", now.Pos)
			}
			if len(sim.Events.Shots) != 1 || sim.Events.Shots[0].Result != ecs.ResultHit {
				t.Fatalf("the recorded shot: %+v; the script wants a hit", sim.Events.Shots)
			}
		}
	}
	r.Close()
	return path
}

func TestDisputedBehindTheWall(t *testing.T) {
	path := behindTheWall(t)
	rep, err := Sweep(context.Background(), []string{path}, Config{Windows: tk(0, 4, 8, 12, 30)})
	if err != nil {
		t.Fatal(err)
	}
	type got struct{ window, seen, confirmed, hits, disputed int64 }
	var rows []got
	for _, r := range rep.Rows {
		if r.By == ByAll {
			rows = append(rows, got{int64(r.Setting.WindowTicks(20)), r.Seen, r.Confirmed, r.Hits, r.Disputed})
		}
	}
	want := []got{{0, 1, 0, 0, 0}, {4, 1, 0, 0, 0}, {8, 1, 1, 1, 1}, {12, 1, 1, 1, 1}, {30, 1, 1, 1, 1}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("window, seen, confirmed, hits, disputed:\n got %v\nwant %v", rows, want)
	}
	if rep.Ticks != 30 || rep.Players != 2 || rep.ViewLag.N != 60 || rep.ViewLag.Max != 400 {
		t.Errorf("%d ticks, %d players, %d view lags (max %v ms)", rep.Ticks, rep.Players, rep.ViewLag.N, rep.ViewLag.Max)
	}
}

// The same shot, out of reach: the shotgun's 35 m range from alice's eye
// does not reach bob's present at 40 m. Lines of sight are the level's: a
// pillar, and a wall that rises 20 m.
func TestOutOfSightGeometry(t *testing.T) {
	reg := weapons.NewRegistry()
	cat, err := weapons.Default().Catalog(reg)
	if err != nil {
		t.Fatal(err)
	}
	sc := systems.DefaultConfig()
	sc.Kinds, sc.Catalog = reg, cat
	sc.PoseScale = protocol.PosScale
	lvl := matchtest.Level(geom.AABB{Min: geom.V(-1, 0, -1), Max: geom.V(1, 3, 1)}, geom.AABB{Min: geom.V(6.5, 0, -0.5), Max: geom.V(8.5, 20, 0.5)})
	if sc.Level, err = lvl.Mesh(); err != nil {
		t.Fatal(err)
	}
	sim, err := systems.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	shooter := sim.SpawnPlayer(systems.PlayerSpec{Team: 1, Pos: geom.V(0, 0, -15), Health: 100, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}})
	open := sim.SpawnPlayer(systems.PlayerSpec{Team: 2, Pos: geom.V(-5, 0, 5), Health: 100, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}})
	hidden := sim.SpawnPlayer(systems.PlayerSpec{Team: 2, Pos: geom.V(0, 0, 5), Health: 100, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}})
	far := sim.SpawnPlayer(systems.PlayerSpec{Team: 2, Pos: geom.V(-20, 0, 20), Health: 100, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}})
	tall := sim.SpawnPlayer(systems.PlayerSpec{Team: 2, Pos: geom.V(10, 0, 5), Health: 100, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}})
	sim.Step()
	m := newMatchJudge(replay.Setup{EyeHeight: sc.EyeHeight, TickRate: 20}, nil, false, 0)
	teams := genericTeams(sim)
	rifle, _ := cat.Lookup("rifle")
	shotgun, _ := cat.Lookup("shotgun")
	rocket, _ := cat.Lookup("rocket")
	for _, c := range []struct {
		name   string
		target ecs.Entity
		weapon uint16
		point  geom.Vec3
		want   bool
	}{
		{"in the open", open, rifle, geom.V(-5, 1, 5), false},
		{"behind the wall", hidden, rifle, geom.V(-2, 1, 5), true},
		{"behind the tall wall", tall, rifle, geom.V(10, 1, 5), true},
		{"in the rifle's range", far, rifle, geom.V(-20, 1, 20), false},
		{"beyond the shotgun's range", far, shotgun, geom.V(-20, 1, 20), true},
		{"a rocket's explosion in sight of its victim", open, rocket, geom.V(-5.5, 1, 4), false},
		{"a rocket's explosion beyond its splash", open, rocket, geom.V(-5, 1, -2), true},
		{"a rocket's explosion behind the wall from its victim", hidden, rocket, geom.V(0, 1, -2), true},
	} {
		ev := ecs.ShotEvent{Shooter: shooter, Target: c.target, Weapon: c.weapon, Result: ecs.ResultHit, Point: c.point, Tick: 0}
		if got := m.outOfSight(sim, teams, 0, &ev); got != c.want {
			t.Errorf("%s: out of sight or reach %v, want %v", c.name, got, c.want)
		}
	}
}

// A scripted 6-player match: the table and the CSV agree, the view lag
// is the clients' claims, and confirmation rises with the window.
func TestSweepScriptedMatch(t *testing.T) {
	data := matchtest.Record(t, 6, 400)
	path := filepath.Join(t.TempDir(), "m"+replay.Extension)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var progress []int64
	rep, err := Sweep(context.Background(), []string{path, path}, Config{Windows: tk(0, 2, 4, 8, 16), Workers: 2,
		Progress: func(read, total int64) { progress = append(progress, read, total) }})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(progress); n == 0 || progress[n-2] != progress[n-1] || progress[n-1] != 2*2*int64(len(data)) {
		t.Errorf("progress %v: want it to reach the bytes of two files read twice (two workers' chunks)", progress)
	}
	if rep.Ticks != 800 || rep.Players != 14 {
		t.Errorf("%d ticks, %d players over two copies", rep.Ticks, rep.Players)
	}
	var all []Row
	sums := map[[2]string]Row{} // by setting and breakdown
	for _, r := range rep.Rows {
		if r.By == ByAll {
			all = append(all, r)
			continue
		}
		k := [2]string{r.Setting.String(), r.By}
		s := sums[k]
		s.add(&r)
		sums[k] = s
		if r.Clamped > r.Shots || r.Confirmed > r.Seen || r.Disputed > r.Damaging || r.Decisions < r.Shots {
			t.Errorf("%s %s %s: %d clamped of %d shots (%d decisions), %d confirmed of %d seen, %d disputed of %d damaging", r.Setting, r.By, r.Group,
				r.Clamped, r.Shots, r.Decisions, r.Confirmed, r.Seen, r.Disputed, r.Damaging)
		}
	}
	if len(all) != 5 {
		t.Fatalf("%d rows for every weapon, want 5", len(all))
	}
	for i, r := range all {
		window := r.Setting.WindowTicks(20)
		for _, by := range Breakdowns[1:] {
			w := sums[[2]string{r.Setting.String(), by}]
			want := r
			if by == ByRecording { // the same file twice: one row, both copies
				want.Shots, want.Seen, want.Confirmed, want.Hits, want.Disputed, want.Clamped = 2*r.Shots/2, r.Seen, r.Confirmed, r.Hits, r.Disputed, r.Clamped
			}
			if w.Seen != want.Seen || w.Confirmed != want.Confirmed || w.Hits != want.Hits || w.Disputed != want.Disputed || w.Shots != want.Shots ||
				w.Clamped != want.Clamped || w.Decisions != want.Decisions {
				t.Errorf("window %d: the %s rows do not add up to the total: %+v vs %+v", window, by, w, r)
			}
		}
		if r.Seen == 0 || r.Seen != all[0].Seen || r.Shots != all[0].Shots {
			t.Errorf("window %d: %d seen hits and %d shots, window 0 %d and %d: the shots are the same", window, r.Seen, r.Shots, all[0].Seen, all[0].Shots)
		}
		if i > 0 && r.Confirmation() < all[i-1].Confirmation() {
			t.Errorf("confirmation falls from %.3f to %.3f at window %d", all[i-1].Confirmation(), r.Confirmation(), window)
		}
		if window == 0 && (r.Disputed != 0 || r.Rewinds != 0) {
			t.Errorf("window 0: %d disputed, %d rewinds", r.Disputed, r.Rewinds)
		}
	}
	// The claims are the script's seats': 1..15 ticks (50..750 ms).
	if h := &rep.ViewLag; h.Quantile(0) != 50 || h.Max != 750 {
		t.Errorf("view lag %v..%v ms, the clients claim 50..750", h.Quantile(0), h.Max)
	}
	var table, csvOut bytes.Buffer
	if err := rep.WriteTable(&table, true); err != nil {
		t.Fatal(err)
	}
	var short bytes.Buffer
	if err := rep.WriteTable(&short, false); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(short.String(), "\n"); lines != 5+4 {
		t.Errorf("the table for every weapon together: %d lines, want a header, a blank line, a column line and 5 settings:\n%s", lines, short.String())
	}
	if !strings.Contains(short.String(), "400") || !strings.Contains(short.String(), "window ms") {
		t.Errorf("the table: no window in ms (window 8 ticks: 400 ms):\n%s", short.String())
	}
	if err := rep.WriteCSV(&csvOut); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&csvOut).ReadAll()
	if err != nil || len(recs) != len(rep.Rows)+1 || !reflect.DeepEqual(recs[0], CSVHeader) {
		t.Fatalf("CSV: %d lines, %v", len(recs), err)
	}
	if r := recs[1]; r[0] != "0.0000" || r[1] != "0" || r[2] != "20" || r[3] != "all" {
		t.Errorf("CSV: the first row %q, want window 0 ms, 0 ticks, 20 Hz, all", r)
	}
	files, err := rep.WritePlots(t.TempDir(), "svg")
	if err != nil || len(files) != 4 {
		t.Fatalf("plots: %v %v", files, err)
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if !bytes.Contains(b, []byte("<svg")) {
			t.Errorf("%s is not an SVG", f)
		}
	}
}

func TestSweepErrors(t *testing.T) {
	data := matchtest.Record(t, 2, 50)
	dir := t.TempDir()
	good := filepath.Join(dir, "good"+replay.Extension)
	os.WriteFile(good, data, 0o644)
	if _, err := Sweep(context.Background(), []string{good}, Config{Windows: tk(0), MaxRewind: map[string][]ticks.Span{"railgun": tk(1)}}); err == nil ||
		!strings.Contains(err.Error(), `no weapon "railgun"`) {
		t.Errorf("an unknown weapon: %v", err)
	}
	missing := filepath.Join(dir, "missing")
	if _, err := Sweep(context.Background(), []string{missing}, Config{Windows: tk(0)}); err == nil || !strings.Contains(err.Error(), "no recording could be replayed") {
		t.Errorf("a missing file alone: %v", err)
	}
	// A damaged tail: the intact part counts, and the report says so; a
	// file that is no recording, or is gone, is skipped; the rest counts.
	cut := filepath.Join(dir, "cut"+replay.Extension)
	os.WriteFile(cut, data[:len(data)*3/4], 0o644)
	junk := filepath.Join(dir, "junk"+replay.Extension)
	os.WriteFile(junk, []byte("not a recording"), 0o644)
	rep, err := Sweep(context.Background(), []string{cut, junk, missing, good}, Config{Windows: tk(0, 4)})
	if err != nil || len(rep.Skipped) != 3 || rep.Ticks <= 50 || rep.Ticks >= 100 || len(rep.Recordings) != 2 {
		t.Fatalf("a truncated file, junk, a missing one and a good one: %v, skipped %q, %d ticks", err, rep.Skipped, rep.Ticks)
	}
	for i, want := range []string{junk, missing, "truncated"} {
		if !strings.Contains(rep.Skipped[i], want) {
			t.Errorf("skipped %q: want %q named", rep.Skipped[i], want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Sweep(ctx, []string{good}, Config{Windows: tk(0)}); err == nil {
		t.Error("a cancelled sweep: no error")
	}
}

func genericTeams(sim *systems.Simulation) generic.Map1[ecs.Team] {
	return generic.NewMap1[ecs.Team](sim.World)
}

// A long legend goes beside the plot, where it covers no line; a short one
// stays in a corner of the plot.
func TestLongLegendBesideThePlot(t *testing.T) {
	for _, c := range []struct {
		entries int
		wider   bool
	}{{2, false}, {legendInside + 1, true}} {
		p := plot.New()
		for i := range c.entries {
			l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: float64(i)}, {X: 1, Y: float64(i)}})
			if err != nil {
				t.Fatal(err)
			}
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("line %d", i), l)
		}
		path := filepath.Join(t.TempDir(), "p.png")
		if err := savePlot(p, path, "png"); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.DecodeConfig(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		plotPx := int(plotWidth.Points() / 72 * 96) // vgimg's default 96 dpi
		if got := img.Width > plotPx; got != c.wider {
			t.Errorf("%d entries: image %d px wide, the plot %d: legend beside %v, want %v", c.entries, img.Width, plotPx, got, c.wider)
		}
	}
}
