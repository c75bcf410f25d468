package fairness_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/internal/matchtest"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/ticks"
	"github.com/rewind-gg/rewind/tune"
)

// recordWall plays the behind-the-wall script (matchtest.WallInputs) at a
// window of window ticks into a recording, and returns its path and the
// hits the simulation marked disputed as it played.
func recordWall(t *testing.T, window int) (string, []ecs.ShotEvent) {
	t.Helper()
	sc, _ := matchtest.RoomConfig(t)
	sc.LagComp = lagcomp.Config{WindowTicks: window, Bucketing: true, CellSize: 4}
	path := filepath.Join(t.TempDir(), "wall"+replay.Extension)
	r := matchtest.NewRecorded(t, sc, matchtest.Level(matchtest.Wall), replay.RecorderConfig{Path: path})
	sim := r.Sim
	rifle, _ := sim.Catalog.Lookup("rifle")
	alice := r.Spawn(matchtest.Player("alice", 1, matchtest.WallAlice, rifle))
	bob := r.Spawn(matchtest.Player("bob", 2, matchtest.WallBob, rifle))
	var disputed []ecs.ShotEvent
	for tick := int64(0); tick < matchtest.WallTicks; tick++ {
		a, b := matchtest.WallInputs(sim, alice, bob, rifle, tick)
		r.Queue(alice, a)
		r.Queue(bob, b)
		r.Step()
		if tick == matchtest.WallShotTick {
			if now, _ := sim.History.PoseAt(tick, bob); math.Abs(now.Pos.X) > 0.5 {
				t.Fatalf("bob at %v at the shot: the script wants him behind the wall", now.Pos)
			}
		}
		for _, ev := range sim.Events.Shots {
			if ev.Disputed {
				disputed = append(disputed, ev)
			}
		}
	}
	if n := sim.Stats().Disputed; n != int64(len(disputed)) {
		t.Errorf("Stats().Disputed = %d, the events marked %d", n, len(disputed))
	}
	r.Close()
	return path, disputed
}

// The script's one disputed hit is marked as the server resolves it, at
// the shot's tick, on bob, and the tuning sweep finds the same one in the
// recording; with a window too short to grant alice's view, the shot
// misses and nothing is disputed, live or offline.
func TestLiveDisputedHitBehindTheWall(t *testing.T) {
	for _, c := range []struct {
		window   int
		disputed int
	}{{matchtest.WallLag * 2, 1}, {matchtest.WallLag / 2, 0}} {
		path, live := recordWall(t, c.window)
		if len(live) != c.disputed {
			t.Fatalf("window %d: %d hits marked disputed live, want %d: %+v", c.window, len(live), c.disputed, live)
		}
		if c.disputed == 1 {
			ev := live[0]
			if ev.Tick != matchtest.WallShotTick || ev.ViewTime.Tick != matchtest.WallShotTick-matchtest.WallLag || ev.Dealt <= 0 {
				t.Errorf("the disputed hit: %+v, want the shot of tick %d seen at %d, dealing damage", ev, matchtest.WallShotTick, matchtest.WallShotTick-matchtest.WallLag)
			}
		}
		if got := sweptDisputed(t, path, c.window); got != int64(c.disputed) {
			t.Errorf("window %d: the sweep counts %d disputed, live %d", c.window, got, c.disputed)
		}
	}
}

// sweptDisputed is the tuning sweep's count of disputed hits in the
// recording at path, at window.
func sweptDisputed(t *testing.T, path string, window int) int64 {
	t.Helper()
	rep, err := tune.Sweep(context.Background(), []string{path}, tune.Config{Windows: []ticks.Span{{N: float64(window), InTicks: true}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		if r.By == tune.ByAll {
			return r.Disputed
		}
	}
	t.Fatalf("no row for every weapon in %+v", rep.Rows)
	return 0
}

// A scripted 12-player match (matchtest.Match: its classes' weapons,
// strafing, late inputs, a shield): the live count of disputed hits is the
// sweep's at the recorded settings. The claims stay within the recorded
// max_unlag, which the sweep's settings do not carry.
func TestLiveDisputedAgreesWithTheSweep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m"+replay.Extension)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const ticks = 1200
	m := matchtest.New(t, 12, replay.RecorderConfig{Writer: f, QueueTicks: ticks + 64})
	sc := m.Sim.Config()
	for _, s := range m.Seats {
		s.Lag = min(s.Lag, sc.LagComp.MaxUnlag())
	}
	var live, damaging int64
	m.AfterTick = func() {
		for _, ev := range m.Sim.Events.Shots {
			if ev.Dealt > 0 {
				damaging++
			}
			if ev.Disputed {
				live++
			}
		}
	}
	m.Play(ticks)
	if m.Sim.Stats().Disputed != live {
		t.Errorf("Stats().Disputed = %d, the events marked %d", m.Sim.Stats().Disputed, live)
	}
	swept := sweptDisputed(t, path, sc.LagComp.WindowTicks)
	t.Logf("%d hits dealt damage; %d disputed live, %d swept", damaging, live, swept)
	if live != swept {
		t.Errorf("%d disputed live, %d in the sweep of the recording", live, swept)
	}
	if live == 0 {
		t.Error("no disputed hit: the match must have some for the comparison to say anything")
	}
}
