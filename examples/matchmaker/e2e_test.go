package matchmaker_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/agones"
	"github.com/rewind-gg/rewind/agones/agonestest"
	"github.com/rewind-gg/rewind/agones/allocatortest"
	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/examples/matchmaker"
	"github.com/rewind-gg/rewind/internal/servertest"
	"github.com/rewind-gg/rewind/server"
)

// The end-to-end tests run real Rewind servers, each under an SDK fake
// (agonestest), behind the fake allocator (allocatortest); the matchmaker
// allocates through the allocator and players join with the Go client,
// their tokens and the pinned certificates.

// rewindServer starts a Rewind server under a new SDK fake, admitting the
// holders of pub's tokens to the rooms its allocations open, and adds its
// GameServer to a, in the Fleet rewind, as name. With matches "list" its
// GameServer declares the Counter rooms and the Lists matches and players,
// as deploy/agones/fleet-density.yaml does, for 3 matches.
func rewindServer(t *testing.T, a *allocatortest.Allocator, name string, pub ed25519.PublicKey, matches string, change func(*server.Config)) (*server.Server, *agonestest.Server) {
	t.Helper()
	sdk := agonestest.New(t)
	if matches == matchmaker.MatchesList {
		sdk.SetCounter("rooms", 0, 3)
		sdk.SetList("matches", 3)
		sdk.SetList("players", 36)
	}
	srv := servertest.Start(t, func(c *server.Config) {
		c.Auth.Keys = []ed25519.PublicKey{pub}
		c.Auth.Rooms = server.RoomsByOperator
		c.Agones.Mode, c.Agones.SDKAddress, c.Agones.HealthPeriod = "on", sdk.Addr(), 200*time.Millisecond
		c.Agones.RetireAfterMatches = 0 // the server goes Ready again rather than shut down
		if matches == matchmaker.MatchesList {
			c.Agones.Matches, c.Agones.MaxMatches = "list", 3
		} else {
			c.Agones.Players = "none"
		}
		if change != nil {
			change(c)
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := sdk.Await(ctx, "POST", "/ready", 1); err != nil {
		t.Fatal(err)
	}
	port := int32(srv.Addr().(*net.UDPAddr).Port)
	a.Add(allocatortest.GameServer{Name: name, Labels: map[string]string{"agones.dev/fleet": "rewind"},
		Ports: []agones.Port{{Name: "default", Port: port}}, SDK: sdk})
	return srv, sdk
}

// standStill is a player who does nothing.
type standStill struct{}

func (standStill) Intent(*client.View) client.Intent { return client.Intent{} }

// join joins with the ticket as a game client does (matchmaker.Dial,
// reporting refusals to mm) and returns the ticket it joined with; the
// test closes the client when it ends.
func join(t *testing.T, mm *matchmaker.Matchmaker, tk matchmaker.Ticket) (*client.Client, matchmaker.Ticket) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c, joined, err := matchmaker.Dial(ctx, tk, client.Config{Input: standStill{}}, mm.Refused)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, joined
}

// users returns the users of the server's room, sorted, and whether the
// room is open.
func users(t *testing.T, srv *server.Server, room string) ([]string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	all, err := srv.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if r.ID == room {
			var us []string
			for _, p := range r.Players {
				us = append(us, p.User)
			}
			slices.Sort(us)
			return us, true
		}
	}
	return nil, false
}

// The whole flow, one match a GameServer: the matchmaker allocates through
// the allocator over mTLS, the server opens the match's room from the
// allocation, and both players join with their tokens, pinning the
// certificate the allocation's annotation carried.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	a := allocatortest.New(t)
	pub, priv := signingKey(t)
	srv, sdk := rewindServer(t, a, "gs-1", pub, matchmaker.MatchesAnnotation, nil)
	mm := newMatchmaker(t, config(t, a, priv))
	as, err := mm.Allocate(t.Context(), twoPlayers("m-1"))
	if err != nil {
		t.Fatal(err)
	}
	if as.CertSHA256 != hex.EncodeToString(srv.CertSHA256()) || as.Addr != srv.Addr().String() {
		t.Errorf("assignment at %s pinning %s; the server is at %s with %x", as.Addr, as.CertSHA256, srv.Addr(), srv.CertSHA256())
	}
	for _, tk := range as.Tickets {
		c, joined := join(t, mm, tk)
		if joined.Room != "m-1" || c.Welcome().Team != twoPlayers("").Players[slices.Index(as.Tickets, tk)].Team {
			t.Errorf("user %s joined room %s on team %d", tk.User, joined.Room, c.Welcome().Team)
		}
	}
	if got, _ := users(t, srv, "m-1"); !slices.Equal(got, []string{"u-1", "u-2"}) {
		t.Errorf("room m-1 holds %q", got)
	}
	if gs := sdk.GameServer(); gs.State != "Allocated" || gs.Annotations["rewind.gg/match"] != "m-1" {
		t.Errorf("the GameServer: %+v", gs)
	}
}

// High density: two matches allocated on one GameServer (the second
// re-allocates the Allocated one), each with its room and its players.
func TestEndToEndHighDensity(t *testing.T) {
	t.Parallel()
	a := allocatortest.New(t)
	pub, priv := signingKey(t)
	srv, sdk := rewindServer(t, a, "gs-1", pub, matchmaker.MatchesList, nil)
	rewindServer(t, a, "gs-2", pub, matchmaker.MatchesList, nil)
	cfg := config(t, a, priv)
	cfg.Matches = matchmaker.MatchesList
	mm := newMatchmaker(t, cfg)
	for _, id := range []string{"m-1", "m-2"} {
		as, err := mm.Allocate(t.Context(), twoPlayers(id))
		if err != nil {
			t.Fatal(err)
		}
		if as.GameServer != "gs-1" {
			t.Errorf("match %s on %s, want gs-1 (Allocated, with room)", id, as.GameServer)
		}
		join(t, mm, as.Tickets[0])
		if got, _ := users(t, srv, id); !slices.Equal(got, []string{"u-1"}) {
			t.Errorf("room %s holds %q", id, got)
		}
	}
	if got := sdk.ListValues("matches"); !slices.Equal(got, []string{"m-1", "m-2"}) {
		t.Errorf("gs-1's matches List %q", got)
	}
}

// A player refused with full reports it; the match is allocated again, in
// a new room on another GameServer, and the player joins it; the player
// already in the refused room follows with a new ticket.
func TestFullMovesTheMatch(t *testing.T) {
	t.Parallel()
	a := allocatortest.New(t)
	pub, priv := signingKey(t)
	// gs-a, first by name, seats one player: too few for the match.
	small, _ := rewindServer(t, a, "gs-a", pub, matchmaker.MatchesAnnotation, func(c *server.Config) { c.MaxPlayers = 1 })
	big, _ := rewindServer(t, a, "gs-b", pub, matchmaker.MatchesAnnotation, nil)
	mm := newMatchmaker(t, config(t, a, priv))
	as, err := mm.Allocate(t.Context(), twoPlayers("m-1"))
	if err != nil {
		t.Fatal(err)
	}
	if as.GameServer != "gs-a" {
		t.Fatalf("allocated on %s, want gs-a", as.GameServer)
	}
	first, _ := join(t, mm, as.Tickets[0])
	_, joined := join(t, mm, as.Tickets[1]) // refused full, reported, allocated again
	if joined.Room != "m-1.2" || joined.Addr != big.Addr().String() {
		t.Fatalf("u-2 joined room %s at %s, want m-1.2 at gs-b (%s)", joined.Room, joined.Addr, big.Addr())
	}
	cur, _ := mm.Current("m-1")
	if cur.Allocation != 2 || cur.GameServer != "gs-b" {
		t.Errorf("Current: %+v", cur)
	}
	first.Close() // u-1 leaves the refused room, and follows the match
	tk, err := mm.Ticket("m-1", "u-1")
	if err != nil {
		t.Fatal(err)
	}
	join(t, mm, tk)
	if got, _ := users(t, big, "m-1.2"); !slices.Equal(got, []string{"u-1", "u-2"}) {
		t.Errorf("room m-1.2 on gs-b holds %q", got)
	}
	if _, open := users(t, small, "m-1.2"); open {
		t.Error("gs-a has a room m-1.2")
	}
}

// A player who comes after the match's room has closed (the server
// hosted it, nobody came in time) is refused with wrong_room; once that
// cannot be a room not open yet, the match is allocated again, on the same
// GameServer (the only one), in a new room: the server would refuse the
// match id it has hosted.
func TestWrongRoomReallocatesWithANewID(t *testing.T) {
	t.Parallel()
	a := allocatortest.New(t)
	pub, priv := signingKey(t)
	srv, sdk := rewindServer(t, a, "gs-1", pub, matchmaker.MatchesList, func(c *server.Config) {
		c.Match.EmptyTimeout = time.Second
	})
	cfg := config(t, a, priv)
	cfg.Matches, cfg.RoomOpenWait = matchmaker.MatchesList, time.Second
	mm := newMatchmaker(t, cfg)
	as, err := mm.Allocate(t.Context(), twoPlayers("m-1"))
	if err != nil {
		t.Fatal(err)
	}
	// Nobody comes: the room closes after match.empty_timeout (as long as
	// RoomOpenWait), and the server takes m-1 off the matches List.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := sdk.Await(ctx, "POST", "/v1beta1/lists/matches:removeValue", 1); err != nil {
		t.Fatal(err)
	}
	_, joined := join(t, mm, as.Tickets[0])
	if !strings.HasPrefix(joined.Room, "m-1.") {
		t.Fatalf("u-1 joined room %s, want a new room m-1.N", joined.Room)
	}
	if got, _ := users(t, srv, joined.Room); !slices.Equal(got, []string{"u-1"}) {
		t.Errorf("room %s holds %q", joined.Room, got)
	}
	reqs := a.Requests()
	if len(reqs) < 2 || !strings.Contains(reqs[1], `"addValues":["m-1.2"]`) {
		t.Errorf("the allocation requests %q; want the second to add m-1.2", reqs)
	}
}
