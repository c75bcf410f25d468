package tests

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/token"
)

// hostileNames are names the rule for names refuses, with the reason the
// server gives: what a player would otherwise broadcast to every client
// of a room (terminal escapes, forged lines, reordered or invisible text).
var hostileNames = []struct{ name, reason string }{
	{"Al\nice", "name: character 3 is U+000A, a control character"},
	{"\x1b[2JAlice", "name: character 1 is U+001B, a control character"},
	{"Al\x00ice", "name: character 3 is U+0000, a control character"},
	{"Al\u202Eice", "name: character 3 is U+202E (RIGHT-TO-LEFT OVERRIDE), a bidi control"},
	{"Al\u200Bice", "name: character 3 is U+200B (ZERO WIDTH SPACE), an invisible format character"},
}

// Over real QUIC, an open-mode Join whose name has a new line, an ESC, a
// NUL, a bidi override or a zero-width space is refused (bad_join) with the
// reason, and no player of the room hears of it: the Joined events it gets
// are of the players admitted, and the room holds only them.
func TestHostileNamesRefused(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) { c.Limits.JoinBurst, c.Limits.JoinsPerSecond = 100, 100 })
	addr := srv.Addr().String()
	watcher := joinRaw(t, srv, addr, protocol.Join{Room: "names", Name: "watcher"})
	for _, h := range hostileNames {
		w, rj := answer(t, srv, "127.0.0.1", protocol.Join{Room: "names", Name: h.name})
		if rj == nil || rj.Code != protocol.RejectBadJoin || rj.Reason != h.reason {
			t.Errorf("name %q: welcome %+v, reject %+v; want reject %d %q", h.name, w, rj, protocol.RejectBadJoin, h.reason)
		}
	}
	after := joinRaw(t, srv, addr, protocol.Join{Room: "names", Name: "Ærøskøbing 🏳️‍🌈"})
	// Events come in order: a Joined of a refused name would come before
	// the one of the player admitted after them.
	deadline := time.After(10 * time.Second)
	for seen := false; !seen; {
		select {
		case ev, ok := <-watcher.events:
			if !ok {
				t.Fatal("the watcher's control stream ended")
			}
			if ev.Kind != protocol.EventJoined {
				continue
			}
			switch ev.Name {
			case "watcher":
			case after.welcome.Name:
				seen = true
			default:
				t.Errorf("the watcher heard that %q joined", ev.Name)
			}
		case <-deadline:
			t.Fatalf("no Joined event of %q within 10s", after.welcome.Name)
		}
	}
	var got []string
	for _, p := range roomStats(t, srv, "names").Players {
		got = append(got, p.Name)
	}
	if len(got) != 2 || !strings.Contains(strings.Join(got, "|"), "watcher") || !strings.Contains(strings.Join(got, "|"), after.welcome.Name) {
		t.Errorf("the room holds %q, want watcher and %q", got, after.welcome.Name)
	}
}

// A matchmaker that does not check names (the examples of tokens.md do
// not) mints a token with a hostile name: the server's verifier refuses it
// as token_invalid, naming the field and why.
func TestHostileNamesInTokensRefused(t *testing.T) {
	t.Parallel()
	srv, priv := tokenServer(t, func(c *server.Config) { c.Limits.JoinBurst, c.Limits.JoinsPerSecond = 100, 100 })
	for i, h := range hostileNames {
		// Sign would refuse the name: mint the token with a placeholder of
		// its length, put the name in its place and sign the bytes again,
		// as a matchmaker following tokens.md's format does.
		placeholder := strings.Repeat("x", len(h.name))
		c := claims("arena", "u-"+string(rune('a'+i)), 1)
		c.Name = placeholder
		tok := sign(t, priv, c)
		body := bytes.Replace(tok[:len(tok)-ed25519.SignatureSize], []byte(placeholder), []byte(h.name), 1)
		forged := append(body, ed25519.Sign(priv, append([]byte("rewind token v1"), body...))...)
		w, rj := answer(t, srv, "127.0.0.1", protocol.Join{Token: forged})
		if want := "token: " + h.reason; rj == nil || rj.Code != protocol.RejectTokenInvalid || rj.Reason != want {
			t.Errorf("token naming %q: welcome %+v, reject %+v; want reject %d %q", h.name, w, rj, protocol.RejectTokenInvalid, want)
		}
	}
}

// A server in open development mode ignores a Join's token, whatever it
// is: the Join's own fields say who the player is.
func TestOpenModeIgnoresTokens(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	_, priv, err := token.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := claims("elsewhere", "mallory", 2)
	for _, tt := range []struct {
		what, name string
		tok        []byte
	}{
		{"garbage", "Bob", []byte("not a token")},
		{"a token of another room, name and team", "Carol", sign(t, priv, elsewhere)},
		{"the longest the wire carries", "Dave", bytes.Repeat([]byte{0xff}, protocol.MaxToken)},
	} {
		w, rj := answer(t, srv, "127.0.0.1", protocol.Join{Token: tt.tok, Room: "open", Name: tt.name, Team: 1})
		if rj != nil || w.Name != tt.name || w.Room != "open" || w.Team != 1 {
			t.Errorf("%s: welcome %+v, reject %+v; want %s in room open on team 1", tt.what, w, rj, tt.name)
		}
	}
}

// A Join whose token is longer than the token format allows is refused as
// a bad token (token_invalid) by any server, before its other fields are
// read.
func TestOversizedTokenRefused(t *testing.T) {
	t.Parallel()
	open := startServer(t, nil)
	closed, _ := tokenServer(t, nil)
	// AppendJoin cuts a token at protocol.MaxToken: write the field itself.
	rest := protocol.AppendJoin(nil, &protocol.Join{Version: protocol.Version, Room: "r", Name: "n", Channels: protocol.ChannelQUIC})
	join := binary.BigEndian.AppendUint16(rest[:2:2], token.MaxLen+1)
	join = append(join, make([]byte, token.MaxLen+1)...)
	join = append(join, rest[4:]...)
	const want = "token: oversized: over 512 bytes"
	for what, srv := range map[string]*server.Server{"open development mode": open, "with keys": closed} {
		_, typ, payload := dialRawPayload(t, srv, srv.Addr().String(), "127.0.0.1", join)
		rj, err := protocol.DecodeReject(payload)
		if typ != protocol.MsgReject || err != nil || rj.Code != protocol.RejectTokenInvalid || rj.Reason != want {
			t.Errorf("%s: answer of type %d %+v (%v), want reject %d %q", what, typ, rj, err, protocol.RejectTokenInvalid, want)
		}
	}
}
