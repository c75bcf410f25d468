package replay

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/systems"
	"github.com/rewind-gg/rewind/weapons"
)

// testSetup is the setup of a default room with the built-in weapons.
func testSetup(tb testing.TB) Setup {
	tb.Helper()
	sc := systems.DefaultConfig()
	def := weapons.Default()
	sc.Weapons, sc.Classes = def.Weapons, def.Classes
	setup, err := NewSetup(sc, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return setup
}

func TestRecorderToFile(t *testing.T) {
	// A path the Recorder cannot create is an error at once.
	setup := testSetup(t)
	if _, err := NewRecorder(RecorderConfig{Path: t.TempDir() + "/no/such/dir/x.rwr", Setup: setup}); err == nil {
		t.Error("a file in a missing directory: no error")
	}
	if _, err := NewRecorder(RecorderConfig{Setup: setup}); err == nil {
		t.Error("neither writer nor path: no error")
	}
	// A file of its own, created, written, synced and closed by Close.
	dir := t.TempDir()
	started := time.Date(2026, 11, 24, 10, 15, 30, 123e6, time.UTC)
	path := MatchFile(dir, "r1", started, 0)
	if want := filepath.Join(dir, "r1-20261124T101530.123Z.rwr"); path != want {
		t.Errorf("MatchFile: %s, want %s", path, want)
	}
	rec, err := NewRecorder(RecorderConfig{Path: path, Setup: setup})
	if err != nil {
		t.Fatal(err)
	}
	rec.Step(0, &ecs.Events{})
	rec.End("finished", []byte(`{}`))
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(open(t, data), Config{})
	if err != nil || res.Ticks != 1 || res.End != "finished" {
		t.Errorf("the file replays: %+v, %v", res, err)
	}
	// A recording never overwrites one.
	if _, err := NewRecorder(RecorderConfig{Path: path, Setup: setup}); !errors.Is(err, os.ErrExist) {
		t.Errorf("a recording over an existing file: %v, want os.ErrExist", err)
	}
	if got := MatchFile(dir, "r1", started, 2); got != filepath.Join(dir, "r1-20261124T101530.123Z-2.rwr") {
		t.Errorf("MatchFile n=2: %s", got)
	}
}

func TestNilRecorder(t *testing.T) {
	var r *Recorder
	r.SpawnPlayer(systems.PlayerSpec{}, ecs.Entity{})
	r.Input(ecs.Entity{}, ecs.Input{}, systems.InputQueued)
	r.Step(0, &ecs.Events{})
	r.End("x", nil)
	if r.Close() != nil || r.Err() != nil || r.Dropped() != 0 {
		t.Error("a nil Recorder reported something")
	}
}

// TestRecorderAllocs checks that a room's per-tick calls allocate nothing
// once the buffer pool is warm.
func TestRecorderAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	setup := testSetup(t)
	rec, err := NewRecorder(RecorderConfig{Writer: io.Discard, Setup: setup})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	world := ecs.NewWorld(20)
	players := make([]ecs.Entity, 12)
	for i := range players {
		players[i] = world.NewEntity()
	}
	ev := &ecs.Events{}
	for i := range 8 {
		ev.Shots = append(ev.Shots, ecs.ShotEvent{Shot: uint32(i), Shooter: players[i], Target: players[i+1],
			Result: ecs.ResultHit, Damage: 20, Dealt: 20, Point: geom.V(1, 2, 3), ViewTime: ecs.ViewTimeOf(3.25)})
	}
	ev.Kills = append(ev.Kills, ecs.KillEvent{Killer: players[0], Victim: players[1]})
	ev.Clamps = append(ev.Clamps, ecs.ClampEvent{Shooter: players[2], Claimed: 15, Granted: 12})
	spec := systems.PlayerSpec{Name: "rejoin", Team: 2, Controlled: true, Health: 100, Loadout: []uint16{0, 1, 2}}
	var tick int64
	oneTick := func() {
		for i, e := range players {
			in := ecs.Input{Tick: tick + 1, MoveX: 0.5, MoveZ: -1, Yaw: float64(i), Pitch: 0.1, Buttons: ecs.ButtonFire,
				Shot: uint32(tick), ViewTime: ecs.ViewTimeOf(float64(tick) - 3.5), Earliest: float64(tick) - 10}
			rec.Input(e, in, systems.InputQueued)
			rec.Input(e, in, systems.InputDuplicate)
		}
		if tick%50 == 0 {
			rec.Despawn(players[0])
			rec.SpawnPlayer(spec, players[0])
		}
		rec.Step(tick, ev)
		tick++
		catchUp(rec)
	}
	for range 500 { // warm the pool
		oneTick()
	}
	if a := testing.AllocsPerRun(2000, oneTick); a != 0 {
		t.Errorf("%v allocations per tick, want 0", a)
	}
	if rec.Dropped() != 0 {
		t.Errorf("%d ticks dropped writing to io.Discard", rec.Dropped())
	}
}

// BenchmarkRecorderTick is a 12-player tick's recording: twelve inputs and
// a step (the room's side, and the writer's while the room waits for it).
func BenchmarkRecorderTick(b *testing.B) {
	setup := testSetup(b)
	rec, err := NewRecorder(RecorderConfig{Writer: io.Discard, Setup: setup})
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Close()
	world := ecs.NewWorld(20)
	players := make([]ecs.Entity, 12)
	for i := range players {
		players[i] = world.NewEntity()
	}
	ev := &ecs.Events{Shots: make([]ecs.ShotEvent, 12)}
	var tick int64
	b.ReportAllocs()
	for b.Loop() {
		for i, e := range players {
			rec.Input(e, ecs.Input{Tick: tick + 1, MoveX: 0.5, Yaw: float64(i), ViewTime: ecs.ViewTimeOf(float64(tick) - 3.5)},
				systems.InputQueued)
		}
		rec.Step(tick, ev)
		tick++
		catchUp(rec)
	}
	b.ReportMetric(float64(rec.Dropped()), "dropped")
}

// catchUp wakes the writer and waits for it to empty the queue, as it does
// between a room's ticks (50 ms apart at 20 Hz): a loop of ticks would
// outrun it.
func catchUp(rec *Recorder) {
	select {
	case rec.wake <- struct{}{}:
	default:
	}
	for len(rec.queue) > 0 {
		runtime.Gosched()
	}
}
