package server

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/ticks"
	"github.com/rewind-gg/rewind/weapons"
)

func writeConfig(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func flags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	d := DefaultConfig()
	fs.String("listen", d.Listen, "")
	fs.Int("tick-rate", d.TickRate, "")
	fs.Var(&ticks.Span{D: d.LagComp.Window}, "window", "")
	fs.Bool("no-buckets", false, "")
	fs.String("log-level", d.Log.Level, "")
	fs.String("level", "", "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestDefaultsAreValid(t *testing.T) {
	cfg, _, err := LoadConfig("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := DefaultConfig()
	if cfg.Listen != d.Listen || cfg.TickRate != 20 || cfg.WeaponsFile != "" || len(cfg.Arena.Boxes) != 4 || !cfg.LagComp.Bucketing {
		t.Errorf("loaded defaults differ: %+v", cfg)
	}
}

// Each layer overrides the one before: defaults, file, environment, flags.
func TestConfigLayers(t *testing.T) {
	toml := writeConfig(t, "rewind.toml", `
tick_rate = 30
snapshot_rate = 15
idle_timeout = "20s"

[lagcomp]
window_ticks = 12
view_resolution = 4

[match]
friendly_fire = true
`)
	cfg, warnings, err := LoadConfig(toml, []string{"REWIND_LAGCOMP__WINDOW_TICKS=8", "REWIND_MAX_PLAYERS=4", "HOME=/root"},
		flags(t, "--window", "5", "--no-buckets"))
	if len(warnings) != 0 {
		t.Errorf("warnings %q", warnings)
	}
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TickRate != 30 || cfg.SnapshotRate != 15 || cfg.IdleTimeout.String() != "20s" {
		t.Errorf("from the file: %d %d %v", cfg.TickRate, cfg.SnapshotRate, cfg.IdleTimeout)
	}
	if cfg.LagComp.ViewResolution != 4 || !cfg.Match.FriendlyFire {
		t.Errorf("file sections: %+v %+v", cfg.LagComp, cfg.Match)
	}
	if cfg.MaxPlayers != 4 {
		t.Errorf("environment: max_players %d", cfg.MaxPlayers)
	}
	if cfg.LagComp.WindowTicks != 5 || cfg.LagComp.Bucketing {
		t.Errorf("flags over environment over file: %+v", cfg.LagComp)
	}
	if cfg.Listen != DefaultConfig().Listen {
		t.Errorf("unset keys keep their defaults: %q", cfg.Listen)
	}
}

func TestConfigYAML(t *testing.T) {
	y := writeConfig(t, "rewind.yaml", "tick_rate: 60\nsnapshot_rate: 20\nlagcomp:\n  window_ticks: 40\narena:\n  size: 80\n  boxes:\n    - {min: [0, 0, 0], max: [1, 2, 1]}\n")
	cfg, _, err := LoadConfig(y, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TickRate != 60 || cfg.LagComp.WindowTicks != 40 || cfg.Arena.Size != 80 || len(cfg.Arena.Boxes) != 1 || cfg.Arena.Boxes[0].Max[1] != 2 {
		t.Errorf("yaml: %+v", cfg)
	}
}

// A bad config names the key at fault.
func TestBadConfigNamesTheKey(t *testing.T) {
	tests := []struct {
		name, file, body string
		env              []string
		want             string
	}{
		{"unknown key", "c.toml", "[lagcomp]\nwindow_seconds = 3\n", nil, `unknown key "lagcomp.window_seconds"`},
		{"unknown top-level key", "c.toml", "tickrate = 3\n", nil, `unknown key "tickrate"`},
		{"wrong type", "c.toml", "tick_rate = \"fast\"\n", nil, "tick_rate"},
		{"fraction for an integer", "c.toml", "tick_rate = 30.9\n", nil, "tick_rate"},
		{"infinity for an integer", "c.toml", "max_rooms = inf\n", nil, "max_rooms"},
		{"huge for an integer", "c.toml", "[limits]\nplayers_per_source = 1e19\n", nil, "limits.players_per_source"},
		{"infinity for a number", "c.toml", "[lagcomp]\ncell_size = inf\n", nil, "lagcomp.cell_size"},
		{"no empty timeout", "c.toml", "[match]\nempty_timeout = \"0s\"\n", nil, "config: match.empty_timeout: 0s must be positive"},
		{"no unplayed timeout", "c.toml", "[match]\nunplayed_timeout = \"0s\"\n", nil, "config: match.unplayed_timeout: 0s must be positive"},
		{"input coverage", "c.toml", "input_coverage = 0.95\n", nil, "config: input_coverage: 0.95 is outside 0..0.9"},
		{"negative input coverage", "c.toml", "input_coverage = -0.1\n", nil, "config: input_coverage: -0.1 is outside"},
		{"input coverage window", "c.toml", "input_coverage_window = \"500ms\"\n", nil, "config: input_coverage_window: 500ms is outside 1s..10m"},
		{"rooms per source", "c.toml", "[limits]\nrooms_per_source = 0\n", nil, "config: limits.rooms_per_source: 0 is below 1"},
		{"number for a duration", "c.toml", "idle_timeout = 10\n", nil, "idle_timeout"},
		{"string for a bool", "c.toml", "[match]\nfriendly_fire = \"yes\"\n", nil, "match.friendly_fire"},
		{"quoted number in YAML", "c.yaml", "tick_rate: \"30\"\n", nil, "tick_rate"},
		{"number for a string", "c.toml", "listen = 4433\n", nil, "listen"},
		{"env bool", "", "", []string{"REWIND_MATCH__FRIENDLY_FIRE=sure"}, "REWIND_MATCH__FRIENDLY_FIRE"},
		{"env list of tables", "", "", []string{"REWIND_ARENA__BOXES=[]"}, "arena.boxes is set in a file"},
		{"open mode in public", "c.toml", "listen = \"0.0.0.0:4433\"\n", nil, "config: auth: no public_keys: open development mode"},
		{"rooms", "c.toml", "[auth]\nrooms = \"anyone\"\n", nil, "config: auth.rooms"},
		{"agones mode", "c.toml", "[agones]\nmode = \"maybe\"\n", nil, "config: agones.mode"},
		{"agones matches", "c.toml", "[agones]\nmatches = \"many\"\n", nil, "config: agones.matches: \"many\" is not annotation or list"},
		{"agones annotation hosts one", "c.toml", "[agones]\nmax_matches = 4\n", nil, "config: agones.max_matches: 4, but an annotation names one match"},
		{"agones list capacity", "c.toml", "[agones]\nmatches = \"list\"\nmax_matches = 1001\n", nil, "config: agones.max_matches: 1001 is above 1000"},
		{"agones above max_rooms", "c.toml", "max_rooms = 2\n[agones]\nmatches = \"list\"\nmax_matches = 3\n", nil, "config: agones.max_matches: 3 is above max_rooms 2"},
		{"agones one list", "c.toml", "[agones]\nmatches = \"list\"\nmatches_list = \"players\"\n", nil, "config: agones.matches_list: \"players\" is also agones.players_list"},
		{"agones retire", "c.toml", "[agones]\nretire_after = \"-1s\"\n", nil, "config: agones.retire_after: -1s is negative"},
		{"agones one_match removed", "c.toml", "[agones]\none_match = true\n", nil, "agones.one_match: no longer a key: agones.retire_after_matches replaced it"},
		{"limits", "c.toml", "[limits]\nplayers_per_source = 0\n", nil, "config: limits.players_per_source: 0 is below 1"},
		{"max unlag", "c.toml", "[lagcomp]\nmax_unlag = \"3s\"\n", nil, "config: lagcomp.max_unlag: 3s is outside 0..the window"},
		{"bad TOML", "c.toml", "tick_rate = \n", nil, "c.toml"},
		{"unknown format", "c.ini", "x=1\n", nil, "unknown format"},
		{"missing file", "", "", nil, ""},
		{"out of range", "c.toml", "tick_rate = 0\n", nil, "config: tick_rate: 0 is outside 1..1000"},
		{"snapshot rate", "c.toml", "snapshot_rate = 7\n", nil, "config: snapshot_rate: 7 must divide tick_rate 20"},
		{"datagram rate", "c.toml", "max_datagram_rate = 30\n", nil, "config: max_datagram_rate: 30 is below twice tick_rate 20"},
		{"window", "c.toml", "[lagcomp]\nwindow_ticks = -1\n", nil, "config: lagcomp.window_ticks: -1 is outside 0..1024"},
		{"box", "c.toml", "[arena]\nboxes = [{min = [0, 0, 0], max = [1, -1, 1]}]\n", nil, "config: arena.boxes[0]: min"},
		{"log level", "c.toml", "[log]\nlevel = \"loud\"\n", nil, "config: log.level"},
		{"crouch height", "c.toml", "[match]\ncrouch_height = 2.0\n", nil, "config: match.crouch_height: 2 is above height 1.8"},
		{"crouch height low", "c.toml", "[match]\ncrouch_height = 0.5\n", nil, "config: match.crouch_height: 0.5 is below 2×radius + skin (0.81)"},
		{"crouch eye", "c.toml", "[match]\ncrouch_eye_height = 1.2\n", nil, "config: match.crouch_eye_height: 1.2 is above crouch_height 1.1"},
		{"head above the crouched top", "c.toml", "[match]\nhead_height = 1.5\n", nil, "config: match.head_height: 1.5 is outside 0..crouch_height (1.1)"},
		{"arena speed", "c.toml", "[arena]\nspeed = 6.0\n", nil, "config: " + "%s" + ": arena.speed: no longer a key: each class moves at its own speed, movement.run_speed"},
		{"env value", "", "", []string{"REWIND_TICK_RATE=twenty"}, "tick_rate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.file != "" {
				path = writeConfig(t, tt.file, tt.body)
			}
			if tt.name == "missing file" {
				path = "/nonexistent/rewind.toml"
				tt.want = "/nonexistent/rewind.toml"
			}
			_, _, err := LoadConfig(path, tt.env, nil)
			if strings.Contains(tt.want, "%s") {
				tt.want = fmt.Sprintf(tt.want, path)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestFlagsOnlyWhenSet(t *testing.T) {
	toml := writeConfig(t, "c.toml", "tick_rate = 40\nsnapshot_rate = 20\n")
	cfg, _, err := LoadConfig(toml, nil, flags(t)) // --tick-rate not given: the file wins over its default
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TickRate != 40 {
		t.Errorf("an unset flag overrode the file: %d", cfg.TickRate)
	}
}

// examples/rewind.toml documents every key at its default: loading it must
// give exactly the defaults.
func TestExampleConfigIsTheDefaults(t *testing.T) {
	cfg, _, err := LoadConfig("../examples/rewind.toml", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, DefaultConfig()) {
		t.Errorf("examples/rewind.toml differs from the defaults:\n%+v\n%+v", cfg, DefaultConfig())
	}
	// And it lists every key, not only the ones that differ.
	k := koanf.New(".")
	if err := k.Load(file.Provider("../examples/rewind.toml"), toml.Parser()); err != nil {
		t.Fatal(err)
	}
	for key := range defaultMap() {
		if !k.Exists(key) {
			t.Errorf("examples/rewind.toml does not list %s", key)
		}
	}
}

func TestWeaponsFile(t *testing.T) {
	w := writeConfig(t, "weapons.toml", "[[weapons]]\nname = \"railgun\"\nkind = \"hitscan\"\nrange = 300.0\ndamage = 90.0\n")
	c := writeConfig(t, "c.toml", "weapons_file = \""+w+"\"\n")
	cfg, _, err := LoadConfig(c, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := cfg.LoadWeapons()
	if err != nil || len(f.Weapons) != 1 || f.Weapons[0].Name != "railgun" {
		t.Errorf("weapons file: %+v %v", f, err)
	}
	bad := writeConfig(t, "weapons.toml", "[[weapons]]\nname = \"rocket\"\nkind = \"projectile\"\nradius = 0.1\nlifetime_ticks = 3\n")
	c = writeConfig(t, "c.toml", "weapons_file = \""+bad+"\"\n")
	cfg, _, err = LoadConfig(c, nil, nil)
	if err != nil {
		t.Fatal(err) // the weapons file is New's to check
	}
	if _, err := New(cfg, zerolog.Nop()); err == nil || !strings.Contains(err.Error(), "config: weapons_file: "+bad+": rocket.speed: missing field") {
		t.Errorf("a bad weapons file: %v", err)
	}
	cfg.WeaponsFile = "/nonexistent/weapons.toml"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "config: weapons_file: weapons: open /nonexistent/weapons.toml") {
		t.Errorf("a missing weapons file: %v", err)
	}
	// A class's movement against the match's capsule: a step as high as the
	// crouched capsule names the class's key.
	high := writeConfig(t, "weapons.toml", "[[weapons]]\nname = \"gun\"\nkind = \"hitscan\"\nrange = 10.0\n"+
		"[[classes]]\nname = \"hopper\"\nweapons = [\"gun\"]\nmovement = { step_height = 1.0 }\n")
	cfg.WeaponsFile = high
	cfg.Match.CrouchHeight = 0.95
	if err := cfg.Validate(); err == nil || err.Error() != "config: weapons_file: classes[hopper].movement.step_height: 1 is not below crouch_height 0.95" {
		t.Errorf("a class that steps above the crouched capsule: %v", err)
	}
	// Every class moves with the match's capsule; the Welcome carries the
	// class's movement.
	cfg = DefaultConfig()
	cfg.Match.Radius, cfg.Match.CrouchHeight = 0.35, 1.2
	cat, err := cfg.Catalog(weapons.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range cat.Classes() {
		if m := cl.Movement; m.Radius != 0.35 || m.CrouchHeight != 1.2 || m.Height != 1.8 || m.EyeHeight != 1.6 || m.CrouchEyeHeight != 0.9 {
			t.Errorf("class %s moves as %+v", cl.Name, m)
		}
	}
	if r := cat.Classes()[2].Movement; r.RunSpeed != 7 || r.JumpHeight != 1.4 {
		t.Errorf("the raptor moves as %+v", r)
	}
}

// What the protocol cannot carry is refused when the server is made, naming
// what is too big, instead of being cut short on the wire.
func TestBeyondTheWire(t *testing.T) {
	long := strings.Repeat("r", 33)
	many := strings.Builder{}
	for i := range 256 {
		fmt.Fprintf(&many, "[[weapons]]\nname = \"w%d\"\nkind = \"hitscan\"\nrange = 10.0\n", i)
	}
	glb, err := os.ReadFile("../level/testdata/marked.glb")
	if err != nil {
		t.Fatal(err)
	}
	longLevel := filepath.Join(t.TempDir(), strings.Repeat("m", protocol.MaxLevelNameLen+1)+".glb")
	if err := os.WriteFile(longLevel, glb, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, weapons, level string
		want                 string
	}{
		{"weapon name", "[[weapons]]\nname = \"" + long + "\"\nkind = \"hitscan\"\nrange = 10.0\n", "",
			"config: weapons_file: " + long + ": the name is 33 bytes, the protocol carries at most 32"},
		{"class name", "[[weapons]]\nname = \"rifle\"\nkind = \"hitscan\"\nrange = 10.0\n[[classes]]\nname = \"" + long + "\"\nweapons = [\"rifle\"]\n", "",
			"config: weapons_file: class " + long + ": the name is 33 bytes, a Join carries at most 32"},
		{"weapon count", many.String(), "", "config: weapons_file: 256 weapons, the protocol carries at most 255"},
		{"level name", "", longLevel, "config: level.file: the level's name \"mmm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tt.weapons != "" {
				cfg.WeaponsFile = writeConfig(t, "weapons.toml", tt.weapons)
			}
			cfg.Level.File = tt.level
			_, err := New(cfg, zerolog.Nop())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// A REWIND_* variable that is no config key (Kubernetes sets REWIND_PORT
// and friends for a Service named rewind) is a warning, not an error; one
// that is a key is parsed as its type.
func TestStrayEnvironmentIsAWarning(t *testing.T) {
	cfg, warnings, err := LoadConfig("", []string{"REWIND_PORT=udp://10.0.0.7:4433", "REWIND_SERVICE_HOST=10.0.0.7",
		"REWIND_TICK_RATE=30", "REWIND_SNAPSHOT_RATE=15", "REWIND_AUTH__PUBLIC_KEYS=a.pub, b.pub", "REWIND_LIMITS__JOINS_PER_SECOND=2.5"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"config: environment: REWIND_PORT is not a config key (ignored)", "config: environment: REWIND_SERVICE_HOST is not a config key (ignored)"}
	if !reflect.DeepEqual(warnings, want) {
		t.Errorf("warnings %q, want %q", warnings, want)
	}
	if cfg.TickRate != 30 || cfg.SnapshotRate != 15 || !reflect.DeepEqual(cfg.Auth.PublicKeys, []string{"a.pub", "b.pub"}) || cfg.Limits.JoinsPerSecond != 2.5 {
		t.Errorf("tick_rate %d, snapshot_rate %d, public_keys %q, joins_per_second %v", cfg.TickRate, cfg.SnapshotRate, cfg.Auth.PublicKeys, cfg.Limits.JoinsPerSecond)
	}
}

// A variable for a key an earlier version had is an error that says what
// replaced it: a deployment's setting must not be dropped silently.
func TestRemovedKeyInTheEnvironment(t *testing.T) {
	_, _, err := LoadConfig("", []string{"REWIND_AGONES__ONE_MATCH=true"}, nil)
	if err == nil || !strings.Contains(err.Error(), "REWIND_AGONES__ONE_MATCH (agones.one_match): no longer a key: agones.retire_after_matches replaced it") {
		t.Errorf("error %v, want one naming the variable and agones.retire_after_matches", err)
	}
}

// A whole number written as a float is that integer; a duration is a string.
func TestWholeFloatsAndDurations(t *testing.T) {
	c := writeConfig(t, "c.toml", "tick_rate = 30.0\nsnapshot_rate = 30\ndrain_timeout = \"5m\"\n[match]\nduration = \"10m\"\n")
	cfg, _, err := LoadConfig(c, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TickRate != 30 || cfg.DrainTimeout != 5*time.Minute || cfg.Match.Duration != 10*time.Minute {
		t.Errorf("%d %v %v", cfg.TickRate, cfg.DrainTimeout, cfg.Match.Duration)
	}
}

// --print-config prints every key at its effective value: loading what it
// prints gives the same configuration.
func TestPrintedConfigLoadsBack(t *testing.T) {
	c := writeConfig(t, "c.toml", "tick_rate = 40\nsnapshot_rate = 20\n[lagcomp]\nmax_unlag = \"500ms\"\n[auth]\npublic_keys = [\"k.pub\"]\nrooms = \"operator\"\n[results]\nfile = \"r.jsonl\"\n")
	cfg, _, err := LoadConfig(c, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cfg.TOML()
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := LoadConfig(writeConfig(t, "printed.toml", string(out)), nil, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !reflect.DeepEqual(again, cfg) {
		t.Errorf("printed and loaded back:\n%+v\nwant\n%+v\n%s", again, cfg, out)
	}
	for _, key := range []string{"max_unlag = '500ms'", "rooms = 'operator'", "[agones]", "drain_timeout"} {
		if !strings.Contains(string(out), key) {
			t.Errorf("the printed config lacks %q:\n%s", key, out)
		}
	}
}

// Open development mode on a public address is refused unless the operator
// opts in by name; with keys it is not open at all.
func TestOpenModeOnAPublicAddress(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Listen = "0.0.0.0:4433"
	if err := cfg.validate(false); err == nil || !strings.Contains(err.Error(), "insecure_open_mode") {
		t.Errorf("open on 0.0.0.0: %v", err)
	}
	cfg.Auth.InsecureOpenMode = true
	if err := cfg.validate(false); err != nil {
		t.Errorf("opted in: %v", err)
	}
	cfg.Auth.InsecureOpenMode = false
	cfg.Auth.PublicKeys = []string{"matchmaker.pub"}
	if err := cfg.validate(false); err != nil || cfg.Open() {
		t.Errorf("with keys: %v, open %v", err, cfg.Open())
	}
	for _, addr := range []string{"127.0.0.1:4433", "[::1]:4433", "localhost:4433"} {
		c := DefaultConfig()
		c.Listen = addr
		if err := c.validate(false); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

func TestMissingPublicKeyNamesTheKey(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Auth.PublicKeys = []string{"/nonexistent/matchmaker.pub"}
	if _, err := New(cfg, zerolog.Nop()); err == nil || !strings.Contains(err.Error(), "config: auth.public_keys[0]:") || !strings.Contains(err.Error(), "/nonexistent/matchmaker.pub") {
		t.Errorf("got %v", err)
	}
	cfg = DefaultConfig()
	parent := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(parent, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Results.File = filepath.Join(parent, "results.jsonl") // its directory cannot be made
	if _, err := New(cfg, zerolog.Nop()); err == nil || !strings.HasPrefix(err.Error(), "config: results.file:") {
		t.Errorf("got %v", err)
	}
}
