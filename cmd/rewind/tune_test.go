package main

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/internal/matchtest"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/ticks"
)

// A directory stands for its recordings; a damaged one is skipped with a
// warning, and the rest is reported (exit 0).
func TestTuneDirectoryAndDamagedFile(t *testing.T) {
	data := matchtest.Record(t, 4, 120)
	dir := t.TempDir()
	for name, b := range map[string][]byte{"a" + replay.Extension: data, "b" + replay.Extension: data, "bad" + replay.Extension: []byte("RWR? no"),
		"notes.txt": []byte("not a recording")} {
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	code, stdout, stderr := runCmd(t, "tune", dir, "--windows", "0-600ms/200ms", "--out", "", "--settle", "0")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "tune: warning: skipped: "+filepath.Join(dir, "bad"+replay.Extension)) || strings.Contains(stderr, "notes.txt") {
		t.Errorf("stderr %q: want a warning naming bad.rwr alone", stderr)
	}
	if !strings.Contains(stdout, "2 recording(s) at 20 Hz, 240 ticks") {
		t.Errorf("want the two good recordings:\n%s", stdout)
	}
	if !regexp.MustCompile(`(?m)^\s+600\s+12\s+-\s+all\s`).MatchString(stdout) {
		t.Errorf("no row of window 600 ms (12 ticks):\n%s", stdout)
	}
	// The disputed hits at a setting: the recorded window (1 s, 20 ticks)
	// must be in the sweep; the recommendation or a window of it.
	code, _, stderr = runCmd(t, "tune", dir, "--windows", "0-600ms/200ms", "--out", "", "--list", "disputed")
	if code != 1 || !strings.Contains(stderr, "the window recorded, 20 ticks at 20 Hz, is not in --windows") {
		t.Errorf("the recorded window outside the sweep: exit %d, %q", code, stderr)
	}
	for _, at := range []string{"recorded", "recommended", "600ms", "12"} {
		code, stdout, stderr = runCmd(t, "tune", dir, "--windows", "0-1s/200ms", "--out", "", "--list", "disputed", "--at", at, "--target", "50")
		if code != 0 || !regexp.MustCompile(`(?m)^\d+ disputed hit\(s\) at the `+at+` window:\n\s*recording\s+tick\s+shot\s+shooter\s+victim`).MatchString(stdout) {
			t.Errorf("--at %s: exit %d\n%s%s", at, code, stdout, stderr)
		}
	}
	code, _, stderr = runCmd(t, "tune", dir, "--out", "", "--weapon", "railgun")
	if code != 2 || !strings.Contains(stderr, `no weapon "railgun"`) {
		t.Errorf("a weapon the recordings lack: exit %d, %q", code, stderr)
	}
	code, _, stderr = runCmd(t, "tune", filepath.Join(dir, "bad"+replay.Extension), "--out", "")
	if code != 1 || !strings.Contains(stderr, "no recording could be replayed") {
		t.Errorf("only a damaged file: exit %d, %q", code, stderr)
	}
	code, _, stderr = runCmd(t, "tune", t.TempDir(), "--out", "")
	if code != 2 || !strings.Contains(stderr, "no .rwr recordings") {
		t.Errorf("an empty directory: exit %d, %q", code, stderr)
	}
}

func TestParseWindows(t *testing.T) {
	tk := func(n float64) ticks.Span { return ticks.Span{N: n, InTicks: true} }
	d := func(ms int) ticks.Span { return ticks.Span{D: ticks.Duration(float64(ms), 1000)} }
	for in, want := range map[string][]ticks.Span{
		"0-6/2":          {tk(0), tk(2), tk(4), tk(6)},
		"0-300ms/100ms":  {d(0), d(100), d(200), d(300)},
		"250ms,1s":       {d(250), d(1000)},
		"0s-200ms/100ms": {d(0), d(100), d(200)},
		"3":              {tk(3)},
	} {
		got, err := parseWindows(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"x", "4/2", "6-2/2", "0-6/0", "1-300ms/100ms", "0-1s/0s"} {
		if _, err := parseWindows(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
