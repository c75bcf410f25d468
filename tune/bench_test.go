package tune

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rewind-gg/rewind/internal/matchtest"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/ticks"
)

// BenchmarkSweep5Minutes sweeps 30 windows (0..29) over a recorded 6v6
// match of 5 minutes (6,000 ticks at 20 Hz): one op is the whole sweep
// (target: under a minute). It reports the sweep's seconds, and the
// replayed ticks per second of every simulation it ran (the match and
// "seen" and "present" once per worker, and the 30 settings').
func BenchmarkSweep5Minutes(b *testing.B) {
	const n = 6000
	path := filepath.Join(b.TempDir(), "5min"+replay.Extension)
	if err := os.WriteFile(path, matchtest.Record(b, 12, n), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg := Config{}
	for w := range 30 {
		cfg.Windows = append(cfg.Windows, ticks.Span{N: float64(w), InTicks: true})
	}
	var sims int
	for b.Loop() {
		rep, err := Sweep(context.Background(), []string{path}, cfg)
		if err != nil || rep.Ticks != n {
			b.Fatalf("%v, %d ticks", err, rep.Ticks)
		}
		sims = len(rep.Settings) + 3*min(len(rep.Settings), runtime.GOMAXPROCS(0)) // a chunk a worker
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(sec, "s/sweep")
	b.ReportMetric(float64(sims*n)/sec, "sim-ticks/s")
}
