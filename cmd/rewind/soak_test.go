package main

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/soak"
)

// A short soak: the header, a row a second with every column, the
// summary and a passing verdict.
func TestSoakCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("plays real rooms")
	}
	code, stdout, stderr := runCmd(t, "soak", "--rooms", "2", "--players", "4", "--duration", "4s", "--interval", "1s",
		"--warmup", "1s", "--churn", "4")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, s := range []string{
		"rewind soak: 2 rooms × 4 bots for 4s, 4 bots a second replaced, a sample every 1s after a warm-up of 1s\n",
		"\n" + soakHeader + "\n",
		"\nverdict: PASS\n",
	} {
		if !strings.Contains(stdout, s) {
			t.Errorf("no %q in:\n%s", s, stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^server 127\.0\.0\.1:\d+, admin http://127\.0\.0\.1:\d+/metrics; 8 bots joined in `).MatchString(stdout) {
		t.Errorf("no start line:\n%s", stdout)
	}
	// time, players, joins, leaves, goroutines, heap MiB, overruns, starved, inputs applied/s
	rows := regexp.MustCompile(`(?m)^\s+([\d.]+)s\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+(\d+)\s+(\d+)\s+(\d+)$`).FindAllStringSubmatch(stdout, -1)
	if len(rows) != 4 {
		t.Fatalf("%d sample rows, want 4:\n%s", len(rows), stdout)
	}
	num := func(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }
	for i, r := range rows {
		if at := num(r[1]); at < float64(i+1)-0.2 || at > float64(i+1)+0.5 {
			t.Errorf("row %d at %ss, want about %ds", i, r[1], i+1)
		}
		// No overrun but those a starved process excuses (one a room
		// per starved moment; none on an idle machine).
		if num(r[2]) != 8 || num(r[7]) > 2*num(r[8]) || num(r[9]) < 50 {
			t.Errorf("row %d: %d players, %s overruns, %s starved, %s inputs applied/s; want 8, at most 2 a starved moment, and about 140",
				i, int(num(r[2])), r[7], r[8], r[9])
		}
	}
	if last := rows[3]; num(last[4]) < 8 || num(last[3]) != 8+num(last[4]) {
		t.Errorf("the last row: %s joins, %s leaves; want 8 at the fill plus one per leave, and some leaves", last[3], last[4])
	}
	sum := regexp.MustCompile(`(?m)^goroutines \d+ at 1\.0s → \d+ at 4\.0s \([+-]\d+, slack 40\); live heap [\d.]+ → [\d.]+ MiB .*; (\d+) overruns \((\d+) while starved for a CPU: \d+ moments\); \d+ inputs applied`).FindStringSubmatch(stdout)
	if sum == nil {
		t.Errorf("no summary:\n%s", stdout)
	} else if sum[1] != sum[2] {
		t.Errorf("summary: %s overruns, %s of them excused; a passing verdict excuses all", sum[1], sum[2])
	}
}

// A failed verdict prints every failure and exits with status 1.
func TestSoakVerdictFails(t *testing.T) {
	rep := &soak.Report{Duration: 10 * time.Second, Warmup: time.Second, Bounds: soak.DefaultBounds(), Joins: 8, Dropped: 1,
		DropError: errors.New("bot-00003 in room soak-01: no input for 10s")}
	for k := 1; k <= 4; k++ {
		rep.Samples = append(rep.Samples, soak.Sample{At: time.Duration(k) * time.Second, Warm: true, Players: 8,
			Goroutines: 123 + 20*k, HeapLive: 6 << 20, Overruns: 1, Applied: uint64(150 * k)})
	}
	var out bytes.Buffer
	err := soakVerdict(&out, rep)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("error %v, want exit status 1", err)
	}
	const verdict = "verdict: FAIL\n" +
		"  - 1 bots were disconnected by the server (the first: bot-00003 in room soak-01: no input for 10s)\n" +
		"  - 1 tick overruns (rewind_tick_overruns_total), the first by 1.0s\n" +
		"  - goroutines grew by 60, from 143 at 1.0s to 203 at 4.0s (8 players both times), beyond the slack of 40\n"
	if !strings.HasSuffix(out.String(), verdict) {
		t.Errorf("output:\n%s\nwant it to end with:\n%s", out.String(), verdict)
	}
	if !strings.HasPrefix(ee.msg, "soak: failed: 1 bots were disconnected") {
		t.Errorf("message %q", ee.msg)
	}
}

func TestSoakBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--duration", "2s", "--interval", "1s", "--warmup", "5s"},
			"soak: config: duration 2s, interval 1s and warm-up 5s make 2 samples, 0 after the warm-up: the growth checks need 2"},
		{[]string{"--rooms", "0"}, "soak: config: rooms: 0 is below 1"},
		{[]string{"--heap-floor", "-1"}, "soak: --heap-floor: -1 is negative"},
	} {
		code, stdout, stderr := runCmd(t, append([]string{"soak"}, tc.args...)...)
		if code != 2 || strings.TrimSpace(stderr) != tc.err {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q\n%s", tc.args, code, stderr, tc.err, stdout)
		}
	}
}
