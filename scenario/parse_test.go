package scenario

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/ticks"
)

func assertInvalid(t *testing.T, sc M, want string) {
	t.Helper()
	data, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	assertInvalidJSON(t, string(data), want)
}

func assertInvalidJSON(t *testing.T, data, want string) {
	t.Helper()
	_, err := Parse([]byte(data))
	if err == nil {
		t.Errorf("accepted, want %q", want)
		return
	}
	var se *Error
	if !errors.As(err, &se) {
		t.Errorf("error %v is not a *scenario.Error", err)
	}
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error spans lines: %q", err)
	}
}

func valid() M {
	return base(20, []any{player("red", 2, 1, at(0, 0, 0, 0)), player("blue", 1, 0, at(0, 0, 0, 10)),
		box("wall", "static", v(0, 0, 0), v(1, 1, 1))},
		shot(1, "red", "rifle", v(0, 1, 0), v(0, 0, 1)))
}

func TestValidScenarioParses(t *testing.T) {
	sc := parseMap(t, valid())
	if sc.TickRate != 20 || sc.Ticks != 20 || len(sc.Entities) != 3 || len(sc.Shots) != 1 || len(sc.Weapons) != 5 {
		t.Errorf("parsed %+v", sc)
	}
	if sc.LagComp != (LagComp{WindowTicks: 30, ViewResolution: 0, Bucketing: true}) {
		t.Errorf("lagcomp defaults %+v", sc.LagComp)
	}
	if e := sc.Entities[0]; e.Kind != KindPlayer || e.Radius != 0.4 || e.Height != 1.8 {
		t.Errorf("player defaults %+v", e)
	}
}

// Each case changes a valid scenario and names the error it must give.
func TestInvalidScenariosNameTheField(t *testing.T) {
	tests := []struct {
		name   string
		change func(M)
		want   string
	}{
		{"unknown weapon", func(s M) { s["shots"].([]any)[0].(M)["weapon"] = "rockt" }, `shots[0].weapon: unknown weapon "rockt"`},
		{"missing ticks", func(s M) { delete(s, "ticks") }, "ticks: missing field"},
		{"missing entities", func(s M) { delete(s, "entities") }, "entities: missing field"},
		{"ticks wrong type", func(s M) { s["ticks"] = "120" }, `ticks: expected a number, got "120"`},
		{"ticks fractional", func(s M) { s["ticks"] = 12.5 }, "ticks: expected a whole number, got 12.5"},
		{"ticks zero", func(s M) { s["ticks"] = 0 }, "ticks: 0 is outside 1..1000000"},
		{"tick rate", func(s M) { s["tick_rate"] = 0 }, "tick_rate: 0 is outside 1..1000"},
		{"window type", func(s M) { s["lagcomp"] = M{"window_ticks": true} }, "lagcomp.window_ticks: expected a number, got a boolean"},
		{"window negative", func(s M) { s["lagcomp"] = M{"window_ticks": -1} }, "lagcomp.window_ticks: -1 is outside 0..1024"},
		{"resolution", func(s M) { s["lagcomp"] = M{"view_resolution": 0.5} }, "lagcomp.view_resolution: expected a whole number, got 0.5"},
		{"bucketing type", func(s M) { s["lagcomp"] = M{"bucketing": "yes"} }, `lagcomp.bucketing: expected true or false, got "yes"`},
		{"lagcomp unknown", func(s M) { s["lagcomp"] = M{"window": 3} }, "lagcomp.window: unknown field"},
		{"lagcomp type", func(s M) { s["lagcomp"] = []any{} }, "lagcomp: expected an object, got an array"},
		{"friendly fire", func(s M) { s["friendly_fire"] = 1 }, "friendly_fire: expected true or false, got the number 1"},
		{"top-level unknown", func(s M) { s["tickrate"] = 20 }, "tickrate: unknown field"},
		{"weapon kind", func(s M) { s["weapons"].(M)["rifle"] = M{"kind": "laser", "range": 1} }, `weapons.rifle.kind: unknown kind "laser" (known: hitscan, projectile, melee, placeable)`},
		{"weapon kind missing", func(s M) { s["weapons"].(M)["rifle"] = M{"range": 1} }, "weapons.rifle.kind: missing field"},
		{"hitscan range missing", func(s M) { s["weapons"].(M)["rifle"] = M{"kind": "hitscan"} }, "weapons.rifle.range: missing field"},
		{"hitscan range zero", func(s M) { s["weapons"].(M)["rifle"] = M{"kind": "hitscan", "range": 0} }, "weapons.rifle.range: must be a positive number, got 0"},
		{"projectile speed missing", func(s M) {
			s["weapons"].(M)["rocket"] = M{"kind": "projectile", "radius": 0.1, "lifetime_ticks": 4}
		}, "weapons.rocket.speed: missing field"},
		{"projectile lifetime", func(s M) {
			s["weapons"].(M)["rocket"] = M{"kind": "projectile", "speed": 1, "radius": 0.1, "lifetime_ticks": 0}
		}, "weapons.rocket.lifetime_ticks: 0 is outside 1..65535"},
		{"projectile field of another kind", func(s M) {
			s["weapons"].(M)["rocket"] = M{"kind": "projectile", "speed": 1, "radius": 0.1, "lifetime_ticks": 4, "range": 3}
		}, "weapons.rocket.range: unknown field"},
		{"melee radius", func(s M) { s["weapons"].(M)["bite"] = M{"kind": "melee", "reach": 1, "radius": -1} }, "weapons.bite.radius: must be a positive number, got -1"},
		{"weapon not an object", func(s M) { s["weapons"].(M)["bite"] = 3 }, "weapons.bite: expected an object, got the number 3"},
		{"entity id missing", func(s M) { delete(s["entities"].([]any)[1].(M), "id") }, "entities[1].id: missing field"},
		{"entity id duplicate", func(s M) { s["entities"].([]any)[1].(M)["id"] = "red" }, `entities[1].id: duplicate id "red"`},
		{"entity kind", func(s M) { s["entities"].([]any)[1].(M)["kind"] = "npc" }, `entities[1].kind: unknown kind "npc" (known: player, static, shield)`},
		{"team missing", func(s M) { delete(s["entities"].([]any)[0].(M), "team") }, "entities[0].team: missing field"},
		{"team type", func(s M) { s["entities"].([]any)[0].(M)["team"] = "red" }, `entities[0].team: expected a number, got "red"`},
		{"negative delay", func(s M) { s["entities"].([]any)[0].(M)["view_delay_ticks"] = -1 }, "entities[0].view_delay_ticks: -1 is outside 0..1000000"},
		{"path missing", func(s M) { delete(s["entities"].([]any)[0].(M), "path") }, "entities[0].path: missing field"},
		{"path empty", func(s M) { s["entities"].([]any)[0].(M)["path"] = []any{} }, "entities[0].path: needs at least one keyframe"},
		{"path order", func(s M) {
			s["entities"].([]any)[0].(M)["path"] = []any{at(5, 0, 0, 0), at(5, 1, 0, 0)}
		}, "entities[0].path[1].tick: 5 is not after the previous keyframe's tick 5"},
		{"pos short", func(s M) {
			s["entities"].([]any)[0].(M)["path"] = []any{M{"tick": 0, "pos": []float64{1, 2}}}
		}, "entities[0].path[0].pos: expected [x, y, z], got an array"},
		{"pos element", func(s M) {
			s["entities"].([]any)[0].(M)["path"] = []any{M{"tick": 0, "pos": []any{1, "2", 3}}}
		}, `entities[0].path[0].pos[1]: expected a number, got "2"`},
		{"capsule", func(s M) { s["entities"].([]any)[0].(M)["capsule"] = M{"radius": 1, "height": 1} }, "entities[0].capsule.height: 1 must be at least twice the radius (1) and at most 1000"},
		{"player with box", func(s M) { s["entities"].([]any)[0].(M)["box"] = M{} }, "entities[0].box: unknown field"},
		{"static without box", func(s M) { delete(s["entities"].([]any)[2].(M), "box") }, "entities[2].box: missing field"},
		{"box inverted", func(s M) {
			s["entities"].([]any)[2].(M)["box"] = M{"min": v(0, 0, 2), "max": v(1, 1, 1)}
		}, "entities[2].box.max: {1 1 1} is below min {0 0 2} on some axis"},
		{"shield despawn", func(s M) {
			sh := box("sh", "shield", v(0, 0, 0), v(1, 1, 1))
			sh["spawn_tick"], sh["despawn_tick"] = 5, 5
			s["entities"] = append(s["entities"].([]any), sh)
		}, "entities[3].despawn_tick: 5 is not after spawn_tick 5"},
		{"shot shooter unknown", func(s M) { s["shots"].([]any)[0].(M)["shooter"] = "nobody" }, `shots[0].shooter: unknown entity "nobody"`},
		{"shot shooter static", func(s M) { s["shots"].([]any)[0].(M)["shooter"] = "wall" }, `shots[0].shooter: "wall" is a static, not a player`},
		{"shot dir zero", func(s M) { s["shots"].([]any)[0].(M)["dir"] = v(0, 0, 0) }, "shots[0].dir: must not be [0, 0, 0]"},
		{"shot origin missing", func(s M) { delete(s["shots"].([]any)[0].(M), "origin") }, "shots[0].origin: missing field"},
		{"shot unknown field", func(s M) { s["shots"].([]any)[0].(M)["power"] = 3 }, "shots[0].power: unknown field"},
		{"shots not array", func(s M) { s["shots"] = M{} }, "shots: expected an array, got an object"},
		{"shot not object", func(s M) { s["shots"] = []any{3} }, "shots[0]: expected an object, got the number 3"},
		{"huge coordinate", func(s M) { s["shots"].([]any)[0].(M)["origin"] = v(0, 2e6, 0) }, "shots[0].origin[1]: 2e+06 is outside ±1e+06 metres"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := valid()
			tt.change(sc)
			assertInvalid(t, sc, tt.want)
		})
	}
}

func TestMalformedJSON(t *testing.T) {
	tests := []struct{ data, want string }{
		{`{"ticks": 10,` + "\n" + ` "entities": [,]}`, "invalid JSON at line 2, column 15: invalid character ',' looking for beginning of value"},
		{`{"ticks": 10`, "invalid JSON: unexpected end of input"},
		{``, "invalid JSON: unexpected end of input"},
		{`[1, 2]`, "expected a JSON object at the top level"},
		{`{"ticks": 10, "entities": []} {}`, "invalid JSON at line 1, column 32: data after the scenario object"},
		{`{"ticks": 1e400, "entities": []}`, "ticks: 1e400 is not a usable number"},
	}
	for _, tt := range tests {
		assertInvalidJSON(t, tt.data, tt.want)
	}
}

func TestOverrides(t *testing.T) {
	sc := parseMap(t, valid())
	w, r := ticks.Span{N: 0, InTicks: true}, 4
	if err := (Overrides{Window: &w, ViewResolution: &r, NoBuckets: true}).Apply(sc); err != nil {
		t.Fatal(err)
	}
	if sc.LagComp != (LagComp{WindowTicks: 0, ViewResolution: 4, Bucketing: false}) {
		t.Errorf("after overrides: %+v", sc.LagComp)
	}
	// A duration is rounded up to whole ticks at the scenario's 20 Hz.
	for in, want := range map[string]int{"120ms": 3, "1s": 20, "7": 7} {
		sp, _ := ticks.Parse(in)
		if err := (Overrides{Window: &sp}).Apply(sc); err != nil || sc.LagComp.WindowTicks != want {
			t.Errorf("--window %s: %d ticks, %v; want %d", in, sc.LagComp.WindowTicks, err, want)
		}
	}
	for in, want := range map[string]string{"2.5": "--window: 2.5 ticks is not a whole number of ticks",
		"1m": "--window: 1m0s (1200 ticks at 20 Hz) is outside 0..1024 ticks", "2000": "--window: 2000 ticks (1m40s at 20 Hz) is outside 0..1024 ticks"} {
		sp, _ := ticks.Parse(in)
		if err := (Overrides{Window: &sp}).Apply(sc); err == nil || err.Error() != want {
			t.Errorf("--window %s: %v, want %s", in, err, want)
		}
	}
	bad := -3
	if err := (Overrides{ViewResolution: &bad}).Apply(sc); err == nil || err.Error() != "--resolution: -3 is outside 0..65536" {
		t.Errorf("bad resolution: %v", err)
	}
}
