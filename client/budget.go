package client

import "math"

// An input datagram repeats every input the server has not acknowledged,
// so that a lost datagram costs nothing: the next carries its inputs. But
// the inputs not yet acknowledged are a round trip's worth, and on a thin
// uplink that feeds itself: a queue at the bottleneck raises the round
// trip, which adds unacknowledged inputs, which grows the datagrams, which
// keeps the queue full (at 32 kbit/s, datagrams of 32 inputs take a second
// and more to drain, and every input in them comes too late).
//
// inputBudget bounds the inputs a datagram repeats (and so its size: 11
// bytes and 12 an input) by what the path shows: the time from an input's
// first sending to the snapshot that acknowledges it (the server's
// InputAck). That time is the round trip plus the input clock's lead, so
// each sample is taken net of the clock's offset when the input was
// produced (its steering and jumps move the lead, not the path). The
// smallest over the last minRTTWindow ticks is the path without a queue; a
// sample more than a threshold above it (a share of the round trip, at
// least queueThresholdTicks) is a queue building, and the budget is cut by
// a third, at most once a round trip (a cut takes a round trip to show);
// samples without a queue let it grow back by one input a round trip, up
// to Config.Redundancy. Loss does not look like a queue here: an input is
// applied at its tick whichever copy brings it, so its acknowledgement
// comes no later. So a path with room keeps full redundancy, and a thin one
// settles at the datagrams it can carry without a standing queue: AIMD on
// queueing delay, as LEDBAT (RFC 6817) does for bulk transfers. The budget
// starts at startInputs and grows from there.
type inputBudget struct {
	max, min float64 // inputs a datagram may carry: Config.Redundancy, and minInputs
	n        float64 // the bound now, inputs (fractional: it grows a little a sample)
	// The smallest sample in each of the last minRTTBuckets spans of
	// minRTTWindow/minRTTBuckets ticks, local time.
	lows    [minRTTBuckets]float64
	bucket  int64 // the span the newest sample fell in
	started bool
	srtt    float64 // smoothed round trips (not net of the offset), ticks
	cutAt   float64 // local time of the last cut, ticks
	cuts    uint64
}

const (
	// minInputs is the fewest inputs a datagram carries under the budget:
	// each input goes out at least twice.
	minInputs = 2
	// minRTTWindow is how long the smallest round trip is remembered,
	// ticks of local time (10 s at 20 Hz): longer than any queue, shorter
	// than a change of path (a handover to a slower network).
	minRTTWindow  = 200
	minRTTBuckets = 10
	// queueThreshold is how far above the smallest sample one must be to
	// count as a queue: a share of the smoothed round trip, and at least
	// queueThresholdTicks (jitter is not a queue).
	queueThreshold      = 0.25
	queueThresholdTicks = 3
	// budgetCut is what a cut keeps of the budget.
	budgetCut = 2.0 / 3
)

// startInputs is the budget a client starts with, below Redundancy: a
// budget that starts at the top would fill a thin uplink before the first
// sample, and the smallest round trip the budget measures its queue
// against would then include the queue.
const startInputs = 4

func newInputBudget(redundancy int) inputBudget {
	m := float64(redundancy)
	return inputBudget{max: m, min: min(minInputs, m), n: min(startInputs, m)}
}

// inputs is how many inputs the next datagram may carry.
func (b *inputBudget) inputs() int { return int(b.n) }

// sample takes the time, in ticks, from an input's first sending to the
// snapshot that acknowledged it, which arrived at local time now (ticks),
// and the input clock's offset when the input was produced.
func (b *inputBudget) sample(rtt, offset, now float64) {
	d := rtt - offset // the path's share: the lead the clock steered is not
	bucket := int64(math.Floor(now / (minRTTWindow / minRTTBuckets)))
	switch {
	case !b.started:
		for i := range b.lows {
			b.lows[i] = d
		}
		b.srtt, b.started, b.bucket, b.cutAt = rtt, true, bucket, math.Inf(-1)
	case bucket != b.bucket:
		// A new span: the spans skipped (no samples) forget their lows.
		for k := b.bucket + 1; k <= bucket && k <= b.bucket+minRTTBuckets; k++ {
			b.lows[k%minRTTBuckets] = math.Inf(1)
		}
		b.bucket = bucket
	}
	i := bucket % minRTTBuckets
	b.lows[i] = min(b.lows[i], d)
	b.srtt += (rtt - b.srtt) / 8
	base := b.lows[0]
	for _, l := range b.lows[1:] {
		base = min(base, l)
	}
	threshold := max(queueThreshold*b.srtt, queueThresholdTicks)
	switch {
	case d > base+threshold:
		if now-b.cutAt >= b.srtt {
			b.n = max(b.min, math.Floor(b.n*budgetCut))
			b.cutAt = now
			b.cuts++
		}
	case d < base+threshold/2:
		b.n = min(b.max, b.n+1/max(b.srtt, 1))
	}
}
