package tests

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/token"
)

// logLine is one JSON log line.
type logLine map[string]any

func (l logLine) str(key string) string { s, _ := l[key].(string); return s }

// loggedServer starts a server as startServer does, logging JSON at the
// info level into a buffer; stop shuts it down and returns the lines.
func loggedServer(t *testing.T, change func(*server.Config)) (srv *server.Server, stop func() []logLine) {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Listen, cfg.Admin.Listen = "127.0.0.1:0", ""
	if change != nil {
		change(&cfg)
	}
	var buf bytes.Buffer
	srv, err := server.New(cfg, zerolog.New(zerolog.SyncWriter(&buf)))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	shutdown := func() {
		if stopped {
			return
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
	t.Cleanup(shutdown)
	return srv, func() []logLine {
		shutdown()
		var lines []logLine
		sc := bufio.NewScanner(&buf)
		for sc.Scan() {
			var l logLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("log line %q: %v", sc.Text(), err)
			}
			lines = append(lines, l)
		}
		return lines
	}
}

// withMessage returns the lines whose message is msg.
func withMessage(lines []logLine, msg string) []logLine {
	var out []logLine
	for _, l := range lines {
		if l.str("message") == msg {
			out = append(out, l)
		}
	}
	return out
}

// A refused join's log line names the room, the user and the signing
// key's id the token claims (its signature checked or not), and the room
// the Join asked for when it differs.
func TestJoinRejectedLineNamesRoomUserAndKey(t *testing.T) {
	t.Parallel()
	pub, priv, err := token.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, other, err := token.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, stop := loggedServer(t, func(c *server.Config) { c.Auth.Keys = []ed25519.PublicKey{pub} })
	addr := "127.0.0.1"
	unknown := sign(t, other, claims("final", "mallory", 1))
	if _, rj := answer(t, srv, addr, protocol.Join{Token: unknown}); rj == nil || rj.Code != protocol.RejectTokenKey {
		t.Fatalf("a token of an unknown key: %+v", rj)
	}
	elsewhere := sign(t, priv, claims("final", "alice", 1))
	if _, rj := answer(t, srv, addr, protocol.Join{Token: elsewhere, Room: "semi"}); rj == nil || rj.Code != protocol.RejectWrongRoom {
		t.Fatalf("a token for another room: %+v", rj)
	}
	if _, rj := answer(t, srv, addr, protocol.Join{Room: "final"}); rj == nil || rj.Code != protocol.RejectNoToken {
		t.Fatalf("no token: %+v", rj)
	}
	id := func(k ed25519.PrivateKey) string {
		return token.KeyIDString(token.KeyID(k.Public().(ed25519.PublicKey)))
	}
	want := []logLine{
		{"code": "token_unknown_key", "room": "final", "user": "mallory", "key_id": id(other)},
		{"code": "wrong_room", "room": "final", "user": "alice", "key_id": id(priv), "join_room": "semi"},
		{"code": "no_token", "room": "final"},
	}
	got := withMessage(stop(), "join rejected")
	if len(got) != len(want) {
		t.Fatalf("%d join rejected lines, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		for _, key := range []string{"code", "room", "user", "key_id", "join_room"} {
			if got[i].str(key) != w.str(key) {
				t.Errorf("line %d: %s %q, want %q (%v)", i, key, got[i].str(key), w.str(key), got[i])
			}
		}
	}
}

// At a normal match end the left lines give the server's close (match
// over), not the client's close that follows it on the sealed channel;
// each room's opening is logged once, saying who opened it.
func TestMatchEndLines(t *testing.T) {
	t.Parallel()
	srv, stop := loggedServer(t, func(c *server.Config) {
		c.Match.Duration = time.Second
		c.Admin.Listen = "127.0.0.1:0"
	})
	resp, err := http.Post("http://"+srv.AdminAddr().String()+"/rooms", "application/json", strings.NewReader(`{"id": "booked"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /rooms: %s", resp.Status)
	}
	var clients []*client.Client
	for _, name := range []string{"alice", "bob"} {
		clients = append(clients, dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "short", Name: name, Input: strafer(5)}))
	}
	for i, err := range play(30*time.Second, clients...) {
		var ce *client.CloseError
		if !errors.As(err, &ce) || ce.Code != protocol.CloseMatchOver {
			t.Fatalf("client %d: %v, want the match over", i, err)
		}
	}
	lines := stop()
	left := withMessage(lines, "left")
	if len(left) != 2 {
		t.Fatalf("%d left lines, want 2: %v", len(left), left)
	}
	for _, l := range left {
		if want := "closed by the server (7): match over"; l.str("reason") != want {
			t.Errorf("left: reason %q, want %q", l.str("reason"), want)
		}
	}
	opened := map[string][]string{}
	for _, l := range lines {
		if strings.Contains(l.str("message"), "room open") {
			opened[l.str("room")] = append(opened[l.str("room")], l.str("message")+" by "+l.str("opened_by"))
		}
	}
	for room, by := range map[string]string{"booked": "operator", "short": "join"} {
		if got := opened[room]; len(got) != 1 || got[0] != "room open by "+by {
			t.Errorf("room %s: opening lines %q, want one, by %s", room, got, by)
		}
	}
}

// A result the results file does not take (a full disk: /dev/full) is
// counted, and the server goes on.
func TestResultsWriteErrorsCounted(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full to fill")
	}
	srv, stop := loggedServer(t, func(c *server.Config) { c.Results.File = "/dev/full" })
	for _, id := range []string{"m1", "m2"} {
		if err := srv.OpenRoom(id); err != nil {
			t.Fatal(err)
		}
	}
	lines := stop() // the rooms close, their results fail to be written
	if n := len(withMessage(lines, "match result not written")); n != 2 {
		t.Errorf("%d results not written logged, want 2", n)
	}
	mfs, err := srv.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := -1.0
	for _, mf := range mfs {
		if mf.GetName() == "rewind_results_write_errors_total" {
			got = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	if got != 2 {
		t.Errorf("rewind_results_write_errors_total = %v, want 2", got)
	}
}
