// Package matchtest plays scripted matches into recordings, for the tests
// and benchmarks of the packages that read them (replay, tune, view): a
// room's calls to its simulation (spawns, inputs as they arrive with
// redundant copies, steps, a leave and a join, a shield), on a level,
// mirrored to a replay.Recorder as server/room.go makes them, with the
// tallies a replay must reproduce.
package matchtest

import (
	"math"
	"testing"

	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/systems"
	"github.com/rewind-gg/rewind/weapons"
)

// RoomConfig builds a simulation's configuration the way server/room.go's
// newRoom does: the built-in weapons' catalogue shared by reference, the
// arena's bounds, the snapshots' pose quantum, a spread seed; and its
// level, an arena of three boxes (Level), whose mesh it does not set
// (NewRecorded does).
func RoomConfig(tb testing.TB) (systems.Config, *level.Level) {
	tb.Helper()
	reg := weapons.NewRegistry()
	cat, err := weapons.Default().Catalog(reg)
	if err != nil {
		tb.Fatal(err)
	}
	sc := systems.DefaultConfig()
	sc.TickRate = 20
	sc.LagComp = lagcomp.Config{WindowTicks: 20, Bucketing: true, CellSize: 4, MaxUnlagTicks: 12}
	sc.EyeHeight = 1.6
	sc.RespawnTicks, sc.InvulnerableTicks = 40, 20
	sc.Kinds, sc.Catalog = reg, cat
	sc.PoseScale = protocol.PosScale
	sc.SpreadSeed = 0x9e3779b97f4a7c15
	l := Level(
		geom.AABB{Min: geom.V(-8, 0, -1), Max: geom.V(-4, 2.5, 1)},
		geom.AABB{Min: geom.V(4, 0, -1), Max: geom.V(8, 2.5, 1)},
		geom.AABB{Min: geom.V(-1, 0, 8), Max: geom.V(1, 1.2, 10)},
	)
	sc.Bounds = l.Bounds
	return sc, l
}

// Level is a 60 m arena of boxes (level.Arena: a floor that blocks shots,
// edge walls that do not), canonicalized as the server plays it.
func Level(boxes ...geom.AABB) *level.Level {
	l := level.Arena(60, boxes)
	l.Canonicalize()
	return l
}

// Recorded is a simulation whose every call is mirrored to a Recorder, as
// a room's: the building block of scripted recordings.
type Recorded struct {
	tb  testing.TB
	Sim *systems.Simulation
	Rec *replay.Recorder
}

// NewRecorded builds a simulation of sc on lvl (nil: none; sc.Level is set
// to its mesh), and its recording with rcfg (whose Setup it fills in; room
// "r1").
func NewRecorded(tb testing.TB, sc systems.Config, lvl *level.Level, rcfg replay.RecorderConfig) *Recorded {
	tb.Helper()
	sc.Level = nil
	if lvl != nil {
		m, err := lvl.Mesh()
		if err != nil {
			tb.Fatal(err)
		}
		sc.Level = m
	}
	setup, err := replay.NewSetup(sc, lvl)
	if err != nil {
		tb.Fatal(err)
	}
	setup.Room, setup.Name, setup.Started = "r1", "test match", "2025-01-02T03:04:05Z"
	rcfg.Setup = setup
	rec, err := replay.NewRecorder(rcfg)
	if err != nil {
		tb.Fatal(err)
	}
	sim, err := systems.New(sc)
	if err != nil {
		tb.Fatal(err)
	}
	return &Recorded{tb: tb, Sim: sim, Rec: rec}
}

// Spawn spawns a player and records it.
func (r *Recorded) Spawn(spec systems.PlayerSpec) ecs.Entity {
	e := r.Sim.SpawnPlayer(spec)
	r.Rec.SpawnPlayer(spec, e)
	return e
}

// Despawn removes a player and records it.
func (r *Recorded) Despawn(e ecs.Entity) {
	r.Sim.Despawn(e)
	r.Rec.Despawn(e)
}

// Queue hands the simulation an input as room.applyInputs does, and the
// Recorder what it did with it, which it returns.
func (r *Recorded) Queue(e ecs.Entity, in ecs.Input) systems.InputVerdict {
	v := r.Sim.QueueInput(e, in)
	r.Rec.Input(e, in, v)
	return v
}

// Step simulates a tick and records it.
func (r *Recorded) Step() {
	r.Sim.Step()
	r.Rec.Step(r.Sim.Now()-1, r.Sim.Events)
}

// Close ends the match ("finished", with a result) and closes the
// recording.
func (r *Recorded) Close() {
	r.tb.Helper()
	r.Rec.End("finished", []byte(`{"match_id":"r1"}`))
	if err := r.Rec.Close(); err != nil {
		r.tb.Fatal(err)
	}
}

// Seat is a scripted player: its class's loadout, the view lag its client
// claims, and the last input it sent (resent as a redundant copy, as
// clients do).
type Seat struct {
	Entity  ecs.Entity
	Team    uint8
	Loadout []uint16
	Lag     float64
	Bound   bool // its inputs carry the server's measured bound
	Gone    bool
	shot    uint32
	last    ecs.Input
	sent    bool
}

// Match drives a simulation as a room does, mirroring every call to a
// Recorder, and keeps the tallies a replay must reproduce.
type Match struct {
	*Recorded
	Seats []*Seat
	body  generic.Map3[ecs.Transform, ecs.Life, ecs.Team]
	// AfterTick, when set, runs after every tick (a test waiting for the
	// writer, as a room's 50 ms between ticks let it catch up).
	AfterTick func()

	Ticks, Events, Shots, Hits, Kills, Clamps, Rejected int64
	Late                                                int64 // inputs queued late (systems.InputLate)
	Digests                                             []replay.Digest
}

// lags are the clients' claimed view lags, in ticks: a spread of distinct
// ones (so several buckets a tick), one beyond the room's cap.
var lags = []float64{2, 3.5, 5.25, 7, 15, 1, 2.5, 4.75, 6, 9, 0.5, 3}

// New starts a match of players (two teams) recorded with rcfg, whose
// Setup it fills in.
func New(tb testing.TB, players int, rcfg replay.RecorderConfig) *Match {
	tb.Helper()
	sc, lvl := RoomConfig(tb)
	r := NewRecorded(tb, sc, lvl, rcfg)
	m := &Match{Recorded: r, body: generic.NewMap3[ecs.Transform, ecs.Life, ecs.Team](r.Sim.World)}
	for range players {
		m.join(uint8(1 + len(m.Seats)%2))
	}
	return m
}

// join spawns a player as room.admit does: its class's loadout, spread
// along its team's end of the arena.
func (m *Match) join(team uint8) *Seat {
	i := len(m.Seats)
	classes := m.Sim.Catalog.Classes()
	loadout, err := m.Sim.Catalog.Loadout(classes[i%len(classes)].Name)
	if err != nil {
		m.tb.Fatal(err)
	}
	z := -18.0
	if team == 2 {
		z = 18
	}
	e := m.Spawn(Player("p"+string(rune('a'+i)), team, geom.V(float64(i/2)*3-8, 0, z), loadout...))
	s := &Seat{Entity: e, Team: team, Loadout: loadout, Lag: lags[i%len(lags)], Bound: i%2 == 0}
	m.Seats = append(m.Seats, s)
	return s
}

// leave removes a player as room.remove does.
func (m *Match) leave(s *Seat) {
	m.Despawn(s.Entity)
	s.Gone = true
}

// input is seat i's input for tick t, from what it sees now: it runs a
// wavy path, aims at the nearest living enemy (a little off), fires most
// ticks with its main weapon, sometimes another, places a shield once.
func (m *Match) input(i int, s *Seat, t int64) ecs.Input {
	now := m.Sim.Now()
	tf, _, _ := m.body.Get(s.Entity)
	in := ecs.Input{Tick: t, MoveX: math.Sin(float64(t)*0.07 + float64(i)), MoveZ: math.Cos(float64(t)*0.05 + 2*float64(i)),
		Yaw: tf.Yaw, Pitch: tf.Pitch, Weapon: s.Loadout[0], ViewTime: ecs.ViewTimeOf(float64(t) - s.Lag)}
	if s.Bound {
		in.Earliest = float64(now) - 10.25
	}
	best := math.Inf(1)
	for _, o := range m.Seats {
		if o.Gone || o.Team == s.Team {
			continue
		}
		otf, olife, _ := m.body.Get(o.Entity)
		if olife.Dead {
			continue
		}
		d := otf.Pos.Add(geom.V(0, 1.2, 0)).Sub(tf.Pos.Add(geom.V(0, 1.6, 0)))
		if l := d.Len(); l < best {
			best = l
			jitter := 0.02 * math.Sin(float64(t)*0.3+float64(i))
			in.Yaw = math.Atan2(d.X, d.Z) + jitter
			in.Pitch = math.Atan2(d.Y, math.Hypot(d.X, d.Z)) + jitter/2
		}
	}
	if best < 60 && t%5 != 4 {
		in.Buttons |= ecs.ButtonFire
		s.shot++
		in.Shot = s.shot
		switch {
		case t == int64(60+7*i):
			in.Weapon = s.Loadout[len(s.Loadout)-1] // a shield, for two of the classes
		case t%40 < 6:
			in.Weapon = s.Loadout[1]
		}
	}
	if t%97 == 0 {
		in.Buttons |= ecs.ButtonReload
	}
	return in
}

// Tick runs one tick of the script: the room's messages (inputs a tick
// ahead, redundant copies of the last, a leave, a join, a scripted shield),
// then the step.
func (m *Match) Tick() {
	t := m.Sim.Now()
	switch t {
	case 100:
		box := geom.AABB{Min: geom.V(-2, 0, -5), Max: geom.V(2, 2.5, -4.5)}
		e, err := m.Sim.SpawnShield(m.Seats[0].Entity, m.Seats[0].Team, box, 180)
		if err != nil {
			m.tb.Fatal(err)
		}
		m.Rec.SpawnShield(m.Seats[0].Entity, m.Seats[0].Team, box, 180, e)
	case 150:
		m.leave(m.Seats[3])
	case 170:
		m.join(m.Seats[3].Team)
	}
	for i, s := range m.Seats {
		if s.Gone || (i == 1 && t >= 200 && t < 210) { // seat 1's connection stalls: rooted
			continue
		}
		if i == 2 && t >= 250 && t < 257 { // seat 2's uplink stalls, then its held inputs come late
			continue
		}
		if s.sent {
			m.queue(s.Entity, s.last) // a redundant copy: a duplicate (or late, after a stall)
		} else {
			m.queue(s.Entity, m.input(i, s, t))
		}
		if i == 2 && t == 257 {
			for late := int64(251); late < t; late++ {
				m.queue(s.Entity, m.input(i, s, late))
			}
		}
		s.last, s.sent = m.input(i, s, t+1), true
		m.queue(s.Entity, s.last)
	}
	m.Step()
	m.tally()
	if m.AfterTick != nil {
		m.AfterTick()
	}
}

// queue queues an input and counts the late ones.
func (m *Match) queue(e ecs.Entity, in ecs.Input) {
	if m.Queue(e, in) == systems.InputLate {
		m.Late++
	}
}

func (m *Match) tally() {
	ev := m.Sim.Events
	d := replay.DigestOf(ev)
	m.Digests = append(m.Digests, d)
	m.Ticks++
	m.Events += int64(d.Events())
	m.Shots += int64(len(ev.Shots))
	m.Kills += int64(len(ev.Kills))
	m.Clamps += int64(len(ev.Clamps))
	m.Rejected += int64(len(ev.Rejected))
	for i := range ev.Shots {
		if ev.Shots[i].Result == ecs.ResultHit {
			m.Hits++
		}
	}
}

// Play runs n ticks, then ends and closes the recording.
func (m *Match) Play(n int) {
	m.tb.Helper()
	for range n {
		m.Tick()
	}
	m.Close()
}

// Player is a controlled player of 100 health with the usual hitbox (0.4
// m radius, 1.8 m high, a 0.3 m head), carrying loadout.
func Player(name string, team uint8, pos geom.Vec3, loadout ...uint16) systems.PlayerSpec {
	return systems.PlayerSpec{Name: name, Team: team, Pos: pos, Controlled: true, Health: 100,
		Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8, HeadHeight: 0.3, CrouchHeight: 1.1}, Loadout: loadout}
}

// Record plays a match of players for ticks into memory and returns the
// recording. The writer's queue holds the whole match: a loop of ticks
// outruns the writer, and no tick may be dropped.
func Record(tb testing.TB, players, ticks int) []byte {
	tb.Helper()
	w := &buffer{}
	m := New(tb, players, replay.RecorderConfig{Writer: w, QueueTicks: ticks + 64})
	m.Play(ticks)
	if d := m.Rec.Dropped(); d != 0 {
		tb.Fatalf("%d ticks dropped", d)
	}
	return w.b
}

// buffer collects the recording; only the writer goroutine writes it, and
// Close waits for that goroutine.
type buffer struct{ b []byte }

func (w *buffer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
