package chainlightning_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/bots"
	"github.com/rewind-gg/rewind/client"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/examples/chainlightning"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/systems"
	"github.com/rewind-gg/rewind/weapons"
)

func room(t *testing.T, window int) *systems.Simulation {
	t.Helper()
	reg := weapons.NewRegistry()
	if err := chainlightning.Register(reg); err != nil {
		t.Fatal(err)
	}
	file, err := weapons.Load("weapons.toml", reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := systems.DefaultConfig()
	cfg.Kinds, cfg.Weapons, cfg.Classes = reg, file.Weapons, file.Classes
	cfg.LagComp.WindowTicks = window
	sim, err := systems.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sim
}

// Three enemies run along +X, 4 m apart, 10 m in front of a shooter who sees
// them 5 ticks late. The bolt, aimed where the shooter sees the first,
// strikes it and jumps to the other two where the shooter saw them, each
// jump at half the damage. Without lag compensation the bolt strikes nothing.
func TestChainStrikesWhereTheShooterSaw(t *testing.T) {
	for _, window := range []int{30, 0} {
		sim := room(t, window)
		hb := ecs.Hitbox{Radius: 0.4, Height: 1.8}
		loadout, _ := sim.Catalog.Loadout("stormcaller")
		shooter := sim.SpawnPlayer(systems.PlayerSpec{Team: 1, Hitbox: hb, Loadout: loadout, Pos: geom.V(5, 0, 0)})
		lag := generic.NewMap[ecs.ViewLag](sim.World)
		lag.Get(shooter).Ticks = 5
		pos := generic.NewMap[ecs.Transform](sim.World)
		var runners []ecs.Entity
		for i := range 3 {
			runners = append(runners, sim.SpawnPlayer(systems.PlayerSpec{Team: 2, Hitbox: hb, Health: 100, Pos: geom.V(float64(4*i), 0, 10)}))
		}
		zapper, _ := sim.Catalog.Lookup("zapper")
		var events []ecs.ShotEvent
		for tick := int64(0); tick <= 10; tick++ {
			for i, r := range runners {
				pos.Get(r).Pos.X = float64(4*i) + float64(tick)*0.5 // 10 m/s
			}
			if tick == 10 { // the shooter sees tick 5: the first runner at x=2.5
				sim.Commands.Fire = append(sim.Commands.Fire, ecs.FireCommand{Shooter: shooter, Weapon: zapper, Shot: 1,
					Origin: geom.V(5, 1.6, 0), Dir: geom.V(2.5, 1.0, 10).Sub(geom.V(5, 1.6, 0)).Normalize()})
			}
			sim.Step()
			events = append(events, sim.Events.Shots...)
		}
		if window == 0 {
			for _, ev := range events {
				if ev.Result == ecs.ResultHit {
					t.Errorf("without lag compensation the bolt struck %v", ev.Target)
				}
			}
			continue
		}
		if len(events) != 3 {
			t.Fatalf("events %+v, want three strikes", events)
		}
		damage := map[ecs.Entity]float64{}
		for _, ev := range events {
			if ev.Result != ecs.ResultHit || ev.ViewTime != (ecs.ViewTime{Tick: 5}) {
				t.Errorf("event %+v", ev)
			}
			damage[ev.Target] = ev.Damage
		}
		for i, want := range []float64{40, 20, 10} {
			if damage[runners[i]] != want {
				t.Errorf("runner %d took %v, want %v", i, damage[runners[i]], want)
			}
		}
		if st := sim.Stats(); st.Rewinds != 1 {
			t.Errorf("%d rewinds: the bolt and its jumps take one", st.Rewinds)
		}
	}
}

// The kind's params are validated like any field.
func TestParamsAreValidated(t *testing.T) {
	reg := weapons.NewRegistry()
	if err := chainlightning.Register(reg); err != nil {
		t.Fatal(err)
	}
	bad := "[[weapons]]\nname = \"zapper\"\nkind = \"chain_lightning\"\nrange = 50.0\nparams = { jumps = 20 }\n"
	if _, err := weapons.Parse([]byte(bad), "w.toml", reg); err == nil || !strings.Contains(err.Error(), "w.toml: zapper.params.jumps: 20 is outside 0..8") {
		t.Errorf("got %v", err)
	}
	typo := "[[weapons]]\nname = \"zapper\"\nkind = \"chain_lightning\"\nrange = 50.0\nparams = { jump = 2 }\n"
	if _, err := weapons.Parse([]byte(typo), "w.toml", reg); err == nil || !strings.Contains(err.Error(), "zapper.params.jump: unknown field") {
		t.Errorf("got %v", err)
	}
	// Without the registration the kind is unknown.
	if _, err := weapons.Load("weapons.toml", weapons.NewRegistry()); err == nil || !strings.Contains(err.Error(), `zapper.kind: unknown kind "chain_lightning"`) {
		t.Errorf("got %v", err)
	}
}

// The server of docs/weapons.md: the kind registered in cfg.Kinds, the
// weapons file that uses it, and a client that joins the class carrying it.
func TestServesTheKind(t *testing.T) {
	reg := weapons.NewRegistry()
	if err := chainlightning.Register(reg); err != nil {
		t.Fatal(err)
	}
	cfg := server.DefaultConfig()
	cfg.Listen, cfg.Admin.Listen = "127.0.0.1:0", ""
	cfg.Kinds, cfg.WeaponsFile = reg, "weapons.toml"
	srv, err := server.New(cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, client.Config{Addr: srv.Addr().String(), Room: "storm", Name: "zed", Class: "stormcaller", ServerCertSHA256: srv.CertSHA256(),
		Input: bots.NewBot(bots.BotConfig{})})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := c.Welcome()
	if w.Class != "stormcaller" || len(w.Loadout) != 2 || w.Weapons[w.Loadout[0]].Kind != chainlightning.Kind {
		t.Errorf("welcome: class %q, loadout %v, weapons %+v", w.Class, w.Loadout, w.Weapons)
	}
	// Without the registration the server refuses the weapons file.
	cfg.Kinds = nil
	if _, err := server.New(cfg, zerolog.Nop()); err == nil || !strings.Contains(err.Error(), `unknown kind "chain_lightning"`) {
		t.Errorf("without the kind: %v", err)
	}
}
