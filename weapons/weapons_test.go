package weapons_test

import (
	"math"
	"testing"

	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/spread"
	"github.com/rewind-gg/rewind/systems"
	"github.com/rewind-gg/rewind/weapons"
)

// arena is a room driven by hand: players placed each tick, shots fired by
// command, events collected.
type arena struct {
	t   *testing.T
	sim *systems.Simulation
	tf  generic.Map[ecs.Transform]
	lag generic.Map[ecs.ViewLag]
	hp  generic.Map2[ecs.Health, ecs.Life]
	all []uint16 // every weapon id: the loadout players get
}

var hb = ecs.Hitbox{Radius: 0.4, Height: 1.8, HeadHeight: 0.3}

func newArena(t *testing.T, window int, defs ...weapons.Definition) *arena {
	t.Helper()
	return newArenaOn(t, window, nil, defs...)
}

// newArenaOn is newArena on a level of boxes (solid: they block movement
// and shots).
func newArenaOn(t *testing.T, window int, boxes []geom.AABB, defs ...weapons.Definition) *arena {
	t.Helper()
	cfg := systems.DefaultConfig()
	cfg.LagComp.WindowTicks = window
	cfg.Weapons = defs
	if len(boxes) > 0 {
		l := &level.Level{Name: "boxes"}
		for _, b := range boxes {
			l.AddBox(b, level.BlocksBoth, -1)
		}
		m, err := l.Mesh()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Level = m
	}
	sim, err := systems.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := &arena{t: t, sim: sim, tf: generic.NewMap[ecs.Transform](sim.World), lag: generic.NewMap[ecs.ViewLag](sim.World),
		hp: generic.NewMap2[ecs.Health, ecs.Life](sim.World)}
	for id := range sim.Catalog.Len() {
		a.all = append(a.all, uint16(id))
	}
	return a
}

func (a *arena) player(team uint8, pos geom.Vec3, lag float64) ecs.Entity {
	e := a.sim.SpawnPlayer(systems.PlayerSpec{Team: team, Pos: pos, Hitbox: hb, Health: 1000, Loadout: a.all})
	a.lag.Get(e).Ticks = lag
	return e
}

func (a *arena) fire(shooter ecs.Entity, weapon string, origin, dir geom.Vec3) {
	a.t.Helper()
	id, ok := a.sim.Catalog.Lookup(weapon)
	if !ok {
		a.t.Fatalf("no weapon %q", weapon)
	}
	a.sim.Commands.Fire = append(a.sim.Commands.Fire, ecs.FireCommand{Shooter: shooter, Weapon: id, Origin: origin, Dir: dir, Scripted: true})
}

// step runs a tick and returns its shot events.
func (a *arena) step() []ecs.ShotEvent {
	a.sim.Step()
	return append([]ecs.ShotEvent(nil), a.sim.Events.Shots...)
}

// Every kind hits a running target where its shooter saw it (4 ticks back)
// and misses it with lag compensation off; each at the tick its kind
// resolves at.
func TestEveryKindUnderLagCompensation(t *testing.T) {
	defs := []weapons.Definition{
		{Name: "rifle", Kind: weapons.KindHitscan, Range: 100, Damage: 10},
		{Name: "rocket", Kind: weapons.KindProjectile, Speed: 400, Radius: 0.1, LifetimeTicks: 10, Damage: 10}, // 20 m a step: it arrives in its first
		{Name: "needle", Kind: weapons.KindProjectile, Speed: 400, Radius: 0.1, LifetimeTicks: 10, Damage: 10, Mode: weapons.ModeCatchUp},
		{Name: "bite", Kind: weapons.KindMelee, Reach: 9, Radius: 1, Damage: 10},
		{Name: "tail", Kind: weapons.KindMelee, Shape: weapons.ShapeCapsule, Reach: 12, Radius: 0.5, Damage: 10},
		{Name: "jaws", Kind: weapons.KindMelee, Shape: weapons.ShapeArc, Reach: 11, Angle: 0.2, Damage: 10},
	}
	// The target runs along +X at 1 m a tick at z=10; at tick 20 the shooter
	// (at the origin, 4 ticks behind) sees it at x=16 and aims there.
	want := map[string]int64{"rifle": 20, "rocket": 20, "needle": 20, "bite": 20, "tail": 20, "jaws": 20}
	for _, window := range []int{30, 0} {
		for _, d := range defs {
			a := newArena(t, window, defs...)
			shooter := a.player(1, geom.V(16, 0, 0), 4)
			target := a.player(2, geom.V(0, 0, 10), 0)
			var got []ecs.ShotEvent
			for tick := int64(0); tick < 35 && len(got) == 0; tick++ {
				a.tf.Get(target).Pos.X = float64(tick)
				if tick == 20 {
					a.fire(shooter, d.Name, geom.V(16, 1, 0), geom.V(0, 0, 1))
				}
				got = a.step()
			}
			if len(got) != 1 {
				t.Fatalf("%s window %d: events %+v", d.Name, window, got)
			}
			ev := got[0]
			if window > 0 {
				if ev.Result != ecs.ResultHit || ev.Target != target || ev.Tick != want[d.Name] {
					t.Errorf("%s: %v at tick %d, want a hit at %d", d.Name, ev.Result, ev.Tick, want[d.Name])
				}
				if wantView := ev.Tick - 4; ev.ViewTime != (ecs.ViewTime{Tick: wantView}) {
					t.Errorf("%s: resolved at view time %+v, want %d", d.Name, ev.ViewTime, wantView)
				}
			} else if ev.Result == ecs.ResultHit {
				t.Errorf("%s without lag compensation: %+v, want a miss", d.Name, ev)
			}
		}
	}
}

// Dino Squad's two options for projectiles, the same rocket: in the
// shooter's time it hits three ticks after it is fired; catching up it hits
// within the firing tick. Both at the view time the shooter saw the hit.
func TestCatchUpResolvesInTheFiringTick(t *testing.T) {
	for _, mode := range []string{weapons.ModeShooterTime, weapons.ModeCatchUp} {
		a := newArena(t, 30, weapons.Definition{Name: "rocket", Kind: weapons.KindProjectile, Speed: 20, Radius: 0.1, LifetimeTicks: 40, Mode: mode})
		shooter := a.player(2, geom.V(14.75, 0, 5), 3.5)
		target := a.player(1, geom.V(0, 0, 0), 0)
		var ev ecs.ShotEvent
		for tick := int64(0); tick < 80 && ev.Result == 0; tick++ {
			a.tf.Get(target).Pos.X = float64(tick) / 2 // 10 m/s along +X
			if tick == 30 {
				a.fire(shooter, "rocket", geom.V(14.75, 1.2, 4), geom.V(0, 0, -1))
			}
			for _, e := range a.step() {
				ev = e
			}
		}
		wantTick := int64(33)
		if mode == weapons.ModeCatchUp {
			wantTick = 30
		}
		if ev.Result != ecs.ResultHit || ev.Tick != wantTick || ev.ViewTime.Ticks() != 29.5 {
			t.Errorf("%s: %v at tick %d, view time %v; want a hit at tick %d, view time 29.5", mode, ev.Result, ev.Tick, ev.ViewTime.Ticks(), wantTick)
		}
		st := a.sim.Stats()
		if mode == weapons.ModeCatchUp && st.Rewinds != 4 {
			t.Errorf("catch-up: %d rewinds, want 4 (view times 26.5 to 29.5, all in tick 30)", st.Rewinds)
		}
	}
}

// A shotgun's pellets are deterministic: their directions follow from the
// shooter's id and the shot counter (package spread), all resolved in one
// rewind. The test casts the same rays itself and checks the per-target
// pellet counts.
func TestPelletsAreDeterministic(t *testing.T) {
	shotgun := weapons.Definition{Name: "shotgun", Kind: weapons.KindHitscan, Range: 40, Pellets: 8, Spread: 0.12, Damage: 5}
	a := newArena(t, 30, shotgun)
	shooter := a.player(1, geom.V(0, 0, 0), 2)
	var targets []ecs.Entity
	for i := range 5 {
		targets = append(targets, a.player(2, geom.V(float64(i-2)*0.7, 0, 8), 0))
	}
	origin, aim := geom.V(0, 1.2, 0), geom.V(0, 0, 1)
	for range 5 { // some history to rewind into
		a.step()
	}
	for shot := uint32(1); shot <= 20; shot++ {
		a.sim.Commands.Fire = append(a.sim.Commands.Fire, ecs.FireCommand{Shooter: shooter, Weapon: 0, Shot: shot, Origin: origin, Dir: aim, Scripted: true})
		events := a.step()
		if st := a.sim.Stats().Last; st.Items != 1 || st.Rewinds != 1 {
			t.Fatalf("shot %d: %+v, want one item and one rewind for all pellets", shot, st)
		}
		want := map[ecs.Entity]uint8{}
		for p := range 8 {
			// A scripted shot's place in the sequence is its index; the
			// scenario's seed is 0.
			d := spread.Dir(aim, 0.12, spread.Key(0, ecs.WireID(shooter), shot), p)
			best, who := math.Inf(1), ecs.Entity{}
			for _, e := range targets {
				c := hb.Capsule(a.tf.Get(e).Pos, false)
				if tt, ok := geom.RayCapsule(origin, d, 40, c); ok && tt < best {
					best, who = tt, e
				}
			}
			if !who.IsZero() {
				want[who]++
			}
		}
		got := map[ecs.Entity]uint8{}
		for _, ev := range events {
			if ev.Result == ecs.ResultHit {
				got[ev.Target] = ev.Pellets
				if ev.Damage != 5*float64(ev.Pellets) {
					t.Errorf("shot %d: %d pellets dealt %v", shot, ev.Pellets, ev.Damage)
				}
			}
		}
		if len(got) != len(want) {
			t.Fatalf("shot %d: pellets per target %v, the same rays give %v", shot, got, want)
		}
		for e, n := range want {
			if got[e] != n {
				t.Fatalf("shot %d: pellets per target %v, the same rays give %v", shot, got, want)
			}
		}
	}
}

func TestFalloffAndHeadshots(t *testing.T) {
	rifle := weapons.Definition{Name: "rifle", Kind: weapons.KindHitscan, Range: 100, Damage: 20, HeadMultiplier: 2,
		Falloff: weapons.Falloff{Start: 10, End: 20, Min: 0.5}}
	a := newArena(t, 30, rifle)
	shooter := a.player(1, geom.V(0, 0, 0), 0)
	for _, tt := range []struct {
		dist, y float64
		want    float64
		head    bool
	}{
		{5.4, 1.0, 20, false},  // within the falloff's start
		{15.4, 1.0, 15, false}, // halfway: 0.75
		{30.4, 1.0, 10, false}, // beyond the end: the minimum
		{5.4, 1.7, 40, true},   // the top 0.3 m is the head
	} {
		target := a.player(2, geom.V(0, 0, tt.dist), 0)
		a.fire(shooter, "rifle", geom.V(0, tt.y, 0), geom.V(0, 0, 1))
		ev := a.step()[0]
		if ev.Result != ecs.ResultHit || math.Abs(ev.Damage-tt.want) > 1e-9 || ev.Head != tt.head {
			t.Errorf("at %v m, height %v: %+v, want %v damage (head %v)", tt.dist, tt.y, ev, tt.want, tt.head)
		}
		a.sim.Despawn(target)
	}
}

// A rocket's splash hits the enemies near the contact point in the same
// rewound world: one that stood there as the shooter saw it is hit, though it
// has run on since; one behind a wall and one out of range are not.
func TestSplashInTheRewoundWorld(t *testing.T) {
	rocket := weapons.Definition{Name: "rocket", Kind: weapons.KindProjectile, Speed: 200, Radius: 0.1, LifetimeTicks: 5,
		Damage: 60, Splash: weapons.Splash{Radius: 3, Damage: 40, Min: 0.2}}
	a := newArenaOn(t, 30, []geom.AABB{{Min: geom.V(-1.1, 0, 8), Max: geom.V(-0.9, 3, 12)}}, rocket)
	shooter := a.player(1, geom.V(0, 0, 0), 5)
	direct := a.player(2, geom.V(0, 0, 10), 0)
	runner := a.player(2, geom.V(1.5, 0, 10), 0) // 1.5 m from the impact: 1.1 m from its surface
	hidden := a.player(2, geom.V(-1.6, 0, 10), 0)
	far := a.player(2, geom.V(0, 0, 14), 0)
	for tick := int64(0); tick <= 10; tick++ {
		if tick > 5 { // it runs off after tick 5: in the present it is 20 m away
			a.tf.Get(runner).Pos.X = 20
		}
		if tick == 10 { // view time 5: the runner still stood by the impact
			a.fire(shooter, "rocket", geom.V(0, 1, 0), geom.V(0, 0, 1))
		}
		a.step()
	}
	got := map[ecs.Entity]ecs.ShotEvent{}
	for _, ev := range a.sim.Events.Shots {
		got[ev.Target] = ev
	}
	if ev := got[direct]; ev.Result != ecs.ResultHit || ev.Splash || ev.Damage != 60 {
		t.Errorf("direct hit: %+v", ev)
	}
	// The rocket stops against the direct target's front: the runner's
	// surface is 1.18 m from there.
	impact := got[direct].Point
	near := geom.ClosestOnSegment(impact, geom.V(1.5, 0.4, 10), geom.V(1.5, 1.4, 10))
	wantSplash := 40 * (1 - 0.8*(near.Sub(impact).Len()-0.4)/3)
	if ev, ok := got[runner]; !ok || !ev.Splash || math.Abs(ev.Damage-wantSplash) > 1e-9 || wantSplash > 30 || wantSplash < 25 {
		t.Errorf("splash on the runner where the shooter saw it: %+v, want %v damage", ev, wantSplash)
	}
	if _, ok := got[hidden]; ok {
		t.Error("the splash went through the wall")
	}
	if _, ok := got[far]; ok {
		t.Error("the splash reached beyond its radius")
	}
}

// A strike with a wind-up lands later, where its attacker has moved.
func TestMeleeWindupFollowsTheAttacker(t *testing.T) {
	bite := weapons.Definition{Name: "bite", Kind: weapons.KindMelee, Reach: 2, Radius: 0.8, Damage: 30, WindupTicks: 4}
	a := newArena(t, 30, bite)
	attacker := a.player(1, geom.V(0, 0, 0), 0)
	victim := a.player(2, geom.V(5, 0, 2), 0) // 5 m to the side of where the bite starts
	var events []ecs.ShotEvent
	for tick := int64(0); tick <= 6; tick++ {
		a.tf.Get(attacker).Pos.X = float64(tick) * 1.25 // 5 m in 4 ticks
		if tick == 0 {
			a.fire(attacker, "bite", geom.V(0, 1, 0), geom.V(0, 0, 1))
		}
		ev := a.step()
		if len(ev) > 0 {
			events = append(events, ev...)
			if ev[0].Tick != 4 {
				t.Errorf("the bite landed at tick %d, want 4", ev[0].Tick)
			}
		}
	}
	if len(events) != 1 || events[0].Target != victim {
		t.Errorf("events %+v, want the victim bitten where the attacker got to", events)
	}
	// An attacker that dies during the wind-up strikes nothing.
	a.fire(attacker, "bite", geom.V(5, 1, 0), geom.V(0, 0, 1))
	a.step()
	_, life := a.hp.Get(attacker)
	life.Dead, life.RespawnAt = true, 1000
	for range 5 {
		for _, ev := range a.step() {
			if ev.Result != ecs.ResultInvalid {
				t.Errorf("a dead attacker's bite: %+v", ev)
			}
		}
	}
}

// Arc strikes hit what is in front within the angle, not what is behind.
func TestMeleeArc(t *testing.T) {
	jaws := weapons.Definition{Name: "jaws", Kind: weapons.KindMelee, Shape: weapons.ShapeArc, Reach: 3, Angle: 0.5, Damage: 10}
	a := newArena(t, 30, jaws)
	attacker := a.player(1, geom.V(0, 0, 0), 0)
	front := a.player(2, geom.V(0.5, 0, 2), 0)  // 14° off the aim
	side := a.player(2, geom.V(2.2, 0, 0.5), 0) // 77° off the aim
	behind := a.player(2, geom.V(0, 0, -2), 0)
	a.fire(attacker, "jaws", geom.V(0, 1, 0), geom.V(0, 0, 1))
	hit := map[ecs.Entity]bool{}
	for _, ev := range a.step() {
		hit[ev.Target] = ev.Result == ecs.ResultHit
	}
	if !hit[front] || hit[side] || hit[behind] {
		t.Errorf("arc hits: front %v side %v behind %v", hit[front], hit[side], hit[behind])
	}
}

// input feeds a controlled player's input for the present tick.
func (a *arena) input(p ecs.Entity, in ecs.Input) {
	in.Tick = a.sim.Now()
	if v := a.sim.QueueInput(p, in); v != systems.InputQueued {
		a.t.Fatalf("input not queued: %v", v)
	}
}

// A client that fires every tick is held to the weapon's fire interval, its
// magazine and its reload; a weapon outside its loadout never fires.
func TestFireRateAndAmmoCheatsAreRefused(t *testing.T) {
	rifle := weapons.Definition{Name: "rifle", Kind: weapons.KindHitscan, Range: 50, FireInterval: 3, Magazine: 5, ReloadTicks: 10}
	rocket := weapons.Definition{Name: "rocket", Kind: weapons.KindProjectile, Speed: 10, Radius: 0.1, LifetimeTicks: 3}
	a := newArena(t, 30, rifle, rocket)
	p := a.sim.SpawnPlayer(systems.PlayerSpec{Team: 1, Hitbox: hb, Health: 100, Controlled: true, Loadout: []uint16{0}})
	var fired []int64
	rejected := map[ecs.RejectReason]int{}
	for tick := int64(0); tick < 40; tick++ {
		a.input(p, ecs.Input{Buttons: ecs.ButtonFire, Weapon: 0, Shot: uint32(tick)})
		for _, ev := range a.step() {
			if ev.Shooter == p {
				fired = append(fired, ev.Tick)
			}
		}
		for _, rj := range a.sim.Events.Rejected {
			rejected[rj.Reason]++
		}
	}
	// Every 3 ticks, 5 rounds, then 10 ticks of reload from the 5th shot.
	want := []int64{0, 3, 6, 9, 12, 22, 25, 28, 31, 34}
	if len(fired) != len(want) {
		t.Fatalf("fired at %v, want %v", fired, want)
	}
	for i := range want {
		if fired[i] != want[i] {
			t.Fatalf("fired at %v, want %v", fired, want)
		}
	}
	if rejected[ecs.RejectCooldown] == 0 || rejected[ecs.RejectReloading] == 0 {
		t.Errorf("rejections %v: want cooldowns and reloads", rejected)
	}
	a.input(p, ecs.Input{Buttons: ecs.ButtonFire, Weapon: 1})
	a.step()
	if len(a.sim.Events.Rejected) != 1 || a.sim.Events.Rejected[0].Reason != ecs.RejectNotCarried || len(a.sim.Events.Shots) != 0 {
		t.Errorf("a weapon not carried: rejected %+v, shots %+v", a.sim.Events.Rejected, a.sim.Events.Shots)
	}
}

func TestManualReload(t *testing.T) {
	rifle := weapons.Definition{Name: "rifle", Kind: weapons.KindHitscan, Range: 50, Magazine: 3, ReloadTicks: 4}
	a := newArena(t, 30, rifle)
	p := a.sim.SpawnPlayer(systems.PlayerSpec{Team: 1, Hitbox: hb, Health: 100, Controlled: true, Loadout: []uint16{0}})
	a.input(p, ecs.Input{Buttons: ecs.ButtonFire})
	a.step()
	a.input(p, ecs.Input{Buttons: ecs.ButtonReload})
	a.step()
	shots := 0
	for range 4 { // reloading: refused
		a.input(p, ecs.Input{Buttons: ecs.ButtonFire})
		a.step()
		shots += len(a.sim.Events.Shots)
	}
	for range 3 { // a full magazine again
		a.input(p, ecs.Input{Buttons: ecs.ButtonFire})
		a.step()
		shots += len(a.sim.Events.Shots)
	}
	if shots != 3 {
		t.Errorf("%d shots after a manual reload, want 0 while reloading, then 3", shots)
	}
}

// A shield placed in the present stops projectiles from the past: the rocket
// is resolved at a view time before the shield went up, and is blocked.
// It lets its own team's shots through; a wall stops its placer's too.
func TestPlaceablesStopPastProjectiles(t *testing.T) {
	rocket := weapons.Definition{Name: "rocket", Kind: weapons.KindProjectile, Speed: 20, Radius: 0.1, LifetimeTicks: 40}
	shield := weapons.Definition{Name: "shield", Kind: weapons.KindPlaceable, Size: [3]float64{4, 2.5, 0.3}, Distance: 2, MaxActive: 1}
	wall := weapons.Definition{Name: "wall", Kind: weapons.KindPlaceable, Size: [3]float64{4, 2.5, 0.3}, Distance: 2, Blocks: weapons.BlocksEveryone}
	rifle := weapons.Definition{Name: "rifle", Kind: weapons.KindHitscan, Range: 50}
	a := newArena(t, 30, rocket, shield, wall, rifle)
	red := a.player(2, geom.V(0, 0, 0), 6)
	blue := a.player(1, geom.V(0, 0, 10), 0)
	var result ecs.ShotEvent
	for tick := int64(0); tick < 30 && result.Result == 0; tick++ {
		switch tick {
		case 2:
			a.fire(red, "rocket", geom.V(0, 1, 0.5), geom.V(0, 0, 1)) // 1 m a tick: it reaches the shield's face in tick 8
		case 6: // blue puts up a shield 2 m in front of it, facing red: z 7.85..8.15
			a.fire(blue, "shield", geom.V(0, 1.6, 10), geom.V(0, 0, -1))
		}
		for _, ev := range a.step() {
			if ev.Shooter == red {
				result = ev
			}
		}
	}
	if result.Result != ecs.ResultBlocked || result.ViewTime.Tick >= 6 {
		t.Fatalf("the rocket: %+v, want blocked by the shield though resolved before it stood", result)
	}
	// Blue's teammate shoots through the shield; red's rifle does not.
	mate := a.player(1, geom.V(0, 0, 11), 0)
	a.fire(mate, "rifle", geom.V(0.2, 1, 11), geom.V(0, 0, -1))
	a.fire(red, "rifle", geom.V(0, 1, 0.5), geom.V(0, 0, 1))
	for _, ev := range a.step() {
		switch {
		case ev.Shooter == mate && ev.Result != ecs.ResultHit:
			t.Errorf("the teammate's shot through its own shield: %+v", ev)
		case ev.Shooter == red && ev.Result != ecs.ResultBlocked:
			t.Errorf("red's shot at the shield: %+v", ev)
		}
	}
	// A second shield replaces the first (max_active 1).
	a.fire(blue, "shield", geom.V(0, 1.6, 10), geom.V(1, 0, 0))
	a.step()
	a.fire(red, "rifle", geom.V(0, 1, 0.5), geom.V(0, 0, 1))
	if ev := a.step()[0]; ev.Result != ecs.ResultHit || ev.Target != blue {
		t.Errorf("after the shield moved aside: %+v", ev)
	}
	// A wall blocks its placer's own shots.
	a.fire(blue, "wall", geom.V(0, 1.6, 10), geom.V(0, 0, -1))
	a.step()
	a.fire(blue, "rifle", geom.V(0, 1, 10), geom.V(0, 0, -1))
	if ev := a.step()[0]; ev.Result != ecs.ResultBlocked {
		t.Errorf("blue's shot into its own wall: %+v", ev)
	}
}

// The streak bonus counts hits by the view time they were resolved at (when
// the shooter saw them land): the third hit within the window deals +50%.
func TestStreakCountsViewTimes(t *testing.T) {
	rifle := weapons.Definition{Name: "rifle", Kind: weapons.KindHitscan, Range: 50, Damage: 10,
		Streak: weapons.Streak{Hits: 3, WindowTicks: 5, Bonus: 0.5}}
	a := newArena(t, 30, rifle)
	shooter := a.player(1, geom.V(0, 0, 0), 2)
	target := a.player(2, geom.V(0, 0, 10), 0)
	var bonus []int64
	for tick := int64(0); tick < 20; tick++ {
		if tick == 3 || tick == 5 || tick == 7 || tick == 15 || tick == 19 {
			a.fire(shooter, "rifle", geom.V(0, 1, 0), geom.V(0, 0, 1))
		}
		for _, ev := range a.step() {
			if ev.Streak {
				bonus = append(bonus, ev.Tick)
				if ev.Damage != 15 || ev.Dealt != 15 {
					t.Errorf("streak damage %v dealt %v, want 15", ev.Damage, ev.Dealt)
				}
			}
		}
	}
	// View times 1, 3, 5: the third within 5 ticks; 13 and 17 make no streak.
	if len(bonus) != 1 || bonus[0] != 7 {
		t.Errorf("streak bonuses at ticks %v, want [7]", bonus)
	}
	if h, _ := a.hp.Get(target); h.Current != 1000-10-10-15-10-10 {
		t.Errorf("health %v", h.Current)
	}
}

// A respawned player cannot be damaged for InvulnerableTicks.
func TestRespawnInvulnerability(t *testing.T) {
	cfg := systems.DefaultConfig()
	cfg.Weapons = []weapons.Definition{{Name: "rifle", Kind: weapons.KindHitscan, Range: 50, Damage: 50}}
	cfg.RespawnTicks, cfg.InvulnerableTicks = 2, 5
	sim, err := systems.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	shooter := sim.SpawnPlayer(systems.PlayerSpec{Team: 1, Hitbox: hb, Health: 100})
	victim := sim.SpawnPlayer(systems.PlayerSpec{Team: 2, Hitbox: hb, Health: 50, Pos: geom.V(0, 0, 10)})
	var dealt []float64
	for range 12 {
		sim.Commands.Fire = append(sim.Commands.Fire, ecs.FireCommand{Shooter: shooter, Origin: geom.V(0, 1, 0), Dir: geom.V(0, 0, 1), Scripted: true})
		sim.Step()
		for _, ev := range sim.Events.Shots {
			if ev.Target == victim {
				dealt = append(dealt, ev.Dealt)
			}
		}
	}
	// Tick 0 kills it; dead at 1 and 2 (not in the history: no hit); back at
	// 3, untouchable to 7; killed at 8; back at 11, untouchable again.
	want := []float64{50, 0, 0, 0, 0, 0, 50, 0}
	if len(dealt) != len(want) {
		t.Fatalf("dealt %v, want %v", dealt, want)
	}
	for i := range want {
		if dealt[i] != want[i] {
			t.Fatalf("dealt %v, want %v", dealt, want)
		}
	}
}

// pulse is a kind of the test's own: an overlap sphere around its origin
// that reports every enemy inside, rewound like any other kind. It is the
// extension seam in miniature: a type, a factory, one Register call, a
// declared param.
type pulse struct {
	env  *weapons.Env
	data generic.Map[pulseData]
	hits []lagcomp.Hit
}

type pulseData struct{ Center geom.Vec3 }

func (k *pulse) Spawn(s *weapons.Shot) {
	e := k.env.NewShot(s, ecs.ComponentID[pulseData](k.env.World))
	k.data.Get(e).Center = s.Origin
}

func (k *pulse) Resolve(at ecs.ViewTime, items []lagcomp.Item) {
	for _, it := range items {
		lc, owner, team, shot := k.env.ShotOf(it.Entity)
		def := k.env.Catalog.At(shot.Weapon)
		c := k.data.Get(it.Entity).Center
		k.hits = k.env.Collision.OverlapSphere(geom.Sphere{Center: c, Radius: def.Params["radius"]},
			k.env.FilterFor(owner.Entity, team.ID, lagcomp.Hitboxes), k.hits[:0])
		for _, h := range k.hits {
			k.env.Hit(shot, owner.Entity, at, h.Entity, c, def.Damage)
		}
		lc.Done = true
	}
}

func TestCustomKind(t *testing.T) {
	reg := weapons.NewRegistry()
	err := reg.Register("pulse", func(env *weapons.Env) weapons.Kind {
		return &pulse{env: env, data: generic.NewMap[pulseData](env.World)}
	}, weapons.Param{Name: "radius", Default: 1, Min: 0.1, Max: 20})
	if err != nil {
		t.Fatal(err)
	}
	cfg := systems.DefaultConfig()
	cfg.Kinds = reg
	cfg.Weapons = []weapons.Definition{{Name: "nova", Kind: "pulse", Damage: 5, Params: map[string]float64{"radius": 3}}}
	sim, err := systems.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	caster := sim.SpawnPlayer(systems.PlayerSpec{Team: 1, Hitbox: hb, Loadout: []uint16{0}})
	near := sim.SpawnPlayer(systems.PlayerSpec{Team: 2, Hitbox: hb, Pos: geom.V(2, 0, 0)})
	sim.SpawnPlayer(systems.PlayerSpec{Team: 2, Hitbox: hb, Pos: geom.V(5, 0, 0)})
	sim.SpawnPlayer(systems.PlayerSpec{Team: 1, Hitbox: hb, Pos: geom.V(-2, 0, 0)})
	sim.Commands.Fire = append(sim.Commands.Fire, ecs.FireCommand{Shooter: caster, Origin: geom.V(0, 1, 0), Dir: geom.V(0, 0, 1)})
	sim.Step()
	if len(sim.Events.Shots) != 1 || sim.Events.Shots[0].Target != near {
		t.Errorf("pulse events %+v", sim.Events.Shots)
	}
	if st := sim.Stats(); st.Items != 1 {
		t.Errorf("the pulse was not lag-compensated: %+v", st)
	}
	// Params are checked against the declaration.
	cfg.Weapons[0].Params["radius"] = 50
	if _, err := systems.New(cfg); err == nil || err.Error() != "systems: weapons: nova.params.radius: 50 is outside 0.1..20" {
		t.Errorf("param out of range: %v", err)
	}
}

// Review regressions.

// A point-sized projectile with splash stops on the surface it strikes; its
// explosion still reaches enemies in sight of that point.
func TestSplashOfAPointProjectile(t *testing.T) {
	shell := weapons.Definition{Name: "shell", Kind: weapons.KindProjectile, Speed: 200, Radius: 0, LifetimeTicks: 5,
		Splash: weapons.Splash{Radius: 3, Damage: 40, Min: 0.2}}
	a := newArenaOn(t, 30, []geom.AABB{{Min: geom.V(-20, -1, -20), Max: geom.V(20, 0, 20)}}, shell) // the floor
	shooter := a.player(1, geom.V(0, 0, 0), 0)
	near := a.player(2, geom.V(1.8, 0, 10), 0)
	a.fire(shooter, "shell", geom.V(0, 5, 10), geom.V(0, -1, 0)) // straight down onto the floor
	got := a.step()
	var splashed bool
	for _, ev := range got {
		splashed = splashed || (ev.Target == near && ev.Splash)
	}
	if !splashed {
		t.Errorf("events %+v: the explosion on the floor should reach the enemy 1.8 m away", got)
	}
}

// A wind-up strike whose attacker is gone by then is an invalid shot, not a
// lag-compensated item; one whose attacker died and respawned is cancelled
// too.
func TestCancelledWindupIsNotAnItem(t *testing.T) {
	bite := weapons.Definition{Name: "bite", Kind: weapons.KindMelee, Reach: 1, Radius: 1, WindupTicks: 3}
	a := newArena(t, 30, bite)
	attacker := a.player(1, geom.V(0, 0, 0), 2)
	a.player(2, geom.V(0, 0, 1.5), 0)
	for range 5 {
		a.step()
	}
	a.fire(attacker, "bite", geom.V(0, 1, 0), geom.V(0, 0, 1))
	a.step()
	a.sim.Despawn(attacker)
	var events []ecs.ShotEvent
	for range 4 {
		events = append(events, a.step()...)
	}
	if len(events) != 1 || events[0].Result != ecs.ResultInvalid {
		t.Errorf("events %+v, want one invalid shot", events)
	}
	if st := a.sim.Stats(); st.Items != 0 || st.Rewinds != 0 {
		t.Errorf("a cancelled strike was resolved: %+v", st)
	}
	// Died and respawned during the wind-up: cancelled as well.
	b := a.player(1, geom.V(0, 0, 0), 0)
	a.fire(b, "bite", geom.V(0, 1, 0), geom.V(0, 0, 1))
	a.step()
	_, life := a.hp.Get(b)
	life.Lives++ // a respawn happened in between
	events = events[:0]
	for range 4 {
		events = append(events, a.step()...)
	}
	if len(events) != 1 || events[0].Result != ecs.ResultInvalid {
		t.Errorf("after a respawn: events %+v, want one invalid shot", events)
	}
}

func TestMeleeHeadshots(t *testing.T) {
	bite := weapons.Definition{Name: "bite", Kind: weapons.KindMelee, Reach: 1, Radius: 0.3, Damage: 10, HeadMultiplier: 3}
	a := newArena(t, 30, bite)
	attacker := a.player(1, geom.V(0, 0, 0), 0)
	a.player(2, geom.V(0, 0, 1.5), 0)
	a.fire(attacker, "bite", geom.V(0, 1.7, 0.2), geom.V(0, 0, 1))
	ev := a.step()[0]
	if !ev.Head || ev.Damage != 30 {
		t.Errorf("a bite at head height: %+v", ev)
	}
}

// Who gets the kill never depends on bucketing, even when two hits of one
// shooter carry the same shot counter in the same tick.
func TestKillCreditDoesNotDependOnBucketing(t *testing.T) {
	defs := []weapons.Definition{
		{Name: "rifle", Kind: weapons.KindHitscan, Range: 50, Damage: 60},
		{Name: "needle", Kind: weapons.KindProjectile, Speed: 400, Radius: 0.1, LifetimeTicks: 5, Damage: 60, Mode: weapons.ModeCatchUp},
	}
	var results [2][]ecs.ShotEvent
	for i, bucketing := range []bool{true, false} {
		cfg := systems.DefaultConfig()
		cfg.Weapons = defs
		cfg.LagComp.Bucketing = bucketing
		sim, err := systems.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		shooter := sim.SpawnPlayer(systems.PlayerSpec{Team: 1, Hitbox: hb})
		sim.SpawnPlayer(systems.PlayerSpec{Team: 2, Hitbox: hb, Health: 100, Pos: geom.V(0, 0, 10)})
		for range 5 {
			sim.Step()
		}
		for w := range uint16(2) {
			sim.Commands.Fire = append(sim.Commands.Fire, ecs.FireCommand{Shooter: shooter, Weapon: w, Shot: 7, Origin: geom.V(0, 1, 0), Dir: geom.V(0, 0, 1), Scripted: true})
		}
		sim.Step()
		results[i] = append([]ecs.ShotEvent(nil), sim.Events.Shots...)
		if len(sim.Events.Kills) != 1 {
			t.Fatalf("kills %+v", sim.Events.Kills)
		}
	}
	for i := range results[0] {
		a, b := results[0][i], results[1][i]
		if a.Weapon != b.Weapon || a.Dealt != b.Dealt {
			t.Fatalf("bucketing changes the outcome: %+v vs %+v", results[0], results[1])
		}
	}
}

// A splash reaches a player whose centre the explosion sees (Source's
// rule): one behind a wall a head shorter than him, whose head shows over
// it, takes none; one in the open, as far, takes it.
func TestSplashSeesTheCentre(t *testing.T) {
	shell := weapons.Definition{Name: "shell", Kind: weapons.KindProjectile, Speed: 400, Radius: 0, LifetimeTicks: 5,
		Splash: weapons.Splash{Radius: 3, Damage: 40, Min: 0.2}}
	a := newArenaOn(t, 30, []geom.AABB{
		{Min: geom.V(-1, 0, 0.2), Max: geom.V(0.5, 3, 0.4)}, // the panel the shell strikes, 1.5 m up
		{Min: geom.V(1, 0, -5), Max: geom.V(1.2, 1.3, 5)},   // a wall 1.3 m high
	}, shell)
	shooter := a.player(1, geom.V(0, 0, -10), 0)
	behind := a.player(2, geom.V(2, 0, 0), 0) // centre 0.9 m up, head to 1.8 m
	open := a.player(2, geom.V(-2, 0, 0), 0)
	a.fire(shooter, "shell", geom.V(0, 1.5, -10), geom.V(0, 0, 1))
	got := map[ecs.Entity]bool{}
	var blocked bool
	for _, ev := range a.step() {
		got[ev.Target] = got[ev.Target] || ev.Splash
		blocked = blocked || (ev.Result == ecs.ResultBlocked && ev.By == a.sim.Level())
	}
	if !blocked || !got[open] || got[behind] {
		t.Errorf("blocked by the panel %v, splash on the player in the open %v, on the one behind the wall %v; want true, true, false",
			blocked, got[open], got[behind])
	}
}
