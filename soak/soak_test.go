package soak

import (
	"context"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the package if a soak leaves a goroutine behind: its
// server, bots and their connections must all be gone when Run returns.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// A short real soak: 2 rooms of 4 bots over QUIC on loopback, 4 bots
// replaced a second, a sample a second. Bots join and leave, the rooms
// apply their inputs all along, and nothing grows.
func TestShortSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("plays real rooms")
	}
	cfg := DefaultConfig()
	cfg.Rooms, cfg.Players = 2, 4
	cfg.Duration, cfg.Interval, cfg.Warmup = 4*time.Second, time.Second, time.Second
	cfg.Churn = 4
	var started []Start
	var seen []Sample
	cfg.OnStart = func(s Start) { started = append(started, s) }
	cfg.OnSample = func(s Sample) { seen = append(seen, s) }
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range rep.Samples {
		t.Logf("%5.1fs players %d joins %d leaves %d goroutines %d heap %.1f MiB overruns %d applied %d (%.0f/s) stalled %v",
			x.At.Seconds(), x.Players, x.Joins, x.Leaves, x.Goroutines, x.HeapMiB(), x.Overruns, x.Applied, x.AppliedRate, x.Stalled)
	}
	t.Log(rep.Summary())
	if err := rep.Verdict(); err != nil {
		t.Errorf("verdict: %v", err)
	}
	if len(started) != 1 || started[0].Joined != 8 || started[0].Admin == "" {
		t.Errorf("OnStart: %+v, want once, with 8 bots joined and the admin address", started)
	}
	if len(rep.Samples) != 4 || len(seen) != 4 {
		t.Fatalf("%d samples, %d seen by OnSample; want 4", len(rep.Samples), len(seen))
	}
	// The churn: 4 a second for 4 s, give or take the first tick and the
	// dials' time; every leave was replaced.
	if rep.Leaves < 8 || rep.Joins != 8+rep.Leaves {
		t.Errorf("%d joins, %d leaves: want 8 at the fill plus one per leave, and at least 8 leaves", rep.Joins, rep.Leaves)
	}
	var prev uint64
	for _, x := range rep.Samples {
		if x.Applied <= prev || x.AppliedRate <= 0 {
			t.Errorf("at %v: inputs applied %d (%.0f/s), after %d", x.At, x.Applied, x.AppliedRate, prev)
		}
		prev = x.Applied
		if x.HeapLive == 0 || x.Goroutines == 0 {
			t.Errorf("at %v: heap %d, goroutines %d", x.At, x.HeapLive, x.Goroutines)
		}
	}
	// 8 bots at 20 inputs a second: at most 160 a second reach the rooms,
	// about 140 with this churn (a new bot's first inputs arrive a few
	// ticks after its join); fewer on a busy machine, never more (the
	// count of a player's inputs is not taken twice).
	if last := rep.Samples[3]; last.AppliedRate < 50 || last.AppliedRate > 170 {
		t.Errorf("%.0f inputs applied a second, want about 140 (8 bots at 20 Hz, less the churn's)", last.AppliedRate)
	}
}

// A soak stops when its context ends, says it was interrupted, and still
// cleans up.
func TestSoakInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("plays real rooms")
	}
	cfg := DefaultConfig()
	cfg.Rooms, cfg.Players = 1, 2
	cfg.Duration, cfg.Interval, cfg.Warmup = time.Hour, time.Second, 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg.OnSample = func(Sample) { cancel() }
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted || len(rep.Samples) != 1 {
		t.Fatalf("interrupted %v after %d samples, want true after 1", rep.Interrupted, len(rep.Samples))
	}
	if got := Failures(rep.Verdict()); len(got) == 0 || got[0] != "interrupted after "+at(rep.Samples[0].At)+" of 3600.0s" {
		t.Errorf("verdict: %q", got)
	}
}

// A real soak catches what leaks: here the test itself keeps 8 MiB and 15
// goroutines more at every sample, and the verdict names both.
func TestSoakCatchesLeaks(t *testing.T) {
	if testing.Short() {
		t.Skip("plays real rooms")
	}
	cfg := DefaultConfig()
	cfg.Rooms, cfg.Players = 1, 2
	cfg.Duration, cfg.Interval, cfg.Warmup = 4*time.Second, time.Second, time.Second
	var kept [][]byte
	release := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(release); wg.Wait() }()
	cfg.OnSample = func(Sample) {
		b := make([]byte, 8<<20)
		for i := range b {
			b[i] = 1 // touched, so it is really held
		}
		kept = append(kept, b)
		for range 15 {
			wg.Go(func() { <-release })
		}
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(kept)
	got := Failures(rep.Verdict())
	t.Log(rep.Summary())
	// 45 goroutines kept, give or take a teardown in flight.
	if len(got) != 2 {
		t.Fatalf("failures %q, want the goroutines and the live heap", got)
	}
	m := regexp.MustCompile(`^goroutines grew by (\d+), from `).FindStringSubmatch(got[0])
	if m == nil || !strings.HasPrefix(got[1], "live heap grew by ") {
		t.Fatalf("failures %q, want the goroutines and the live heap", got)
	}
	if n, _ := strconv.Atoi(m[1]); n < 41 || n > 50 {
		t.Errorf("goroutines grew by %d, want about 45", n)
	}
}
