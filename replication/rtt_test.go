package replication

import (
	"testing"
	"time"
)

// The round trip a room measures follows RFC 6298: the first sample sets
// it, with half as deviation; later ones move it by an eighth and the
// deviation by a quarter of the difference.
func TestRTT(t *testing.T) {
	var rt RTT
	rt.Add(80 * time.Millisecond)
	if rt.SRTT != 80*time.Millisecond || rt.RTTVar != 40*time.Millisecond || rt.Bound() != 160*time.Millisecond {
		t.Fatalf("after one sample: srtt %v, rttvar %v, bound %v", rt.SRTT, rt.RTTVar, rt.Bound())
	}
	rt.Add(160 * time.Millisecond)
	if rt.SRTT != 90*time.Millisecond || rt.RTTVar != 50*time.Millisecond {
		t.Errorf("after two samples: srtt %v, rttvar %v; want 90ms, 50ms", rt.SRTT, rt.RTTVar)
	}
	rt.Add(-time.Millisecond) // a clock step: counts as 0
	if rt.SRTT != 90*time.Millisecond*7/8 || rt.Samples() != 3 {
		t.Errorf("after a negative sample: srtt %v (n %d)", rt.SRTT, rt.Samples())
	}
}
