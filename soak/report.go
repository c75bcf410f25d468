package soak

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Sample is the state of a soak at one moment.
type Sample struct {
	// At is the time since the rooms were full (the soak's start).
	At time.Duration
	// Warm: At is at or after the warm-up; the growth checks compare warm
	// samples only.
	Warm bool
	// Players are the players in the server's rooms.
	Players int
	// Joins and Leaves count the bots that joined (the rooms' first fill
	// included) and left (closed by the soak, or disconnected by the
	// server) so far.
	Joins, Leaves int
	// Goroutines is runtime.NumGoroutine: the server's, the bots' and the
	// soak's own, all in this process.
	Goroutines int
	// HeapLive is the live heap in bytes, measured right after a garbage
	// collection (runtime/metrics /gc/heap/live:bytes).
	HeapLive uint64
	// Overruns is the server's rewind_tick_overruns_total so far: room
	// ticks that took longer than the tick interval.
	Overruns uint64
	// Starved counts the moments so far at which the soak's process waited
	// for a CPU long enough for a tick in flight to overrun (a
	// starved.Probe that sleeps a quarter of a tick woke more than half a
	// tick late): the machine was busier than its cores. A tick's time is
	// wall time, so each such wait can make every room's tick in flight
	// overrun through no fault of the server's; each excuses an overrun in
	// every room (see Report.Verdict). A tick too slow on its own
	// overruns in every room at every tick, far more than the starved
	// moments excuse unless the process is starved at every tick; on an
	// idle machine nothing is excused.
	Starved uint64
	// Applied counts the inputs the rooms applied so far (ticks simulated
	// with a player's input), over every player that has played, the
	// departed included; AppliedRate is its growth per second since the
	// previous sample.
	Applied     uint64
	AppliedRate float64
	// Stalled names the rooms with players whose inputs applied did not
	// grow since the previous sample.
	Stalled []string
}

// HeapMiB is the live heap in MiB.
func (s Sample) HeapMiB() float64 { return mib(s.HeapLive) }

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// Bounds are how much may grow between the warm-up and the end of a soak
// before its verdict fails.
type Bounds struct {
	// GoroutineSlack is how many more goroutines the end may have than the
	// first sample after the warm-up, with as many players.
	GoroutineSlack int
	// The live heap at the end may be at most HeapRatio times the baseline
	// plus HeapFloor bytes. Each side is the median of HeapWindow samples:
	// the first after the warm-up, and the last.
	HeapRatio  float64
	HeapFloor  uint64
	HeapWindow int
}

// DefaultBounds are the bounds of DefaultConfig, measured on the 2-core
// development machine.
//
// Goroutines: a bot is 13–14 goroutines in this process (its client and
// quic-go's for it, the server's session and quic-go's for that), and 96
// bots with their server 1270–1360. Samples are taken between churn
// steps, so the first after the warm-up and the last with as many players
// differ only by teardowns still in flight (a closed connection's
// goroutines end a few milliseconds after it) and the runtime's own
// workers: 0 to a few in practice. 40, about three bots' worth, is well
// above that, and a leak of one goroutine per join (a reader or timer not
// stopped: the common kind) crosses it after 40 joins, 20 s of the default
// churn; a bot left behind after three.
//
// Heap: the live heap after a collection (two, so that sync.Pools are
// empty) is steady: 52–54 MiB for 96 bots and 8 rooms, within ±0.4 MiB from
// one sample to the next, with or without churn. A bot is about 0.55 MiB
// of it, its client about 0.2 MiB (the input ring and the snapshot
// states). The limit, ×1.1 + 4 MiB (about +9.5 MiB for the default soak,
// +5 MiB for a small one whose heap is a few MiB), is twenty times the
// noise, and the medians of three samples at each end steady it further.
// A leak of a client per churn step (0.2 MiB each: 70 steps between the
// two medians of the 60 s default) crosses it in CI, as did a slice
// holding on to the bots that had left (0.7 MiB/s, found by this soak); a
// leak of 8 KB or more per join shows in the 10-minute run (about 1100
// joins between the medians).
func DefaultBounds() Bounds {
	return Bounds{GoroutineSlack: 40, HeapRatio: 1.1, HeapFloor: 4 << 20, HeapWindow: 3}
}

// Report is what a soak measured, and its verdict.
type Report struct {
	Rooms, Players int     // the soak's shape
	Churn          float64 // bots replaced per second
	Duration       time.Duration
	Warmup         time.Duration
	Bounds         Bounds
	// Admin is the server's admin address (/metrics, /rooms) while it ran.
	Admin string

	Samples []Sample
	// Joins and Leaves count the bots that joined (the first fill
	// included) and left.
	Joins, Leaves int
	// JoinFailures counts the bots that did not join (JoinError is the
	// first's error); Dropped the bots the server disconnected (DropError
	// the first's).
	JoinFailures int
	JoinError    error
	Dropped      int
	DropError    error
	// Interrupted: the soak's context ended before its duration.
	Interrupted bool
}

// Verdict is nil when the soak passed, else an error naming each failure
// (errors.Join): what grew and by how much, the overruns, the intervals in
// which inputs applied stalled, the bots that failed to join or were
// disconnected.
func (r *Report) Verdict() error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if r.Interrupted {
		end := time.Duration(0)
		if n := len(r.Samples); n > 0 {
			end = r.Samples[n-1].At
		}
		fail("interrupted after %s of %s", at(end), at(r.Duration))
	}
	if r.JoinFailures > 0 {
		fail("%d bots failed to join (the first: %v)", r.JoinFailures, r.JoinError)
	}
	if r.Dropped > 0 {
		fail("%d bots were disconnected by the server (the first: %v)", r.Dropped, r.DropError)
	}
	if len(r.Samples) == 0 {
		fail("no samples")
		return errors.Join(errs...)
	}
	errs = append(errs, r.overruns()...)
	errs = append(errs, r.inputs()...)
	errs = append(errs, r.growth()...)
	return errors.Join(errs...)
}

// overruns fails on any tick overrun, from the server's start to the last
// sample, that the process's starvation does not excuse: in each interval
// (from the start to the first sample, then between samples), up to Rooms
// overruns for each starved moment. On a machine with spare CPU nothing is
// starved and every overrun fails; on a busy one, overruns beyond what the
// waits for a CPU explain still fail (see Sample.Starved).
func (r *Report) overruns() []error {
	excused, failed, first := r.overrunsExcused()
	if failed == 0 {
		return nil
	}
	msg := fmt.Sprintf("%d tick overruns (rewind_tick_overruns_total), the first by %s", failed, at(r.Samples[first].At))
	if excused > 0 {
		msg += fmt.Sprintf(", beside %d while the process was starved for a CPU", excused)
	}
	return []error{errors.New(msg)}
}

// overrunsExcused splits the overruns into those starvation excuses and
// those it does not; first is the sample ending the first interval with
// one that it does not.
func (r *Report) overrunsExcused() (excused, failed uint64, first int) {
	var prev Sample
	first = -1
	for i, s := range r.Samples {
		over := s.Overruns - prev.Overruns
		ok := min(over, uint64(max(r.Rooms, 1))*(s.Starved-prev.Starved))
		excused += ok
		failed += over - ok
		if over > ok && first < 0 {
			first = i
		}
		prev = s
	}
	return excused, failed, first
}

// inputs fails on every interval (from the start to the first sample, then
// between samples) in which the inputs applied did not grow, overall or in
// a room with players.
func (r *Report) inputs() []error {
	var errs []error
	var flat []int // intervals without growth, by the index of the sample that ends them
	type stall struct {
		n     int
		first int
	}
	rooms := map[string]*stall{}
	var order []string
	prev := uint64(0)
	for i, s := range r.Samples {
		if s.Applied <= prev {
			flat = append(flat, i)
		}
		prev = s.Applied
		for _, id := range s.Stalled {
			st := rooms[id]
			if st == nil {
				st = &stall{first: i}
				rooms[id] = st
				order = append(order, id)
			}
			st.n++
		}
	}
	interval := func(i int) string {
		from := time.Duration(0)
		if i > 0 {
			from = r.Samples[i-1].At
		}
		return at(from) + " and " + at(r.Samples[i].At)
	}
	if len(flat) > 0 {
		i := flat[0]
		before := uint64(0)
		if i > 0 {
			before = r.Samples[i-1].Applied
		}
		errs = append(errs, fmt.Errorf("inputs applied did not grow in %d of %d intervals, the first between %s (%d, then %d)",
			len(flat), len(r.Samples), interval(i), before, r.Samples[i].Applied))
	}
	for _, id := range order {
		st := rooms[id]
		errs = append(errs, fmt.Errorf("room %s: inputs applied did not grow in %d of %d intervals, the first between %s",
			id, st.n, len(r.Samples), interval(st.first)))
	}
	return errs
}

// comparison is what the growth checks compare: the first warm sample and
// the last with as many players (end < 0: none), and the live heap's
// medians at each end of the warm samples.
type comparison struct {
	warm        []Sample
	base        Sample
	end         int // index in warm, −1: no sample with base's players after it
	first, last []Sample
	h0, h1      uint64
	limit       uint64 // the most h1 may be
}

// compare finds what the growth checks compare; false with fewer than two
// warm samples.
func (r *Report) compare() (comparison, bool) {
	var c comparison
	for _, s := range r.Samples {
		if s.Warm {
			c.warm = append(c.warm, s)
		}
	}
	if len(c.warm) < 2 {
		return c, false
	}
	c.base, c.end = c.warm[0], -1
	for i := len(c.warm) - 1; i > 0; i-- {
		if c.warm[i].Players == c.base.Players {
			c.end = i
			break
		}
	}
	w := min(max(r.Bounds.HeapWindow, 1), len(c.warm)/2)
	c.first, c.last = c.warm[:w], c.warm[len(c.warm)-w:]
	c.h0, c.h1 = medianHeap(c.first), medianHeap(c.last)
	c.limit = uint64(float64(c.h0)*r.Bounds.HeapRatio) + r.Bounds.HeapFloor
	return c, true
}

// growth compares the end with the warm-up: goroutines (the first warm
// sample against the last with as many players) and the live heap (the
// medians of the first and the last HeapWindow warm samples).
func (r *Report) growth() []error {
	c, ok := r.compare()
	if !ok {
		return []error{fmt.Errorf("%d samples after the warm-up of %s: at least 2 are needed to judge growth", len(c.warm), at(r.Warmup))}
	}
	var errs []error
	base := c.base
	if c.end < 0 {
		errs = append(errs, fmt.Errorf("goroutines: no sample after %s had its %d players to compare with", at(base.At), base.Players))
	} else if e := c.warm[c.end]; e.Goroutines-base.Goroutines > r.Bounds.GoroutineSlack {
		errs = append(errs, fmt.Errorf("goroutines grew by %d, from %d at %s to %d at %s (%d players both times), beyond the slack of %d",
			e.Goroutines-base.Goroutines, base.Goroutines, at(base.At), e.Goroutines, at(e.At), base.Players, r.Bounds.GoroutineSlack))
	}
	if c.h1 > c.limit {
		errs = append(errs, fmt.Errorf("live heap grew by %.1f MiB (×%.2f), from %.1f MiB (%s) to %.1f MiB (%s), beyond ×%.2f + %.1f MiB = %.1f MiB",
			mib(c.h1-c.h0), float64(c.h1)/float64(max(c.h0, 1)), mib(c.h0), span(c.first), mib(c.h1), span(c.last),
			r.Bounds.HeapRatio, mib(r.Bounds.HeapFloor), mib(c.limit)))
	}
	return errs
}

// Summary is one line of what the soak measured against its bounds, for
// a passing verdict as much as a failing one.
func (r *Report) Summary() string {
	var b strings.Builder
	c, ok := r.compare()
	if ok && c.end >= 0 {
		e := c.warm[c.end]
		fmt.Fprintf(&b, "goroutines %d at %s → %d at %s (%+d, slack %d); ", c.base.Goroutines, at(c.base.At), e.Goroutines, at(e.At),
			e.Goroutines-c.base.Goroutines, r.Bounds.GoroutineSlack)
	}
	if ok {
		fmt.Fprintf(&b, "live heap %.1f → %.1f MiB (×%.2f, limit %.1f MiB); ", mib(c.h0), mib(c.h1), float64(c.h1)/float64(max(c.h0, 1)), mib(c.limit))
	}
	if n := len(r.Samples); n > 0 {
		last := r.Samples[n-1]
		excused, _, _ := r.overrunsExcused()
		fmt.Fprintf(&b, "%d overruns (%d while starved for a CPU: %d moments); %d inputs applied (%.0f/s); ", last.Overruns, excused, last.Starved,
			last.Applied, float64(last.Applied)/max(last.At.Seconds(), 1e-9))
	}
	fmt.Fprintf(&b, "%d joins, %d leaves, %d failed joins, %d disconnected by the server", r.Joins, r.Leaves, r.JoinFailures, r.Dropped)
	return b.String()
}

// medianHeap is the median live heap of samples (the mean of the middle two
// of an even number).
func medianHeap(ss []Sample) uint64 {
	h := make([]uint64, len(ss))
	for i, s := range ss {
		h[i] = s.HeapLive
	}
	slices.Sort(h)
	if n := len(h); n%2 == 0 {
		return h[n/2-1]/2 + h[n/2]/2
	}
	return h[len(h)/2]
}

// span names the samples a median was taken over.
func span(ss []Sample) string {
	if len(ss) == 1 {
		return "at " + at(ss[0].At)
	}
	return "median of " + at(ss[0].At) + "–" + at(ss[len(ss)-1].At)
}

// at formats a time of the soak: seconds, to a tenth.
func at(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

// Failures splits a verdict into its failures.
func Failures(verdict error) []string {
	if verdict == nil {
		return nil
	}
	j, ok := verdict.(interface{ Unwrap() []error })
	if !ok {
		return []string{verdict.Error()}
	}
	var out []string
	for _, e := range j.Unwrap() {
		out = append(out, e.Error())
	}
	return out
}
