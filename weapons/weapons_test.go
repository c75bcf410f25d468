package weapons_test

import (
	"testing"

	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/systems"
	"github.com/rewind-gg/rewind/weapons"
)

func TestCatalogValidation(t *testing.T) {
	reg := weapons.NewRegistry()
	tests := []struct {
		defs []weapons.Definition
		want string
	}{
		{[]weapons.Definition{{Kind: "hitscan", Range: 1}}, "weapons: a weapon has no name"},
		{[]weapons.Definition{{Name: "a", Kind: "hitscan", Range: 1}, {Name: "a", Kind: "melee", Radius: 1}}, "weapons: a: defined twice"},
		{[]weapons.Definition{{Name: "a", Kind: "plasma"}}, `weapons: a.kind: unknown kind "plasma" (known: hitscan, projectile, melee)`},
		{[]weapons.Definition{{Name: "a", Kind: "hitscan", Range: -1}}, "weapons: a.range: must be a positive number, got -1"},
		{[]weapons.Definition{{Name: "a", Kind: "projectile", Speed: 1}}, "weapons: a.lifetime_ticks: must be at least 1, got 0"},
		{[]weapons.Definition{{Name: "a", Kind: "projectile", Speed: -1, LifetimeTicks: 1}}, "weapons: a.speed: must be a number ≥ 0, got -1"},
		{[]weapons.Definition{{Name: "a", Kind: "melee", Radius: 0}}, "weapons: a.radius: must be a positive number, got 0"},
		{[]weapons.Definition{{Name: "a", Kind: "hitscan", Range: 1, Damage: -5}}, "weapons: a.damage: must be a number ≥ 0, got -5"},
	}
	for _, tt := range tests {
		if _, err := weapons.NewCatalog(reg, tt.defs); err == nil || err.Error() != tt.want {
			t.Errorf("got %v, want %q", err, tt.want)
		}
	}
	c, err := weapons.NewCatalog(reg, []weapons.Definition{{Name: "rifle", Kind: "hitscan", Range: 5}, {Name: "axe", Kind: "melee", Radius: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := c.Lookup("axe"); !ok || id != 1 || c.At(id).Name != "axe" || c.KindOf(id) != 2 {
		t.Errorf("lookup axe: %d %v", id, ok)
	}
	if names := c.Names(); len(names) != 2 || names[0] != "axe" {
		t.Errorf("names %v", names)
	}
}

func TestRegistry(t *testing.T) {
	r := weapons.NewRegistry()
	if err := r.Register("hitscan", func(*weapons.Env) weapons.Kind { return nil }); err == nil {
		t.Error("registering a taken name should fail")
	}
	if err := r.Register("", nil); err == nil {
		t.Error("registering without a name should fail")
	}
	if k, ok := r.Lookup("melee"); !ok || k != 2 {
		t.Errorf("melee is kind %d %v", k, ok)
	}
}

// A target runs along +X at 1 m per tick, 10 m in front of a shooter that
// sees 4 ticks behind and aims where it sees the target. Every kind hits in
// the shooter's time and misses when the window is 0.
func TestEveryKindHitsInTheShootersTime(t *testing.T) {
	defs := []weapons.Definition{
		{Name: "rifle", Kind: weapons.KindHitscan, Range: 100},
		{Name: "rocket", Kind: weapons.KindProjectile, Speed: 200, Radius: 0.1, LifetimeTicks: 10}, // 10 m per tick
		{Name: "bite", Kind: weapons.KindMelee, Reach: 9, Radius: 1},
	}
	for _, window := range []int{30, 0} {
		for _, d := range defs {
			cfg := systems.DefaultConfig()
			cfg.Weapons = defs
			cfg.LagComp.WindowTicks = window
			sim, err := systems.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			hb := ecs.Hitbox{Radius: 0.4, Height: 1.8}
			shooter := sim.SpawnPlayer(systems.PlayerSpec{Team: 1, Hitbox: hb})
			target := sim.SpawnPlayer(systems.PlayerSpec{Team: 2, Hitbox: hb, Pos: geom.V(0, 0, 10)})
			pos := generic.NewMap[ecs.Transform](sim.World)
			lag := generic.NewMap[ecs.ViewLag](sim.World)
			lag.Get(shooter).Ticks = 4
			id, _ := sim.Catalog.Lookup(d.Name)
			var got []ecs.ShotEvent
			for tick := int64(0); tick < 30; tick++ {
				pos.Get(target).Pos.X = float64(tick)
				if tick == 20 { // it sees the target at x=16
					sim.Commands.Fire = append(sim.Commands.Fire, ecs.FireCommand{Shooter: shooter, Weapon: id, Origin: geom.V(16, 1, 0), Dir: geom.V(0, 0, 1)})
				}
				sim.Step()
				got = append(got, sim.Events.Shots...)
			}
			if len(got) != 1 {
				t.Fatalf("%s window %d: events %+v", d.Name, window, got)
			}
			wantHit := window > 0
			if (got[0].Result == ecs.ResultHit) != wantHit || got[0].Tick != 20 && d.Kind != weapons.KindProjectile {
				t.Errorf("%s window %d: %+v, want hit=%v", d.Name, window, got[0], wantHit)
			}
			if wantHit && got[0].ViewTime != (ecs.ViewTime{Tick: 16}) {
				t.Errorf("%s: view time %+v", d.Name, got[0].ViewTime)
			}
		}
	}
}

// pulse is a kind of the test's own: an overlap sphere around its origin
// that reports every enemy inside, rewound like any other kind. It is the
// extension seam in miniature: a type, a factory, one Register call.
type pulse struct {
	env  *weapons.Env
	m    generic.Map7[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot, ecs.MeleeAttack]
	hits []lagcomp.Hit
}

func (k *pulse) Spawn(s *weapons.Shot) {
	lc, o, tm, l, v, sh := s.Common(k.env.Clock.Tick)
	k.m.NewWith(&lc, &o, &tm, &l, &v, &sh, &ecs.MeleeAttack{Center: s.Origin, Radius: s.Def.Radius})
}

func (k *pulse) Resolve(at ecs.ViewTime, items []lagcomp.Item) {
	for _, it := range items {
		lc, owner, team, _, _, shot, a := k.m.Get(it.Entity)
		k.hits = k.env.Collision.OverlapSphere(geom.Sphere{Center: a.Center, Radius: a.Radius},
			k.env.FilterFor(owner.Entity, team.ID, lagcomp.Hitboxes), k.hits[:0])
		for _, h := range k.hits {
			k.env.Report(shot, owner.Entity, at, h, true, a.Center)
		}
		lc.Done = true
	}
}

func TestCustomKind(t *testing.T) {
	reg := weapons.NewRegistry()
	err := reg.Register("pulse", func(env *weapons.Env) weapons.Kind {
		return &pulse{env: env,
			m: generic.NewMap7[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot, ecs.MeleeAttack](env.World)}
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := systems.DefaultConfig()
	cfg.Kinds = reg
	cfg.Weapons = []weapons.Definition{{Name: "nova", Kind: "pulse", Radius: 3}}
	sim, err := systems.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hb := ecs.Hitbox{Radius: 0.4, Height: 1.8}
	caster := sim.SpawnPlayer(systems.PlayerSpec{Team: 1, Hitbox: hb})
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
}
