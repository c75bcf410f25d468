package systems

import (
	"testing"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/weapons"
)

// An input whose every copy came after its tick runs at the next tick,
// before that tick's own, and the player's movement is simulated again
// from the end of its last applied tick: a running player whose input went
// missing for two ticks (it slowed down, rooted) ends up exactly where it
// would have been with all its inputs in time, and every tick counts as
// applied.
func TestLateInputCatchesUp(t *testing.T) {
	late, ontime := newSim(t, rifle), newSim(t, rifle)
	spec := PlayerSpec{Team: 1, Controlled: true, Hitbox: stdHitbox, Loadout: []uint16{0}}
	p, r := late.SpawnPlayer(spec), ontime.SpawnPlayer(spec)
	fwd := func(tick int64) ecs.Input {
		return ecs.Input{Tick: tick, MoveZ: 1, MoveX: 0.5, Yaw: 0.1 * float64(tick)}
	}
	for tick := range int64(6) {
		ontime.QueueInput(r, fwd(tick))
	}
	for tick := range int64(3) { // running
		late.QueueInput(p, fwd(tick))
	}
	for range 5 { // ticks 0-2, then 3 and 4 rooted: it slows down
		late.Step()
	}
	rooted, _ := late.PlayerState(p)
	for _, tick := range []int64{4, 3} {
		if v := late.QueueInput(p, fwd(tick)); v != InputLate {
			t.Fatalf("tick %d's input after tick 4: %v, want late", tick, v)
		}
	}
	if v := late.QueueInput(p, fwd(3)); v != InputDuplicate {
		t.Errorf("a second copy of a late input: %v, want a duplicate", v)
	}
	late.QueueInput(p, fwd(5))
	for range 6 {
		ontime.Step()
	}
	late.Step() // tick 5: ticks 3 and 4 again with their inputs, then its own
	got, _ := late.PlayerState(p)
	want, _ := ontime.PlayerState(r)
	if got.Transform != want.Transform || got.Velocity != want.Velocity || got.Motion != want.Motion {
		t.Errorf("after the late inputs: %+v %+v, want %+v %+v (all in time)", got.Transform, got.Velocity, want.Transform, want.Velocity)
	}
	if rooted.Transform.Pos == want.Transform.Pos {
		t.Fatal("the rooted ticks changed nothing: the test proves nothing")
	}
	q, _ := late.inputMap.Get(p)
	if q.LateRun != 2 || q.Rooted != 2 || q.Used != 4 || q.Applied != 5 || q.Recent&0b111111 != 0b111111 || q.NLate != 0 || q.BaseTick != 5 {
		t.Errorf("queue: late run %d rooted %d used %d applied %d recent %b waiting %d base %d", q.LateRun, q.Rooted, q.Used, q.Applied, q.Recent, q.NLate, q.BaseTick)
	}
	if v := late.QueueInput(p, fwd(3)); v != InputDuplicate {
		t.Errorf("the late input once more after it ran: %v, want a duplicate", v)
	}
}

// A late input that leaves a gap: the tick before it is still missing, and
// is simulated again rooted, as it was.
func TestLateInputAfterAGap(t *testing.T) {
	late, ref := newSim(t, rifle), newSim(t, rifle)
	spec := PlayerSpec{Team: 1, Controlled: true, Hitbox: stdHitbox, Loadout: []uint16{0}}
	p, r := late.SpawnPlayer(spec), ref.SpawnPlayer(spec)
	fwd := func(tick int64) ecs.Input { return ecs.Input{Tick: tick, MoveZ: 1} }
	late.QueueInput(p, fwd(0))
	ref.QueueInput(r, fwd(0)) // tick 1 never comes
	ref.QueueInput(r, fwd(2))
	ref.QueueInput(r, fwd(3))
	for range 3 {
		late.Step()
	}
	if v := late.QueueInput(p, fwd(2)); v != InputLate {
		t.Fatalf("tick 2's input after tick 2: %v", v)
	}
	late.QueueInput(p, fwd(3))
	late.Step() // tick 3: 1 rooted again, 2 late, then 3
	for range 4 {
		ref.Step()
	}
	got, _ := late.PlayerState(p)
	want, _ := ref.PlayerState(r)
	if got.Transform != want.Transform || got.Velocity != want.Velocity {
		t.Errorf("%+v %+v, want %+v %+v (tick 1 rooted, the rest in time)", got.Transform, got.Velocity, want.Transform, want.Velocity)
	}
}

// A late fire command fires at the tick it runs, lag compensated to its own
// view time: it hits the target where the shooter saw it, and its view lag
// counts from the present (a tick more than it claimed at its own tick).
func TestLateFireIsRewoundToItsViewTime(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Weapons = []weapons.Definition{rifle}
	r := newStrafeRange(t, cfg)
	for range 40 {
		r.step(&ecs.Input{ViewTime: ecs.ViewTimeOf(float64(r.s.Now()) - 4)})
	}
	missed := r.s.Now()
	r.step(nil) // the shooter's input for this tick is late
	in := r.aimAt(missed, missed-4, 4, float64(missed-6))
	in.Tick = missed
	if v := r.s.QueueInput(r.shooter, in); v != InputLate {
		t.Fatalf("late fire: %v", v)
	}
	now := r.s.Now()
	r.step(&ecs.Input{ViewTime: ecs.ViewTimeOf(float64(now) - 4)})
	if len(r.s.Events.Shots) != 1 {
		t.Fatalf("shots %+v, want the late one", r.s.Events.Shots)
	}
	ev := r.s.Events.Shots[0]
	if ev.Result != ecs.ResultHit || ev.Target != r.target || ev.ViewTime != ecs.ViewTimeOf(float64(missed-4)) || ev.Tick != now {
		t.Errorf("late shot %+v, want a hit at view time %d resolved at %d", ev, missed-4, now)
	}
	if len(r.s.Events.Clamps) != 0 {
		t.Errorf("clamps %+v: the late shot's view lag is within its bound", r.s.Events.Clamps)
	}
}

// A late fire command is held to the weapon's rules at its own tick: a
// weapon that fires every other tick fires a late shot and, two ticks
// later, an in-time one; one tick later the in-time one is refused, as it
// would have been had both come in time.
func TestLateFireRulesAtItsOwnTick(t *testing.T) {
	slow := rifle
	slow.FireInterval = 2
	for _, tt := range []struct {
		gap      int64
		rejected int
	}{{2, 0}, {1, 1}} {
		s := newSim(t, slow)
		p := s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Hitbox: stdHitbox, Loadout: []uint16{0}})
		fire := func(tick int64) ecs.Input {
			return ecs.Input{Tick: tick, Yaw: 1, Buttons: ecs.ButtonFire, Shot: uint32(tick), ViewTime: ecs.ViewTimeOf(float64(tick))}
		}
		s.Step() // tick 0: rooted
		s.Step() // tick 1: rooted
		first := 2 - tt.gap
		s.QueueInput(p, fire(first))
		s.QueueInput(p, fire(2))
		s.Step()
		fired := 0
		for _, ev := range s.Events.Shots {
			if ev.Result != ecs.ResultInvalid {
				fired++
			}
		}
		if fired+tt.rejected != 2 || len(s.Events.Rejected) != tt.rejected {
			t.Errorf("shots %d ticks apart: %d fired, %d rejected (%+v), want %d rejected", tt.gap, fired, len(s.Events.Rejected), s.Events.Rejected, tt.rejected)
		}
		if tt.rejected == 1 && s.Events.Rejected[0].Reason != ecs.RejectCooldown {
			t.Errorf("rejected for %v, want the cooldown", s.Events.Rejected[0].Reason)
		}
	}
}

// Which late inputs run: none older than the late limit (a second's ticks,
// at most 64), none of a tick before one already applied; those that run,
// in tick order whatever order they came in.
func TestLateInputLimits(t *testing.T) {
	s := newSim(t, rifle)
	p := s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Hitbox: stdHitbox, Loadout: []uint16{0}})
	limit := s.LateLimit()
	if limit != 20 {
		t.Fatalf("late limit %d, want a second's 20 ticks", limit)
	}
	for range 40 {
		s.Step()
	}
	now := s.Now()
	for _, tt := range []struct {
		tick int64
		want InputVerdict
	}{
		{now - limit - 1, InputStale},
		{now - limit, InputLate},
		{now - 1, InputLate},
		{now - 3, InputLate},
		{now - 3, InputDuplicate},
		{now - 2, InputLate},
	} {
		if v := s.QueueInput(p, ecs.Input{Tick: tt.tick, MoveZ: 1}); v != tt.want {
			t.Errorf("input %d ticks old: %v, want %v", now-tt.tick, v, tt.want)
		}
	}
	q, _ := s.inputMap.Get(p)
	var order []int64
	for i := range q.NLate {
		order = append(order, now-q.Late[i].Tick)
	}
	if want := []int64{limit, 3, 2, 1}; !equalInts(order, want) {
		t.Errorf("late inputs waiting, ticks old: %v, want %v", order, want)
	}
	s.Step()
	if q.LateRun != 4 || q.Applied != now-1 {
		t.Errorf("ran %d late, applied %d", q.LateRun, q.Applied)
	}
	if v := s.QueueInput(p, ecs.Input{Tick: now - 4}); v != InputStale {
		t.Errorf("a tick before one applied: %v, want stale", v)
	}

	cfg := DefaultConfig()
	cfg.TickRate = 128
	fast, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if fast.LateLimit() != ecs.MaxLateInputs {
		t.Errorf("late limit %d at 128 Hz, want %d", fast.LateLimit(), ecs.MaxLateInputs)
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A late input of a tick before the player was put somewhere else (a
// respawn, a teleport) runs nothing: it neither moves it from where it was
// put nor fires; it only counts as applied.
func TestLateInputBeforeATeleportRunsNothing(t *testing.T) {
	s := newSim(t, rifle)
	p := s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Hitbox: stdHitbox, Loadout: []uint16{0}})
	s.Step() // tick 0: rooted
	st, _ := s.PlayerState(p)
	st.Transform.Pos = geom.V(5, 0, 5)
	s.SetPlayerState(p, &st)
	if v := s.QueueInput(p, ecs.Input{Tick: 0, MoveZ: 1, Buttons: ecs.ButtonFire, ViewTime: ecs.ViewTimeOf(0)}); v != InputLate {
		t.Fatalf("%v", v)
	}
	s.Step() // tick 1: rooted, after the teleport
	got, _ := s.PlayerState(p)
	if want := moved(t, s, p, movement.State{Pos: geom.V(5, 0, 5)}, ecs.Input{}); got.Transform.Pos != want.Pos {
		t.Errorf("at %v, want %v: where it was put, then a rooted tick", got.Transform.Pos, want.Pos)
	}
	if len(s.Events.Shots) != 0 {
		t.Errorf("shots %+v, want none", s.Events.Shots)
	}
	q, _ := s.inputMap.Get(p)
	if q.LateRun != 1 || q.Applied != 0 || got.Life.Moved != 1 {
		t.Errorf("late run %d applied %d moved %d", q.LateRun, q.Applied, got.Life.Moved)
	}
}

// Late inputs, simulated again with their shots, allocate nothing once
// the simulation is warm.
func TestLateTickAllocatesNothing(t *testing.T) {
	s := newSim(t, rifle)
	p := s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Hitbox: stdHitbox, Loadout: []uint16{0}})
	s.SpawnPlayer(PlayerSpec{Team: 2, Hitbox: stdHitbox, Pos: geom.V(0, 0, 10), Health: 1e9})
	fire := func(tick int64) ecs.Input {
		return ecs.Input{Tick: tick, MoveZ: 1, Buttons: ecs.ButtonFire, Shot: uint32(tick), ViewTime: ecs.ViewTimeOf(float64(tick) - 2)}
	}
	round := func() {
		now := s.Now()
		s.Step() // rooted
		s.QueueInput(p, fire(now))
		s.QueueInput(p, fire(now+1))
		s.Step() // the late one again, then its own
	}
	for range 50 {
		round()
	}
	if n := testing.AllocsPerRun(100, round); n != 0 {
		t.Errorf("%v allocations a round of late inputs", n)
	}
	q, _ := s.inputMap.Get(p)
	if q.LateRun < 150 {
		t.Errorf("%d late inputs run: the rounds did not make them late", q.LateRun)
	}
}
