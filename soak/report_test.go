package soak

import (
	"errors"
	"slices"
	"testing"
	"time"
)

const mebi = 1 << 20

// steady is the report of a soak that went well: 12 samples 5 s apart,
// warm from 15 s, 96 players, 1361 goroutines, 54 MiB of live heap, no
// overrun, 1920 inputs applied a second.
func steady() *Report {
	r := &Report{Rooms: 8, Players: 12, Churn: 2, Duration: time.Minute, Warmup: 15 * time.Second, Bounds: DefaultBounds(),
		Joins: 215, Leaves: 119}
	for k := 1; k <= 12; k++ {
		at := time.Duration(k) * 5 * time.Second
		r.Samples = append(r.Samples, Sample{At: at, Warm: at >= r.Warmup, Players: 96, Joins: 96 + 10*k, Leaves: 10 * k,
			Goroutines: 1361, HeapLive: 54 * mebi, Applied: uint64(k) * 9600, AppliedRate: 1920})
	}
	return r
}

func failures(t *testing.T, r *Report) []string {
	t.Helper()
	return Failures(r.Verdict())
}

func want(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("failures:\n%q\nwant:\n%q", got, want)
	}
}

func TestVerdictSteadyPasses(t *testing.T) {
	r := steady()
	if err := r.Verdict(); err != nil {
		t.Fatalf("a steady soak failed: %v", err)
	}
	// Noise within the bounds: goroutines up by the slack exactly, the heap
	// up to its limit, and one sample far off in the end's window (the
	// median ignores it).
	r.Samples[11].Goroutines += r.Bounds.GoroutineSlack
	r.Samples[9].HeapLive = 63 * mebi
	r.Samples[10].HeapLive = 200 * mebi
	r.Samples[11].HeapLive = 54 * mebi
	if err := r.Verdict(); err != nil {
		t.Fatalf("noise within the bounds failed: %v", err)
	}
}

func TestVerdictGoroutineGrowth(t *testing.T) {
	r := steady()
	r.Samples[11].Goroutines = 1361 + 41
	want(t, failures(t, r), "goroutines grew by 41, from 1361 at 15.0s to 1402 at 60.0s (96 players both times), beyond the slack of 40")
	// Before the warm-up, growth does not count: the baseline is the first
	// warm sample.
	r = steady()
	r.Samples[0].Goroutines = 1000
	r.Samples[1].Goroutines = 1100
	want(t, failures(t, r))
}

// Goroutines are compared at the same number of players: the last sample
// with as many as the baseline, not the last sample.
func TestVerdictGoroutinesSamePlayers(t *testing.T) {
	r := steady()
	r.Samples[11].Players, r.Samples[11].Goroutines = 97, 1361+14 // a bot joining as the sample was taken
	want(t, failures(t, r))
	r.Samples[10].Goroutines = 1361 + 60
	want(t, failures(t, r), "goroutines grew by 60, from 1361 at 15.0s to 1421 at 55.0s (96 players both times), beyond the slack of 40")
	for i := 3; i < 12; i++ {
		r.Samples[i].Players = 95
	}
	want(t, failures(t, r), "goroutines: no sample after 15.0s had its 96 players to compare with")
}

func TestVerdictHeapGrowth(t *testing.T) {
	r := steady()
	for i, h := range []uint64{64, 65, 66} {
		r.Samples[9+i].HeapLive = h * mebi
	}
	// The limit: 54 MiB × 1.1 + 4 MiB = 63.4 MiB; the end's median, 65 MiB.
	want(t, failures(t, r), "live heap grew by 11.0 MiB (×1.20), from 54.0 MiB (median of 15.0s–25.0s) to 65.0 MiB (median of 50.0s–60.0s), beyond ×1.10 + 4.0 MiB = 63.4 MiB")
	// A steady climb of 1 MiB a sample from the warm-up: the medians are
	// 55 and 62 MiB, within 55 × 1.1 + 4 = 64.5 MiB…
	r = steady()
	for i := 2; i < 12; i++ {
		r.Samples[i].HeapLive = uint64(54+i-2) * mebi
	}
	want(t, failures(t, r))
	// …until the end's median passes it.
	r.Samples[11].HeapLive = 70 * mebi
	r.Samples[10].HeapLive = 66 * mebi
	want(t, failures(t, r), "live heap grew by 11.0 MiB (×1.20), from 55.0 MiB (median of 15.0s–25.0s) to 66.0 MiB (median of 50.0s–60.0s), beyond ×1.10 + 4.0 MiB = 64.5 MiB")
	// With few warm samples the windows shrink to half of them each.
	r = steady()
	r.Samples = r.Samples[:5] // warm: 15, 20, 25 s
	r.Samples[4].HeapLive = 70 * mebi
	want(t, failures(t, r), "live heap grew by 16.0 MiB (×1.30), from 54.0 MiB (at 15.0s) to 70.0 MiB (at 25.0s), beyond ×1.10 + 4.0 MiB = 63.4 MiB")
}

func TestVerdictOverruns(t *testing.T) {
	r := steady()
	for i := 5; i < 12; i++ {
		r.Samples[i].Overruns = 2
	}
	r.Samples[11].Overruns = 3
	want(t, failures(t, r), "3 tick overruns (rewind_tick_overruns_total), the first by 30.0s")
	// During the warm-up (or the fill) too.
	r = steady()
	for i := range r.Samples {
		r.Samples[i].Overruns = 1
	}
	want(t, failures(t, r), "1 tick overruns (rewind_tick_overruns_total), the first by 5.0s")
}

// On a machine busier than its cores, overruns in an interval are excused
// up to one per room for each moment the process was starved for a CPU in
// that interval, and only those: the rest still fail, named beside the
// excused.
func TestVerdictOverrunsWhileStarved(t *testing.T) {
	r := steady() // 8 rooms
	// 30 s → 35 s: 2 starved moments excuse up to 16 overruns.
	for i := 6; i < 12; i++ {
		r.Samples[i].Overruns, r.Samples[i].Starved = 16, 2
	}
	want(t, failures(t, r))
	// One more in the same interval fails.
	for i := 6; i < 12; i++ {
		r.Samples[i].Overruns = 17
	}
	want(t, failures(t, r), "1 tick overruns (rewind_tick_overruns_total), the first by 35.0s, beside 16 while the process was starved for a CPU")
	// Starved moments excuse only the overruns of their own interval: the
	// 16 at 45 s → 50 s, after the starved moments, all fail.
	r = steady()
	for i := 6; i < 12; i++ {
		r.Samples[i].Starved = 2
	}
	for i := 9; i < 12; i++ {
		r.Samples[i].Overruns = 16
	}
	want(t, failures(t, r), "16 tick overruns (rewind_tick_overruns_total), the first by 50.0s")
	// A tick too slow on its own overruns in every room at every tick (20
	// a second): 800 an interval, more than a process starved at 40
	// moments in each interval excuses.
	r = steady()
	for i := range r.Samples {
		r.Samples[i].Overruns, r.Samples[i].Starved = uint64(i+1)*800, uint64(i+1)*40
	}
	want(t, failures(t, r), "5760 tick overruns (rewind_tick_overruns_total), the first by 5.0s, beside 3840 while the process was starved for a CPU")
}

func TestVerdictInputsStalled(t *testing.T) {
	r := steady()
	r.Samples[7].Applied = r.Samples[6].Applied // 35 s → 40 s
	for i := 8; i < 12; i++ {
		r.Samples[i].Applied -= 9600
	}
	r.Samples[3].Stalled = []string{"soak-03"}
	r.Samples[8].Stalled = []string{"soak-05", "soak-03"}
	want(t, failures(t, r),
		"inputs applied did not grow in 1 of 12 intervals, the first between 35.0s and 40.0s (67200, then 67200)",
		"room soak-03: inputs applied did not grow in 2 of 12 intervals, the first between 15.0s and 20.0s",
		"room soak-05: inputs applied did not grow in 1 of 12 intervals, the first between 40.0s and 45.0s")
	// The first interval runs from the start.
	r = steady()
	for i := range r.Samples {
		r.Samples[i].Applied = 0
	}
	want(t, failures(t, r), "inputs applied did not grow in 12 of 12 intervals, the first between 0.0s and 5.0s (0, then 0)")
}

func TestVerdictBots(t *testing.T) {
	r := steady()
	r.JoinFailures, r.JoinError = 2, errors.New("bot-00042 to room soak-01: client: join rejected (2): room soak-01 is full")
	r.Dropped, r.DropError = 1, errors.New("bot-00007 in room soak-02: client: connection closed by the server (5): no input for 10s")
	want(t, failures(t, r),
		"2 bots failed to join (the first: bot-00042 to room soak-01: client: join rejected (2): room soak-01 is full)",
		"1 bots were disconnected by the server (the first: bot-00007 in room soak-02: client: connection closed by the server (5): no input for 10s)")
}

func TestVerdictTooShortOrInterrupted(t *testing.T) {
	r := steady()
	r.Samples = r.Samples[:3]
	r.Interrupted = true
	want(t, failures(t, r),
		"interrupted after 15.0s of 60.0s",
		"1 samples after the warm-up of 15.0s: at least 2 are needed to judge growth")
	r.Samples = nil
	want(t, failures(t, r), "interrupted after 0.0s of 60.0s", "no samples")
}

// Every failure is named, in a fixed order: the bots, the overruns, the
// inputs, then growth.
func TestVerdictEverything(t *testing.T) {
	r := steady()
	r.Dropped, r.DropError = 1, errors.New("gone")
	r.Samples[11].Overruns = 1
	r.Samples[11].Applied = r.Samples[10].Applied
	r.Samples[11].Goroutines = 2000
	for i := 9; i < 12; i++ {
		r.Samples[i].HeapLive = 100 * mebi
	}
	want(t, failures(t, r),
		"1 bots were disconnected by the server (the first: gone)",
		"1 tick overruns (rewind_tick_overruns_total), the first by 60.0s",
		"inputs applied did not grow in 1 of 12 intervals, the first between 55.0s and 60.0s (105600, then 105600)",
		"goroutines grew by 639, from 1361 at 15.0s to 2000 at 60.0s (96 players both times), beyond the slack of 40",
		"live heap grew by 46.0 MiB (×1.85), from 54.0 MiB (median of 15.0s–25.0s) to 100.0 MiB (median of 50.0s–60.0s), beyond ×1.10 + 4.0 MiB = 63.4 MiB")
}

func TestSummary(t *testing.T) {
	r := steady()
	r.Samples[11].Goroutines = 1363
	const s = "goroutines 1361 at 15.0s → 1363 at 60.0s (+2, slack 40); live heap 54.0 → 54.0 MiB (×1.00, limit 63.4 MiB); " +
		"0 overruns (0 while starved for a CPU: 0 moments); 115200 inputs applied (1920/s); 215 joins, 119 leaves, 0 failed joins, 0 disconnected by the server"
	if got := r.Summary(); got != s {
		t.Errorf("summary:\n%s\nwant:\n%s", got, s)
	}
}

func TestConfigSamples(t *testing.T) {
	for _, tc := range []struct {
		d, i, w time.Duration
		n, warm int
	}{
		{time.Minute, 5 * time.Second, 15 * time.Second, 12, 10},
		{time.Minute, 5 * time.Second, 0, 12, 12},
		{time.Minute, 5 * time.Second, 14 * time.Second, 12, 10},
		{time.Minute, 5 * time.Second, 16 * time.Second, 12, 9},
		{62 * time.Second, 5 * time.Second, 15 * time.Second, 13, 11}, // rounded up to whole intervals
		{4 * time.Second, time.Second, time.Second, 4, 4},
		{2 * time.Second, time.Second, 5 * time.Second, 2, 0},
	} {
		c := Config{Duration: tc.d, Interval: tc.i, Warmup: tc.w}
		if n, warm := c.samples(); n != tc.n || warm != tc.warm {
			t.Errorf("duration %v interval %v warm-up %v: %d samples, %d warm; want %d, %d", tc.d, tc.i, tc.w, n, warm, tc.n, tc.warm)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		change func(*Config)
		err    string
	}{
		{func(c *Config) { c.Rooms = 0 }, "soak: config: rooms: 0 is below 1"},
		{func(c *Config) { c.Players = 251 }, "soak: config: players: 251 is outside 1..250"},
		{func(c *Config) { c.Churn = -1 }, "soak: config: churn: -1 is outside 0..1000 bots a second"},
		{func(c *Config) { c.Bounds.HeapRatio = 0.9 }, "soak: config: heap ratio: 0.9 is below 1"},
		{func(c *Config) { c.Duration, c.Warmup = 20*time.Second, 16*time.Second },
			"soak: config: duration 20s, interval 5s and warm-up 16s make 4 samples, 1 after the warm-up: the growth checks need 2"},
	} {
		c := DefaultConfig()
		tc.change(&c)
		if _, err := New(c); err == nil || err.Error() != tc.err {
			t.Errorf("New: %v, want %s", err, tc.err)
		}
	}
	if _, err := New(DefaultConfig()); err != nil {
		t.Errorf("the default config: %v", err)
	}
}
