package client

import "testing"

// The input budget starts at startInputs, grows by an input a round trip
// on a path without a queue up to Redundancy, is cut by a third when the
// samples show a queue (at most once a round trip, never below minInputs),
// and grows back when the queue drains.
func TestInputBudget(t *testing.T) {
	b := newInputBudget(32)
	if b.inputs() != startInputs {
		t.Fatalf("starts at %d, want %d", b.inputs(), startInputs)
	}
	now := 0.0
	feed := func(rtt float64, ticks int) {
		for range ticks {
			now++
			b.sample(rtt, 0, now)
		}
	}
	feed(4, 40) // a 4-tick path, no queue: +1 input per 4 ticks
	if got := b.inputs(); got < 13 || got > 14 {
		t.Errorf("after 40 ticks of a 4-tick path: %d inputs, want 4 + 40/4", got)
	}
	feed(4, 200)
	if b.inputs() != 32 {
		t.Errorf("after 240 ticks: %d inputs, want the 32 of Redundancy", b.inputs())
	}
	// A queue: 4 ticks above the 4-tick base is beyond max(2, 3).
	feed(8, 1)
	if b.inputs() != 21 || b.cuts != 1 {
		t.Errorf("first queued sample: %d inputs (%d cuts), want ⌊32·2/3⌋ = 21", b.inputs(), b.cuts)
	}
	feed(8, 1) // within a round trip of the cut: no second cut
	if b.inputs() != 21 || b.cuts != 1 {
		t.Errorf("a second queued sample a tick later: %d inputs (%d cuts), want still 21", b.inputs(), b.cuts)
	}
	feed(12, 100) // a standing queue: cut to the floor
	if b.inputs() != minInputs {
		t.Errorf("a standing queue: %d inputs, want the floor %d", b.inputs(), minInputs)
	}
	feed(6, 10) // between base + threshold/2 and base + threshold: holds
	if b.inputs() != minInputs {
		t.Errorf("a sample in the dead band: %d inputs, want still %d", b.inputs(), minInputs)
	}
	feed(4, 200) // drained
	if b.inputs() != 32 {
		t.Errorf("after the queue drained: %d inputs, want 32", b.inputs())
	}
}

// The path's base is the smallest sample of the last minRTTWindow ticks: a
// path that became slower for good (a handover to another network) is a
// new base after the window, not a queue forever.
func TestInputBudgetForgetsAnOldPath(t *testing.T) {
	b := newInputBudget(32)
	now := 0.0
	for range 50 {
		now++
		b.sample(2, 0, now)
	}
	for range minRTTWindow + minRTTWindow/minRTTBuckets {
		now++
		b.sample(20, 0, now)
	}
	cuts := b.cuts
	for range 600 { // an input a round trip of 20 ticks: 30 round trips
		now++
		b.sample(20, 0, now)
	}
	if b.cuts != cuts || b.inputs() != 32 {
		t.Errorf("on the new path: %d more cuts, %d inputs; want none, 32", b.cuts-cuts, b.inputs())
	}
}

// With Redundancy below the start, the budget never exceeds it.
func TestInputBudgetWithinRedundancy(t *testing.T) {
	b := newInputBudget(1)
	if b.inputs() != 1 {
		t.Errorf("Redundancy 1: %d inputs", b.inputs())
	}
	for i := range 100 {
		b.sample(3, 0, float64(i))
	}
	if b.inputs() != 1 {
		t.Errorf("Redundancy 1 after samples: %d inputs", b.inputs())
	}
}

// The input clock's steering is no queue: samples taken after the clock
// gained ticks (a jump ahead, a fast slew) are longer by exactly that lead,
// and the budget reads them net of it.
func TestInputBudgetIgnoresTheClocksLead(t *testing.T) {
	b := newInputBudget(32)
	now := 0.0
	for range 40 {
		now++
		b.sample(4, 0, now)
	}
	before := b.inputs()
	for range 40 {
		now++
		b.sample(4+8, 8, now) // the clock jumped 8 ticks ahead
	}
	if b.cuts != 0 || b.inputs() <= before {
		t.Errorf("after a jump ahead: %d cuts, %d inputs (from %d); want none, growing", b.cuts, b.inputs(), before)
	}
	b.sample(4+8+6, 8, now+1) // a queue on top of it
	if b.cuts != 1 {
		t.Errorf("a queue after the jump: %d cuts, want 1", b.cuts)
	}
}
