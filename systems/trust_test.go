package systems

import (
	"math"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/spread"
	"github.com/rewind-gg/rewind/weapons"
)

var stdHitbox = ecs.Hitbox{Radius: 0.4, Height: 1.8}

func TestGrantViewLag(t *testing.T) {
	const now = 100
	in := func(claim, earliest float64) *ecs.Input {
		return &ecs.Input{Tick: now, ViewTime: ecs.ViewTimeOf(now - claim), Earliest: earliest}
	}
	for _, tt := range []struct {
		name     string
		in       *ecs.Input
		maxUnlag float64
		want     ecs.ViewLag
	}{
		{"within every bound", in(4.5, 90), 30, ecs.ViewLag{Ticks: 4.5}},
		{"exactly the measured bound", in(10, 90), 30, ecs.ViewLag{Ticks: 10}},
		{"beyond what the server measured", in(30, 90), 30, ecs.ViewLag{Ticks: 10, Claimed: 30, Clamp: ecs.ClampMeasured}},
		{"beyond the cap, unmeasured", in(30, 0), 20, ecs.ViewLag{Ticks: 20, Claimed: 30, Clamp: ecs.ClampMaxUnlag}},
		{"the cap is tighter than the measurement", in(30, 60), 20, ecs.ViewLag{Ticks: 20, Claimed: 30, Clamp: ecs.ClampMaxUnlag}},
		{"the measurement is tighter than the cap", in(30, 95), 20, ecs.ViewLag{Ticks: 5, Claimed: 30, Clamp: ecs.ClampMeasured}},
		{"a view time after the present", in(-3, 90), 30, ecs.ViewLag{Ticks: 0, Claimed: -3, Clamp: ecs.ClampFuture}},
		{"a bound after the present grants nothing", in(2, 101), 30, ecs.ViewLag{Ticks: 0, Claimed: 2, Clamp: ecs.ClampMeasured}},
	} {
		if got := GrantViewLag(now, tt.in, tt.maxUnlag); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// A strafe target: a scripted player running along +X at 1 m a tick from
// x = −20, standing 10 m ahead of a shooter at the origin.
type strafeRange struct {
	s       *Simulation
	shooter ecs.Entity
	target  ecs.Entity
}

func newStrafeRange(t *testing.T, cfg Config) *strafeRange {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &strafeRange{s: s}
	r.shooter = s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Hitbox: stdHitbox, Loadout: []uint16{0}, Health: 100})
	r.target = s.SpawnPlayer(PlayerSpec{Team: 2, Hitbox: stdHitbox, Pos: geom.V(-20, 0, 10), Health: 1e9})
	return r
}

func (r *strafeRange) targetX(tick int64) float64 { return -20 + float64(tick) }

// step moves the target to its place at the present tick and simulates it,
// with the shooter's input (nil: none, the shooter is rooted).
func (r *strafeRange) step(in *ecs.Input) {
	now := r.s.Now()
	_, _, tf, _, _, _, _, _, _, _ := r.s.players.Get(r.target)
	tf.Pos.X = r.targetX(now)
	if in != nil {
		in.Tick = now
		r.s.QueueInput(r.shooter, *in)
	}
	r.s.Step()
}

// aimAt is an input aiming from the shooter's eyes at where the target stood
// at tick at, claiming view lag lag, firing.
func (r *strafeRange) aimAt(now, at int64, lag, earliest float64) ecs.Input {
	return ecs.Input{Yaw: math.Atan2(r.targetX(at), 10), Buttons: ecs.ButtonFire,
		ViewTime: ecs.ViewTimeOf(float64(now) - lag), Earliest: earliest}
}

// A shooter that claims 30 ticks of view lag when the server measured it
// could see at most 4 behind, aiming where the target stood 30 ticks ago, is
// resolved 4 ticks back and misses; the same shot with the honest claim hits
// what it aimed at. The clamp is reported with its reason.
func TestClaimBeyondTheMeasuredBoundBuysNoHit(t *testing.T) {
	for _, tt := range []struct {
		name         string
		claim, bound float64
		aimBack      int64
		want         ecs.ShotResult
	}{
		{"honest", 4, 4, 4, ecs.ResultHit},
		{"backtrack", 30, 4, 30, ecs.ResultMiss},
		{"backtrack without a measured bound (the old server)", 30, 0, 30, ecs.ResultHit},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newStrafeRange(t, func() Config { c := DefaultConfig(); c.Weapons = []weapons.Definition{rifle}; return c }())
			for range 40 {
				r.step(&ecs.Input{ViewTime: ecs.ViewTimeOf(float64(r.s.Now()) - 4)})
			}
			now := r.s.Now()
			earliest := 0.0
			if tt.bound > 0 {
				earliest = float64(now) - tt.bound
			}
			in := r.aimAt(now, now-tt.aimBack, tt.claim, earliest)
			r.step(&in)
			ev := r.s.Events.Shots[0]
			if ev.Result != tt.want {
				t.Errorf("%v at view time %v, want %v", ev.Result, ev.ViewTime, tt.want)
			}
			granted := min(tt.claim, 30)
			if tt.bound > 0 {
				granted = min(granted, tt.bound)
			}
			if want := ecs.ViewTimeOf(float64(now) - granted); ev.ViewTime != want {
				t.Errorf("resolved at %v, want %v", ev.ViewTime, want)
			}
			clamps := r.s.Events.Clamps
			if tt.claim > tt.bound && tt.bound > 0 {
				if len(clamps) != 1 || clamps[0] != (ecs.ClampEvent{Shooter: r.shooter, Weapon: 0, Reason: ecs.ClampMeasured, Claimed: 30, Granted: 4, Tick: now}) {
					t.Errorf("clamps %+v", clamps)
				}
			} else if len(clamps) != 0 {
				t.Errorf("clamps %+v, want none", clamps)
			}
		})
	}
}

// A weapon's max_rewind cuts the view lag of its shots below what the
// player was granted, and says so: 100 ms at the room's 20 Hz, or 2 ticks
// (max_rewind_ticks), alike.
func TestWeaponMaxRewind(t *testing.T) {
	byTime, byTicks := rifle, rifle
	byTime.Name, byTime.MaxRewind = "sniper", 100*time.Millisecond
	byTicks.Name, byTicks.MaxRewindTicks = "sniper", 2
	for _, sniper := range []weapons.Definition{byTime, byTicks} {
		testWeaponMaxRewind(t, sniper)
	}
}

func testWeaponMaxRewind(t *testing.T, sniper weapons.Definition) {
	cfg := DefaultConfig()
	cfg.Weapons = []weapons.Definition{sniper}
	r := newStrafeRange(t, cfg)
	for range 20 {
		r.step(&ecs.Input{ViewTime: ecs.ViewTimeOf(float64(r.s.Now()) - 6)})
	}
	now := r.s.Now()
	in := r.aimAt(now, now-6, 6, 0) // where it saw the target: 6 ticks back
	r.step(&in)
	ev := r.s.Events.Shots[0]
	if ev.Result != ecs.ResultMiss || ev.ViewTime != (ecs.ViewTime{Tick: now - 2}) {
		t.Errorf("%v at %v, want a miss at %d (the sniper rewinds 2 ticks)", ev.Result, ev.ViewTime, now-2)
	}
	if c := r.s.Events.Clamps; len(c) != 1 || c[0].Reason != ecs.ClampWeapon || c[0].Claimed != 6 || c[0].Granted != 2 {
		t.Errorf("clamps %+v", c)
	}
	in = r.aimAt(now+1, now+1-2, 6, 0) // aimed 2 ticks back: what the sniper resolves
	r.step(&in)
	if ev := r.s.Events.Shots[0]; ev.Result != ecs.ResultHit {
		t.Errorf("aimed at the rewound time: %v", ev.Result)
	}
}

// A rocket flies in its shooter's time as it was when fired: when the
// shooter's inputs stop (its view lag would grow a tick per tick), the
// rocket's view time still advances one tick per tick, so it misses a target
// that has moved away instead of hitting the frozen past.
func TestProjectileKeepsItsOwnTime(t *testing.T) {
	slow := weapons.Definition{Name: "rocket", Kind: weapons.KindProjectile, Speed: 20, Radius: 0.1, LifetimeTicks: 40}
	cfg := DefaultConfig()
	cfg.Weapons = []weapons.Definition{slow}
	for _, inputs := range []bool{true, false} {
		r := newStrafeRange(t, cfg)
		// The target stands at x = 0 until tick 30, then runs off along +X.
		place := func() {
			_, _, tf, _, _, _, _, _, _, _ := r.s.players.Get(r.target)
			tf.Pos.X = max(0, float64(r.s.Now()-30))
		}
		const lag = 10
		for range 35 {
			place()
			in := ecs.Input{Tick: r.s.Now(), ViewTime: ecs.ViewTimeOf(float64(r.s.Now()) - lag)}
			r.s.QueueInput(r.shooter, in)
			r.s.Step()
		}
		// Tick 35: it fires at the target where it sees it (x = 0, at 25).
		fired := r.s.Now()
		place()
		r.s.QueueInput(r.shooter, ecs.Input{Tick: fired, Buttons: ecs.ButtonFire, ViewTime: ecs.ViewTimeOf(float64(fired) - lag)})
		r.s.Step()
		var result ecs.ShotEvent
		for tick := fired + 1; result.Result == 0 && tick < fired+40; tick++ {
			place()
			if inputs {
				r.s.QueueInput(r.shooter, ecs.Input{Tick: tick, ViewTime: ecs.ViewTimeOf(float64(tick) - lag)})
			}
			r.s.Step()
			q := r.s.resolving.Query(r.s.World)
			for q.Next() {
				if _, _, vt := q.Get(); *vt != (ecs.ViewTime{Tick: tick - lag}) {
					t.Errorf("inputs %v, tick %d: the rocket's view time is %v, want %d", inputs, tick, *vt, tick-lag)
				}
			}
			if len(r.s.Events.Shots) > 0 {
				result = r.s.Events.Shots[0]
			}
		}
		// 10 m at 1 m a tick: it arrives about ten ticks after it was fired,
		// at view time ~35, when the target has run 5 m away.
		if result.Result != ecs.ResultMiss {
			t.Errorf("inputs %v: %v at tick %d, view time %v; want a miss", inputs, result.Result, result.Tick, result.ViewTime)
		}
	}
}

// The spread of a shot is the server's: whatever shot counter the client
// sends (the same one every time, or a fresh one), the pellets are those of
// the shooter's next index in the sequence the room's seed keys.
func TestSpreadIsTheServers(t *testing.T) {
	shotgun := weapons.Definition{Name: "shotgun", Kind: weapons.KindHitscan, Range: 40, Pellets: 8, Spread: 0.12, Damage: 5}
	run := func(seed uint64, counter func(i int) uint32) ([]map[ecs.Entity]uint8, []map[ecs.Entity]uint8) {
		cfg := DefaultConfig()
		cfg.Weapons, cfg.SpreadSeed = []weapons.Definition{shotgun}, seed
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		shooter := s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Hitbox: stdHitbox, Loadout: []uint16{0}})
		var targets []ecs.Entity
		for i := range 5 {
			targets = append(targets, s.SpawnPlayer(PlayerSpec{Team: 2, Hitbox: stdHitbox, Pos: geom.V(float64(i-2)*0.7, 0, 8)}))
		}
		var got, want []map[ecs.Entity]uint8
		eye := geom.V(0, cfg.EyeHeight, 0)
		for i := range 40 {
			now := s.Now()
			in := ecs.Input{Tick: now, ViewTime: ecs.ViewTimeOf(float64(now))}
			if now%20 == 10 { // the fire interval is 0: any tick will do
				in.Buttons, in.Shot = ecs.ButtonFire, counter(i)
			}
			s.QueueInput(shooter, in)
			fired := in.Buttons != 0
			var seq uint32
			if fired {
				arsenal, _ := s.armsOf.Get(shooter)
				seq = arsenal.Fired
			}
			s.Step()
			if !fired {
				continue
			}
			g := map[ecs.Entity]uint8{}
			for _, ev := range s.Events.Shots {
				if ev.Result == ecs.ResultHit {
					g[ev.Target] = ev.Pellets
				}
			}
			got = append(got, g)
			w := map[ecs.Entity]uint8{}
			key := spread.Key(seed, ecs.WireID(shooter), seq)
			for p := range 8 {
				d := spread.Dir(geom.V(0, 0, 1), 0.12, key, p)
				best, who := math.Inf(1), ecs.Entity{}
				for _, e := range targets {
					_, _, tf, _, _, _, _, _, _, _ := s.players.Get(e)
					if tt, ok := geom.RayCapsule(eye, d, 40, stdHitbox.Capsule(tf.Pos, false)); ok && tt < best {
						best, who = tt, e
					}
				}
				if !who.IsZero() {
					w[who]++
				}
			}
			want = append(want, w)
		}
		return got, want
	}
	fixed, want := run(7, func(int) uint32 { return 31598 })
	counting, _ := run(7, func(i int) uint32 { return uint32(i) })
	if len(fixed) != 2 {
		t.Fatalf("%d shots, want 2", len(fixed))
	}
	for i := range fixed {
		if !mapsEqual(fixed[i], want[i]) || !mapsEqual(counting[i], want[i]) {
			t.Errorf("shot %d: pellets per target %v with a fixed counter, %v counting; the server's sequence gives %v", i, fixed[i], counting[i], want[i])
		}
	}
	other, _ := run(8, func(int) uint32 { return 31598 })
	if mapsEqual(other[0], fixed[0]) && mapsEqual(other[1], fixed[1]) {
		t.Error("another match's seed gave the same pellets")
	}
}

func mapsEqual(a, b map[ecs.Entity]uint8) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A hit that takes no health says why: the target had just respawned, was
// already dead (from an earlier hit of the same tick), or the weapon deals
// nothing there.
func TestNoDamageOutcomes(t *testing.T) {
	dud := weapons.Definition{Name: "dud", Kind: weapons.KindHitscan, Range: 100}
	cfg := DefaultConfig()
	cfg.Weapons = []weapons.Definition{rifle, dud} // rifle: 25 damage
	cfg.RespawnTicks, cfg.InvulnerableTicks = 0, 10
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := s.SpawnPlayer(PlayerSpec{Team: 1, Hitbox: stdHitbox})
	b := s.SpawnPlayer(PlayerSpec{Team: 1, Hitbox: stdHitbox, Pos: geom.V(0.1, 0, 0)})
	victim := s.SpawnPlayer(PlayerSpec{Team: 2, Hitbox: stdHitbox, Pos: geom.V(0, 0, 10), Health: 20, Controlled: true})
	fire := func(shooter ecs.Entity, weapon uint16) {
		s.Commands.Fire = append(s.Commands.Fire, ecs.FireCommand{Shooter: shooter, Weapon: weapon, Origin: geom.V(0, 1, 0), Dir: geom.V(0, 0, 1), Scripted: true})
	}
	outcome := func(shooter ecs.Entity) ecs.ShotEvent {
		for _, ev := range s.Events.Shots {
			if ev.Shooter == shooter {
				return ev
			}
		}
		t.Fatalf("no event of %v", shooter)
		return ecs.ShotEvent{}
	}
	s.QueueInput(victim, ecs.Input{Tick: 0})
	fire(b, 1)
	s.Step()
	if ev := outcome(b); ev.Result != ecs.ResultHit || ev.Dealt != 0 || ev.NoDamage != ecs.NoDamageZero {
		t.Errorf("a weapon without damage: %+v", ev)
	}
	s.QueueInput(victim, ecs.Input{Tick: 1})
	fire(a, 0)
	fire(b, 0)
	s.Step() // both hit in the same tick: the first kills, the second finds it dead
	ea, eb := outcome(a), outcome(b)
	if ea.Dealt != 20 || ea.NoDamage != 0 || eb.Dealt != 0 || eb.NoDamage != ecs.NoDamageDead {
		t.Errorf("the killing hit %+v, the hit after it %+v", ea, eb)
	}
	s.QueueInput(victim, ecs.Input{Tick: 2})
	fire(a, 0)
	s.Step() // respawned (respawn_ticks 0), invulnerable for 10 ticks
	if ev := outcome(a); ev.Result != ecs.ResultHit || ev.Dealt != 0 || ev.NoDamage != ecs.NoDamageInvulnerable || ev.Damage != 25 {
		t.Errorf("a hit on the invulnerable: %+v", ev)
	}
}

// With respawn_ticks = 0 a victim is recorded at its death spot and, the
// tick after, at its spawn point: a shot resolved between the two ticks
// stands it at the death spot and never on the line between them, where
// nobody stood.
func TestNoGhostBetweenDeathAndSpawn(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Weapons = []weapons.Definition{rifle}
	cfg.RespawnTicks, cfg.InvulnerableTicks = 0, 0
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	killer := s.SpawnPlayer(PlayerSpec{Team: 1, Hitbox: stdHitbox})
	witness := s.SpawnPlayer(PlayerSpec{Team: 1, Hitbox: stdHitbox, Pos: geom.V(0, 0, -2)})
	// The victim spawns at x = 20 and is killed standing at x = −20.
	victim := s.SpawnPlayer(PlayerSpec{Team: 2, Hitbox: stdHitbox, Pos: geom.V(20, 0, 10), Health: 25, Controlled: true})
	_, _, tf, _, _, _, _, _, _, _ := s.players.Get(victim)
	tf.Pos = geom.V(-20, 0, 10) // moved by the test, before any history
	s.motionOf.Get(victim).Left = tf.Pos
	for tick := range int64(6) {
		s.QueueInput(victim, ecs.Input{Tick: tick})
		if tick == 5 {
			s.Commands.Fire = append(s.Commands.Fire, ecs.FireCommand{Shooter: killer, Origin: geom.V(0, 1, 0),
				Dir: geom.V(-20, 0, 10).Normalize(), Scripted: true})
		}
		s.Step()
	}
	if len(s.Events.Kills) != 1 || len(s.Events.Respawns) != 1 {
		t.Fatalf("kills %v respawns %v", s.Events.Kills, s.Events.Respawns)
	}
	// Tick 6 records the spawn point: a teleport.
	s.QueueInput(victim, ecs.Input{Tick: 6})
	s.Step()
	if p, ok := s.History.PoseAt(6, victim); !ok || !p.Teleport || p.Pos != geom.V(20, 0, 10) {
		t.Fatalf("tick 6 pose %+v %v, want a teleport at the spawn point", p, ok)
	}
	if _, life := s.healthOf.Get(victim); life.Teleports != 1 {
		t.Errorf("teleports %d, want 1", life.Teleports)
	}
	// The witness saw 1.5 ticks back (view time 5.5, between the death spot
	// and the spawn point) and shoots at the midpoint, x = 0.
	viewLag(s, witness).Ticks = 1.5
	fire := func(dir geom.Vec3) ecs.ShotEvent {
		s.QueueInput(victim, ecs.Input{Tick: s.Now()})
		s.Commands.Fire = append(s.Commands.Fire, ecs.FireCommand{Shooter: witness, Origin: geom.V(0, 1, -2), Dir: dir, Scripted: true})
		s.Step()
		return s.Events.Shots[0]
	}
	if ev := fire(geom.V(0, 0, 1)); ev.Result != ecs.ResultMiss || ev.ViewTime != (ecs.ViewTime{Tick: 5, Frac: 0.5}) {
		t.Errorf("at the midpoint: %v at %v, want a miss at 5.5", ev.Result, ev.ViewTime)
	}
	// At view time 6.5 it is where it respawned, and interpolated again after.
	if ev := fire(geom.V(20, 0, 12).Normalize()); ev.Result != ecs.ResultHit {
		t.Errorf("at the spawn point one tick later: %v at %v", ev.Result, ev.ViewTime)
	}
}

// A player moved further than movement goes in a tick (a teleport by some
// other system) is marked in the history, and never interpolated across.
func TestTeleportBeyondPhysicsIsMarked(t *testing.T) {
	s := newSim(t, rifle)
	p := s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Hitbox: stdHitbox})
	for tick := range int64(3) {
		s.QueueInput(p, ecs.Input{Tick: tick, MoveZ: 1}) // a full-speed step: not a teleport
		s.Step()
	}
	_, _, tf, _, _, _, _, _, _, _ := s.players.Get(p)
	tf.Pos.X += 8
	s.QueueInput(p, ecs.Input{Tick: 3})
	s.Step()
	for tick := int64(0); tick <= 3; tick++ {
		pose, _ := s.History.PoseAt(tick, p)
		if pose.Teleport != (tick == 3) {
			t.Errorf("tick %d: teleport %v", tick, pose.Teleport)
		}
	}
}

// A client whose snapshots come every other tick draws a zigzagging target
// on the straight line between them: a shot at it there, with the input's
// view time naming those snapshots (Back, Span), hits; resolved on the
// server's own path between ticks it would miss. A claim the server cuts
// keeps no snapshots: the world at the granted time is the server's.
func TestSpannedViewTimeIsTheClientsLine(t *testing.T) {
	zig := func(tick int64) geom.Vec3 { // 1 m a tick along X; 2 m aside on odd ticks
		return geom.V(-20+float64(tick), 0, 10+2*float64(tick%2))
	}
	for _, tt := range []struct {
		name       string
		back, span uint8
		earliest   float64 // ticks before now the server measured (0: no bound)
		want       ecs.ShotResult
		wantSpan   uint8
	}{
		{"between its snapshots", 1, 2, 0, ecs.ResultHit, 2},
		{"the server's path instead", 0, 0, 0, ecs.ResultMiss, 0},
		{"a claim cut to the measured bound", 1, 2, 2, ecs.ResultMiss, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newStrafeRange(t, func() Config { c := DefaultConfig(); c.Weapons = []weapons.Definition{rifle}; return c }())
			place := func() {
				_, _, tf, _, _, _, _, _, _, _ := r.s.players.Get(r.target)
				tf.Pos = zig(r.s.Now())
			}
			for range 40 {
				place()
				r.s.QueueInput(r.shooter, ecs.Input{Tick: r.s.Now(), ViewTime: ecs.ViewTimeOf(float64(r.s.Now()) - 4)})
				r.s.Step()
			}
			now := r.s.Now()
			at := now - 5 // odd: between the snapshots of now−6 and now−4
			if at%2 == 0 {
				t.Fatalf("tick %d is even", at)
			}
			seen := zig(at-1).Lerp(zig(at+1), 0.5)
			in := ecs.Input{Tick: now, Yaw: math.Atan2(seen.X, seen.Z), Buttons: ecs.ButtonFire,
				ViewTime: ecs.ViewTime{Tick: at, Back: tt.back, Span: tt.span}}
			if tt.earliest > 0 {
				in.Earliest = float64(now) - tt.earliest
			}
			place()
			r.s.QueueInput(r.shooter, in)
			r.s.Step()
			ev := r.s.Events.Shots[0]
			if ev.Result != tt.want || ev.ViewTime.Span != tt.wantSpan {
				t.Errorf("%v at %+v, want %v with span %d", ev.Result, ev.ViewTime, tt.want, tt.wantSpan)
			}
		})
	}
}
