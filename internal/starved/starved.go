// Package starved measures how long a process waits for a CPU: the wall time
// a busy machine adds to everything the process does.
//
// On a machine with spare CPU a goroutine that sleeps wakes within a
// fraction of a millisecond of its time. On one loaded beyond its cores (a
// laptop under a build, CI beside other jobs, load 8 on 2 cores) a thread
// waits tens of milliseconds for a CPU at a time, and a process whose
// goroutines want more CPU than its share queues behind itself; a sleeper
// wakes that much late. A [Probe] sleeps over and over and records how late
// it woke: how many wakes came later than a limit, and the latest.
//
// Tests and the soak use it to tell what a starved process explains (a tick
// that overran, a packet read late) from what the code under test did: on
// an idle machine the probe sees nothing and excuses nothing.
package starved

import (
	"sync"
	"sync/atomic"
	"time"
)

// Probe is a goroutine that sleeps Period at a time and records its late
// wakes. Its methods are safe to call from any goroutine.
type Probe struct {
	period, limit time.Duration
	late          atomic.Uint64
	worst         atomic.Int64 // nanoseconds
	stop          chan struct{}
	done          chan struct{}
	once          sync.Once
}

// Start starts a probe that sleeps period at a time and counts the wakes
// later than limit.
func Start(period, limit time.Duration) *Probe {
	p := &Probe{period: period, limit: limit, stop: make(chan struct{}), done: make(chan struct{})}
	go p.run()
	return p
}

// ForTicks is the probe for a loop ticking every tick: it sleeps a quarter
// of a tick and counts the wakes more than half a tick late, the waits that
// can make a tick in flight overrun.
func ForTicks(tick time.Duration) *Probe { return Start(tick/4, tick/2) }

func (p *Probe) run() {
	defer close(p.done)
	t := time.NewTimer(p.period)
	defer t.Stop()
	for {
		start := time.Now()
		t.Reset(p.period)
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		late := time.Since(start) - p.period
		if late > p.limit {
			p.late.Add(1)
		}
		if int64(late) > p.worst.Load() {
			p.worst.Store(int64(late))
		}
	}
}

// Late is the number of wakes so far later than the limit: the moments the
// process waited for a CPU longer than that.
func (p *Probe) Late() uint64 { return p.late.Load() }

// Worst is the latest wake so far: the longest the process waited for a CPU,
// as far as the probe saw.
func (p *Probe) Worst() time.Duration { return time.Duration(p.worst.Load()) }

// Stop stops the probe and waits for its goroutine; its counts stay.
func (p *Probe) Stop() {
	p.once.Do(func() { close(p.stop) })
	<-p.done
}
