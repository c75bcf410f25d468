package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The README's main command plays a match over QUIC through the shims and
// prints a report with a row per bot.
func TestDemoPlaysAMatch(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a real match")
	}
	code, stdout, stderr := runCmd(t, "demo", "--duration", "6s", "--bots", "4", "--log-level", "error")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for i := 1; i <= 4; i++ {
		if !strings.Contains(stdout, "bot-0"+strconv.Itoa(i)) {
			t.Errorf("no report row for bot-0%d:\n%s", i, stdout)
		}
	}
	m := regexp.MustCompile(`total: (\d+) inputs sent, (\d+) applied \(([\d.]+)%\)`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no totals line:\n%s", stdout)
	}
	if pct, _ := strconv.ParseFloat(m[3], 64); pct < 90 {
		t.Errorf("only %s%% of inputs applied:\n%s", m[3], stdout)
	}
	if !strings.Contains(stdout, "match over after") || !strings.Contains(stdout, "kbit/s per client") {
		t.Errorf("no status or summary:\n%s", stdout)
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
