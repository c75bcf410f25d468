package client

import (
	"math"
	"slices"
)

// The client's two clocks adapt to the network they measure:
//
//   - The input clock decides how far ahead of the server the client
//     predicts, so that its inputs arrive just before the server needs them.
//     The server reports, in every snapshot, the smallest margin by which an
//     input first arrived before its tick was simulated
//     (protocol.SnapshotHeader.Margin). Those margins, less what the client's
//     own clock has gained since, make a window; the clock steers (runs up to
//     10% fast or slow, never jumping unless far off) so that its low
//     percentile sits at marginSafety: fewer than ~1% of inputs late, under
//     whatever jitter and loss the path has, and no more lead than that.
//   - The render clock decides the time remote entities are shown at: the
//     local time less the fastest snapshot's one-way offset and an
//     interpolation delay that covers the snapshots' jitter and losses at
//     their 99th percentile (the next snapshot is there when the render time
//     needs it), within what the server granted.
//
// Both are plain values driven by the tick loop: deterministic, and tested
// with exact inputs.

// marginWindow is how many margin samples the input clock keeps: 10 s of
// snapshots at 20 Hz.
const marginWindow = 200

// marginSafety is the margin, in ticks, the input clock keeps the window's
// smallest margin at.
const marginSafety = 1.0

// maxSkew is the most the clocks run fast or slow: 10%.
const maxSkew = 0.1

// inputClock steers the input lead by the server's margins.
type inputClock struct {
	// offset is how many ticks the clock has gained on the server's since
	// the start (running fast gains, slow loses; jumps count). A frame
	// records it when produced, so a margin measured on that frame's input
	// is known net of the steering since.
	offset  float64
	base    [marginWindow]float64 // margins less the offset their input was sent at
	n, next int
	// lossy says the path loses more than lossyPath of its packets (the
	// client sees it in the snapshots).
	lossy bool
}

// observe takes the margin an input produced at sentOffset arrived with.
func (k *inputClock) observe(margin, sentOffset float64) {
	k.base[k.next] = margin - sentOffset
	k.next = (k.next + 1) % marginWindow
	k.n = min(k.n+1, marginWindow)
}

// low is the window's smallest base margin: with a sample a snapshot, the
// 0.5th percentile over 10 s, so that late inputs stay well under 1%.
// Only with samples (n > 0).
func (k *inputClock) low() float64 { return slices.Min(k.base[:k.n]) }

// warmupSamples is how many margins the window holds before it is trusted
// to have seen the path's losses (5 s at 20 Hz).
const warmupSamples = marginWindow / 2

// lossyPath is the share of snapshots lost above which the input clock
// keeps a tick more: on such a path two or three packets in a row go
// missing every few seconds, and a lead that only covers the losses the
// window happened to see loses an input, with the shot in it, to each.
const lossyPath = 0.01

// error is how many ticks the clock should still gain (negative: lose).
// Until the window has warmed up, and on a lossy path, it keeps a tick
// more: a lost packet's inputs first arrive a tick later, in the next, and
// a lead that covers only what the window saw loses an input to every
// longer run of losses.
func (k *inputClock) error() float64 {
	if k.n == 0 {
		return 0
	}
	target := marginSafety
	if k.n < warmupSamples || k.lossy {
		target++
	}
	return target - (k.low() + k.offset)
}

// scale returns the tick interval multiplier that closes the error over
// about ten ticks, within maxSkew.
func (k *inputClock) scale() float64 {
	return 1 - min(max(k.error()/10, -maxSkew), maxSkew)
}

// tick counts a tick produced at the given scale.
func (k *inputClock) tick(scale float64) { k.offset += 1 - scale }

// arrivalWindow is how many snapshot arrivals the render clock keeps: 5 s
// at 20 Hz.
const arrivalWindow = 100

// renderSlew is the most the render clock's shift changes per tick, in
// ticks: remote entities move 5% slow or fast while the delay adapts.
const renderSlew = 0.05

// renderClock is the time remote entities are shown at.
type renderClock struct {
	off     [arrivalWindow]float64 // local time at arrival less the snapshot's tick
	need    [arrivalWindow]float64 // off plus the ticks since the snapshot before it
	gap     [arrivalWindow]int64   // the ticks since the snapshot before it
	n, next int
	scratch [arrivalWindow]float64

	min, max float64 // the interpolation delay's bounds, ticks
	shift    float64 // render time = local time − shift
	started  bool
}

// arrived records a snapshot that is the newest yet, at local time now (in
// ticks), gap ticks after the previous newest.
func (r *renderClock) arrived(now float64, tick uint32, gap int64) {
	o := now - float64(tick)
	r.off[r.next] = o
	r.need[r.next] = o + float64(gap)
	r.gap[r.next] = gap
	r.next = (r.next + 1) % arrivalWindow
	r.n = min(r.n+1, arrivalWindow)
}

// loss is the share of snapshots, every interval ticks (the rate in effect,
// which the snapshots carry), that the window's gaps say were lost.
func (r *renderClock) loss(interval int64) float64 {
	var span int64
	for _, g := range r.gap[:r.n] {
		span += max(g, interval)
	}
	if span == 0 {
		return 0
	}
	return 1 - float64(int64(r.n)*interval)/float64(span)
}

// fastest is the smallest arrival offset in the window: the path's one-way
// delay (and the clocks' difference) without jitter.
// Only with arrivals (n > 0).
func (r *renderClock) fastest() float64 { return slices.Min(r.off[:r.n]) }

// late is the q-quantile of how much later than the fastest path the
// window's snapshots arrived, ticks: the path's jitter, and any queueing.
func (r *renderClock) late(q float64) float64 {
	if r.n == 0 {
		return 0
	}
	s := r.scratch[:r.n]
	copy(s, r.off[:r.n])
	slices.Sort(s)
	return s[min(int(q*float64(r.n)), r.n-1)] - s[0]
}

// delay is the interpolation delay the window asks for: the 99th percentile
// of how long after the fastest path each snapshot was needed.
func (r *renderClock) delay() float64 {
	if r.n == 0 {
		return r.max
	}
	s := r.scratch[:r.n]
	copy(s, r.need[:r.n])
	slices.Sort(s)
	d := s[r.n-1-r.n/100] - r.fastest()
	return min(max(d, r.min), r.max)
}

// at returns the render time at local time now (ticks), moving the shift
// toward its target by at most renderSlew per tick (snapping when more than
// three ticks off, as at the start).
func (r *renderClock) at(now float64) float64 {
	if r.n == 0 {
		return math.Inf(-1)
	}
	target := r.fastest() + r.delay()
	if d := target - r.shift; !r.started || math.Abs(d) > 3 {
		r.shift, r.started = target, true
	} else {
		r.shift += min(max(d, -renderSlew), renderSlew)
	}
	return now - r.shift
}

// interp is the interpolation delay in use, ticks: the shift less the
// fastest path.
func (r *renderClock) interp() float64 {
	if r.n == 0 {
		return r.max
	}
	return r.shift - r.fastest()
}
