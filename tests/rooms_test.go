package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/server"
)

// driveByFrom sends j from local and leaves at once; it fails the test on
// a network error and returns the Reject, if any.
func driveByFrom(t *testing.T, srv *server.Server, local string, j protocol.Join) *protocol.Reject {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rj, err := driveBy(ctx, srv, local, j)
	if err != nil {
		t.Fatalf("join %+v from %s: %v", j, local, err)
	}
	return rj
}

// waitClosed waits until the room has closed and returns when it saw it
// gone.
func waitClosed(t *testing.T, srv *server.Server, room string, within time.Duration) time.Time {
	t.Helper()
	until(t, within, "room "+room+" did not close", func() bool { _, open := findRoom(t, srv, room); return !open })
	return time.Now()
}

// matchesEnded returns how many matches ended unplayed and empty.
func matchesEnded(t *testing.T, srv *server.Server) (unplayed, empty float64) {
	t.Helper()
	m := gather(t, srv)
	return m.value("rewind_matches_total", "reason", "unplayed"), m.value("rewind_matches_total", "reason", "empty")
}

// A room a join created, left at once, closes after match.unplayed_timeout
// (here 1 s, beside the default empty_timeout of 30 s), as "unplayed". In
// token mode such a room was no match: a token for it opens it again.
func TestUnplayedRoomClosesSoon(t *testing.T) {
	t.Parallel()
	srv, priv := tokenServer(t, func(c *server.Config) { c.Match.UnplayedTimeout = time.Second })
	if rj := driveByFrom(t, srv, "127.0.0.1", protocol.Join{Token: sign(t, priv, claims("drive-by", "alice", 0))}); rj != nil {
		t.Fatalf("alice: %+v", rj)
	}
	left := time.Now()
	if d := waitClosed(t, srv, "drive-by", 10*time.Second).Sub(left); d < 900*time.Millisecond {
		t.Errorf("the room closed %v after its player left, before match.unplayed_timeout", d)
	}
	if u, e := matchesEnded(t, srv); u != 1 || e != 0 {
		t.Errorf("matches ended unplayed %v, empty %v; want 1 and 0", u, e)
	}
	if _, rj := answer(t, srv, "127.0.0.1", protocol.Join{Token: sign(t, priv, claims("drive-by", "bob", 0))}); rj != nil {
		t.Errorf("a token for the unplayed room: %+v, want it opened again", rj)
	}
}

// A room a player played in (its inputs applied for longer than
// match.unplayed_timeout) waits match.empty_timeout once everybody has
// left, as before: its players may come back.
func TestPlayedRoomWaitsEmptyTimeout(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) { c.Match.UnplayedTimeout, c.Match.EmptyTimeout = time.Second, 3*time.Second })
	c := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "played", Name: "player", Input: strafer(10)})
	stop := start(c)
	until(t, 20*time.Second, "the player's inputs were not applied for 1.5 s", func() bool {
		return playerStats(t, srv, "played", c.ID()).Applied >= 30
	})
	checkRun(t, stop)
	c.Close()
	left := time.Now()
	waitPlayersBelow(t, srv, "played", 1)
	waitTicks(t, srv, "played", 40) // twice match.unplayed_timeout
	if d := waitClosed(t, srv, "played", 20*time.Second).Sub(left); d < 2900*time.Millisecond {
		t.Errorf("the room closed %v after its player left, before match.empty_timeout", d)
	}
	if u, e := matchesEnded(t, srv); u != 0 || e != 1 {
		t.Errorf("matches ended unplayed %v, empty %v; want 0 and 1", u, e)
	}
}

// Rooms the operator opened wait match.empty_timeout for their players,
// even after a join left at once; so does a room a join created that the
// operator then asks for (an allocation that comes after its first player).
func TestOperatorRoomWaitsForItsPlayers(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) { c.Match.UnplayedTimeout, c.Match.EmptyTimeout = 2*time.Second, 4*time.Second })
	if err := srv.OpenRoom("op"); err != nil {
		t.Fatal(err)
	}
	left := map[string]time.Time{}
	for _, room := range []string{"op", "adopted"} {
		if rj := driveByFrom(t, srv, "127.0.0.1", protocol.Join{Room: room, Name: "early"}); rj != nil {
			t.Fatalf("%s: %+v", room, rj)
		}
		left[room] = time.Now()
	}
	if err := srv.OpenRoom("adopted"); err == nil {
		t.Fatal("the operator opened a room that a join had created: want the room exists")
	}
	waitTicks(t, srv, "op", 60) // 3 s: past match.unplayed_timeout
	for _, room := range []string{"op", "adopted"} {
		if d := waitClosed(t, srv, room, 20*time.Second).Sub(left[room]); d < 3900*time.Millisecond {
			t.Errorf("%s closed %v after its join left, before match.empty_timeout", room, d)
		}
	}
	if u, e := matchesEnded(t, srv); u != 0 || e != 2 {
		t.Errorf("matches ended unplayed %v, empty %v; want 0 and 2", u, e)
	}
}

// A source's joins may have limits.rooms_per_source rooms open that they
// created (8 by default): the next creation is refused as rate_limited,
// saying why; joining an open room, or another source, is not; a room
// that closes frees its place.
func TestRoomsPerSourceCap(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) { c.InputTimeout, c.Match.UnplayedTimeout = time.Minute, time.Second })
	const src = "127.0.0.21"
	var holders []*rawPlayer // one seated in each room, so that the rooms stay open
	for i := range 8 {
		p, typ, _ := dialRawFrom(t, srv, srv.Addr().String(), src, protocol.Join{Room: fmt.Sprint("r", i), Name: "holder"})
		if typ != protocol.MsgWelcome {
			t.Fatalf("room %d of 8: answer of type %d", i, typ)
		}
		holders = append(holders, p)
	}
	rj := driveByFrom(t, srv, src, protocol.Join{Room: "r8", Name: "drive-by"})
	if want := "too many rooms created from your address: 8 of them are open"; rj == nil || rj.Code != protocol.RejectRateLimited || !strings.HasPrefix(rj.Reason, want) {
		t.Errorf("a ninth room: %+v, want rate_limited, %q", rj, want)
	}
	if rj := driveByFrom(t, srv, "127.0.0.22", protocol.Join{Room: "r8", Name: "drive-by"}); rj != nil {
		t.Errorf("another source's room: %+v", rj)
	}
	if rj := driveByFrom(t, srv, src, protocol.Join{Room: "r0", Name: "guest"}); rj != nil {
		t.Errorf("joining a room that is open: %+v", rj)
	}
	holders[1].conn.CloseWithError(0, "")
	waitClosed(t, srv, "r1", 20*time.Second)
	if rj := driveByFrom(t, srv, src, protocol.Join{Room: "r9", Name: "drive-by"}); rj != nil {
		t.Errorf("a room once one has closed: %+v", rj)
	}
	if v := gather(t, srv).value("rewind_joins_rejected_total", "reason", "rate_limited"); v != 1 {
		t.Errorf("rewind_joins_rejected_total{reason=rate_limited} = %v, want 1", v)
	}
}
