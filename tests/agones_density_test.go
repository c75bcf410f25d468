package tests

import (
	"slices"
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
