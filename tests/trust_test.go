package tests

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/bots"
	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/server"
)

// backtrack plays a raw shooter against a target running along +X on a 0 ms
// loopback link: every third tick it fires at where the target stood 30
// ticks (1.5 s) earlier, claiming view lag claim (ticks) with the same shot
// counter every time. It returns the shots the server fired for it and the
// hits registered (Hit or NoDamage events with it as the shooter).
func backtrack(t *testing.T, srv *server.Server, room, name string, target uint32, claim func(tick, snap uint32) float64, interp uint16) (shots uint32, hits int) {
	t.Helper()
	p := joinRaw(t, srv, srv.Addr().String(), protocol.Join{Room: room, Name: name, Team: 2, InterpDelay: interp})
	eye := p.welcome.Spawn
	eye[1] += p.welcome.EyeHeight
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var start uint32
	for p.nextSnapshot(ctx) {
		s := p.newest
		if start == 0 {
			start = s
		}
		if s > start+150 {
			break
		}
		tick := s + 3 // two ticks of lead, as an SDK client keeps
		in := protocol.Input{ViewLag: protocol.QuantizeLag(claim(tick, s)), Shot: 31598}
		pos, ok := p.seen[tick-30][target]
		now, seen := p.seen[s][target]
		if ok && seen && now[0] < 24 && s > start+40 && tick%3 == 0 && s < start+140 {
			chest := [3]float64{pos[0], pos[1] + 0.9, pos[2]}
			d := [3]float64{chest[0] - eye[0], chest[1] - eye[1], chest[2] - eye[2]}
			in.Yaw = protocol.QuantizeYaw(math.Atan2(d[0], d[2]))
			in.Pitch = protocol.QuantizePitch(math.Atan2(d[1], math.Hypot(d[0], d[2])))
			in.Buttons = 1 // fire
		}
		p.send(tick, in)
	}
	shots = p.header.Own.Shots
	p.conn.CloseWithError(0, "bye")
	for ev := range p.events {
		if (ev.Kind == protocol.EventHit || ev.Kind == protocol.EventNoDamage) && ev.Player == p.welcome.Player {
			hits++
		}
	}
	return shots, hits
}

// A client on a 0 ms link that claims a 30-tick view lag and aims where its
// target stood 1.5 s earlier hits no more often than an honest client with
// the same aim: the server grants it only the lag it measured (round trip,
// input lead, interpolation delay, tolerance). On a server that grants any
// claim (a tolerance of 10 s), the same cheat hits most shots.
func TestBacktrackClaimBuysNoHit(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, tolerance time.Duration) (cheat, honest [2]int, m metricFamilies) {
		srv := startServer(t, func(c *server.Config) {
			c.Match.Health = 1e9 // nobody dies: every shot is comparable
			c.LagComp.ViewLagTolerance = tolerance
		})
		target := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "backtrack", Name: "runner", Team: 1,
			Input: scripted(func(*client.View) client.Intent { return client.Intent{MoveX: 1} })})
		stop := start(target)
		defer stop()
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			s, h := backtrack(t, srv, "backtrack", "cheat", target.ID(), func(uint32, uint32) float64 { return 30 }, 250)
			cheat = [2]int{int(s), h}
		}()
		go func() {
			defer wg.Done()
			// Honest: it renders 2 ticks (100 ms) behind its newest snapshot.
			s, h := backtrack(t, srv, "backtrack", "honest", target.ID(), func(tick, snap uint32) float64 { return float64(tick-snap) + 2 }, 100)
			honest = [2]int{int(s), h}
		}()
		wg.Wait()
		return cheat, honest, gather(t, srv)
	}
	cheat, honest, m := run(t, 200*time.Millisecond)
	clamped := m.value("rewind_view_lag_clamped_total", "reason", "measured")
	t.Logf("measured bound: the cheat hit %d of %d shots, the honest client %d of %d; %v shots clamped",
		cheat[1], cheat[0], honest[1], honest[0], clamped)
	if cheat[0] < 15 || honest[0] < 15 {
		t.Fatalf("too few shots fired (%d, %d) for the test to mean anything", cheat[0], honest[0])
	}
	if cheat[1] > honest[1] {
		t.Errorf("the 30-tick claim hit %d times, the honest client %d", cheat[1], honest[1])
	}
	if clamped != float64(cheat[0]) {
		t.Errorf("rewind_view_lag_clamped_total{reason=measured} = %v, want the cheat's %d shots and none of the honest client's", clamped, cheat[0])
	}
	open, _, _ := run(t, 10*time.Second)
	t.Logf("any claim granted: the cheat hit %d of %d shots", open[1], open[0])
	if open[1]*2 < open[0] {
		t.Errorf("granted its claim, the cheat hit only %d of %d shots: the test would not catch a backtrack", open[1], open[0])
	}
}

// Hits on a target that respawned invulnerable are NoDamage events with
// their reason, never a Hit of 0 damage; the one hit that killed is a Hit
// of the health it took.
func TestHitsOnTheInvulnerableAreNoDamage(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) {
		c.Match.Health = 20 // one rifle hit
		c.Match.RespawnTicks = 0
		c.Match.InvulnerableTicks = 10000
	})
	var mu sync.Mutex
	var events []protocol.Event
	target := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "immune", Name: "target", Team: 1, Input: strafer(25)})
	shooter := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "immune", Name: "shooter", Team: 2,
		Input: bots.NewBot(bots.BotConfig{Still: true}),
		OnEvent: func(ev protocol.Event) {
			if ev.Kind == protocol.EventHit || ev.Kind == protocol.EventNoDamage {
				mu.Lock()
				events = append(events, ev)
				mu.Unlock()
			}
		}})
	stop := start(target, shooter)
	waitTicks(t, srv, "immune", 200)
	stop()
	mu.Lock()
	defer mu.Unlock()
	hits, immune := 0, 0
	for _, ev := range events {
		switch {
		case ev.Kind == protocol.EventHit:
			hits++
			if ev.Damage != 20 || ev.Other != target.ID() {
				t.Errorf("hit %+v, want the 20 health the target had", ev)
			}
		case ev.Reason == protocol.NoDamageInvulnerable && (ev.Damage == 20 || ev.Flags&protocol.HitStreak != 0 && ev.Damage == 30):
			immune++
		default:
			t.Errorf("no-damage event %+v, want reason invulnerable and the rifle's 20 (30 with its streak bonus)", ev)
		}
	}
	t.Logf("%d hit, %d on the invulnerable", hits, immune)
	if hits != 1 || immune < 5 {
		t.Errorf("%d hits and %d no-damage events, want the one kill and then only no-damage", hits, immune)
	}
	if v := gather(t, srv).value("rewind_hits_total", "outcome", "invulnerable"); v < float64(immune) {
		t.Errorf("rewind_hits_total{outcome=invulnerable} = %v, want ≥ %d", v, immune)
	}
}

// A player that sends no input loses its seat after input_timeout, with
// close code 5 and the reason; a player that plays keeps its own.
func TestIdlePlayerLosesItsSeat(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) { c.InputTimeout = time.Second })
	active := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "idle", Name: "active", Input: strafer(20)})
	stop := start(active)
	idle := joinRaw(t, srv, srv.Addr().String(), protocol.Join{Room: "idle", Name: "squatter"})
	began := time.Now()
	code, reason := idle.closed(t, 10*time.Second)
	if code != protocol.CloseIdle || reason != "no input for 1s" {
		t.Errorf("closed with %d %q, want %d %q", code, reason, protocol.CloseIdle, "no input for 1s")
	}
	if d := time.Since(began); d < 900*time.Millisecond {
		t.Errorf("closed after %v, before the timeout", d)
	}
	waitTicks(t, srv, "idle", 60) // three more seconds of play
	if players := roomStats(t, srv, "idle").Players; len(players) != 1 || players[0].ID != active.ID() {
		t.Errorf("the room holds %+v, want only the active player", players)
	}
	for _, err := range stop() {
		if err != nil {
			t.Errorf("the active player: %v", err)
		}
	}
}
