package main

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/rewind-gg/rewind/netshim"
)

// The README's main command plays a match over QUIC through the shims and
// prints a report with a row per bot.
func TestDemoPlaysAMatch(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a real match")
	}
	// Eight bots for 8 s: about a dozen hits (4 bots for 6 s made one to
	// five, and sometimes none).
	shots := filepath.Join(t.TempDir(), "shots.csv")
	code, stdout, stderr := runCmd(t, "demo", "--duration", "8s", "--bots", "8", "--log-level", "error", "--shots", shots)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for i := 1; i <= 8; i++ {
		if !strings.Contains(stdout, "bot-0"+strconv.Itoa(i)) {
			t.Errorf("no report row for bot-0%d:\n%s", i, stdout)
		}
	}
	m := regexp.MustCompile(`total: (\d+) inputs sent, (\d+) applied in time \(([\d.]+)%\), \d+ more late`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no totals line:\n%s", stdout)
	}
	if pct, _ := strconv.ParseFloat(m[3], 64); pct < 90 {
		t.Errorf("only %s%% of inputs applied:\n%s", m[3], stdout)
	}
	if !strings.Contains(stdout, "match over after") || !strings.Contains(stdout, "kbit/s per client") {
		t.Errorf("no status or summary:\n%s", stdout)
	}
	// The per-target table, and the summary lines on their own.
	if !regexp.MustCompile(`(?m)^\s*target\s+team\s+hits seen on it\s+confirmed`).MatchString(stdout) {
		t.Errorf("no per-target table:\n%s", stdout)
	}
	if !regexp.MustCompile(`(?m)^hits seen by live shooters confirmed: \d+ of \d+ \(([\d.]+%|n/a)\)$`).MatchString(stdout) {
		t.Errorf("no confirmed line:\n%s", stdout)
	}
	fp := regexp.MustCompile(`(?m)^false positives: (\d+) of (\d+) hit events$`).FindStringSubmatch(stdout)
	if fp == nil {
		t.Fatalf("no false positives line:\n%s", stdout)
	}
	// The false positives are of hitscan shots' hit events, a few a match
	// (bots/tally_test.go checks their counting); the match had hits.
	n, _ := strconv.Atoi(fp[1])
	events, _ := strconv.Atoi(fp[2])
	if n > events {
		t.Errorf("false positives: %d of %d hit events, want no more false positives than hit events:\n%s", n, events, stdout)
	}
	hits := regexp.MustCompile(`(?m)^match counts \(as rewind tune and view count them, docs/tuning.md\): .*, (\d+) server hits `).FindStringSubmatch(stdout)
	if hits == nil || hits[1] == "0" {
		t.Errorf("no server hits in the match counts, want some:\n%s", stdout)
	}
	if !regexp.MustCompile(`(?m)^hits seen stopped by shields placed after the shooter's newest snapshot \(not counted above\): \d+$`).MatchString(stdout) {
		t.Errorf("no shielded line:\n%s", stdout)
	}
	// --shots: a row per hitscan shot, joined with the server's judgement,
	// that counts what the report counts.
	if !regexp.MustCompile(`(?m)^shots joined with the server's judgement \(.*\): \d+ hitscan shots:`).MatchString(stdout) {
		t.Errorf("no shots summary:\n%s", stdout)
	}
	conf := regexp.MustCompile(`(?m)^hits seen by live shooters confirmed: (\d+) of (\d+)`).FindStringSubmatch(stdout)
	outcomes := map[string]int{}
	for _, r := range readCSV(t, shots) {
		outcomes[r["outcome"]]++
	}
	if conf != nil && (strconv.Itoa(outcomes["confirmed"]) != conf[1] || strconv.Itoa(outcomes["confirmed"]+outcomes["missed"]) != conf[2]) {
		t.Errorf("shots.csv: %v; the report: %s of %s hits seen by live shooters confirmed", outcomes, conf[1], conf[2])
	}
	// The host's load, which any figure above depends on.
	if !regexp.MustCompile(`(?m)^host load average \(1, 5, 15 min\): [\d.]+ [\d.]+ [\d.]+ on \d+ cores$`).MatchString(stdout) {
		t.Errorf("no host load line:\n%s", stdout)
	}
}

// parseDemo parses a demo command line's flags and settles its network.
func parseDemo(t *testing.T, args ...string) (demoConfig, error) {
	t.Helper()
	var dc demoConfig
	fs := pflag.NewFlagSet("demo", pflag.ContinueOnError)
	dc.flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return dc, dc.applyNetwork(fs.Changed)
}

func TestDemoNetworkPresets(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		args                   []string
		rttMin, rttMax, jitter time.Duration
		loss                   float64
	}{
		{nil, 60 * ms, 200 * ms, 10 * ms, 0.05},
		{[]string{"--network", "default"}, 60 * ms, 200 * ms, 10 * ms, 0.05},
		{[]string{"--network", "mobile"}, 750 * ms, 850 * ms, 30 * ms, 0.10},
		// Flags given override the preset, whichever comes first.
		{[]string{"--loss", "0.02", "--network", "mobile", "--rtt-max", "900ms"}, 750 * ms, 900 * ms, 30 * ms, 0.02},
		{[]string{"--network", "mobile", "--rtt-min", "100ms", "--jitter", "0s"}, 100 * ms, 850 * ms, 0, 0.10},
		// Even when they repeat the default's own values.
		{[]string{"--network", "mobile", "--loss", "0.05", "--rtt-min", "60ms"}, 60 * ms, 850 * ms, 30 * ms, 0.05},
		{[]string{"--rtt-max", "300ms"}, 60 * ms, 300 * ms, 10 * ms, 0.05},
	} {
		dc, err := parseDemo(t, tc.args...)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if dc.rttMin != tc.rttMin || dc.rttMax != tc.rttMax || dc.jitter != tc.jitter || dc.loss != tc.loss {
			t.Errorf("%q: rtt %v–%v, jitter %v, loss %v; want %v–%v, %v, %v", tc.args,
				dc.rttMin, dc.rttMax, dc.jitter, dc.loss, tc.rttMin, tc.rttMax, tc.jitter, tc.loss)
		}
	}
	// The mobile shapes come with their presets, and only with them.
	for _, tc := range []struct {
		network string
		check   func(networkShape) bool
	}{
		{"handover", func(s networkShape) bool {
			return s.spike.Extra == 290*ms && s.spike.Every == 10*time.Second && s.uplink == 0
		}},
		{"thin", func(s networkShape) bool {
			return s.uplink == 32000 && s.uplinkQueue == 10 && s.burst == (netshim.Burst{})
		}},
		{"burst", func(s networkShape) bool {
			return s.burst.Loss == 1 && s.burst.Leave == 0.2 && s.spike == (netshim.Spike{})
		}},
		{"default", func(s networkShape) bool { return s == (networkShape{}) }},
	} {
		dc, err := parseDemo(t, "--network", tc.network, "--loss", "0")
		if err != nil || !tc.check(dc.shape) || dc.loss != 0 {
			t.Errorf("--network %s: %+v, loss %v, %v", tc.network, dc.shape, dc.loss, err)
		}
	}
	// The report's first line names the flags that overrode the preset.
	if dc, _ := parseDemo(t, "--loss", "0.02", "--network", "mobile", "--rtt-min", "1s"); !slices.Equal(dc.overrides, []string{"--rtt-min", "--loss"}) {
		t.Errorf("overrides %q, want --rtt-min, --loss", dc.overrides)
	}
	if _, err := parseDemo(t, "--network", "lan"); err == nil || !strings.Contains(err.Error(), `--network: unknown preset "lan" (valid: default, mobile, handover, thin, burst)`) {
		t.Errorf("--network lan: %v", err)
	}
	// On the command line: a usage error, before anything starts.
	code, stdout, stderr := runCmd(t, "demo", "--network", "lan")
	if code != 2 || !strings.Contains(stderr, `demo: --network: unknown preset "lan" (valid: default, mobile, handover, thin, burst)`) || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestDemoFlagErrors(t *testing.T) {
	code, _, stderr := runCmd(t, "demo", "--loss", "1.5")
	if code != 2 || !strings.Contains(stderr, "--loss: 1.5 is outside [0, 1)") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCmd(t, "bots", "-n", "3")
	if code != 2 || !strings.Contains(stderr, "bots: --server is required") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
