package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/systems"
)

// Mobile conditions: round trips of 750 and 850 ms, 10% loss and 30 ms of
// jitter each way, on the sealed channel. The clients' clocks settle within
// their first second of snapshots and never jump after it; ≥ 99% of the
// ticks the server simulates apply the player's own input; and snapshots
// arrive no later than the shim's own jitter explains, plus 50 ms (QUIC
// DATAGRAMs, under congestion control, queued them for up to 1.4 s). The
// seat rule, judged over 2 s windows here (a tenth of the default), never
// takes their seats: they play for eight windows and more.
func TestMobileNetwork(t *testing.T) {
	t.Parallel()
	const jitter = 30 * time.Millisecond
	srv := startServer(t, func(c *server.Config) { c.InputCoverageWindow = 2 * time.Second })
	var clients []*client.Client
	for i, rtt := range []time.Duration{750 * time.Millisecond, 850 * time.Millisecond} {
		addr := shim(t, srv, rtt, jitter, 0.10, uint64(90+i))
		clients = append(clients, dial(t, srv, client.Config{Addr: addr, Room: "mobile", Name: fmt.Sprint("mobile-", i), Input: strafer(int64(23 + i))}))
	}
	stop := start(clients...)
	// The first second of snapshots: the clocks may jump ahead meanwhile.
	until(t, 20*time.Second, "the clients' first second of snapshots", func() bool {
		for _, c := range clients {
			if c.Stats().Settling {
				return false
			}
		}
		return true
	})
	var jumps []uint64
	for _, c := range clients {
		jumps = append(jumps, c.Stats().ClockJumps)
	}
	waitTicks(t, srv, "mobile", 40) // the clocks settle
	probe := starvedProbe(t)
	var p0 []uint64
	for _, c := range clients {
		p := playerStats(t, srv, "mobile", c.ID())
		p0 = append(p0, p.Applied, p.Rooted)
	}
	waitTicks(t, srv, "mobile", 300)
	for i, c := range clients {
		p := playerStats(t, srv, "mobile", c.ID())
		applied, rooted := p.Applied-p0[2*i], p.Rooted-p0[2*i+1]
		ratio := float64(applied) / float64(applied+rooted)
		st := c.Stats()
		// The shim delays each packet by its latency ± jitter, uniformly: 95%
		// of packets come within 1.9 × jitter of the fastest. On a machine
		// busier than its cores, a packet is also read (and the shim's
		// timers fire) as late as the process waited for a CPU: at most
		// the longest wait the probe saw, nothing on an idle machine.
		allowed := time.Duration(1.9*float64(jitter)) + 50*time.Millisecond + probe.Worst()
		t.Logf("client %d: %.2f%% of %d ticks applied its input; clock jumps %d (%d in the first second), margin low %.2f ticks; snapshots p95 %v later than the fastest (allowed %v), interp %v, held %d ticks, %d of %d hit markers",
			i, 100*ratio, applied+rooted, st.ClockJumps, jumps[i], st.MarginLow, st.SnapshotDelayP95, allowed, st.Interp, st.Held, st.MarkersFromSnapshots, st.MarkersFromSnapshots+st.MarkersFromEvents)
		if ratio < 0.99 {
			t.Errorf("client %d: %.2f%% of ticks applied its input, want ≥ 99%%", i, 100*ratio)
		}
		if st.ClockJumps != jumps[i] {
			t.Errorf("client %d: %d clock jumps after its first second of snapshots", i, st.ClockJumps-jumps[i])
		}
		if st.SnapshotDelayP95 > allowed {
			t.Errorf("client %d: snapshots arrive up to %v (p95) later than the fastest, want ≤ %v", i, st.SnapshotDelayP95, allowed)
		}
	}
	for _, err := range stop() {
		if err != nil {
			t.Errorf("run: %v", err)
		}
	}
	if c, i := kicks(t, srv); c != 0 || i != 0 {
		t.Errorf("players kicked for coverage %v, idle %v; want none", c, i)
	}
}

// A Welcome held up on its way (a retransmission, a busy server) makes the
// client's first estimate of the server's tick short, and every input sent
// on it comes too late. The client corrects the estimate from the first
// snapshot it has (its tick, its age and a round trip), a tick or so
// into Run, not from the first margins a round trip and a half later. Here
// the estimate is 20 ticks short (Lead −20) on a 400 ms round trip; waiting
// for margins would lose every input of the first eight ticks and more.
func TestClockStartsFromTheNewestSnapshot(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	addr := shim(t, srv, 400*time.Millisecond, 0, 0, 7)
	c := dial(t, srv, client.Config{Addr: addr, Room: "late-welcome", Name: "late", Lead: -20, Input: strafer(9)})
	stop := start(c)
	until(t, 20*time.Second, "the client's first second of snapshots", func() bool { return !c.Stats().Settling })
	waitTicks(t, srv, "late-welcome", 20)
	p := playerStats(t, srv, "late-welcome", c.ID())
	st := c.Stats()
	t.Logf("stale inputs %d, applied %d, clock jumps %d", p.Inputs[systems.InputStale], p.Applied, st.ClockJumps)
	if st.ClockJumps == 0 {
		t.Error("the clock never jumped ahead")
	}
	if n := p.Inputs[systems.InputStale]; n > 5 {
		t.Errorf("%d inputs came too late, want ≤ 5 (those sent before the first snapshot)", n)
	}
	for _, err := range stop() {
		if err != nil {
			t.Errorf("run: %v", err)
		}
	}
}
