package replication

import "time"

// RTT smooths round-trip samples as TCP does (RFC 6298). A value made
// from another estimator's figures (QUIC's: SRTT and RTTVar set) has no
// samples of its own and serves only for Bound.
type RTT struct {
	SRTT, RTTVar time.Duration // the smoothed round trip and its mean deviation
	n            int
}

// Add takes a sample; a negative one (a clock step) counts as 0.
func (rt *RTT) Add(s time.Duration) {
	s = max(s, 0)
	if rt.n == 0 {
		rt.SRTT, rt.RTTVar = s, s/2
	} else {
		d := rt.SRTT - s
		if d < 0 {
			d = -d
		}
		rt.RTTVar = (3*rt.RTTVar + d) / 4
		rt.SRTT = (7*rt.SRTT + s) / 8
	}
	rt.n++
}

// Samples is how many samples Add took.
func (rt *RTT) Samples() int { return rt.n }

// Bound is the round trip the view-lag bound takes: the smoothed round
// trip plus twice its mean deviation.
func (rt *RTT) Bound() time.Duration { return rt.SRTT + 2*rt.RTTVar }
