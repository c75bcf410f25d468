package tests

import (
	"crypto/ed25519"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/token"
)

// tokenServer starts a server that admits only holders of tokens signed by
// the returned key (the matchmaker's).
func tokenServer(t testing.TB, change func(*server.Config)) (*server.Server, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := token.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, func(c *server.Config) {
		c.Auth.Keys = []ed25519.PublicKey{pub}
		if change != nil {
			change(c)
		}
	})
	return srv, priv
}

// claims are a token valid from now for a minute.
func claims(room, user string, team uint8) token.Claims {
	now := time.Now()
	return token.Claims{NotBefore: now, Expires: now.Add(time.Minute), Room: room, User: user, Name: user, Team: team}
}

// sign signs c with a fresh nonce.
func sign(t testing.TB, priv ed25519.PrivateKey, c token.Claims) []byte {
	t.Helper()
	var err error
	if c.Nonce, err = token.NewNonce(nil); err != nil {
		t.Fatal(err)
	}
	b, err := token.Sign(priv, c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// answer joins with j from local and returns the server's answer: the
// Welcome, or the Reject.
func answer(t testing.TB, srv *server.Server, local string, j protocol.Join) (*protocol.Welcome, *protocol.Reject) {
	t.Helper()
	_, typ, payload := dialRawFrom(t, srv, srv.Addr().String(), local, j)
	switch typ {
	case protocol.MsgWelcome:
		w, err := protocol.DecodeWelcome(payload)
		if err != nil {
			t.Fatal(err)
		}
		return &w, nil
	case protocol.MsgReject:
		rj, err := protocol.DecodeReject(payload)
		if err != nil {
			t.Fatal(err)
		}
		return nil, &rj
	}
	t.Fatalf("answer of type %d", typ)
	return nil, nil
}

// Every way a token can be wrong is refused over real QUIC with its own
// reject code, and counted under its label; the one valid token is
// admitted with the name and team it grants, once.
func TestTokenMatrix(t *testing.T) {
	t.Parallel()
	srv, priv := tokenServer(t, nil)
	_, stranger, _ := token.GenerateKey(nil)
	valid := sign(t, priv, claims("arena", "u-1", 1))
	now := time.Now()
	tooLong := claims("arena", "u-2", 1)
	tooLong.Expires = now.Add(2 * time.Hour)
	expired := claims("arena", "u-3", 1)
	expired.NotBefore, expired.Expires = now.Add(-2*time.Hour), now.Add(-time.Hour)
	early := claims("arena", "u-4", 1)
	early.NotBefore, early.Expires = now.Add(time.Hour), now.Add(time.Hour+time.Minute)
	badSig := sign(t, priv, claims("arena", "u-5", 1))
	badSig[len(badSig)-1] ^= 1
	oversized := append(sign(t, priv, claims("arena", "u-6", 1)), make([]byte, 300)...)
	truncated := sign(t, priv, claims("arena", "u-7", 1))
	truncated = truncated[:len(truncated)/2]
	withClass := claims("arena", "u-8", 2)
	withClass.Class = "breacher"
	cases := []struct {
		name string
		join protocol.Join
		want uint8 // 0: welcome
	}{
		{"valid", protocol.Join{Token: valid, InterpDelay: 100}, 0},
		{"reused nonce", protocol.Join{Token: valid}, protocol.RejectTokenReplayed},
		{"no token", protocol.Join{Room: "arena", Name: "walk-in"}, protocol.RejectNoToken},
		{"bad signature", protocol.Join{Token: badSig}, protocol.RejectTokenSignature},
		{"unknown key id", protocol.Join{Token: sign(t, stranger, claims("arena", "u-9", 1))}, protocol.RejectTokenKey},
		{"expired", protocol.Join{Token: sign(t, priv, expired)}, protocol.RejectTokenExpired},
		{"not yet valid", protocol.Join{Token: sign(t, priv, early)}, protocol.RejectTokenEarly},
		{"valid for too long", protocol.Join{Token: sign(t, priv, tooLong)}, protocol.RejectTokenInvalid},
		{"truncated", protocol.Join{Token: truncated}, protocol.RejectTokenInvalid},
		{"oversized", protocol.Join{Token: oversized}, protocol.RejectTokenInvalid},
		{"other room", protocol.Join{Token: sign(t, priv, claims("arena", "u-10", 1)), Room: "vault"}, protocol.RejectWrongRoom},
		{"another name", protocol.Join{Token: sign(t, priv, claims("arena", "u-11", 1)), Name: "bot-01"}, protocol.RejectNotGranted},
		{"another team", protocol.Join{Token: sign(t, priv, claims("arena", "u-12", 1)), Team: 2}, protocol.RejectNotGranted},
		{"another class", protocol.Join{Token: sign(t, priv, withClass), Class: "raptor"}, protocol.RejectNotGranted},
		{"the granted class", protocol.Join{Token: sign(t, priv, withClass), Class: "breacher"}, 0},
	}
	counts := map[uint8]int{}
	for _, tt := range cases {
		w, rj := answer(t, srv, "127.0.0.1", tt.join)
		switch {
		case tt.want == 0 && rj != nil:
			t.Errorf("%s: rejected %d %q", tt.name, rj.Code, rj.Reason)
		case tt.want != 0 && (rj == nil || rj.Code != tt.want):
			t.Errorf("%s: got %+v %+v, want reject %d (%s)", tt.name, w, rj, tt.want, protocol.RejectLabel(tt.want))
		case rj != nil && rj.Reason == "":
			t.Errorf("%s: a reject without a reason", tt.name)
		}
		if tt.want != 0 {
			counts[tt.want]++
		}
		if tt.name == "valid" && w != nil && (w.Name != "u-1" || w.Team != 1 || w.Room != "arena" || w.InterpDelay != 100) {
			t.Errorf("welcome %q team %d room %q interp %d: want the token's u-1, team 1, arena, 100 ms", w.Name, w.Team, w.Room, w.InterpDelay)
		}
	}
	m := gather(t, srv)
	for code, n := range counts {
		if v := m.value("rewind_joins_rejected_total", "reason", protocol.RejectLabel(code)); v != float64(n) {
			t.Errorf("rewind_joins_rejected_total{reason=%q} = %v, want %d", protocol.RejectLabel(code), v, n)
		}
	}
}

// One source with three tokens holds three seats in one room, whatever it
// tries besides (replaying its tokens, joining without one, opening idle
// connections): no other room appears, and a token holder elsewhere joins.
func TestOneSourceHoldsOnlyWhatItsTokensAllow(t *testing.T) {
	t.Parallel()
	srv, priv := tokenServer(t, func(c *server.Config) { c.Limits.JoinBurst, c.Limits.JoinsPerSecond = 100, 100 })
	const attacker = "127.0.0.3"
	var tokens [][]byte
	for i := range 3 {
		tokens = append(tokens, sign(t, priv, claims("arena", fmt.Sprint("mallory-", i), 0)))
	}
	admitted, refused := 0, map[string]int{}
	for i := range 40 {
		j := protocol.Join{Room: fmt.Sprint("room-", i), Name: fmt.Sprint("squatter-", i)} // no token: it would create a room
		if i%2 == 0 {
			j = protocol.Join{Token: tokens[i/2%3]} // its own tokens, again and again
		}
		if _, rj := answer(t, srv, attacker, j); rj == nil {
			admitted++
		} else {
			refused[protocol.RejectLabel(rj.Code)]++
		}
	}
	st, err := srv.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 1 || st[0].ID != "arena" || len(st[0].Players) != 3 || admitted != 3 {
		t.Errorf("%d admitted; rooms %+v: want only arena, with the three token holders", admitted, st)
	}
	t.Logf("refused: %v", refused)
	if refused["no_token"] != 20 || refused["token_replayed"] != 17 {
		t.Errorf("refused %v, want 20 without a token and 17 replays", refused)
	}
	// Its connections that never join hold at most handshakes_per_source
	// slots; a player from elsewhere is not affected.
	held := 0
	for range 20 {
		if _, err := connectFrom(t, srv, srv.Addr().String(), attacker); err == nil {
			held++
		}
	}
	if held != server.DefaultConfig().Limits.HandshakesPerSource {
		t.Errorf("%d idle connections from one source, want the cap of %d", held, server.DefaultConfig().Limits.HandshakesPerSource)
	}
	if w, rj := answer(t, srv, "127.0.0.1", protocol.Join{Token: sign(t, priv, claims("arena", "alice", 0))}); rj != nil {
		t.Errorf("the honest token holder was refused: %+v", rj)
	} else if w.Name != "alice" {
		t.Errorf("welcome %+v", w)
	}
	if v := gather(t, srv).value("rewind_joins_rejected_total", "reason", "rate_limited"); v < 4 {
		t.Errorf("rewind_joins_rejected_total{reason=rate_limited} = %v, want the refused connections counted", v)
	}
}

// Squatters who hold tokens but do not play lose their seats after the
// input timeout, and a token holder who comes then gets one.
func TestIdleSquattersDoNotKeepAFullRoom(t *testing.T) {
	t.Parallel()
	srv, priv := tokenServer(t, func(c *server.Config) { c.MaxPlayers, c.InputTimeout = 2, time.Second })
	var squatters []*rawPlayer
	for i := range 2 {
		squatters = append(squatters, joinRaw(t, srv, srv.Addr().String(), protocol.Join{Token: sign(t, priv, claims("arena", fmt.Sprint("squatter-", i), 0))}))
	}
	if _, rj := answer(t, srv, "127.0.0.1", protocol.Join{Token: sign(t, priv, claims("arena", "alice", 0))}); rj == nil || rj.Code != protocol.RejectFull {
		t.Fatalf("a third player in a room of two: %+v", rj)
	}
	for _, sq := range squatters {
		if code, _ := sq.closed(t, 10*time.Second); code != protocol.CloseIdle {
			t.Errorf("a squatter closed with %d, want idle (%d)", code, protocol.CloseIdle)
		}
	}
	waitPlayersBelow(t, srv, "arena", 1)
	alice := dial(t, srv, client.Config{Addr: srv.Addr().String(), Token: token.Encode(sign(t, priv, claims("arena", "alice", 0))), Input: strafer(10)})
	if alice.Welcome().Name != "alice" {
		t.Errorf("welcome %+v", alice.Welcome())
	}
}

// In open mode a team holds at most half the room: asking for team 1 does
// not put everybody on it.
func TestTeamsStayBalanced(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) { c.MaxPlayers = 8 })
	got := 0
	for i := range 8 {
		_, rj := answer(t, srv, "127.0.0.1", protocol.Join{Room: "teams", Name: fmt.Sprint("p", i), Team: 1})
		switch {
		case rj == nil:
			got++
		case rj.Code != protocol.RejectTeamFull:
			t.Errorf("join %d: %+v, want team_full", i, rj)
		}
	}
	if got != 4 {
		t.Errorf("%d joins got team 1 in a room of 8, want 4", got)
	}
	if w, rj := answer(t, srv, "127.0.0.1", protocol.Join{Room: "teams", Name: "late"}); rj != nil || w.Team != 2 {
		t.Errorf("a join for any team: %+v %+v, want team 2", w, rj)
	}
	// And a name already in the room is not given twice.
	if _, rj := answer(t, srv, "127.0.0.1", protocol.Join{Room: "teams", Name: "p0", Team: 2}); rj == nil || rj.Code != protocol.RejectNameTaken {
		t.Errorf("a second p0: %+v, want name_taken", rj)
	}
}

// The same user joining again (a reconnection, with a fresh token) takes its
// seat over: the old connection is closed with code 6, the others stay. A
// reconnection the room refuses (a class its token cannot have) leaves the
// old seat as it was.
func TestSameUserReplacesItsSeat(t *testing.T) {
	t.Parallel()
	srv, priv := tokenServer(t, nil)
	first := joinRaw(t, srv, srv.Addr().String(), protocol.Join{Token: sign(t, priv, claims("arena", "bob", 1))})
	carol := joinRaw(t, srv, srv.Addr().String(), protocol.Join{Token: sign(t, priv, claims("arena", "carol", 2))})
	bad := claims("arena", "bob", 1)
	bad.Class = "wizard"
	if _, rj := answer(t, srv, "127.0.0.1", protocol.Join{Token: sign(t, priv, bad)}); rj == nil || rj.Code != protocol.RejectBadJoin {
		t.Fatalf("a reconnection with a class that does not exist: %+v", rj)
	}
	if first.conn.Context().Err() != nil {
		t.Fatal("a refused reconnection cost the user its seat")
	}
	second := joinRaw(t, srv, srv.Addr().String(), protocol.Join{Token: sign(t, priv, claims("arena", "bob", 1))})
	if code, reason := first.closed(t, 10*time.Second); code != protocol.CloseReplaced {
		t.Errorf("the first connection closed with %d %q, want %d", code, reason, protocol.CloseReplaced)
	}
	players := roomStats(t, srv, "arena").Players
	ids := map[uint32]string{}
	for _, p := range players {
		ids[p.ID] = p.User
	}
	if len(players) != 2 || ids[second.welcome.Player] != "bob" || ids[carol.welcome.Player] != "carol" {
		t.Errorf("players %+v, want bob's second connection and carol", players)
	}
	if carol.conn.Context().Err() != nil {
		t.Error("carol lost her connection")
	}
}

// A match that ended is over: a token for it (a reconnection, a late
// player) does not open its room again, so one match has one result.
func TestAnEndedMatchStaysOver(t *testing.T) {
	t.Parallel()
	srv, priv := tokenServer(t, func(c *server.Config) { c.Match.Duration = time.Second })
	p := joinRaw(t, srv, srv.Addr().String(), protocol.Join{Token: sign(t, priv, claims("final", "dana", 1))})
	if code, reason := p.closed(t, 10*time.Second); code != protocol.CloseMatchOver || reason != "match over" {
		t.Fatalf("closed with %d %q, want match over", code, reason)
	}
	until(t, 10*time.Second, "the room did not close", func() bool { _, ok := findRoom(t, srv, "final"); return !ok })
	if _, rj := answer(t, srv, "127.0.0.1", protocol.Join{Token: sign(t, priv, claims("final", "dana", 1))}); rj == nil || rj.Code != protocol.RejectWrongRoom {
		t.Errorf("a token for the ended match: %+v, want wrong_room", rj)
	}
	if v := gather(t, srv).value("rewind_matches_total", "reason", "finished"); v != 1 {
		t.Errorf("rewind_matches_total{reason=finished} = %v, want 1", v)
	}
}

// Rooms created only by the operator: a valid token for a room this server
// does not host is refused and creates nothing, and is not spent; once the
// operator opens the room, the same token joins it.
func TestRoomsByOperator(t *testing.T) {
	t.Parallel()
	srv, priv := tokenServer(t, func(c *server.Config) { c.Auth.Rooms = server.RoomsByOperator })
	tok := sign(t, priv, claims("match-7", "u-1", 1))
	if _, rj := answer(t, srv, "127.0.0.1", protocol.Join{Token: tok}); rj == nil || rj.Code != protocol.RejectWrongRoom {
		t.Fatalf("a token for a room not hosted: %+v, want wrong_room", rj)
	}
	if _, ok := findRoom(t, srv, "match-7"); ok {
		t.Fatal("the token created its room")
	}
	if err := srv.OpenRoom("match-7"); err != nil {
		t.Fatal(err)
	}
	// The same token: refused for a room not open yet, it was not spent.
	if _, rj := answer(t, srv, "127.0.0.1", protocol.Join{Token: tok}); rj != nil {
		t.Errorf("the token, once its room is open: %+v", rj)
	}
}

// A join flood from one source is cut to its rate; the source's honest
// retries succeed once the rate allows.
func TestJoinRateLimit(t *testing.T) {
	t.Parallel()
	srv, priv := tokenServer(t, func(c *server.Config) { c.Limits.JoinBurst, c.Limits.JoinsPerSecond = 3, 0.5 })
	var mu sync.Mutex
	codes := map[uint8]int{}
	for i := range 6 {
		_, rj := answer(t, srv, "127.0.0.4", protocol.Join{Token: sign(t, priv, claims("arena", fmt.Sprint("u-", i), 0))})
		mu.Lock()
		if rj != nil {
			codes[rj.Code]++
		} else {
			codes[0]++
		}
		mu.Unlock()
	}
	if codes[0] != 3 || codes[protocol.RejectRateLimited] != 3 {
		t.Errorf("outcomes %v, want 3 admitted (the burst) and 3 rate_limited", codes)
	}
}

// waitPlayersBelow waits until the room holds fewer than n players.
func waitPlayersBelow(t testing.TB, srv *server.Server, room string, n int) {
	t.Helper()
	until(t, 30*time.Second, fmt.Sprintf("room %q kept %d players or more", room, n), func() bool {
		r, ok := findRoom(t, srv, room)
		return ok && len(r.Players) < n
	})
}
