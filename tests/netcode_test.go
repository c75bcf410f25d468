package tests

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/bots"
	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/netshim"
	"github.com/rewind-gg/rewind/server"
)

// appliedRatio plays one strafing player through a shim with 150 ms round
// trips and 25% loss each way, and returns the fraction of the server's
// ticks (after a warm-up) that applied the player's input.
func appliedRatio(t *testing.T, redundancy int, seed uint64) (float64, client.Stats) {
	if raceEnabled {
		// A share of inputs in time measures timing, which the race
		// detector's slowdown on a busy machine distorts (the player has
		// lost its connection before the second reading); the plain run of
		// the suite measures it, and the race run looks for data races in
		// the same code through the other tests.
		t.Skip("measures timing: not under the race detector")
	}
	// The seat rule off: under the race detector on a busy machine, a
	// player sending each input once through 25% loss can fall below its
	// coverage and lose its seat before the second reading; this measures
	// inputs, the rule has tests of its own.
	srv := startServer(t, func(c *server.Config) { c.InputCoverage = 0 })
	addr := shim(t, srv, 150*time.Millisecond, 5*time.Millisecond, 0.25, seed)
	c := dial(t, srv, client.Config{Addr: addr, Room: "redundancy", Name: "runner", Input: strafer(30), Redundancy: redundancy})
	stop := start(c)
	waitTicks(t, srv, "redundancy", 40) // let the clock settle
	p0 := playerStats(t, srv, "redundancy", c.ID())
	// Read the player every poll, so that if it leaves the room the
	// failure shows its last statistics and why it left.
	var p1 server.PlayerStats
	seated := true
	from := roomStats(t, srv, "redundancy").Tick
	until(t, 40*time.Second, "the room did not simulate 300 ticks in time", func() bool {
		var now server.PlayerStats
		if now, seated = seatedPlayer(t, srv, "redundancy", c.ID()); seated {
			p1 = now
		}
		return !seated || roomStats(t, srv, "redundancy").Tick >= from+300
	})
	errs := stop()
	if !seated {
		// The client's run ends with the server's close reason (or
		// QUIC's), and the kick counters name the server's rule.
		m := gather(t, srv)
		t.Fatalf("the player left the room during the reading: its run returned %v; kicked idle %v, coverage %v, slow %v; "+
			"its last statistics %+v; the client's %+v",
			errs, m.value("rewind_players_kicked_total", "reason", "idle"), m.value("rewind_players_kicked_total", "reason", "coverage"),
			m.value("rewind_players_kicked_total", "reason", "slow"), p1, c.Stats())
	}
	for _, err := range errs {
		if err != nil {
			t.Errorf("run: %v", err)
		}
	}
	applied := p1.Applied - p0.Applied
	ticks := applied + p1.Rooted - p0.Rooted
	return float64(applied) / float64(ticks), c.Stats()
}

// With 150 ms round trips and 25% loss, redundant inputs get ≥ 99% of a
// player's inputs applied; sending each input once loses about a quarter.
func TestRedundantInputsSurviveLoss(t *testing.T) {
	t.Parallel()
	ratio, st := appliedRatio(t, 32, 1)
	t.Logf("redundancy 32: %.2f%% of ticks applied the input, %d corrections", 100*ratio, st.Corrections)
	if ratio < 0.99 {
		t.Errorf("with redundancy %.2f%% of inputs applied, want ≥ 99%%", 100*ratio)
	}
}

func TestWithoutRedundancyInputsAreLost(t *testing.T) {
	t.Parallel()
	ratio, st := appliedRatio(t, 1, 1)
	t.Logf("redundancy 1: %.2f%% of ticks applied the input, %d corrections", 100*ratio, st.Corrections)
	if ratio > 0.85 || ratio < 0.6 {
		t.Errorf("without redundancy %.2f%% of inputs applied, want about 75%%", 100*ratio)
	}
	if st.Corrections == 0 {
		t.Error("lost inputs root the player on the server: the client must have corrected its prediction")
	}
}

// After reconciliation the client's prediction and the server's state agree
// exactly, even when lost inputs forced corrections along the way.
func TestPredictionAgreesWithServer(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	addr := shim(t, srv, 100*time.Millisecond, 10*time.Millisecond, 0.25, 7)
	var still atomic.Bool
	runner := strafer(17)
	input := scripted(func(v *client.View) client.Intent {
		if still.Load() {
			return client.Intent{}
		}
		return runner(v)
	})
	c := dial(t, srv, client.Config{Addr: addr, Room: "predict", Name: "runner", Input: input, Redundancy: 1})
	stop := start(c)
	waitTicks(t, srv, "predict", 200)
	still.Store(true)
	waitTicks(t, srv, "predict", 60)
	pred := c.Predicted()
	server := playerStats(t, srv, "predict", c.ID()).Pos
	stop()
	st := c.Stats()
	if st.Corrections == 0 {
		t.Error("25% loss without redundancy should have forced corrections")
	}
	d := pred.Pos.Sub(geom.FromArray(server)).Len()
	t.Logf("%d corrections (largest %.3f m); now predicted %v, server %v, apart %.2g m", st.Corrections, st.MaxCorrection, pred.Pos, server, d)
	if d > 1e-9 {
		t.Errorf("standing still, the prediction is %.3g m from the server", d)
	}
	if pred.Server != geom.FromArray(server) {
		t.Errorf("the newest snapshot says %v, the server %v", pred.Server, server)
	}
}

// A bot 200 ms away, with perfect aim, shoots a strafing target: every hit it
// sees on its screen is confirmed by the server's lag compensation, and none
// of its claims is cut by the server's measured bound. With the window set to
// 0 (lag compensation off) the same shots miss.
func TestHitsSeenAreConfirmed(t *testing.T) {
	t.Parallel()
	for _, window := range []time.Duration{server.DefaultWindow, 0} {
		t.Run(map[time.Duration]string{server.DefaultWindow: "lag compensation on", 0: "lag compensation off"}[window], func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, func(c *server.Config) {
				c.LagComp.Window = window
				c.Match.Health = 1e9 // nobody dies: every shot is comparable
			})
			far := shim(t, srv, 200*time.Millisecond, 0, 0, 3)
			target := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "lagcomp", Name: "target", Team: 1, Input: strafer(25)})
			var hold atomic.Bool
			var tally bots.Tally
			cfg := client.Config{Addr: far, Room: "lagcomp", Name: "shooter", Team: 2,
				Input: client.HoldFire{Source: bots.NewBot(bots.BotConfig{Still: true}), Hold: &hold}}
			tally.Wire(&cfg)
			shooter, clamped := shootAt(t, srv, "lagcomp", target, cfg, &hold, 240)
			st, ts := shooter.Stats(), tally.Stats()
			// 200 ms away and honest: the server grants every claim (with
			// window 0 it grants none: every shot is cut to the present).
			if window > 0 && clamped != 0 {
				t.Errorf("%d of the honest shooter's %d shots were clamped", clamped, st.ShotsFired)
			}
			t.Logf("window %d: %d shots, %d hits seen, %d confirmed (%d of them the hit seen), RTT %v",
				window, st.ShotsFired, ts.HitsSeen, st.HitsConfirmed, ts.SeenConfirmed, st.RTT)
			if ts.HitsSeen < 20 {
				t.Fatalf("only %d hits seen: the test needs the shooter to see hits", ts.HitsSeen)
			}
			if window > 0 && ts.SeenConfirmed < ts.HitsSeen {
				t.Errorf("%d of %d hits seen were not confirmed", ts.HitsSeen-ts.SeenConfirmed, ts.HitsSeen)
			}
			if window == 0 && st.HitsConfirmed*10 > ts.HitsSeen {
				t.Errorf("without lag compensation %d of %d hits seen were still confirmed", st.HitsConfirmed, ts.HitsSeen)
			}
		})
	}
}

// A client that starts running well after it joined sets its clock by the
// time passed since the Welcome: its first inputs already arrive in time,
// with no clock jump and none lost.
func TestLateRunKeepsInputs(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	addr := shim(t, srv, 100*time.Millisecond, 0, 0, 5)
	c := dial(t, srv, client.Config{Addr: addr, Room: "late", Name: "late", Input: strafer(30)})
	waitTicks(t, srv, "late", 60) // the room runs on without the client's inputs
	before := playerStats(t, srv, "late", c.ID())
	stop := start(c)
	waitTicks(t, srv, "late", 20) // a round trip and the lead
	p0 := playerStats(t, srv, "late", c.ID())
	waitTicks(t, srv, "late", 120)
	p1 := playerStats(t, srv, "late", c.ID())
	for _, err := range stop() {
		if err != nil {
			t.Errorf("run: %v", err)
		}
	}
	st := c.Stats()
	t.Logf("applied %d of %d ticks, %d clock jumps, %d corrections", p1.Applied-p0.Applied,
		p1.Applied-p0.Applied+p1.Rooted-p0.Rooted, st.ClockJumps, st.Corrections)
	if before.Applied != 0 {
		t.Fatalf("%d inputs applied before the client ran", before.Applied)
	}
	if st.ClockJumps != 0 {
		t.Errorf("%d clock jumps: the clock started off", st.ClockJumps)
	}
	if rooted := p1.Rooted - p0.Rooted; rooted != 0 {
		t.Errorf("%d ticks rooted without an input after the first round trip", rooted)
	}
}

// Hit markers survive loss: confirmations ride every snapshot until the
// client acknowledges one, so with 20% loss on the way down a marker comes
// about a round trip after the shot (the next snapshot that gets through),
// where the control stream alone would wait for QUIC to retransmit a lost
// event, and hold every event behind it meanwhile.
func TestHitMarkersSurviveLoss(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) { c.Match.Health = 1e9 })
	target := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "markers", Name: "target", Team: 1, Input: strafer(25)})
	sh, err := netshim.Start(netshim.Config{Listen: "127.0.0.1:0", Target: srv.Addr().String(),
		Up: netshim.Conditions{Latency: 100 * time.Millisecond}, Down: netshim.Conditions{Latency: 100 * time.Millisecond, Loss: 0.2}, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	var hold atomic.Bool
	var viaSnapshot, viaEvent atomic.Int64
	shooter := dial(t, srv, client.Config{Addr: sh.Addr().String(), Room: "markers", Name: "shooter", Team: 2,
		Input: client.HoldFire{Source: bots.NewBot(bots.BotConfig{Still: true}), Hold: &hold},
		OnHitMarker: func(m client.HitMarker) {
			if m.ViaSnapshot {
				viaSnapshot.Add(1)
			} else {
				viaEvent.Add(1)
			}
		}})
	probe := starvedProbe(t)
	stop := start(target, shooter)
	waitTicks(t, srv, "markers", 240)
	hold.Store(true)
	waitTicks(t, srv, "markers", 20)
	stop()
	st := shooter.Stats()
	markers := st.MarkersFromSnapshots + st.MarkersFromEvents
	t.Logf("%d hits confirmed; %d markers, %d by a snapshot first; %.1f ticks from shot to marker on average, round trip %v",
		st.HitsConfirmed, markers, st.MarkersFromSnapshots, float64(st.MarkerDelayTicks)/float64(max(markers, 1)), st.RTT)
	if markers < 20 {
		t.Fatalf("only %d hit markers: the test needs hits", markers)
	}
	if uint64(viaSnapshot.Load()) != st.MarkersFromSnapshots || uint64(viaEvent.Load()) != st.MarkersFromEvents {
		t.Errorf("OnHitMarker saw %d+%d markers, the stats %d+%d", viaSnapshot.Load(), viaEvent.Load(), st.MarkersFromSnapshots, st.MarkersFromEvents)
	}
	if st.MarkersFromSnapshots*2 < markers {
		t.Errorf("only %d of %d markers came by a snapshot first", st.MarkersFromSnapshots, markers)
	}
	// The client's lead (ticks ahead of the server), a round trip (4
	// ticks), a tick of server phase and one of snapshot loss: 10 ticks;
	// on a machine busier than its cores, plus the longest the process
	// waited for a CPU (a marker read late is late by at most that), which
	// is nothing on an idle machine. Waiting for QUIC to retransmit a lost
	// event adds a round trip and more to a fifth of the markers and holds
	// the events behind it.
	tick := time.Second / time.Duration(server.DefaultConfig().TickRate)
	bound := 10 + float64(probe.Worst())/float64(tick)
	if avg := float64(st.MarkerDelayTicks) / float64(markers); avg > bound {
		t.Errorf("a marker came %.1f ticks after its shot on average, want ≤ %.1f (10, and %v the process waited for a CPU)", avg, bound, probe.Worst())
	}
}

// The room measures each client's round trip from its own packets: from a
// snapshot leaving to the first input that acknowledges it. Behind a shim
// adding 100 ms up and 50 ms down, that is the 150 ms plus the client's
// wait for its next tick (under one, 50 ms); on loopback, under a tick.
func TestRoomMeasuresRoundTrip(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	sh, err := netshim.Start(netshim.Config{Listen: "127.0.0.1:0", Target: srv.Addr().String(),
		Up: netshim.Conditions{Latency: 100 * time.Millisecond}, Down: netshim.Conditions{Latency: 50 * time.Millisecond}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	near := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "rtt", Name: "near", Team: 1, Input: strafer(20)})
	far := dial(t, srv, client.Config{Addr: sh.Addr().String(), Room: "rtt", Name: "far", Team: 2, Input: strafer(20)})
	stop := start(near, far)
	defer stop()
	waitTicks(t, srv, "rtt", 100)
	rtt := map[string]time.Duration{}
	for _, p := range roomStats(t, srv, "rtt").Players {
		rtt[p.Name] = p.RTT
	}
	t.Logf("round trips measured: near %v, far %v", rtt["near"], rtt["far"])
	// "Some": scheduling on a loaded machine (CI runs this under the race
	// detector).
	if r := rtt["far"]; r < 150*time.Millisecond || r > 240*time.Millisecond {
		t.Errorf("behind 150 ms of shim, the room measured %v; want 150 ms to a tick (50 ms) and some more", r)
	}
	if r := rtt["near"]; r <= 0 || r > 90*time.Millisecond {
		t.Errorf("on loopback, the room measured %v; want under a tick and some", r)
	}
}

// While flow control halves a client's snapshot rate, its snapshots say so
// (their interval): the client counts no loss, and draws the other players
// moving between snapshots rather than holding them still across every
// other gap, as it would across a lost snapshot.
func TestHalvedSnapshotRateIsNoLoss(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) {
		c.Datagrams.BadRTT = 30 * time.Millisecond // the shim's 80 ms is a bad path
		c.Datagrams.Recover = time.Hour
	})
	far := shim(t, srv, 80*time.Millisecond, 0, 0, 7)
	target := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "halved", Name: "target", Team: 1, Input: strafer(10)})
	var held, moved atomic.Int64
	var last geom.Vec3
	watch := scripted(func(v *client.View) client.Intent {
		for _, p := range v.Players {
			if p.ID == target.ID() {
				if p.Pos == last {
					held.Add(1)
				} else {
					moved.Add(1)
				}
				last = p.Pos
			}
		}
		return client.Intent{}
	})
	watcher := dial(t, srv, client.Config{Addr: far, Room: "halved", Name: "watcher", Team: 2, Input: watch})
	stop := start(target, watcher)
	defer stop()
	waitTicks(t, srv, "halved", 60) // the server measures the round trip, and halves the rate
	from, fromTick := playerStats(t, srv, "halved", watcher.ID()).Snapshots, roomStats(t, srv, "halved").Tick
	held.Store(0)
	moved.Store(0)
	waitTicks(t, srv, "halved", 100)
	to, toTick := playerStats(t, srv, "halved", watcher.ID()).Snapshots, roomStats(t, srv, "halved").Tick
	st := watcher.Stats()
	rate := float64(to-from) / float64(toTick-fromTick)
	t.Logf("%.2f snapshots a tick; snapshot loss %.3f; the target held still in %d views, moved in %d", rate, st.SnapshotLoss, held.Load(), moved.Load())
	if rate > 0.6 {
		t.Fatalf("%.2f snapshots a tick: flow control did not halve the rate, the test tests nothing", rate)
	}
	if st.SnapshotLoss > 0.05 {
		t.Errorf("snapshot loss %.3f on a lossless path: the halved rate was read as loss", st.SnapshotLoss)
	}
	if h, m := held.Load(), moved.Load(); m == 0 || float64(h) > 0.1*float64(h+m) {
		t.Errorf("the strafing target held still in %d of %d views", h, h+m)
	}
}

// A handover's stall on the way up, after a calm longer than the input
// clock's memory: for a second the shooter's inputs take 700 ms longer, so
// every copy of some of them comes after its tick. Those run late (the
// shooter catches up, its shots are rewound to their own view times), and
// the hits the shooter saw are confirmed: all but the few whose claims,
// right after the stall, exceed QUIC's own estimate plus rtt_margin (the
// cap on the round trip the acknowledgements show follows QUIC's, which
// samples a quiet connection rarely). Before late fire commands every shot
// fired in the stall was lost.
func TestLateFireCommandsAreResolved(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) { c.Match.Health = 1e9 })
	way := netshim.Conditions{Latency: 40 * time.Millisecond}
	up := way
	up.Spike = netshim.Spike{Every: 12 * time.Second, For: time.Second, Extra: 700 * time.Millisecond}
	sh, err := netshim.Start(netshim.Config{Listen: "127.0.0.1:0", Target: srv.Addr().String(), Up: up, Down: way, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	target := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "handover", Name: "target", Team: 1, Input: strafer(6)})
	var hold atomic.Bool
	var tally bots.Tally
	cfg := client.Config{Addr: sh.Addr().String(), Room: "handover", Name: "shooter", Team: 2,
		Input: client.HoldFire{Source: bots.NewBot(bots.BotConfig{Still: true}), Hold: &hold}}
	tally.Wire(&cfg)
	shooter := dial(t, srv, cfg)
	stop := start(target, shooter)
	waitTicks(t, srv, "handover", 300)
	hold.Store(true) // then give the last hit events a round trip to arrive
	waitTicks(t, srv, "handover", 20)
	p := playerStats(t, srv, "handover", shooter.ID())
	stop()
	st, ts := shooter.Stats(), tally.Stats()
	t.Logf("%d shots, %d hits seen, %d confirmed (%d of them the hit seen); %d inputs late, %d rooted, %d clamped; RTT %v",
		st.ShotsFired, ts.HitsSeen, st.HitsConfirmed, ts.SeenConfirmed, p.Late, p.Rooted, p.Clamped, st.RTT)
	if p.Late < 10 {
		t.Errorf("%d inputs ran late: the stalls should have made some", p.Late)
	}
	if ts.HitsSeen < 20 {
		t.Fatalf("only %d hits seen: the test needs the shooter to see hits", ts.HitsSeen)
	}
	// Dropped, the late shots (29 inputs late in a run) would leave about a
	// third of the hits unconfirmed. What is left unconfirmed is the clamps
	// right after a stall, where QUIC's estimate caps the round trip the
	// acknowledgements show (docs/threat-model.md): 0 to 7 a run, up to 8%
	// under the race detector on a busy machine.
	if ts.SeenConfirmed*100 < ts.HitsSeen*88 {
		t.Errorf("%d of %d hits seen were not confirmed, want at most 12%%", ts.HitsSeen-ts.SeenConfirmed, ts.HitsSeen)
	}
}

// A thin uplink (32 kbit/s, a 10-packet drop-tail queue) on a 400 ms path
// never spirals, and the inputs keep arriving in time. The spiral: a clock
// started from a round trip the handshake's queue inflated ran a second
// ahead, so every datagram repeated a second of unacknowledged inputs,
// which filled the queue, which delayed the acknowledgements, which grew
// the datagrams. The clock now starts from the smallest round trip and
// pauses off a start far ahead, and the input budget (its own tests, in
// package client) cuts the datagrams when a queue builds all the same.
func TestThinUplinkDoesNotSpiral(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	down := netshim.Conditions{Latency: 200 * time.Millisecond}
	up := down
	up.Rate, up.Queue = 32000, 10
	sh, err := netshim.Start(netshim.Config{Listen: "127.0.0.1:0", Target: srv.Addr().String(), Up: up, Down: down, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	c := dial(t, srv, client.Config{Addr: sh.Addr().String(), Room: "thin", Name: "thin", Input: strafer(30)})
	stop := start(c)
	waitTicks(t, srv, "thin", 100) // the start: the handshake's queue drains, the clock settles
	p0, s0 := playerStats(t, srv, "thin", c.ID()), c.Stats()
	waitTicks(t, srv, "thin", 300)
	p1, s1 := playerStats(t, srv, "thin", c.ID()), c.Stats()
	for _, err := range stop() {
		if err != nil {
			t.Errorf("run: %v", err)
		}
	}
	applied, rooted := p1.Applied-p0.Applied, p1.Rooted-p0.Rooted
	perDatagram := float64(s1.BytesOut-s0.BytesOut) / float64(s1.DatagramsSent-s0.DatagramsSent)
	st := sh.Stats()
	t.Logf("%d of %d ticks applied in time; %.0f bytes a datagram, budget %d inputs (cut %d times); %d late; %d clock jumps; up: %d packets, %d lost to the full queue",
		applied, applied+rooted, perDatagram, s1.InputBudget, s1.BudgetCuts, p1.Late-p0.Late, s1.ClockJumps, st.Up.Packets, st.Up.Overflowed)
	if float64(applied) < 0.97*float64(applied+rooted) {
		t.Errorf("%d of %d ticks applied in time, want at least 97%%", applied, applied+rooted)
	}
	if perDatagram > 11+12*12 {
		t.Errorf("%.0f bytes a datagram: more than 12 inputs on a 32 kbit/s uplink", perDatagram)
	}
	// The handshake's queue inflates the round trip the clock starts
	// from; the first margins put it right with one jump back, where the
	// settling rule used to jump it ahead again after every jump back.
	if s1.ClockJumps > 2 {
		t.Errorf("%d clock jumps: the start oscillated", s1.ClockJumps)
	}
}

// With snapshots every other tick (snapshot_rate half the tick rate) a
// client draws remote players on the straight line between two snapshots,
// which is not the path the server's ticks took. A shooter that aims at the
// edge of a target that turns every few ticks, as drawn, has every hit it
// sees confirmed and no hit it did not see: the server rewinds to the line
// between the snapshots the shooter drew it between.
func TestHitsSeenAreConfirmedBetweenSparseSnapshots(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) {
		c.SnapshotRate = c.TickRate / 2
		c.Match.Health = 1e9 // nobody dies: every shot is comparable
	})
	far := shim(t, srv, 100*time.Millisecond, 0, 0, 11)
	target := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "sparse", Name: "target", Team: 1, Input: strafer(25)})
	var hold atomic.Bool
	var tally bots.Tally
	// Aim at the target's chest as drawn, 0.39 m to its side across the
	// line of sight (the capsule's radius is 0.4), with the loadout's first
	// weapon, a rifle, and fire whenever it may.
	edge := scripted(func(v *client.View) client.Intent {
		for i := range v.Players {
			if p := &v.Players[i]; p.Alive && p.Team != v.Welcome.Team {
				aim := v.Capsule(p)
				to := aim.A.Lerp(aim.B, 0.5).Sub(v.Eye())
				d := to.Add(geom.V(to.Z, 0, -to.X).Normalize().Scale(0.39))
				return client.Intent{Yaw: math.Atan2(d.X, d.Z), Pitch: math.Atan2(d.Y, math.Hypot(d.X, d.Z)),
					Fire: !hold.Load(), Weapon: v.Welcome.Loadout[0]}
			}
		}
		return client.Intent{}
	})
	cfg := client.Config{Addr: far, Room: "sparse", Name: "shooter", Team: 2, Input: edge}
	tally.Wire(&cfg)
	shooter, clamped := shootAt(t, srv, "sparse", target, cfg, &hold, 320)
	ts := tally.Stats()
	t.Logf("%d shots, %d hits seen, %d confirmed, %d hit events, %d false positives, %d clamped",
		shooter.Stats().ShotsFired, ts.HitsSeen, ts.SeenConfirmed, ts.HitEvents, ts.FalsePositives, clamped)
	if ts.HitsSeen < 12 {
		t.Fatalf("only %d hits seen: the test needs the shooter to see hits", ts.HitsSeen)
	}
	if clamped != 0 {
		t.Errorf("%d of the honest shooter's shots were clamped", clamped)
	}
	if ts.SeenConfirmed != ts.HitsSeen || ts.FalsePositives != 0 {
		t.Errorf("%d of %d hits seen confirmed, %d false positives of %d hit events; want all and none",
			ts.SeenConfirmed, ts.HitsSeen, ts.FalsePositives, ts.HitEvents)
	}
}

// shootAt plays target and the shooter cfg describes in room for ticks
// ticks, then holds the shooter's fire (hold) while the last hit events
// take their round trip, and returns the shooter and how many of its shots
// the server clamped.
func shootAt(t *testing.T, srv *server.Server, room string, target *client.Client, cfg client.Config, hold *atomic.Bool, ticks int64) (*client.Client, uint64) {
	t.Helper()
	shooter := dial(t, srv, cfg)
	stop := start(target, shooter)
	waitTicks(t, srv, room, ticks)
	hold.Store(true)
	waitTicks(t, srv, room, 10)
	clamped := playerStats(t, srv, room, shooter.ID()).Clamped
	stop()
	return shooter, clamped
}
