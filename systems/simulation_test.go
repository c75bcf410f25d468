package systems

import (
	"math"
	"reflect"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/weapons"
)

var rifle = weapons.Definition{Name: "rifle", Kind: weapons.KindHitscan, Range: 100, Damage: 25}

func newSim(t *testing.T, defs ...weapons.Definition) *Simulation {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Weapons = defs
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewNamesTheBadField(t *testing.T) {
	tests := []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.TickRate = 0 }, "systems: tick_rate: 0 is outside 1..1000"},
		{func(c *Config) { c.LagComp.WindowTicks = -2 }, "systems: lagcomp.window_ticks: -2 is outside 0..1024"},
		{func(c *Config) {
			c.Weapons = []weapons.Definition{{Name: "gun", Kind: "hitscan"}}
		}, "systems: weapons: gun.range: must be a positive number, got 0"},
		{func(c *Config) {
			c.Weapons = []weapons.Definition{{Name: "gun", Kind: "railgun"}}
		}, `systems: weapons: gun.kind: unknown kind "railgun" (known: hitscan, projectile, melee, placeable)`},
		{func(c *Config) { c.Weapons = []weapons.Definition{rifle, rifle} }, "systems: weapons: rifle: defined twice"},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		tt.change(&cfg)
		if _, err := New(cfg); err == nil || err.Error() != tt.want {
			t.Errorf("got %v, want %q", err, tt.want)
		}
	}
}

// TestDeterministic runs the benchmark room twice from scratch with the same
// inputs: every tick's events and the final state must be identical.
func TestDeterministic(t *testing.T) {
	run := func() ([][]ecs.ShotEvent, []ecs.Transform, Stats) {
		r := newBenchRoom(t, true, []weapons.Definition{rocket, rifle}, nil)
		var events [][]ecs.ShotEvent
		for tick := range 150 {
			if tick%7 == 0 {
				r.weapon = uint16(tick / 7 % 2)
			}
			r.tick()
			events = append(events, append([]ecs.ShotEvent(nil), r.sim.Events.Shots...))
		}
		var tfs []ecs.Transform
		for _, e := range r.players {
			_, _, pos, _, _, _, _, _, _, _ := r.sim.players.Get(e)
			tfs = append(tfs, *pos)
		}
		return events, tfs, r.sim.Stats()
	}
	e1, t1, s1 := run()
	e2, t2, s2 := run()
	if !reflect.DeepEqual(e1, e2) || !reflect.DeepEqual(t1, t2) || s1 != s2 {
		t.Fatal("two runs with the same inputs differ")
	}
	hits := 0
	for _, tick := range e1 {
		for _, ev := range tick {
			if ev.Result == ecs.ResultHit {
				hits++
			}
		}
	}
	if hits == 0 || s1.Rewinds == 0 {
		t.Errorf("the run should have hits and rewinds: %d hits, %+v", hits, s1)
	}
}

func TestQueueInputRules(t *testing.T) {
	s := newSim(t, rifle)
	p := s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}, Loadout: []uint16{0}})
	scripted := s.SpawnPlayer(PlayerSpec{Team: 2, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}})
	s.Step() // now = 1
	tests := []struct {
		in   ecs.Input
		want InputVerdict
	}{
		{ecs.Input{Tick: 0}, InputLate}, // tick 0 was simulated without it
		{ecs.Input{Tick: 1, MoveZ: 1}, InputQueued},
		{ecs.Input{Tick: 1, MoveZ: -1}, InputDuplicate}, // the first copy stays
		{ecs.Input{Tick: 1 + ecs.InputQueueLen - 1}, InputQueued},
		{ecs.Input{Tick: 1 + ecs.InputQueueLen}, InputTooEarly},
	}
	for _, tt := range tests {
		if got := s.QueueInput(p, tt.in); got != tt.want {
			t.Errorf("input for tick %d: %v, want %v", tt.in.Tick, got, tt.want)
		}
	}
	if got := s.QueueInput(scripted, ecs.Input{Tick: 2}); got != InputNoPlayer {
		t.Errorf("scripted player: %v", got)
	}
	s.Despawn(scripted)
	if got := s.QueueInput(scripted, ecs.Input{Tick: 2}); got != InputNoPlayer {
		t.Errorf("despawned player: %v", got)
	}
	s.Step() // applies tick 1: forward, from standing
	_, _, tf, _, _, _, _, _, _, _ := s.players.Get(p)
	if want := moved(t, s, p, movement.State{}, ecs.Input{MoveZ: 1}); tf.Pos != want.Pos || !(want.Pos.Z > 0) {
		t.Errorf("after one tick forward: %v, want %v (the first copy of tick 1's input)", tf.Pos, want.Pos)
	}
	if got := s.QueueInput(p, ecs.Input{Tick: 1}); got != InputDuplicate {
		t.Errorf("an applied tick's input again: %v, want a duplicate", got)
	}
	if got := s.QueueInput(p, ecs.Input{Tick: 0}); got != InputDuplicate {
		t.Errorf("the input of a tick that ran late: %v, want a duplicate", got)
	}
}

// The server never guesses across a gap: without an input for a tick the
// player lets go of everything (no stick: it slows down under friction, no
// button: no jump, no crouch, no shot); it resumes when inputs do.
func TestRootedWithoutInput(t *testing.T) {
	s := newSim(t, rifle)
	p := s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}, Loadout: []uint16{0}})
	fwd := func(tick int64) ecs.Input {
		return ecs.Input{Tick: tick, MoveZ: 1, Buttons: ecs.ButtonFire | ecs.ButtonCrouch, ViewTime: ecs.ViewTimeOf(float64(tick) - 2)}
	}
	s.QueueInput(p, fwd(0))
	s.QueueInput(p, fwd(2))
	state := func() movement.State {
		st, _ := s.PlayerState(p)
		return movement.State{Pos: st.Transform.Pos, Vel: st.Velocity.V, Crouched: st.Motion.Crouched, JumpHeld: st.Motion.JumpHeld}
	}
	shots := func() int { return len(s.Events.Shots) }
	s.Step()
	want := moved(t, s, p, movement.State{}, fwd(0))
	if got := state(); got.Pos != want.Pos || !got.Crouched || shots() != 1 {
		t.Fatalf("tick 0: %+v shots=%d, want %+v", got, shots(), want)
	}
	s.Step() // tick 1: no input
	want = moved(t, s, p, want, ecs.Input{})
	if got := state(); got.Pos != want.Pos || got.Vel != want.Vel || got.Crouched || shots() != 0 {
		t.Errorf("rooted tick: %+v and %d shots, want %+v (an empty input) and none", got, shots(), want)
	}
	q, _ := s.inputMap.Get(p)
	if q.Rooted != 1 || q.Applied != 0 || q.Recent != 0b10 {
		t.Errorf("rooted %d applied %d", q.Rooted, q.Applied)
	}
	s.Step() // tick 2: input resumes
	want = moved(t, s, p, want, fwd(2))
	if got := state(); got.Pos != want.Pos || shots() != 1 || q.Applied != 2 {
		t.Errorf("tick 2: %+v shots=%d applied=%d, want %+v", got, shots(), q.Applied, want)
	}
	if lag := viewLag(s, p).Ticks; lag != 2 {
		t.Errorf("view lag from the input's view time: %v, want 2", lag)
	}
}

// A fire button fires from the eyes along the aim, through lag compensation:
// the target is hit where the shooter saw it.
func TestFireFromInputUsesViewTime(t *testing.T) {
	s := newSim(t, rifle)
	shooter := s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}, Loadout: []uint16{0}})
	target := s.SpawnPlayer(PlayerSpec{Team: 2, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}, Health: 100, Pos: geom.V(0, 0, 10)})
	// The target runs along +X at 1 m per tick; the shooter sees 4 ticks
	// behind and aims at the target's x as it saw it.
	for tick := int64(0); tick <= 20; tick++ {
		_, _, tf, _, _, _, _, _, _, _ := s.players.Get(target)
		tf.Pos.X = float64(tick)
		in := ecs.Input{Tick: tick, ViewTime: ecs.ViewTimeOf(float64(tick) - 4)}
		if tick == 20 {
			// Aim at x=16 from x=0: yaw toward +X by atan(16/10).
			in.Yaw, in.Buttons = math.Atan2(16, 10), ecs.ButtonFire
		}
		s.QueueInput(shooter, in)
		s.Step()
	}
	if len(s.Events.Shots) != 1 {
		t.Fatalf("events %+v", s.Events.Shots)
	}
	ev := s.Events.Shots[0]
	if ev.Result != ecs.ResultHit || ev.Target != target || ev.ViewTime != (ecs.ViewTime{Tick: 16}) || ev.Tick != 20 {
		t.Errorf("event %+v", ev)
	}
	if p := ev.Point; math.Abs(p.Y-1.6) > 1e-9 {
		t.Errorf("the shot starts at eye height 1.6 and flies level: hit at %v", p)
	}
	if h, _ := s.healthOf.Get(target); h.Current != 75 {
		t.Errorf("health %v, want 100 − 25", h.Current)
	}
}

func TestShieldExpires(t *testing.T) {
	s := newSim(t, rifle)
	shooter := s.SpawnPlayer(PlayerSpec{Team: 1, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}})
	target := s.SpawnPlayer(PlayerSpec{Team: 2, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}, Pos: geom.V(0, 0, 10)})
	shield, err := s.SpawnShield(target, 2, geom.AABB{Min: geom.V(-1, 0, 5), Max: geom.V(1, 3, 6)}, 3)
	if err != nil {
		t.Fatal(err)
	}
	var results []ecs.ShotResult
	for range 5 {
		s.Commands.Fire = append(s.Commands.Fire, ecs.FireCommand{Shooter: shooter, Origin: geom.V(0, 1, 0), Dir: geom.V(0, 0, 1), Scripted: true})
		s.Step()
		results = append(results, s.Events.Shots[0].Result)
	}
	want := []ecs.ShotResult{ecs.ResultBlocked, ecs.ResultBlocked, ecs.ResultBlocked, ecs.ResultHit, ecs.ResultHit}
	if !reflect.DeepEqual(results, want) {
		t.Errorf("results %v, want %v (the shield exists in ticks 0..2)", results, want)
	}
	if s.World.Alive(shield) {
		t.Error("the expired shield entity should be gone")
	}
}

// A despawned player's hitbox stays in the history: shots that see the past
// still hit it, shots that see the present do not.
func TestDespawnedPlayerStaysInHistory(t *testing.T) {
	s := newSim(t, rifle)
	old := s.SpawnPlayer(PlayerSpec{Team: 1, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}})
	now := s.SpawnPlayer(PlayerSpec{Team: 1, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}, Pos: geom.V(5, 0, 0)})
	target := s.SpawnPlayer(PlayerSpec{Team: 2, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}, Pos: geom.V(0, 0, 10)})
	viewLag(s, old).Ticks = 5
	for range 10 {
		s.Step()
	}
	s.Despawn(target)
	fire := func(shooter ecs.Entity) {
		s.Commands.Fire = append(s.Commands.Fire, ecs.FireCommand{Shooter: shooter, Origin: geom.V(0, 1, 0), Dir: geom.V(0, 0, 1), Scripted: true})
	}
	fire(old)
	fire(now)
	s.Step()
	got := map[ecs.Entity]ecs.ShotResult{}
	for _, ev := range s.Events.Shots {
		got[ev.Shooter] = ev.Result
	}
	if got[old] != ecs.ResultHit || got[now] != ecs.ResultMiss {
		t.Errorf("past shot %v (want hit), present shot %v (want miss)", got[old], got[now])
	}
}

func TestInvalidFireCommands(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Weapons = []weapons.Definition{rifle}
	cfg.Level = arenaLevel(t).mesh
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := s.SpawnPlayer(PlayerSpec{Team: 1, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}})
	static := s.Level()
	for _, cmd := range []ecs.FireCommand{
		{Shooter: ecs.Entity{}, Origin: geom.V(0, 1, 0), Dir: geom.V(0, 0, 1)},
		{Shooter: static, Origin: geom.V(0, 1, 0), Dir: geom.V(0, 0, 1)},
		{Shooter: p, Weapon: 7, Origin: geom.V(0, 1, 0), Dir: geom.V(0, 0, 1)},
		{Shooter: p, Origin: geom.V(math.NaN(), 1, 0), Dir: geom.V(0, 0, 1)},
		{Shooter: p, Origin: geom.V(0, 1, 0), Dir: geom.V(0, 0, 0)},
		{Shooter: p, Origin: geom.V(0, 1, 0), Dir: geom.V(0, math.Inf(1), 0)},
	} {
		s.Commands.Fire = append(s.Commands.Fire, cmd)
	}
	s.Step()
	if len(s.Events.Shots) != 6 {
		t.Fatalf("%d events", len(s.Events.Shots))
	}
	for i, ev := range s.Events.Shots {
		if ev.Result != ecs.ResultInvalid {
			t.Errorf("command %d: %v, want invalid", i, ev.Result)
		}
	}
	if st := s.Stats(); st.Items != 0 {
		t.Errorf("invalid commands were resolved: %+v", st)
	}
}

// The per-tick path allocates nothing in steady state.
func TestSteadyStateTickAllocatesNothing(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("coverage and race instrumentation allocate")
	}
	// The count is the process's: with the collector off while it counts, no
	// finalizer or collector goroutine allocates into it (CI once counted
	// one stray allocation that no rerun showed).
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	r := newBenchRoom(t, true, []weapons.Definition{rocket}, nil)
	r.warm(200)
	// One run of 200 ticks: the total, not an average rounded down, so a
	// rare allocation (a slice growing to a new record) counts too.
	if allocs := testing.AllocsPerRun(1, func() { r.warm(200) }); allocs != 0 {
		t.Errorf("200 steady-state ticks allocate %v times", allocs)
	}
	r = newBenchRoom(t, false, []weapons.Definition{rocket}, nil)
	r.warm(200)
	if allocs := testing.AllocsPerRun(1, func() { r.warm(50) }); allocs != 0 {
		t.Errorf("50 steady-state per-entity ticks allocate %v times", allocs)
	}
	r = newBenchRoomOn(t, stressLevel(t), true, []weapons.Definition{rocket}, nil)
	r.warm(400) // the live rockets' peak takes longer here: they meet crates and terrain
	if allocs := testing.AllocsPerRun(1, func() { r.warm(200) }); allocs != 0 {
		t.Errorf("200 steady-state ticks on the stress level allocate %v times", allocs)
	}
}

// A player whose health reaches 0 dies: it leaves the collision world, does
// not move or fire, and respawns at its spawn point RespawnTicks later.
func TestDeathAndRespawn(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Weapons = []weapons.Definition{rifle} // 25 damage
	cfg.RespawnTicks = 5
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hb := ecs.Hitbox{Radius: 0.4, Height: 1.8}
	shooter := s.SpawnPlayer(PlayerSpec{Team: 1, Hitbox: hb})
	victim := s.SpawnPlayer(PlayerSpec{Team: 2, Hitbox: hb, Pos: geom.V(0, 0, 10), Health: 60, Controlled: true})
	fire := func() {
		s.Commands.Fire = append(s.Commands.Fire, ecs.FireCommand{Shooter: shooter, Origin: geom.V(0, 1, 0), Dir: geom.V(0, 0, 1), Scripted: true})
	}
	var deathTick int64 = -1
	for tick := int64(0); tick < 3; tick++ {
		s.QueueInput(victim, ecs.Input{Tick: tick})
		fire()
		s.Step()
		if len(s.Events.Kills) == 1 {
			deathTick = tick
		}
	}
	if deathTick != 2 {
		t.Fatalf("died at tick %d, want 2 (25+25+10 of 60)", deathTick)
	}
	if got := s.Events.Shots[0].Dealt; got != 10 {
		t.Errorf("the last hit took %v, want the 10 left", got)
	}
	if k := s.Events.Kills[0]; k.Killer != shooter || k.Victim != victim {
		t.Errorf("kill %+v", k)
	}
	// Dead: shots pass where it stood, it does not move, its fire is invalid.
	fire()
	s.Commands.Fire = append(s.Commands.Fire, ecs.FireCommand{Shooter: victim, Origin: geom.V(0, 1, 10), Dir: geom.V(0, 0, -1), Scripted: true})
	s.QueueInput(victim, ecs.Input{Tick: 3, MoveZ: 1})
	s.Step()
	results := []ecs.ShotResult{s.Events.Shots[0].Result, s.Events.Shots[1].Result}
	if results[0] != ecs.ResultInvalid || results[1] != ecs.ResultMiss {
		t.Errorf("while dead: %v (want the victim's shot invalid, the shooter's a miss)", results)
	}
	_, _, tf, _, _, _, _, _, _, _ := s.players.Get(victim)
	tf.Pos = geom.V(20, 0, 20) // wherever it lay, it respawns at its spawn point
	var respawned int64 = -1
	for range 10 {
		s.Step()
		if len(s.Events.Respawns) == 1 {
			respawned = s.Events.Respawns[0].Tick
			if s.Events.Respawns[0].Pos != geom.V(0, 0, 10) {
				t.Errorf("respawn at %v", s.Events.Respawns[0].Pos)
			}
		}
	}
	if respawned != deathTick+1+5 {
		t.Errorf("respawned at tick %d, want %d", respawned, deathTick+1+5)
	}
	if h, life := s.healthOf.Get(victim); h.Current != 60 || life.Dead {
		t.Errorf("after respawn: %+v %+v", h, life)
	}
	fire()
	s.Step()
	if r := s.Events.Shots[0].Result; r != ecs.ResultHit {
		t.Errorf("after respawn the shot %v, want hit", r)
	}
}

// viewLag returns an entity's ViewLag component, for tests to read or set.
func viewLag(s *Simulation, e ecs.Entity) *ecs.ViewLag {
	m := generic.NewMap[ecs.ViewLag](s.World)
	return m.Get(e)
}

// With PoseScale, lag compensation rewinds to the positions as the
// snapshots carried them. A level shot from the eyes (1.6 m) passes 0.2 m
// above the top of a 1.8 m capsule's axis, so it touches the 0.4 m head
// sphere only within 0.3464 m of the axis. A target 0.3462 m aside is hit
// where it is, but every client drew it at 89/256 = 0.34765625 m, where the
// shot misses: with PoseScale the server agrees with the screen.
func TestPoseScaleRewindsToTheWirePositions(t *testing.T) {
	for _, tc := range []struct {
		scale  float64
		x      float64 // the target's recorded x
		result ecs.ShotResult
	}{
		{0, 0.3462, ecs.ResultHit},
		{256, 89.0 / 256, ecs.ResultMiss},
	} {
		cfg := DefaultConfig()
		cfg.Weapons, cfg.PoseScale = []weapons.Definition{rifle}, tc.scale
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		shooter := s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}, Loadout: []uint16{0}})
		target := s.SpawnPlayer(PlayerSpec{Team: 2, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}, Health: 100, Pos: geom.V(0.3462, 0, 10)})
		for tick := int64(0); tick <= 20; tick++ {
			in := ecs.Input{Tick: tick, ViewTime: ecs.ViewTimeOf(float64(tick) - 4)}
			if tick == 20 {
				in.Buttons = ecs.ButtonFire // level along +Z, from x = 0
			}
			s.QueueInput(shooter, in)
			s.Step()
		}
		if p, ok := s.History.PoseAt(16, target); !ok || p.Pos.X != tc.x {
			t.Errorf("scale %v: pose at tick 16 %+v, want x %v", tc.scale, p, tc.x)
		}
		if len(s.Events.Shots) != 1 || s.Events.Shots[0].Result != tc.result {
			t.Errorf("scale %v: shots %+v, want result %v", tc.scale, s.Events.Shots, tc.result)
		}
	}
}

// moved is st after one tick of in, as the simulation moves player p (its
// class's character, on the simulation's ground).
func moved(t *testing.T, s *Simulation, p ecs.Entity, st movement.State, in ecs.Input) movement.State {
	t.Helper()
	c, ok := s.Character(p)
	if !ok {
		t.Fatal("not a player")
	}
	movement.Move(c, &st, in.Movement(), s.Clock.Dt(), s.walk, level.MovementMask)
	return st
}
