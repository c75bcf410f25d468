package tests

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/server"
)

// The benchmarks below measure what two attacks of docs/threat-model.md
// buy against a server with the default configuration, in seconds and
// rooms (each runs once, for tens of seconds):
//
//	go test ./tests -run '^$' -bench 'TrickleSquatters|LingeringRooms' -benchtime 1x

var (
	squatMax  = flag.Duration("squat.max", time.Minute, "how long BenchmarkTrickleSquatters watches the squatters at most")
	lingerFor = flag.Duration("linger.for", 40*time.Second, "how long BenchmarkLingeringRooms's sources open rooms")
)

// BenchmarkTrickleSquatters fills a room of 12 with squatters that each
// send one packet every 9 s (under the default input_timeout of 10 s):
// "trickle", one input a packet; "burst32", 32 inputs for the ticks ahead.
// It reports how long the room stays full after the last squatter joined
// (held-s; -squat.max if it never frees a seat), how long until every
// squatter has lost its seat (all-freed-s, likewise), and whether an
// honest player's join then succeeds (honest-joined, 1 or 0).
func BenchmarkTrickleSquatters(b *testing.B) {
	for _, bc := range []struct {
		name string
		n    int
	}{{"trickle", 1}, {"burst32", protocol.MaxInputs}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				held, all, joined := squatRoom(b, bc.n)
				b.ReportMetric(held.Seconds(), "held-s")
				b.ReportMetric(all.Seconds(), "all-freed-s")
				b.ReportMetric(joined, "honest-joined")
			}
		})
	}
}

func squatRoom(b *testing.B, n int) (held, all time.Duration, joined float64) {
	srv := startServer(b, nil)
	seats := server.DefaultConfig().MaxPlayers
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for i := range seats {
		s := &squatter{rawPlayer: joinRaw(b, srv, srv.Addr().String(), protocol.Join{Room: "squat", Name: fmt.Sprint("squatter-", i)}),
			period: 9 * time.Second, n: n}
		wg.Add(1)
		go func() { defer wg.Done(); s.run(ctx) }()
	}
	start := time.Now()
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	held, all = *squatMax, *squatMax
	for at := range poll.C {
		r, _ := findRoom(b, srv, "squat")
		if len(r.Players) < seats && held == *squatMax {
			held = at.Sub(start)
		}
		if len(r.Players) == 0 {
			all = at.Sub(start)
			break
		}
		if at.Sub(start) >= *squatMax {
			break
		}
	}
	if w, _ := answer(b, srv, "127.0.0.1", protocol.Join{Room: "squat", Name: "honest"}); w != nil {
		joined = 1
	}
	return held, all, joined
}

// BenchmarkLingeringRooms has sources (one, then five, each its own
// loopback address) join a new room and leave at once, ten times a second
// each, for -linger.for (40 s: longer than the default
// match.empty_timeout). It reports the most rooms open at once
// (rooms-max), the rooms open at the end (rooms-end), the share of
// max_rooms the most is (rooms-max-%), and the live heap at the end, after
// a collection (heap-MiB: the server's, and what little of the test's own
// is left once its connections closed).
func BenchmarkLingeringRooms(b *testing.B) {
	for _, sources := range []int{1, 5} {
		b.Run(fmt.Sprint(sources, "-sources"), func(b *testing.B) {
			for b.Loop() {
				most, end, heap := lingeringRooms(b, sources)
				b.ReportMetric(float64(most), "rooms-max")
				b.ReportMetric(float64(end), "rooms-end")
				b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
				b.ReportMetric(100*float64(most)/float64(server.DefaultConfig().MaxRooms), "rooms-max-%")
			}
		})
	}
}

func lingeringRooms(b *testing.B, sources int) (most, end int, heap uint64) {
	srv := startServer(b, nil)
	ctx, cancel := context.WithTimeout(context.Background(), *lingerFor)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	for s := range sources {
		local := fmt.Sprintf("127.0.0.%d", 10+s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			pace := time.NewTicker(100 * time.Millisecond)
			defer pace.Stop()
			for i := 0; ; i++ {
				select {
				case <-ctx.Done():
					return
				case <-pace.C:
				}
				jctx, jcancel := context.WithTimeout(ctx, 5*time.Second)
				rj, err := driveBy(jctx, srv, local, protocol.Join{Room: fmt.Sprintf("s%d-%d", s, i), Name: "drive-by"})
				jcancel()
				what := "welcome"
				switch {
				case err != nil:
					what = "error"
				case rj != nil:
					what = protocol.RejectLabel(rj.Code)
				}
				mu.Lock()
				outcomes[what]++
				mu.Unlock()
			}
		}()
	}
	poll := time.NewTicker(250 * time.Millisecond)
	defer poll.Stop()
	rooms := func() int {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		all, err := srv.Stats(sctx)
		if err != nil {
			b.Fatal(err)
		}
		return len(all)
	}
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-poll.C:
		}
		end = rooms()
		most = max(most, end)
	}
	wg.Wait()
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.Logf("%d sources: joins %v; rooms open at most %d, at the end %d", sources, outcomes, most, end)
	return most, end, m.HeapAlloc
}
