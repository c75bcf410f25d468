package replication

import (
	"testing"
	"time"
)

// Flow control halves the snapshot rate once the smoothed upstream loss or
// the round trip reaches its threshold, restores it after datagrams.recover
// of a good path, and makes a path that relapses soon after wait twice as
// long.
func TestFlowControl(t *testing.T) {
	c := FlowConfig{BadLoss: 0.25, BadRTT: 1500 * time.Millisecond, Recover: 10 * time.Second} // the server's defaults
	var f Flow
	now, tick := time.Unix(0, 0), uint32(100)
	second := func(lossPerTwenty int, rtt time.Duration) bool {
		now = now.Add(time.Second)
		for i := range 20 {
			tick++
			if i < lossPerTwenty {
				continue // lost
			}
			f.Received(tick)
		}
		return f.Judge(now, rtt, &c)
	}
	f.Received(tick) // the first packet
	for range 30 {   // 10% loss, 800 ms: a good mobile path
		if second(2, 800*time.Millisecond) || f.halved {
			t.Fatalf("halved at %.0f%% loss (smoothed %.2f)", 10.0, f.loss)
		}
	}
	if second(0, 1600*time.Millisecond); !f.halved {
		t.Fatal("a round trip over bad_rtt did not halve the rate")
	}
	for i := range 10 {
		second(0, 100*time.Millisecond)
		if i < 9 && !f.halved {
			t.Fatalf("restored after %d good seconds, want 10", i+1)
		}
	}
	if f.halved {
		t.Fatal("not restored after 10 good seconds")
	}
	second(0, 1600*time.Millisecond) // bad again within recover: the penalty doubles
	good := 0
	for f.halved && good < 60 {
		second(0, 100*time.Millisecond)
		good++
	}
	if good != 20 {
		t.Errorf("restored after %d good seconds the second time, want 20", good)
	}
	for range 10 { // heavy loss, smoothed over a few seconds
		second(8, 100*time.Millisecond)
	}
	if !f.halved {
		t.Errorf("40%% loss (smoothed %.2f) did not halve the rate", f.loss)
	}
}
