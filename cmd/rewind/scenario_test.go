package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const rocketLead = "../../examples/scenarios/rocket-lead.json"

type output struct {
	Events []struct {
		Shot     int      `json:"shot"`
		Result   string   `json:"result"`
		Target   string   `json:"target"`
		By       string   `json:"by"`
		Tick     int      `json:"tick"`
		ViewTime *float64 `json:"view_time"`
	} `json:"events"`
	Stats struct {
		Ticks, Rewinds, MaxBucketsPerTick, LagCompensatedItems int
	} `json:"stats"`
}

func decode(t *testing.T, s string) output {
	t.Helper()
	var o output
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&o); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, s)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value:\n%s", s)
	}
	return o
}

// The seed's picture: the rocket fired at tick 30 hits at tick 33 because
// the target is rewound; with a window of 0 the same shot misses.
func TestRocketLeadExample(t *testing.T) {
	code, stdout, stderr := runCmd(t, "scenario", rocketLead)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	o := decode(t, stdout)
	if len(o.Events) != 1 || o.Events[0].Result != "hit" || o.Events[0].Target != "blue1" || o.Events[0].Tick != 33 || *o.Events[0].ViewTime != 29.5 {
		t.Errorf("lag-compensated rocket: %s", stdout)
	}
	for _, args := range [][]string{
		{"scenario", rocketLead, "--window", "0"},
		{"scenario", "--window=0", rocketLead},
		{"scenario", "../../examples/scenarios/rocket-lead-window0.json"},
	} {
		code, stdout, _ := runCmd(t, args...)
		o := decode(t, stdout)
		if code != 0 || len(o.Events) != 1 || o.Events[0].Result != "miss" {
			t.Errorf("%v: exit %d, %s", args, code, stdout)
		}
	}
}

func TestFlagsOverrideTheFile(t *testing.T) {
	_, stdout, _ := runCmd(t, "scenario", rocketLead)
	on := decode(t, stdout)
	code, stdout, _ := runCmd(t, "scenario", rocketLead, "--no-buckets")
	off := decode(t, stdout)
	if code != 0 || off.Stats != on.Stats || len(off.Events) != 1 {
		t.Errorf("one rocket: bucketing makes no difference, got %+v vs %+v", off.Stats, on.Stats)
	}
	code, stdout, _ = runCmd(t, "scenario", rocketLead, "--resolution", "1")
	o := decode(t, stdout)
	if code != 0 || *o.Events[0].ViewTime != 30 {
		t.Errorf("--resolution 1 rounds 29.5 up to 30: %s", stdout)
	}
}

var update = flag.Bool("update", false, "rewrite the examples' expected outputs")

// TestEveryExampleRuns runs every shipped example, with and without
// bucketing, and compares the output with examples/scenarios/expected/.
// After an intended change: go test ./cmd/rewind -run Example -update
func TestEveryExampleRuns(t *testing.T) {
	files, _ := filepath.Glob("../../examples/scenarios/*.json")
	if len(files) < 5 {
		t.Fatalf("only %d examples", len(files))
	}
	for _, f := range files {
		golden := filepath.Join(filepath.Dir(f), "expected", filepath.Base(f))
		var bucketed string
		for _, extra := range [][]string{nil, {"--no-buckets"}} {
			code, stdout, stderr := runCmd(t, append([]string{"scenario", f}, extra...)...)
			if code != 0 || stderr != "" {
				t.Errorf("%s %v: exit %d, stderr %q", f, extra, code, stderr)
				continue
			}
			if o := decode(t, stdout); len(o.Events) == 0 {
				t.Errorf("%s: no events", f)
			}
			if extra != nil {
				on, off := decode(t, bucketed), decode(t, stdout)
				if !equalEvents(on, off) {
					t.Errorf("%s: events depend on bucketing", f)
				}
				if off.Stats.Rewinds < on.Stats.Rewinds {
					t.Errorf("%s: per-item rewinds %d < bucketed %d", f, off.Stats.Rewinds, on.Stats.Rewinds)
				}
				continue
			}
			bucketed = stdout
			if *update {
				if err := os.WriteFile(golden, []byte(stdout), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if stdout != string(want) {
				t.Errorf("%s: output differs from %s:\n%s", f, golden, stdout)
			}
		}
	}
}

func equalEvents(a, b output) bool {
	ja, _ := json.Marshal(a.Events)
	jb, _ := json.Marshal(b.Events)
	return string(ja) == string(jb)
}

// An invalid scenario exits 2 with one line on stderr naming the field and
// prints nothing on stdout.
func TestInvalidScenarioExitsTwo(t *testing.T) {
	good, err := os.ReadFile(rocketLead)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args func(t *testing.T) []string
		want string
	}{
		{"unknown weapon", func(t *testing.T) []string {
			return []string{"scenario", writeFile(t, "s.json", strings.Replace(string(good), `"weapon": "rocket"`, `"weapon": "rockt"`, 1))}
		}, `scenario: shots[0].weapon: unknown weapon "rockt"`},
		{"missing field", func(t *testing.T) []string {
			return []string{"scenario", writeFile(t, "s.json", strings.Replace(string(good), `"speed": 20, `, ``, 1))}
		}, "scenario: weapons.rocket.speed: missing field"},
		{"wrong type", func(t *testing.T) []string {
			return []string{"scenario", writeFile(t, "s.json", strings.Replace(string(good), `"ticks": 80`, `"ticks": "80"`, 1))}
		}, `scenario: ticks: expected a number, got "80"`},
		{"bad JSON", func(t *testing.T) []string {
			return []string{"scenario", writeFile(t, "s.json", "{\n  \"ticks\": 80,\n  \"entities\": [}\n")}
		}, "scenario: invalid JSON at line 3, column 16: invalid character '}' looking for beginning of value"},
		{"no such file", func(t *testing.T) []string { return []string{"scenario", "/nonexistent/s.json"} },
			"scenario: open /nonexistent/s.json: no such file or directory"},
		{"no file", func(t *testing.T) []string { return []string{"scenario"} },
			"scenario: expected one argument, the scenario file (rewind scenario FILE.json)"},
		{"bad window", func(t *testing.T) []string { return []string{"scenario", rocketLead, "--window", "-1"} },
			`scenario: invalid argument "-1" for "--window" flag: "-1" is negative`},
		{"bad flag value", func(t *testing.T) []string { return []string{"scenario", rocketLead, "--window", "x"} },
			`scenario: invalid argument "x" for "--window" flag: "x" is neither a duration such as "750ms" nor a number of ticks`},
		{"window too long", func(t *testing.T) []string { return []string{"scenario", rocketLead, "--window", "2000"} },
			"scenario: --window: 2000 ticks (1m40s at 20 Hz) is outside 0..1024 ticks"},
		{"unknown flag", func(t *testing.T) []string { return []string{"scenario", rocketLead, "--windows", "3"} },
			"scenario: unknown flag: --windows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, tt.args(t)...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if stdout != "" {
				t.Errorf("stdout not empty: %q", stdout)
			}
			if stderr != tt.want+"\n" {
				t.Errorf("stderr %q, want %q", stderr, tt.want+"\n")
			}
		})
	}
}

func TestUnknownCommand(t *testing.T) {
	code, stdout, stderr := runCmd(t, "scenari")
	if code != 2 || stdout != "" || !strings.Contains(stderr, `unknown command "scenari"`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
