package weapons_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/weapons"
)

func TestDefaultFile(t *testing.T) {
	f := weapons.Default()
	cat, err := f.Catalog(weapons.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"rifle", "shotgun", "rocket", "grenade", "needle", "bite", "tail", "shield"} {
		if _, ok := cat.Lookup(name); !ok {
			t.Errorf("no %s in the default weapons", name)
		}
	}
	sg := cat.At(must(cat.Lookup("shotgun")))
	if sg.Pellets != 8 || sg.Falloff.End != 30 || sg.Mode != weapons.ModeShooterTime {
		t.Errorf("shotgun %+v", sg)
	}
	if n := cat.At(must(cat.Lookup("needle"))); n.Mode != weapons.ModeCatchUp {
		t.Errorf("needle mode %q", n.Mode)
	}
	loadout, err := cat.Loadout("raptor")
	if err != nil || len(loadout) != 3 || cat.At(loadout[0]).Name != "bite" {
		t.Errorf("raptor loadout %v %v", loadout, err)
	}
	if def, _ := cat.Loadout(""); cat.At(def[0]).Name != "rifle" {
		t.Errorf("the default class is the first: %v", def)
	}
	if _, err := cat.Loadout("medic"); err == nil || !strings.Contains(err.Error(), `unknown class "medic" (known: assault, breacher, raptor)`) {
		t.Errorf("unknown class: %v", err)
	}
	// A class without a movement table moves as the default character; the
	// raptor's table changes what it sets and nothing else.
	def := movement.DefaultCharacter()
	raptor := def
	raptor.RunSpeed, raptor.SprintSpeed, raptor.CrouchSpeed, raptor.JumpHeight, raptor.Gravity = 7, 9, 2.5, 1.4, 24
	for i, want := range []movement.Character{def, def, raptor} {
		if got := cat.Classes()[i].Movement; got != want {
			t.Errorf("class %s moves as %+v, want %+v", cat.Classes()[i].Name, got, want)
		}
	}
}

// A movement table sets a class's values by movement.Character's keys;
// unset keys keep the default's; code that builds classes without one gets
// the default character.
func TestClassMovement(t *testing.T) {
	body := "[[weapons]]\nname = \"gun\"\nkind = \"hitscan\"\nrange = 10\n" +
		"[[classes]]\nname = \"a\"\nweapons = [\"gun\"]\n" +
		"[[classes]]\nname = \"b\"\nweapons = [\"gun\"]\nmovement = { step_height = 0.3, max_slope = 30, air_accel = 0 }\n"
	f, err := weapons.Parse([]byte(body), "w.toml", weapons.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	want := movement.DefaultCharacter()
	if f.Classes[0].Movement != want {
		t.Errorf("class a: %+v", f.Classes[0].Movement)
	}
	want.StepHeight, want.MaxSlope, want.AirAccel = 0.3, 30, 0
	if f.Classes[1].Movement != want {
		t.Errorf("class b: %+v, want %+v", f.Classes[1].Movement, want)
	}
	cat, err := weapons.NewCatalog(weapons.NewRegistry(), f.Weapons, weapons.Class{Name: "c", Weapons: []string{"gun"}})
	if err != nil || cat.Classes()[0].Movement != movement.DefaultCharacter() {
		t.Errorf("a class made in code: %v %+v", err, cat.Classes())
	}
	bad := weapons.Class{Name: "d", Weapons: []string{"gun"}, Movement: movement.DefaultCharacter()}
	bad.Movement.Gravity = -1
	if _, err := weapons.NewCatalog(weapons.NewRegistry(), f.Weapons, bad); err == nil ||
		err.Error() != "weapons: class d.movement.gravity: must be a positive number, got -1" {
		t.Errorf("a bad class made in code: %v", err)
	}
	if i, err := cat.Class(""); i != 0 || err != nil {
		t.Errorf(`Class(""): %d %v`, i, err)
	}
}

func must(id uint16, ok bool) uint16 {
	if !ok {
		panic("no such weapon")
	}
	return id
}

const validTOML = `
[[weapons]]
name = "carbine"
kind = "hitscan"
damage = 18
range = 80
fire_interval_ticks = 2
magazine = 25
reload_ticks = 30
falloff = { start = 20, end = 60, min = 0.5 }

[[weapons]]
name = "mortar"
kind = "projectile"
speed = 15
gravity = 9.81
radius = 0.2
lifetime_ticks = 60
splash = { radius = 5, damage = 70 }
mode = "catch_up"

[[weapons]]
name = "wall"
kind = "placeable"
size = [6, 3, 0.5]
blocks = "everyone"

[[classes]]
name = "engineer"
weapons = ["carbine", "wall"]
`

const validYAML = `
weapons:
  - name: carbine
    kind: hitscan
    damage: 18
    range: 80
    pellets: 1
  - name: chomp
    kind: melee
    shape: arc
    reach: 2
    angle: 1.2
    windup_ticks: 3
classes:
  - name: beast
    weapons: [chomp]
`

func TestParseValidFiles(t *testing.T) {
	reg := weapons.NewRegistry()
	f, err := weapons.Parse([]byte(validTOML), "w.toml", reg)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Weapons) != 3 || f.Weapons[1].Splash.Radius != 5 || f.Weapons[1].Gravity != 9.81 || f.Weapons[2].Blocks != weapons.BlocksEveryone {
		t.Errorf("toml: %+v", f.Weapons)
	}
	if f.Weapons[0].Pellets != 1 || f.Weapons[0].HeadMultiplier != 1 || f.Weapons[2].MaxActive != 1 {
		t.Errorf("defaults not applied: %+v", f.Weapons)
	}
	y, err := weapons.Parse([]byte(validYAML), "w.yaml", reg)
	if err != nil {
		t.Fatal(err)
	}
	if len(y.Weapons) != 2 || y.Weapons[1].Shape != weapons.ShapeArc || y.Classes[0].Weapons[0] != "chomp" {
		t.Errorf("yaml: %+v", y)
	}
	p := filepath.Join(t.TempDir(), "weapons.yml")
	os.WriteFile(p, []byte(validYAML), 0o644)
	if _, err := weapons.Load(p, reg); err != nil {
		t.Errorf("load: %v", err)
	}
}

// A bad weapons file is refused with the file, the weapon and the field.
func TestBadFilesNameTheField(t *testing.T) {
	w := func(body string) string { return "[[weapons]]\nname = \"gun\"\n" + body }
	tests := []struct {
		name, body, want string
	}{
		{"missing kind", w(`range = 3`), `w.toml: gun.kind: missing field`},
		{"unknown kind", w("kind = \"laser\""), `w.toml: gun.kind: unknown kind "laser" (known: hitscan, projectile, melee, placeable)`},
		{"missing range", w("kind = \"hitscan\""), `w.toml: gun.range: missing field`},
		{"wrong type", w("kind = \"hitscan\"\nrange = \"far\""), `w.toml: gun.range: expected a number, got "far"`},
		{"out of range", w("kind = \"hitscan\"\nrange = 10\npellets = 100"), `w.toml: gun.pellets: 100 is outside 1..64`},
		{"unknown field", w("kind = \"hitscan\"\nrange = 10\nspeed = 3"), `w.toml: gun.speed: unknown field`},
		{"falloff", w("kind = \"hitscan\"\nrange = 10\nfalloff = { start = 5, end = 2, min = 0.5 }"), `w.toml: gun.falloff.end: 2 must be beyond falloff.start 5`},
		{"splash", w("kind = \"projectile\"\nspeed = 1\nradius = 0.1\nlifetime_ticks = 3\nsplash = { radius = -1, damage = 3 }"), `w.toml: gun.splash.radius: must be a positive number, got -1`},
		{"splash field", w("kind = \"projectile\"\nspeed = 1\nradius = 0.1\nlifetime_ticks = 3\nsplash = { radius = 1, damage = 3, falloff = 2 }"), `w.toml: gun.splash.falloff: unknown field`},
		{"mode", w("kind = \"projectile\"\nspeed = 1\nradius = 0.1\nlifetime_ticks = 3\nmode = \"instant\""), `w.toml: gun.mode: "instant" is not one of [shooter_time catch_up]`},
		{"shape", w("kind = \"melee\"\nreach = 1\nshape = \"cone\""), `w.toml: gun.shape: "cone" is not one of [sphere capsule arc]`},
		{"arc angle", w("kind = \"melee\"\nreach = 1\nshape = \"arc\""), `w.toml: gun.angle: 0 is outside 1e-06..3.141592653589793`},
		{"melee radius", w("kind = \"melee\"\nreach = 1"), `w.toml: gun.radius: must be a positive number, got 0`},
		{"size", w("kind = \"placeable\"\nsize = [1, 0, 1]"), `w.toml: gun.size[1]: must be a positive number, got 0`},
		{"streak", w("kind = \"hitscan\"\nrange = 10\nstreak = { hits = 1, window_ticks = 5, bonus = 1 }"), `w.toml: gun.streak.hits: 1 is outside 2..1000`},
		{"duplicate", w("kind = \"hitscan\"\nrange = 10") + "\n" + w("kind = \"hitscan\"\nrange = 10"), `w.toml: weapons[1].name: "gun" is empty or defined twice`},
		{"class weapon", w("kind = \"hitscan\"\nrange = 10") + "\n[[classes]]\nname = \"x\"\nweapons = [\"gun\", \"knife\"]", `w.toml: weapons: class x.weapons[1]: unknown weapon "knife"`},
		{"class size", w("kind = \"hitscan\"\nrange = 10") + "\n[[classes]]\nname = \"x\"\nweapons = []", `w.toml: weapons: class x.weapons: carries 0 weapons, 1..8 allowed`},
		{"movement value", w("kind = \"hitscan\"\nrange = 10") + "\n[[classes]]\nname = \"raptor\"\nweapons = [\"gun\"]\nmovement = { jump_height = -1 }",
			`w.toml: classes[raptor].movement.jump_height: must not be negative, got -1`},
		{"movement relation", w("kind = \"hitscan\"\nrange = 10") + "\n[[classes]]\nname = \"raptor\"\nweapons = [\"gun\"]\nmovement = { run_speed = 9 }",
			`w.toml: classes[raptor].movement.sprint_speed: 7.5 is below run_speed 9`},
		{"movement type", w("kind = \"hitscan\"\nrange = 10") + "\n[[classes]]\nname = \"raptor\"\nweapons = [\"gun\"]\nmovement = { gravity = \"high\" }",
			`w.toml: classes[raptor].movement.gravity: expected a number, got "high"`},
		{"movement key", w("kind = \"hitscan\"\nrange = 10") + "\n[[classes]]\nname = \"raptor\"\nweapons = [\"gun\"]\nmovement = { jump = 2 }",
			`w.toml: classes[raptor].movement.jump: unknown field`},
		{"movement capsule", w("kind = \"hitscan\"\nrange = 10") + "\n[[classes]]\nname = \"raptor\"\nweapons = [\"gun\"]\nmovement = { crouch_height = 1 }",
			`w.toml: classes[raptor].movement.crouch_height: the capsule is the match's, the same for every class (the server's match.crouch_height)`},
		{"movement table", w("kind = \"hitscan\"\nrange = 10") + "\n[[classes]]\nname = \"raptor\"\nweapons = [\"gun\"]\nmovement = 3",
			`w.toml: classes[raptor].movement: expected an object, got the number 3`},
		{"no weapons", "[[classes]]\nname = \"x\"\nweapons = [\"a\"]", `w.toml: weapons: missing field`},
		{"top-level key", w("kind = \"hitscan\"\nrange = 10") + "\n[match]\nx = 1", `w.toml: match: unknown field`},
		{"bad toml", "[[weapons]\n", `w.toml: `},
		{"max_rewind number", w("kind = \"hitscan\"\nrange = 10\nmax_rewind = 3"), `w.toml: gun.max_rewind: expected a duration such as "150ms" (a string), got the number 3`},
		{"max_rewind syntax", w("kind = \"hitscan\"\nrange = 10\nmax_rewind = \"soon\""), `w.toml: gun.max_rewind: "soon" is not a duration such as "150ms"`},
		{"max_rewind negative", w("kind = \"hitscan\"\nrange = 10\nmax_rewind = \"-1s\""), `w.toml: gun.max_rewind: -1s is outside 0..1m0s`},
		{"max_rewind twice", w("kind = \"hitscan\"\nrange = 10\nmax_rewind = \"150ms\"\nmax_rewind_ticks = 3"),
			`w.toml: gun.max_rewind: both max_rewind and max_rewind_ticks are set: give one`},
		{"max_rewind_ticks range", w("kind = \"hitscan\"\nrange = 10\nmax_rewind_ticks = 2000"), `w.toml: gun.max_rewind_ticks: 2000 is outside 0..1024`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := weapons.Parse([]byte(tt.body), "w.toml", weapons.NewRegistry())
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
	if _, err := weapons.Parse([]byte("weapons:\n  - name: x\n    kind: hitscan\n    range: [1]\n"), "w.yaml", weapons.NewRegistry()); err == nil ||
		err.Error() != "w.yaml: x.range: expected a number, got an array" {
		t.Errorf("yaml: %v", err)
	}
	if _, err := weapons.Load("/nonexistent/w.toml", weapons.NewRegistry()); err == nil || !strings.Contains(err.Error(), "/nonexistent/w.toml") {
		t.Errorf("missing file: %v", err)
	}
}

// A weapon's cap is a duration (max_rewind), converted at the room's tick
// rate, or ticks (max_rewind_ticks), the same at every rate.
func TestMaxRewindForms(t *testing.T) {
	f, err := weapons.Parse([]byte(`
[[weapons]]
name = "sniper"
kind = "hitscan"
range = 300
max_rewind = "150ms"

[[weapons]]
name = "rifle"
kind = "hitscan"
range = 100
max_rewind_ticks = 3

[[weapons]]
name = "shotgun"
kind = "hitscan"
range = 30
`), "w.toml", weapons.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[int]float64{ // weapon: tick rate: cap in ticks
		"sniper":  {20: 3, 60: 9, 128: 19.2},
		"rifle":   {20: 3, 60: 3, 128: 3},
		"shotgun": {20: 0, 60: 0, 128: 0},
	}
	for _, d := range f.Weapons {
		for rate, c := range want[d.Name] {
			if got := d.RewindCap(rate); got != c {
				t.Errorf("%s at %d Hz: cap %v ticks, want %v", d.Name, rate, got, c)
			}
			lag, cut := d.Rewind(20, rate)
			if wantCut := c > 0; cut != wantCut || (cut && lag != c) || (!cut && lag != 20) {
				t.Errorf("%s at %d Hz: 20 ticks of lag granted %v (cut %v)", d.Name, rate, lag, cut)
			}
		}
	}
}
