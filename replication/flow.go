package replication

import (
	"time"

	"github.com/rewind-gg/rewind/protocol"
)

// SampleInterval is how often a session samples its client's path (QUIC's
// round trip and loss) and judges it (Flow.Judge), and how often a
// client's measured round trip goes into the metrics.
const SampleInterval = time.Second

// FlowConfig says when a path is bad (datagrams.bad_loss, bad_rtt) and how
// long it must stay good before the full rate returns (datagrams.recover).
type FlowConfig struct {
	// BadLoss is the smoothed upstream loss at which a path is bad; 0
	// turns flow control off.
	BadLoss float64
	// BadRTT is the round trip at which a path is bad.
	BadRTT time.Duration
	// Recover is how long a path must stay good before its client gets
	// every snapshot again (doubled, up to 8×, for a path that relapses
	// soon after).
	Recover time.Duration
}

// Flow is Fiedler's coarse flow control ("Reliability and Flow Control"):
// while a client's path is bad (the upstream loss of its input packets or
// its round trip at a threshold), it gets half the snapshots; after
// FlowConfig.Recover of a good path, all again. A path that turns bad
// again soon after doubles the time it must stay good (up to 8×), and a
// long good run halves it back. The zero Flow has the full rate.
type Flow struct {
	halved   bool
	goodFrom time.Time // when the path turned good, while halved
	restored time.Time // when the rate was last restored
	penalty  time.Duration
	loss     float64 // upstream loss, smoothed

	newest       uint32 // the newest input tick received
	got, missing uint64 // packets received and missing since the last sample
}

// Halved reports whether the client gets every other snapshot.
func (f *Flow) Halved() bool { return f.halved }

// Loss is the upstream loss, smoothed over about five samples.
func (f *Flow) Loss() float64 { return f.loss }

// Received counts an input packet: clients send one a tick, so ticks
// skipped between packets are packets lost (or late) upstream.
func (f *Flow) Received(newest uint32) {
	switch {
	case f.newest == 0 || newest <= f.newest:
	case newest-f.newest <= protocol.MaxInputs:
		f.missing += uint64(newest - f.newest - 1)
	}
	if newest > f.newest {
		f.newest = newest
	}
	f.got++
}

// Judge samples the path, once every SampleInterval, and reports whether
// the snapshot rate was just halved.
func (f *Flow) Judge(now time.Time, rtt time.Duration, c *FlowConfig) bool {
	if f.penalty == 0 {
		f.penalty = c.Recover
	}
	// The loss, smoothed over about five samples: a second's 20 packets
	// alone are too few to tell 10% from 25%.
	if n := f.got + f.missing; n > 0 {
		f.loss += 0.2 * (float64(f.missing)/float64(n) - f.loss)
	}
	f.got, f.missing = 0, 0
	if c.BadLoss == 0 {
		return false
	}
	bad := f.loss >= c.BadLoss || rtt >= c.BadRTT
	switch {
	case bad && !f.halved:
		if !f.restored.IsZero() && now.Sub(f.restored) < c.Recover {
			f.penalty = min(2*f.penalty, 8*c.Recover)
		}
		f.halved, f.goodFrom = true, time.Time{}
		return true
	case bad:
		f.goodFrom = time.Time{}
	case f.halved && f.goodFrom.IsZero():
		f.goodFrom = now.Add(-SampleInterval) // the sample's second was good
		if now.Sub(f.goodFrom) >= f.penalty {
			f.halved, f.restored = false, now
		}
	case f.halved && now.Sub(f.goodFrom) >= f.penalty:
		f.halved, f.restored = false, now
	case !f.halved && !f.restored.IsZero() && now.Sub(f.restored) >= f.penalty:
		f.penalty = max(f.penalty/2, c.Recover)
		f.restored = now
	}
	return false
}
