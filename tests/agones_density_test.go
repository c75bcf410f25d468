package tests

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/agones/agonestest"
	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/token"
)

// densityFake is a fake SDK server whose GameServer declares what
// deploy/agones/fleet.yaml declares for high density: the Counter rooms
// and the Lists matches and players.
func densityFake(t *testing.T) *agonestest.Server {
	fake := agonestest.New(t)
	fake.SetCounter("rooms", 0, 10)
	fake.SetList("matches", 10)
	fake.SetList("players", 100)
	t.Cleanup(func() {
		if t.Failed() {
			gs := fake.GameServer()
			t.Logf("the fake's GameServer: %+v", gs)
			for _, c := range fake.Calls() {
				t.Logf("call %s %s %s", c.Method, c.Path, c.Body)
			}
		}
	})
	return fake
}

// densityServer is a server under the fake, hosting up to 3 matches.
func densityServer(t *testing.T, fake *agonestest.Server, change func(*server.Config)) (*server.Server, func(room, user string, team uint8) *client.Client) {
	srv, priv := tokenServer(t, func(c *server.Config) {
		c.Agones.Mode, c.Agones.SDKAddress, c.Agones.HealthPeriod = "on", fake.Addr(), 200*time.Millisecond
		c.Agones.Matches, c.Agones.MaxMatches, c.Agones.RetireAfterMatches = "list", 3, 0
		c.Auth.Rooms = server.RoomsByOperator
		c.Match.EmptyTimeout = time.Second
		if change != nil {
			change(c)
		}
	})
	join := func(room, user string, team uint8) *client.Client {
		return dial(t, srv, client.Config{Addr: srv.Addr().String(), Token: token.Encode(sign(t, priv, claims(room, user, team))), Input: strafer(5)})
	}
	return srv, join
}

// allocate does what the matchmaker's GameServerAllocation of
// docs/deploy.md does: one more on the rooms Counter, the match's id on
// the matches List.
func allocate(fake *agonestest.Server, match string) {
	fake.AllocateWith(agonestest.Allocation{
		Increment: map[string]int64{"rooms": 1},
		AddValues: map[string][]string{"matches": {match}},
	})
}

// awaitRoom waits for the match's room to open on srv.
func awaitRoom(t *testing.T, srv *server.Server, match string) {
	t.Helper()
	until(t, 10*time.Second, match+"'s room never opened", func() bool { _, ok := findRoom(t, srv, match); return ok })
}

func counterIs(fake *agonestest.Server, count, capacity int64) func() bool {
	return func() bool {
		n, c, _ := fake.Counter("rooms")
		return n == count && c == capacity
	}
}

// Three allocations of one GameServer open three rooms and the Counter
// reads 3; the GameServer stays Allocated while one match runs, rooms that
// close give their slots back, and once none is left the server is Ready
// again, with its capacity.
func TestAgonesHighDensity(t *testing.T) {
	t.Parallel()
	fake := densityFake(t)
	srv, join := densityServer(t, fake, nil)
	await(t, fake, "POST", "/ready", 1)
	until(t, 10*time.Second, "the rooms Counter's capacity never became agones.max_matches", counterIs(fake, 0, 3))

	for _, m := range []string{"m-1", "m-2", "m-3"} {
		allocate(fake, m)
	}
	until(t, 10*time.Second, "the three matches' rooms never opened", func() bool {
		for _, m := range []string{"m-1", "m-2", "m-3"} {
			if _, ok := findRoom(t, srv, m); !ok {
				return false
			}
		}
		return true
	})
	if n, c, _ := fake.Counter("rooms"); n != 3 || c != 3 {
		t.Errorf("rooms Counter %d/%d, want 3/3", n, c)
	}
	alice, bob := join("m-1", "alice", 1), join("m-2", "bob", 1)
	stop := start(alice, bob)
	defer stop()
	until(t, 10*time.Second, "the players list never held alice and bob", func() bool {
		got := fake.ListValues("players")
		slices.Sort(got)
		return slices.Equal(got, []string{"alice", "bob"})
	})

	// m-3 has nobody: it closes after the empty timeout, leaves the list,
	// and its slot is free. The others hold the GameServer Allocated.
	until(t, 10*time.Second, "m-3 never left the matches list", func() bool {
		got := fake.ListValues("matches")
		slices.Sort(got)
		return slices.Equal(got, []string{"m-1", "m-2"})
	})
	until(t, 10*time.Second, "the Counter never gave m-3's slot back", counterIs(fake, 2, 3))
	if st := fake.GameServer().State; st != "Allocated" {
		t.Errorf("state %q with two matches running, want Allocated", st)
	}

	// A re-allocation of the Allocated GameServer (Agones' high-density
	// pattern) opens a fourth match in the freed slot.
	allocate(fake, "m-4")
	until(t, 10*time.Second, "the re-allocated match's room never opened", func() bool { _, ok := findRoom(t, srv, "m-4"); return ok })

	stop()
	alice.Close()
	bob.Close()
	until(t, 20*time.Second, "the server never went Ready again with its matches ended", func() bool {
		return fake.GameServer().State == "Ready" && len(fake.ListValues("matches")) == 0 && counterIs(fake, 0, 3)()
	})
	if got := fake.ListValues("players"); len(got) != 0 {
		t.Errorf("players list %q after everyone left", got)
	}
	if n := count(fake, "POST", "/ready"); n != 2 {
		t.Errorf("%d Ready calls, want 2 (start, and after the last match)", n)
	}
	if n := count(fake, "POST", "/shutdown"); n != 0 {
		t.Errorf("%d Shutdown calls: the server does not retire (agones.retire_after_matches = 0)", n)
	}
	select {
	case <-srv.Stopping():
		t.Error("the server stopped, but it is not retiring")
	default:
	}
}

// An allocation that opens no room gives its capacity back: off the list,
// its Counter slot free, and the GameServer Ready again, within the bound
// docs/deploy.md states (5 s; at once against the fake).
func TestAgonesBadAllocationReturnsToReady(t *testing.T) {
	t.Parallel()
	bound := 5 * time.Second
	t.Run("list", func(t *testing.T) {
		t.Parallel()
		fake := densityFake(t)
		srv, _ := densityServer(t, fake, nil)
		until(t, 10*time.Second, "the rooms Counter's capacity never became agones.max_matches", counterIs(fake, 0, 3))
		for _, bad := range []agonestest.Allocation{
			// An id that is no room name.
			{Increment: map[string]int64{"rooms": 1}, AddValues: map[string][]string{"matches": {"not a room/name"}}},
			// No id at all: the matchmaker forgot addValues.
			{Increment: map[string]int64{"rooms": 1}},
		} {
			fake.AllocateWith(bad)
			at := time.Now()
			until(t, 2*bound, "the bad allocation was never given back", func() bool {
				return fake.GameServer().State == "Ready" && len(fake.ListValues("matches")) == 0 && counterIs(fake, 0, 3)()
			})
			if took := time.Since(at); took > bound {
				t.Errorf("the bad allocation was given back after %v, over the %v bound", took, bound)
			}
		}
		if v := gather(t, srv).value("rewind_agones_allocations_refused_total", "reason", "invalid"); v != 1 {
			t.Errorf("rewind_agones_allocations_refused_total{reason=invalid} = %v, want 1", v)
		}
	})
	t.Run("annotation", func(t *testing.T) {
		t.Parallel()
		fake := agonestest.New(t)
		srv, _ := tokenServer(t, func(c *server.Config) {
			c.Agones.Mode, c.Agones.SDKAddress = "on", fake.Addr()
			c.Auth.Rooms = server.RoomsByOperator
		})
		await(t, fake, "POST", "/ready", 1)
		for i, annotations := range []map[string]string{nil, {"rewind.gg/match": "not a room/name"}} {
			fake.Allocate(nil, annotations)
			at := time.Now()
			await(t, fake, "POST", "/ready", 2+i)
			if took := time.Since(at); took > bound {
				t.Errorf("the bad allocation was given back after %v, over the %v bound", took, bound)
			}
			if st := fake.GameServer().State; st != "Ready" {
				t.Errorf("state %q after a bad allocation, want Ready", st)
			}
		}
		select {
		case <-srv.Stopping():
			t.Error("the server stopped after allocations that opened no room: it hosted no match")
		default:
		}
	})
}

// An SDK server outage while players join and leave: the calls fail and
// are retried with backoff, the watch too, and once the SDK server is back
// the players list is the rooms' players.
func TestAgonesOutageResyncsPlayers(t *testing.T) {
	t.Parallel()
	fake := densityFake(t)
	srv, join := densityServer(t, fake, func(c *server.Config) { c.Match.EmptyTimeout = 30 * time.Second })
	until(t, 10*time.Second, "the rooms Counter's capacity never became agones.max_matches", counterIs(fake, 0, 3))
	allocate(fake, "m-1")
	until(t, 10*time.Second, "the match's room never opened", func() bool { _, ok := findRoom(t, srv, "m-1"); return ok })
	alice := join("m-1", "alice", 1)
	stopAlice := start(alice)
	until(t, 10*time.Second, "alice never reached the players list", func() bool {
		return slices.Equal(fake.ListValues("players"), []string{"alice"})
	})

	watches := len(fake.CallTimes("GET", "/watch/gameserver"))
	fake.SetOutage(true)
	bob, carol := join("m-1", "bob", 2), join("m-1", "carol", 1)
	stop := start(bob, carol)
	defer stop()
	waitPlayers(t, srv, "m-1", 3)
	stopAlice()
	alice.Close()
	waitPlayersBelow(t, srv, "m-1", 3)
	// The watch backs off: 250 ms, 500 ms, 1 s, 2 s between attempts.
	until(t, 20*time.Second, "the watch was not tried again four times", func() bool {
		return len(fake.CallTimes("GET", "/watch/gameserver")) >= watches+5
	})
	at := fake.CallTimes("GET", "/watch/gameserver")[watches:]
	for i, want := range []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second} {
		if gap := at[i+1].Sub(at[i]); gap < want*9/10 {
			t.Errorf("watch attempt %d came %v after the one before, want at least %v (backoff)", i+2, gap, want)
		}
	}
	if got := fake.ListValues("players"); !slices.Equal(got, []string{"alice"}) {
		t.Errorf("players list %q during the outage: it cannot have changed", got)
	}

	fake.SetOutage(false)
	until(t, 30*time.Second, "the players list never matched the room's players after the outage", func() bool {
		got := fake.ListValues("players")
		slices.Sort(got)
		return slices.Equal(got, []string{"bob", "carol"})
	})
	// (Alice's removal may not have been tried during the outage: the
	// watch may have broken before it showed her on the list.)
	m := gather(t, srv)
	for _, call := range []string{"watch", "player_add"} {
		if v := m.value("rewind_agones_call_errors_total", "call", call); v < 1 {
			t.Errorf("rewind_agones_call_errors_total{call=%s} = %v, want at least 1 after the outage", call, v)
		}
	}
}

// A matchmaker that allocates a match id again (a retry after a timeout)
// gets it taken off the list: a match is played once, and an id left on
// the list would hold the GameServer Allocated for ever. An id refused
// before (here: one too many) is hosted when it comes again and the server
// has room.
func TestAgonesRepeatedMatchIDIsGivenBack(t *testing.T) {
	t.Parallel()
	fake := densityFake(t)
	srv, join := densityServer(t, fake, func(c *server.Config) { c.Agones.MaxMatches = 1 })
	until(t, 10*time.Second, "the rooms Counter's capacity never became agones.max_matches", counterIs(fake, 0, 1))

	// m-1 is hosted; m-2 comes while it runs (the Counter lagging) and is
	// refused: full.
	allocate(fake, "m-1")
	awaitRoom(t, srv, "m-1")
	alice := join("m-1", "alice", 1)
	stop := start(alice)
	defer stop()
	fake.AllocateWith(agonestest.Allocation{AddValues: map[string][]string{"matches": {"m-2"}}})
	until(t, 5*time.Second, "the allocation past max_matches was never given back", func() bool {
		return slices.Equal(fake.ListValues("matches"), []string{"m-1"})
	})
	stop()
	alice.Close()
	until(t, 20*time.Second, "the server never went Ready again with m-1 ended", func() bool {
		return fake.GameServer().State == "Ready" && len(fake.ListValues("matches")) == 0 && counterIs(fake, 0, 1)()
	})

	// The matchmaker retries m-1: off the list, the slot free, Ready.
	allocate(fake, "m-1")
	at := time.Now()
	until(t, 10*time.Second, "the repeated match id never left the matches list", func() bool {
		return fake.GameServer().State == "Ready" && len(fake.ListValues("matches")) == 0 && counterIs(fake, 0, 1)()
	})
	took := time.Since(at)
	t.Logf("the repeated id was given back in %v", took)
	if took > 5*time.Second {
		t.Errorf("the repeated id was given back after %v, over the 5s bound", took)
	}
	if _, ok := findRoom(t, srv, "m-1"); ok {
		t.Error("m-1's room opened again")
	}
	// It retries m-2: the server has room now.
	allocate(fake, "m-2")
	awaitRoom(t, srv, "m-2") // refused when the server was full, opened when it came again
	m := gather(t, srv)
	for reason, want := range map[string]float64{"repeated": 1, "full": 1} {
		if v := m.value("rewind_agones_allocations_refused_total", "reason", reason); v != want {
			t.Errorf("rewind_agones_allocations_refused_total{reason=%s} = %v, want %v", reason, v, want)
		}
	}
}

// A server that retires after its matches closes its capacity with the
// match that reaches agones.retire_after_matches, not at some later event,
// refuses an allocation that crossed it, and shuts the GameServer down once
// its matches have ended, a repeated id included.
func TestAgonesRetiresAtItsLastMatch(t *testing.T) {
	t.Parallel()
	fake := densityFake(t)
	srv, join := densityServer(t, fake, func(c *server.Config) { c.Agones.RetireAfterMatches = 2 })
	until(t, 10*time.Second, "the rooms Counter's capacity never became agones.max_matches", counterIs(fake, 0, 3))
	allocate(fake, "m-1")
	awaitRoom(t, srv, "m-1")
	alice := join("m-1", "alice", 1)
	stopAlice := start(alice)
	defer stopAlice()
	// The matchmaker retries m-1 while it runs: nothing changes.
	allocate(fake, "m-1")
	// Past the settling of every call made so far (3 s), so that only the
	// allocation itself can make the server act.
	<-time.After(3500 * time.Millisecond)
	if n, c, _ := fake.Counter("rooms"); n != 1 || c != 3 {
		t.Fatalf("rooms Counter %d/%d with one match, want 1/3", n, c)
	}

	allocate(fake, "m-2")
	at := time.Now()
	until(t, 10*time.Second, "the capacity never closed at the last match", counterIs(fake, 2, 2))
	bob := join("m-2", "bob", 1)
	stopBob := start(bob)
	defer stopBob()
	took := time.Since(at)
	t.Logf("the capacity closed %v after the match that reached retire_after_matches", took)
	if took > 2*time.Second {
		t.Errorf("the capacity closed %v after the match that reached retire_after_matches, want at once (under 2s)", took)
	}
	// An allocation that crossed the closing: refused.
	fake.AllocateWith(agonestest.Allocation{AddValues: map[string][]string{"matches": {"m-3"}}})
	until(t, 5*time.Second, "the allocation that came while retiring was never given back", func() bool {
		got := fake.ListValues("matches")
		slices.Sort(got)
		return slices.Equal(got, []string{"m-1", "m-2"})
	})
	if _, ok := findRoom(t, srv, "m-3"); ok {
		t.Error("m-3's room opened on a retiring server")
	}

	// The matches end (their players leave): Shutdown.
	stopAlice()
	alice.Close()
	stopBob()
	bob.Close()
	select {
	case <-srv.Stopping():
	case <-time.After(30 * time.Second):
		t.Fatalf("the retired server never asked to stop; the GameServer: %+v", fake.GameServer())
	}
	if v := gather(t, srv).value("rewind_agones_allocations_refused_total", "reason", "retiring"); v != 1 {
		t.Errorf("rewind_agones_allocations_refused_total{reason=retiring} = %v, want 1", v)
	}
}

// SIGTERM (a drain) closes the rooms Counter's capacity at once; an
// allocation already on its way is refused and given back; the running
// match finishes, and its result is written.
func TestAgonesDrainClosesTheCapacity(t *testing.T) {
	t.Parallel()
	fake := densityFake(t)
	resultsFile := filepath.Join(t.TempDir(), "results.jsonl")
	srv, join := densityServer(t, fake, func(c *server.Config) {
		c.Match.EmptyTimeout = 30 * time.Second
		c.Results.File = resultsFile
	})
	until(t, 10*time.Second, "the rooms Counter's capacity never became agones.max_matches", counterIs(fake, 0, 3))
	allocate(fake, "m-1")
	awaitRoom(t, srv, "m-1")
	alice := join("m-1", "alice", 1)
	stop := start(alice)
	defer stop()
	waitPlayers(t, srv, "m-1", 1)
	<-time.After(3500 * time.Millisecond) // past the settling of every call so far

	drained := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	at := time.Now()
	go func() { drained <- srv.Drain(ctx) }()
	until(t, 10*time.Second, "the drain never closed the rooms Counter's capacity", counterIs(fake, 1, 1))
	took := time.Since(at)
	t.Logf("the capacity closed %v after the drain began", took)
	if took > 2*time.Second {
		t.Errorf("the capacity closed %v after the drain began, want at once (under 2s)", took)
	}

	// The allocator chose this GameServer before the capacity closed.
	allocate(fake, "m-2")
	until(t, 5*time.Second, "the allocation that came during the drain was never given back", func() bool {
		return slices.Equal(fake.ListValues("matches"), []string{"m-1"}) && counterIs(fake, 1, 1)()
	})
	if _, ok := findRoom(t, srv, "m-2"); ok {
		t.Error("m-2's room opened on a draining server")
	}
	select {
	case err := <-drained:
		t.Fatalf("the drain ended (%v) with a match running", err)
	default:
	}
	stop()
	alice.Close()
	if err := <-drained; err != nil {
		t.Fatalf("drain: %v", err)
	}
	if b, err := os.ReadFile(resultsFile); err != nil || !strings.Contains(string(b), `"match_id":"m-1"`) {
		t.Errorf("results file %q (%v): m-1's result missing", b, err)
	}
	if st := fake.GameServer().State; st != "Allocated" {
		t.Errorf("state %q after the drain: a draining server does not go Ready (Kubernetes is deleting it)", st)
	}
	if v := gather(t, srv).value("rewind_agones_allocations_refused_total", "reason", "draining"); v != 1 {
		t.Errorf("rewind_agones_allocations_refused_total{reason=draining} = %v, want 1", v)
	}
}
