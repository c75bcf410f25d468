package server

import (
	"testing"

	"github.com/mlange-42/arche/generic"
	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/buildinfo"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/systems"
)

// A client computes a projectile's position from its snapshot state with
// the formula of docs/protocol.md: it must land where the server has it,
// for a grenade under gravity and for a needle that caught up in its first
// tick.
func TestProjectileStateExtrapolates(t *testing.T) {
	srv := &Server{cfg: DefaultConfig(), log: zerolog.Nop(), m: newMetrics(buildinfo.Info{}), rooms: map[string]*room{}, sessions: map[*session]struct{}{}}
	srv.weapons, _ = srv.cfg.LoadWeapons()
	srv.catalog, _ = srv.weapons.Catalog(srv.cfg.registry())
	srv.level = mustLevel(t, &srv.cfg)
	srv.welcome = welcomeTemplate(&srv.cfg, srv.catalog, srv.level)
	room, err := newRoom(srv, "p")
	if err != nil {
		t.Fatal(err)
	}
	sim := room.sim
	shooter := sim.SpawnPlayer(sysPlayer(1))
	lag := generic.NewMap[ecs.ViewLag](sim.World)
	lag.Get(shooter).Ticks = 3.5
	for range 10 {
		sim.Step()
	}
	tfs := generic.NewMap2[ecs.Transform, ecs.Projectile](sim.World)
	for _, name := range []string{"grenade", "needle"} {
		id, _ := sim.Catalog.Lookup(name)
		def := sim.Catalog.At(id)
		sim.Commands.Fire = append(sim.Commands.Fire, ecs.FireCommand{Shooter: shooter, Weapon: id, Scripted: true,
			Origin: geom.V(0, 20, 0), Dir: geom.V(0, 0.3, 1)}) // high above the arena: it hits nothing
		for step := range 6 {
			sim.Step()
			tick := sim.Now() - 1
			room.buildWorld(tick)
			if len(room.world.Objects) != 1 {
				t.Fatalf("%s: %d objects", name, len(room.world.Objects))
			}
			o := room.world.Objects[0]
			st := o.State
			n := float64(int64(tick) - int64(st.Start) + 1)
			dt := 1 / float64(room.cfg.TickRate)
			p := protocol.VecValue
			want := p(st.Pos).AddScaled(p(st.Vel), n*dt).Sub(geom.V(0, def.Gravity*dt*dt*n*(n+1)/2, 0))
			var e ecs.Entity
			q := room.projectiles.Query(sim.World)
			for q.Next() {
				e = q.Entity()
			}
			tf, pr := tfs.Get(e)
			if d := tf.Pos.Sub(want).Len(); d > 0.05 {
				t.Errorf("%s, step %d (%d steps taken): the formula puts it at %v, the server at %v", name, step, pr.Steps, want, tf.Pos)
			}
			if step == 0 && name == "needle" && pr.Steps != 4 {
				t.Errorf("the needle took %d steps in its first tick, want 4 (view times 6.5 to 9.5)", pr.Steps)
			}
		}
		// Remove it before the next weapon.
		q := room.projectiles.Query(sim.World)
		var es []ecs.Entity
		for q.Next() {
			es = append(es, q.Entity())
		}
		for _, e := range es {
			sim.Despawn(e)
		}
	}
}

func sysPlayer(team uint8) systems.PlayerSpec {
	return systems.PlayerSpec{Team: team, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8}}
}
