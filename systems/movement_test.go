package systems

import (
	"math"
	"testing"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/weapons"
)

// crouchHitbox is the usual hitbox, with its crouched height.
var crouchHitbox = ecs.Hitbox{Radius: 0.4, Height: 1.8, HeadHeight: 0.3, CrouchHeight: 1.1}

// pit is a level: a 20 m floor at y = 0 over x −10..10, z −10..0 and
// nothing beyond z = 0 but a kill volume below; bounds from −10 to 10 on
// every axis but down to −20.
func pit(t *testing.T) *level.Level {
	t.Helper()
	l := &level.Level{Name: "pit"}
	l.AddBox(geom.AABB{Min: geom.V(-10, -1, -10), Max: geom.V(10, 0, 0)}, level.BlocksBoth, -1)
	l.Bounds = geom.AABB{Min: geom.V(-10, -20, -10), Max: geom.V(10, 10, 10)}
	l.KillVolumes = []level.Volume{{Box: geom.AABB{Min: geom.V(-10, -20, -10), Max: geom.V(10, -5, 10)}, Source: -1}}
	l.Spawns = []level.Spawn{{Team: 1, Pos: geom.V(0, 0, -5), Source: -1}}
	l.Canonicalize()
	return l
}

func simOn(t *testing.T, l *level.Level, change func(*Config)) *Simulation {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Weapons = []weapons.Definition{rifle}
	cfg.RespawnTicks = 5
	m, err := l.Mesh()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Level, cfg.Bounds = m, l.Bounds
	for _, k := range l.KillVolumes {
		cfg.KillVolumes = append(cfg.KillVolumes, k.Box)
	}
	if change != nil {
		change(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A player who walks off the floor falls under gravity, and dies as its
// feet enter the kill volume: its own killer, with no weapon, out of the
// history from that tick; it respawns at its spawn, facing its yaw, after
// respawn_ticks, standing and at rest.
func TestKillVolumeKillsAndRespawns(t *testing.T) {
	s := simOn(t, pit(t), nil)
	p := s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Pos: geom.V(0, 0, -5), Yaw: math.Pi / 2, Hitbox: crouchHitbox, Health: 100,
		Loadout: []uint16{0}})
	if st, _ := s.PlayerState(p); st.Transform.Yaw != math.Pi/2 {
		t.Fatalf("spawned facing %v, want the spawn's yaw", st.Transform.Yaw)
	}
	fell, died := int64(-1), int64(-1)
	for tick := int64(0); tick < 200 && died < 0; tick++ {
		s.QueueInput(p, ecs.Input{Tick: tick, MoveZ: 1, Buttons: ecs.ButtonCrouch}) // off the edge at z = 0, crouched
		s.Step()
		st, _ := s.PlayerState(p)
		if fell < 0 && st.Transform.Pos.Y < -0.5 {
			fell = tick
		}
		if len(s.Events.Kills) > 0 {
			died = tick
			k := s.Events.Kills[0]
			if k.Killer != p || k.Victim != p || k.Weapon != ecs.NoWeapon || k.Tick != tick {
				t.Errorf("kill %+v", k)
			}
			if !st.Life.Dead || st.Health.Current != 0 || st.Transform.Pos.Y > -5 || st.Velocity.V != (geom.Vec3{}) {
				t.Errorf("the dead: %+v", st)
			}
			if _, ok := s.History.PoseAt(tick, p); ok {
				t.Error("the dead still has a hitbox in the history")
			}
		}
	}
	if fell < 0 || died <= fell {
		t.Fatalf("fell at tick %d, died at %d", fell, died)
	}
	for range s.Config().RespawnTicks {
		s.QueueInput(p, ecs.Input{Tick: s.Now(), Buttons: ecs.ButtonJump | ecs.ButtonCrouch})
		s.Step()
	}
	st, _ := s.PlayerState(p)
	if st.Life.Dead || st.Transform.Pos != geom.V(0, 0, -5) || st.Transform.Yaw != math.Pi/2 || st.Motion.Crouched ||
		st.Velocity.V != (geom.Vec3{}) || len(s.Events.Respawns) != 1 || s.Events.Respawns[0].Yaw != math.Pi/2 {
		t.Errorf("after the respawn: %+v, events %+v", st, s.Events.Respawns)
	}
}

// Leaving the bounds kills too: here sideways, beyond x = 10, standing on
// a floor wider than the bounds.
func TestLeavingTheBoundsKills(t *testing.T) {
	l := pit(t)
	l.Triangles = nil
	l.AddBox(geom.AABB{Min: geom.V(-30, -1, -30), Max: geom.V(30, 0, 30)}, level.BlocksBoth, -1)
	l.Canonicalize()
	s := simOn(t, l, nil)
	p := s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Pos: geom.V(8, 0, -5), Hitbox: crouchHitbox, Health: 100})
	for tick := int64(0); tick < 40; tick++ {
		s.QueueInput(p, ecs.Input{Tick: tick, MoveX: 1})
		s.Step()
		if len(s.Events.Kills) > 0 {
			st, _ := s.PlayerState(p)
			if x := st.Transform.Pos.X; x <= 10 || x > 10.5 {
				t.Errorf("died at x = %v, want just past 10", x)
			}
			return
		}
	}
	t.Fatal("never died")
}

// A crouched player is recorded crouched, and its shots start at the
// crouched eye; the time machine rewinds it crouched: at a view time when
// it was crouched, a shot at its standing head passes over it, one at its
// crouched body hits, though it stands in the present; the same shot at
// the head, at a view time when it stood, hits the head.
func TestCrouchedTargetIsRewoundCrouched(t *testing.T) {
	s := newSim(t, rifle)
	target := s.SpawnPlayer(PlayerSpec{Team: 2, Controlled: true, Pos: geom.V(0, 0, 10), Hitbox: crouchHitbox, Health: 1000})
	shooter := s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Hitbox: crouchHitbox, Loadout: []uint16{0}})
	// step runs a tick: the target crouched or not, the shooter (crouched)
	// firing at aim, seen lag ticks back, unless aim is nil.
	step := func(crouch bool, aim *geom.Vec3, lag float64) []ecs.ShotEvent {
		now := s.Now()
		in := ecs.Input{Tick: now}
		if crouch {
			in.Buttons = ecs.ButtonCrouch
		}
		s.QueueInput(target, in)
		sh := ecs.Input{Tick: now, Buttons: ecs.ButtonCrouch, ViewTime: ecs.ViewTimeOf(float64(now) - lag)}
		if aim != nil {
			d := aim.Sub(s.Eye(geom.Vec3{}, true))
			sh.Buttons |= ecs.ButtonFire
			sh.Yaw, sh.Pitch = math.Atan2(d.X, d.Z), math.Atan2(d.Y, math.Hypot(d.X, d.Z))
		}
		s.QueueInput(shooter, sh)
		s.Step()
		return s.Events.Shots
	}
	for range 5 {
		step(true, nil, 0) // ticks 0–4: the target crouched
	}
	for range 5 {
		step(false, nil, 0) // ticks 5–9: it stands
	}
	if p, _ := s.History.PoseAt(4, target); !p.Crouched {
		t.Fatalf("tick 4: %+v, want crouched", p)
	}
	if p, _ := s.History.PoseAt(9, target); p.Crouched {
		t.Fatalf("tick 9: %+v, want standing", p)
	}
	head := geom.V(0, 1.8-0.15, 10) // the standing head's middle
	body := geom.V(0, 0.6, 10)      // the crouched body's
	// Tick 10, seen 7 ticks back: tick 3, crouched.
	if ev := step(false, &head, 7); len(ev) != 1 || ev[0].Result != ecs.ResultMiss || ev[0].ViewTime != (ecs.ViewTime{Tick: 3}) {
		t.Errorf("a shot at the standing head of the crouched target: %+v, want a miss at view time 3", ev)
	}
	if ev := step(false, &body, 8); len(ev) != 1 || ev[0].Result != ecs.ResultHit || ev[0].Target != target || ev[0].Head ||
		ev[0].ViewTime != (ecs.ViewTime{Tick: 3}) {
		t.Errorf("a shot at the crouched body: %+v, want a body hit at view time 3", ev)
	}
	// Tick 12, seen 4 ticks back: tick 8, standing.
	if ev := step(false, &head, 4); len(ev) != 1 || ev[0].Result != ecs.ResultHit || !ev[0].Head {
		t.Errorf("a shot at the head when it stood: %+v, want a head hit", ev)
	}
	if c, _ := s.Collision.Hitbox(target); math.Abs(c.Capsule.B.Y-(1.8-0.4)) > 1e-9 {
		t.Errorf("in the present the target stands: capsule %+v", c.Capsule)
	}
}

// A player found elsewhere than movement left it (put there by another
// system) is a teleport in the history; moving, even fast, is not.
func TestFallIsNoTeleport(t *testing.T) {
	s := simOn(t, pit(t), func(c *Config) { c.RespawnTicks = 1000 })
	p := s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Pos: geom.V(0, 0, -1), Hitbox: crouchHitbox, Health: 100})
	for tick := int64(0); tick < 60; tick++ {
		s.QueueInput(p, ecs.Input{Tick: tick, MoveZ: 1})
		s.Step()
		if pose, ok := s.History.PoseAt(tick, p); ok && pose.Teleport {
			t.Fatalf("tick %d: falling marked a teleport (%+v)", tick, pose)
		}
	}
	if st, _ := s.PlayerState(p); !st.Life.Dead || st.Life.Teleports != 0 {
		t.Errorf("after the fall: %+v", st.Life)
	}
}

// The characters players move as are their classes': a class's movement
// from the catalogue, the default character without one.
func TestPlayersMoveAsTheirClass(t *testing.T) {
	fast := movement.DefaultCharacter()
	fast.RunSpeed, fast.SprintSpeed = 9, 9
	cfg := DefaultConfig()
	cfg.Weapons = []weapons.Definition{rifle}
	cfg.Classes = []weapons.Class{{Name: "slow", Weapons: []string{"rifle"}}, {Name: "fast", Weapons: []string{"rifle"}, Movement: fast}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	slow := s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Hitbox: crouchHitbox})
	quick := s.SpawnPlayer(PlayerSpec{Team: 1, Controlled: true, Hitbox: crouchHitbox, Class: 1, Pos: geom.V(5, 0, 0)})
	for tick := int64(0); tick < 40; tick++ {
		s.QueueInput(slow, ecs.Input{Tick: tick, MoveZ: 1})
		s.QueueInput(quick, ecs.Input{Tick: tick, MoveZ: 1})
		s.Step()
	}
	a, _ := s.PlayerState(slow)
	b, _ := s.PlayerState(quick)
	if math.Abs(a.Velocity.V.Len()-6) > 1e-9 || math.Abs(b.Velocity.V.Len()-9) > 1e-9 {
		t.Errorf("speeds %v and %v, want 6 and 9", a.Velocity.V.Len(), b.Velocity.V.Len())
	}
	if c, ok := s.Character(quick); !ok || *c != fast {
		t.Errorf("Character: %+v %v", c, ok)
	}
}
