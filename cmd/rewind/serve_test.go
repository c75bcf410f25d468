package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// checkSetup writes a key pair and a config that passes serve --check:
// JSON logs, the key, a results file and a record directory, neither of
// which exists yet. extra is appended to the config (TOML).
func checkSetup(t *testing.T, extra string) (config, dir string) {
	t.Helper()
	dir = t.TempDir()
	if code, out, errs := runCmd(t, "keygen", "--dir", dir, "--name", "mm"); code != 0 {
		t.Fatalf("keygen: %d %s %s", code, out, errs)
	}
	config = filepath.Join(dir, "rewind.toml")
	body := fmt.Sprintf(`listen = "127.0.0.1:0"
%s
[auth]
public_keys = [%q]
[results]
file = %q
[record]
dir = %q
[log]
format = "json"
`, extra, filepath.Join(dir, "mm.pub"), filepath.Join(dir, "out", "results.jsonl"), filepath.Join(dir, "out", "rec"))
	if err := os.WriteFile(config, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return config, dir
}

// withoutRewindEnv unsets, for the test, every REWIND_* variable of the
// test's environment (.ci/run sets REWIND_REQUIRE_BROWSER and others for
// the tests themselves), which serve --check would rightly report as no
// config keys.
func withoutRewindEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		name, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "REWIND_") {
			continue
		}
		t.Setenv(name, v) // restores it when the test ends
		os.Unsetenv(name)
	}
}

// logLines parses a JSON log: every line must be an object.
func logLines(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("a log line that is not JSON (log.format = json): %q", l)
			continue
		}
		lines = append(lines, m)
	}
	return lines
}

// serve --check passes a good configuration and creates nothing: not the
// results file, not the record directory (nor its parent).
func TestServeCheckPasses(t *testing.T) {
	withoutRewindEnv(t)
	config, dir := checkSetup(t, "")
	code, stdout, stderr := runCmd(t, "serve", "--config", config, "--check")
	if code != 0 || stdout != "serve --check: ok\n" || stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("serve --check created %s (%v)", filepath.Join(dir, "out"), err)
	}
}

// serve --check fails, with exit status 2, on each kind of problem the
// server would meet at start, naming the key and the file at fault; on
// several at once it names each.
func TestServeCheckFails(t *testing.T) {
	for _, tt := range []struct {
		name  string
		extra string                         // config keys (top level)
		edit  func(t *testing.T, dir string) // breaks a file or sets the environment
		want  []string                       // in the errors, each
	}{
		{name: "unknown environment variable",
			edit: func(t *testing.T, _ string) { t.Setenv("REWIND_TICK_RAET", "30") },
			want: []string{"config: environment: REWIND_TICK_RAET is not a config key"}},
		{name: "bad value", extra: `tick_rate = 0`, want: []string{"config: tick_rate: 0 is outside 1..1000"}},
		{name: "missing key file",
			edit: func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "mm.pub")) },
			want: []string{"auth.public_keys[0]", "mm.pub"}},
		{name: "bad key file",
			edit: func(t *testing.T, dir string) { os.WriteFile(filepath.Join(dir, "mm.pub"), []byte("not a key"), 0o644) },
			want: []string{"auth.public_keys[0]"}},
		{name: "missing level", extra: `[level]
file = "missing-map.glb"`, want: []string{"level", "missing-map.glb"}},
		{name: "missing weapons file", extra: `weapons_file = "missing-weapons.toml"`,
			want: []string{"weapons_file", "missing-weapons.toml"}},
		{name: "missing TLS files", extra: `[tls]
cert = "missing-cert.pem"
key = "missing-key.pem"`, want: []string{"missing-cert.pem"}},
		{name: "results file not writable",
			edit: func(t *testing.T, dir string) { os.WriteFile(filepath.Join(dir, "out"), nil, 0o644) },
			// out is a file: neither the results file nor the record
			// directory can be made under it.
			want: []string{"config: results.file: RESULTS: OUT is not a directory", "config: record.dir: OUT is not a directory"}},
		{name: "record directory is a file",
			edit: func(t *testing.T, dir string) {
				os.MkdirAll(filepath.Join(dir, "out"), 0o755)
				os.WriteFile(filepath.Join(dir, "out", "rec"), nil, 0o644)
			},
			want: []string{"config: record.dir: ", "rec is not a directory"}},
		{name: "agones on without an SDK server", extra: `[agones]
mode = "on"`, edit: func(t *testing.T, _ string) { t.Setenv("AGONES_SDK_HTTP_PORT", "") },
			want: []string{"config: agones.mode: on, but AGONES_SDK_HTTP_PORT is not set"}},
		{name: "agones matches above max_rooms", extra: `max_rooms = 2
[agones]
matches = "list"
max_matches = 3`, want: []string{"config: agones.max_matches: 3 is above max_rooms 2"}},
		{name: "agones port", edit: func(t *testing.T, _ string) { t.Setenv("AGONES_SDK_HTTP_PORT", "http") },
			want: []string{`AGONES_SDK_HTTP_PORT="http" is not a port number`}},
		{name: "results file is a directory",
			edit: func(t *testing.T, dir string) { os.MkdirAll(filepath.Join(dir, "out", "results.jsonl"), 0o755) },
			want: []string{"config: results.file: ", "results.jsonl is a directory"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			withoutRewindEnv(t)
			config, dir := checkSetup(t, tt.extra)
			if tt.edit != nil {
				tt.edit(t, dir)
			}
			code, stdout, stderr := runCmd(t, "serve", "--config", config, "--check")
			if code != 2 || stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2", code, stdout, stderr)
			}
			// A configuration that does not load has no log yet: its one
			// error is plain text. The rest are the log's error lines.
			var errs []string
			for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
				var m map[string]any
				switch {
				case json.Unmarshal([]byte(l), &m) != nil:
					errs = append(errs, l)
				case m["level"] == "error":
					errs = append(errs, fmt.Sprint(m["message"]))
				}
			}
			all := strings.Join(errs, "\n")
			for _, w := range tt.want {
				w = strings.NewReplacer("RESULTS", filepath.Join(dir, "out", "results.jsonl"), "OUT", filepath.Join(dir, "out")).Replace(w)
				if !strings.Contains(all, w) {
					t.Errorf("the errors do not say %q:\n%s", w, all)
				}
			}
		})
	}
}

// An Agones SDK server that never answers: serve says it is still waiting
// while Start retries (not silent for agones.ready_timeout), then logs why
// it did not start and exits 1, every line in log.format (JSON here, as a
// pod's log collector reads it), none in plain text.
func TestServeStartFailureIsLogged(t *testing.T) {
	if testing.Short() {
		t.Skip("waits agones.ready_timeout")
	}
	t.Parallel()
	// Port 1 on loopback: nothing listens there, so every call is refused.
	config, _ := checkSetup(t, `[agones]
mode = "on"
sdk_address = "127.0.0.1:1"
ready_timeout = "4s"`)
	// The server logs from more than one goroutine: one Write a line, to a
	// buffer that takes them one at a time.
	var out, errb bytes.Buffer
	code := run([]string{"serve", "--config", config, "--admin", ""}, &out, zerolog.SyncWriter(&errb))
	stdout, stderr := out.String(), errb.String()
	if code != 1 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1", code, stdout, stderr)
	}
	lines := logLines(t, stderr)
	waiting := 0
	for _, l := range lines {
		if l["message"] == "still starting: the Agones SDK server has not answered yet" && l["level"] == "warn" {
			waiting++
		}
	}
	if waiting == 0 {
		t.Errorf("no line said the server was still waiting for the SDK server:\n%s", stderr)
	}
	last := lines[len(lines)-1]
	if last["level"] != "error" || last["message"] != "serve: not started" || !strings.Contains(fmt.Sprint(last["error"]), "agones.fail_open") {
		t.Errorf("the last line is %v, want the error that stopped the start", last)
	}
}
