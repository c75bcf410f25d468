package systems

import (
	"testing"

	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/weapons"
)

// A hit's shot resolved again in the present (weapons.PresentJudge) hits a
// victim that stood still since the shooter's view time, and misses one
// that has moved 10 m aside since: for a rifle, a shotgun's pellets and
// each melee shape.
func TestShotsResolvedAgainInThePresent(t *testing.T) {
	defs := []weapons.Definition{
		{Name: "rifle", Kind: weapons.KindHitscan, Range: 100, Damage: 1},
		{Name: "shotgun", Kind: weapons.KindHitscan, Range: 35, Pellets: 8, Spread: 0.05, Damage: 1},
		{Name: "bite", Kind: weapons.KindMelee, Reach: 1.5, Radius: 1, Damage: 1},
		{Name: "tail", Kind: weapons.KindMelee, Shape: weapons.ShapeCapsule, Reach: 2.5, Radius: 0.5, Damage: 1},
		{Name: "swipe", Kind: weapons.KindMelee, Shape: weapons.ShapeArc, Reach: 2.5, Angle: 1, Damage: 1},
	}
	const lag = 4
	for _, def := range defs {
		for _, moved := range []bool{false, true} {
			cfg := DefaultConfig()
			cfg.Weapons = defs
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			hb := ecs.Hitbox{Radius: 0.4, Height: 1.8}
			shooter := s.SpawnPlayer(PlayerSpec{Team: 1, Health: 100, Hitbox: hb})
			at := geom.V(0, 0, 2)
			target := s.SpawnPlayer(PlayerSpec{Team: 2, Pos: at, Health: 1000, Hitbox: hb})
			lags, tfs := generic.NewMap[ecs.ViewLag](s.World), generic.NewMap[ecs.Transform](s.World)
			lags.Get(shooter).Ticks = lag
			for range 10 {
				s.Step()
			}
			if moved {
				tfs.Get(target).Pos = at.Add(geom.V(10, 0, 0))
			}
			id, _ := s.Catalog.Lookup(def.Name)
			s.Commands.Fire = append(s.Commands.Fire, ecs.FireCommand{Shooter: shooter, Weapon: id, Scripted: true,
				Origin: s.Eye(geom.Vec3{}, false), Dir: geom.V(0, -0.3, 1).Normalize()})
			s.beginTick()
			rest := s.stages
			for rest[0].name != "fairness" {
				rest[0].run()
				rest = rest[1:]
			}
			var hit *ecs.ShotEvent
			for i := range s.Events.Shots {
				if ev := &s.Events.Shots[i]; ev.Result == ecs.ResultHit && ev.Target == target {
					hit = ev
				}
			}
			if hit == nil || hit.ViewTime.Tick != s.Now()-lag {
				t.Fatalf("%s: the shot at the victim's place %d ticks ago: %+v", def.Name, lag, s.Events.Shots)
			}
			judge := s.present[s.Catalog.KindOf(id)]
			if judge == nil {
				t.Fatalf("%s: its kind cannot resolve a shot again in the present", def.Name)
			}
			if got := judge.HitsInPresent(hit); got == moved {
				t.Errorf("%s, the victim moved %v: hits in the present %v", def.Name, moved, got)
			}
			for _, st := range rest {
				st.run()
			}
			s.endTick()
			if got := judge.HitsInPresent(hit); got {
				t.Errorf("%s: the shot was cleaned up, yet it hits in the present", def.Name)
			}
		}
	}
}
