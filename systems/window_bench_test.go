package systems

import (
	"testing"
	"time"
	"unsafe"

	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/ticks"
	"github.com/rewind-gg/rewind/weapons"
)

// BenchmarkWindowCost is what a longer lag-compensation window costs a
// 60 Hz room of 12 players firing rockets: the old default of 30 ticks
// (0.5 s at 60 Hz) and the window of the default 2 s (120 ticks), tick
// for tick in the same loop. The history keeps a frame of every player's
// pose per tick of the window, so its memory grows with the window; a
// rewind reads two frames whatever the window, so the tick should not.
func BenchmarkWindowCost(b *testing.B) {
	const rate = 60
	room := func(window int) *benchRoom {
		cfg := DefaultConfig()
		cfg.TickRate = rate
		cfg.LagComp.WindowTicks = window
		cfg.Weapons = []weapons.Definition{rocket}
		return newBenchRoomWith(b, arenaLevel(b), cfg, nil)
	}
	long := int(ticks.Ceil(2*time.Second, rate))
	old, now := room(30), room(long)
	old.warm(2 * long)
	now.warm(2 * long)
	var to, tn time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		old.tick()
		t1 := time.Now()
		now.tick()
		to += t1.Sub(t0)
		tn += time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(to.Nanoseconds())/n/1e3, "30ticks-µs/tick")
	b.ReportMetric(float64(tn.Nanoseconds())/n/1e3, "120ticks-µs/tick")
	b.ReportMetric(float64(tn)/float64(to), "time-ratio")
	// The history's poses: a frame per tick of the window and the present,
	// a pose per player.
	pose := float64(unsafe.Sizeof(lagcomp.Pose{}))
	b.ReportMetric(float64(30+1)*float64(len(old.players))*pose/1024, "30ticks-history-KiB")
	b.ReportMetric(float64(long+1)*float64(len(now.players))*pose/1024, "120ticks-history-KiB")
}
