package netshim

import (
	"testing"
	"time"
)

// Gilbert–Elliott bursts: over many packets the loss is
// Loss·Enter/(Enter+Leave), and lost packets come in runs 1/Leave long on
// average (seeded: the same figures every run).
func TestBurstLossComesInBursts(t *testing.T) {
	m := newModel(7, 0)
	c := Conditions{Burst: Burst{Enter: 0.01, Leave: 0.2, Loss: 1}}
	now := time.Unix(0, 0)
	const n = 200000
	lost, runs, run := 0, 0, 0
	for range n {
		if m.decide(now, 100, c).drop {
			lost++
			run++
		} else if run > 0 {
			runs++
			run = 0
		}
	}
	mean := float64(lost) / n
	avgRun := float64(lost) / float64(runs)
	t.Logf("loss %.4f (want %.4f), mean run %.2f packets (want 5)", mean, 0.01/0.21, avgRun)
	if mean < 0.040 || mean > 0.056 {
		t.Errorf("loss %.4f, want about %.4f", mean, 0.01/0.21)
	}
	if avgRun < 4.5 || avgRun > 5.5 {
		t.Errorf("mean run of losses %.2f packets, want about 5", avgRun)
	}
	// The same seed and conditions, but no burst: the per-packet draws of
	// Loss, Jitter and Reorder are unchanged by the burst model's stream.
	a, b := newModel(3, 1), newModel(3, 1)
	base := Conditions{Latency: 10 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.1}
	burst := base
	burst.Burst = Burst{Enter: 0.5, Leave: 0.5}
	for i := range 1000 {
		da, db := a.decide(now, 100, base), b.decide(now, 100, burst)
		if da != db {
			t.Fatalf("packet %d: %+v without the burst model, %+v with one that loses nothing", i, da, db)
		}
	}
}

// A spike adds its delay during the first For of every Every, counted from
// the first packet.
func TestSpikeDelaysPacketsForAWhile(t *testing.T) {
	m := newModel(1, 0)
	c := Conditions{Latency: 60 * time.Millisecond, Spike: Spike{Every: 10 * time.Second, For: 2 * time.Second, Extra: 290 * time.Millisecond}}
	start := time.Unix(100, 0)
	for _, tc := range []struct {
		after time.Duration
		delay time.Duration
	}{
		{0, 350 * time.Millisecond},                       // the first packet starts a spike
		{1999 * time.Millisecond, 350 * time.Millisecond}, // still in it
		{2 * time.Second, 350 * time.Millisecond},         // after it, but behind the spike's last packet (FIFO)
		{5 * time.Second, 60 * time.Millisecond},
		{10500 * time.Millisecond, 350 * time.Millisecond}, // the next spike
		{13 * time.Second, 60 * time.Millisecond},
	} {
		now := start.Add(tc.after)
		d := m.decide(now, 100, c)
		want := now.Add(tc.delay)
		if tc.after == 2*time.Second {
			want = start.Add(1999*time.Millisecond + 350*time.Millisecond) // queued behind the last spiked packet
		}
		if d.drop || !d.at.Equal(want) {
			t.Errorf("a packet %v after the first: delivered %v after it, want %v", tc.after, d.at.Sub(now), want.Sub(now))
		}
	}
}

// A rate cap sends packets one after another at the rate, queues up to
// Queue of them, and drops what arrives to a full queue.
func TestRateCapQueuesAndDrops(t *testing.T) {
	m := newModel(1, 0)
	// 1000 bytes at 80 kbit/s: 100 ms on the wire each.
	c := Conditions{Latency: 10 * time.Millisecond, Rate: 80000, Queue: 3}
	now := time.Unix(0, 0)
	var got []time.Duration
	overflow := 0
	for range 6 { // at once: one on the wire, three queued, two dropped
		d := m.decide(now, 1000, c)
		if d.drop {
			if !d.overflow {
				t.Fatal("a drop that is not the queue's")
			}
			overflow++
			continue
		}
		got = append(got, d.at.Sub(now))
	}
	want := []time.Duration{110 * time.Millisecond, 210 * time.Millisecond, 310 * time.Millisecond, 410 * time.Millisecond}
	if overflow != 2 || len(got) != len(want) {
		t.Fatalf("delivered after %v, %d dropped; want %v and 2", got, overflow, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("packet %d delivered after %v, want %v", i, got[i], want[i])
		}
	}
	// Once the first has left, the queue has room for one more, behind the rest.
	later := now.Add(150 * time.Millisecond)
	if d := m.decide(later, 1000, c); d.drop || d.at.Sub(now) != 510*time.Millisecond {
		t.Errorf("a packet 150 ms later: %+v, want it delivered 510 ms after the first", d)
	}
}

func TestShapeConditionsAreChecked(t *testing.T) {
	for _, tc := range []struct {
		c    Conditions
		want string
	}{
		{Conditions{Burst: Burst{Enter: 1.5}}, "up.burst.enter: 1.5 is outside [0, 1]"},
		{Conditions{Burst: Burst{Enter: 0.1}}, "up.burst.leave: 0 with burst.enter 0.1: a burst would never end"},
		{Conditions{Spike: Spike{For: time.Second}}, "up.spike.every: 0 with spike.for 1s"},
		{Conditions{Spike: Spike{Every: time.Second, For: 2 * time.Second}}, "up.spike.for: 2s is longer than spike.every 1s"},
		{Conditions{Rate: -1}, "up.rate: -1 is negative"},
		{Conditions{Queue: -1}, "up.queue: -1 is negative"},
	} {
		if err := tc.c.validate("up"); err == nil || err.Error() != "netshim: "+tc.want {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
}
