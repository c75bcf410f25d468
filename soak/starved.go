package soak

import (
	"context"
	"sync/atomic"
	"time"
)

// A starvation probe tells the tick overruns a busy machine causes from
// those a slow tick causes. A room's tick time (and so an overrun) is wall
// time: it includes whatever time the room's thread spent waiting for a CPU
// while other processes ran. On a machine with spare CPU that wait is
// nothing and every overrun is the server's own; on a machine loaded beyond
// its cores (a developer's laptop under a build, CI beside other jobs) a
// thread waits for tens of milliseconds at a time, longer than a tick.
//
// The probe measures the wait directly: it sleeps a quarter of a tick over
// and over, and counts the wakes that came more than half a tick late. A
// late wake is a moment the process waited for a CPU long enough to make a
// tick in flight overrun; each can excuse one overrun in each room (every
// room's tick may have been caught by it). Overruns beyond that still fail:
// a tick that is too slow on its own overruns in every room at every tick,
// far more than the starved moments excuse unless the process is starved on
// every tick, and on an idle machine nothing is excused at all.
type starvation struct {
	late atomic.Uint64
}

// probe counts late wakes until ctx ends; tick is the server's tick
// interval.
func (s *starvation) probe(ctx context.Context, tick time.Duration) {
	sleep, limit := tick/4, tick/2
	t := time.NewTimer(sleep)
	defer t.Stop()
	for {
		start := time.Now()
		t.Reset(sleep)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if time.Since(start)-sleep > limit {
			s.late.Add(1)
		}
	}
}
