package matchmaker_test

import (
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/agones"
	"github.com/rewind-gg/rewind/agones/agonestest"
	"github.com/rewind-gg/rewind/agones/allocatortest"
	"github.com/rewind-gg/rewind/examples/matchmaker"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/token"
)

// sum is a certificate hash as a server announces it.
const sum = "5b191ec7e2533d4fdb91153e750397e09eb624cc7bdcc9c21f6f63a50f954538"

// signingKey returns a new matchmaker key pair.
func signingKey(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := token.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

// config is a matchmaker's configuration for the fake allocator a, with a
// client certificate a accepts.
func config(t *testing.T, a *allocatortest.Allocator, priv ed25519.PrivateKey) matchmaker.Config {
	t.Helper()
	cert, err := a.ClientCertificate()
	if err != nil {
		t.Fatal(err)
	}
	ca := x509.NewCertPool()
	ca.AddCert(a.CA())
	return matchmaker.Config{Allocator: a.Addr(), ClientCert: cert, AllocatorCA: ca, Fleet: "rewind", Key: priv}
}

func newMatchmaker(t *testing.T, cfg matchmaker.Config) *matchmaker.Matchmaker {
	t.Helper()
	mm, err := matchmaker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return mm
}

// gameServer adds to a a GameServer whose SDK fake is Ready with the
// certificate annotation, as a Rewind server leaves it at start, with the
// Counter and List of high density (capacity 3); no server runs.
func gameServer(t *testing.T, a *allocatortest.Allocator, name string) *agonestest.Server {
	t.Helper()
	sdk := agonestest.New(t)
	sdk.SetCounter("rooms", 0, 3)
	sdk.SetList("matches", 3)
	c := agones.New(agones.Config{Addr: sdk.Addr()})
	if err := c.SetAnnotation(t.Context(), server.CertAnnotation, sum); err != nil {
		t.Fatal(err)
	}
	if err := c.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
	a.Add(allocatortest.GameServer{Name: name, Labels: map[string]string{"agones.dev/fleet": "rewind"},
		Ports: []agones.Port{{Name: "default", Port: 7342}}, SDK: sdk})
	return sdk
}

func twoPlayers(id string) matchmaker.Match {
	return matchmaker.Match{ID: id, Players: []matchmaker.Player{
		{User: "u-1", Name: "Alice", Team: 1, Class: "assault"},
		{User: "u-2", Name: "Bob", Team: 2},
	}}
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%v: %s", err, want)
	}
	return reflect.DeepEqual(g, w)
}

// The annotation a Rewind server sets through the SDK is the one the
// matchmaker reads, once the SDK server has prefixed it.
func TestCertAnnotation(t *testing.T) {
	if want := "agones.dev/sdk-" + server.CertAnnotation; matchmaker.CertAnnotation != want {
		t.Errorf("CertAnnotation %q, want %q", matchmaker.CertAnnotation, want)
	}
}

// The requests are allocation.proto's AllocationRequest as its Swagger
// file types it (int64 as strings, enums by name): for one match a
// GameServer, a Ready one of the Fleet named by the annotation; for high
// density, deploy/agones/allocation-density.yaml with the matches List's
// selector.
func TestRequests(t *testing.T) {
	for _, c := range []struct {
		matches, want string
	}{
		{matchmaker.MatchesAnnotation, `{
			"namespace": "default",
			"gameServerSelectors": [{"gameServerState": "READY", "matchLabels": {"agones.dev/fleet": "rewind"}}],
			"metadata": {"annotations": {"rewind.gg/match": "match-7"}}}`},
		{matchmaker.MatchesList, `{
			"namespace": "default",
			"scheduling": "Packed",
			"priorities": [{"type": "Counter", "key": "rooms", "order": "Ascending"}],
			"gameServerSelectors": [
				{"gameServerState": "ALLOCATED", "matchLabels": {"agones.dev/fleet": "rewind"},
				 "counters": {"rooms": {"minAvailable": "1"}}, "lists": {"matches": {"minAvailable": "1"}}},
				{"gameServerState": "READY", "matchLabels": {"agones.dev/fleet": "rewind"},
				 "counters": {"rooms": {"minAvailable": "1"}}, "lists": {"matches": {"minAvailable": "1"}}}],
			"counters": {"rooms": {"action": "Increment", "amount": "1"}},
			"lists": {"matches": {"addValues": ["match-7"]}}}`},
	} {
		t.Run(c.matches, func(t *testing.T) {
			a := allocatortest.New(t)
			gameServer(t, a, "gs-1")
			_, priv := signingKey(t)
			cfg := config(t, a, priv)
			cfg.Matches = c.matches
			if _, err := newMatchmaker(t, cfg).Allocate(t.Context(), twoPlayers("match-7")); err != nil {
				t.Fatal(err)
			}
			if got := a.Requests(); len(got) != 1 || !jsonEqual(t, got[0], c.want) {
				t.Errorf("requests %q\nwant %s", got, c.want)
			}
		})
	}
}

// An allocation gives each player a ticket: the GameServer's address and
// port "default", the certificate hash from its annotation, and a token
// for the room, signed with the matchmaker's key, for a TokenLifetime.
func TestTickets(t *testing.T) {
	a := allocatortest.New(t)
	gameServer(t, a, "gs-1")
	pub, priv := signingKey(t)
	mm := newMatchmaker(t, config(t, a, priv))
	m := twoPlayers("match-7")
	before := time.Now().Truncate(time.Second)
	as, err := mm.Allocate(t.Context(), m)
	if err != nil {
		t.Fatal(err)
	}
	if as.Match != "match-7" || as.Room != "match-7" || as.Allocation != 1 || as.GameServer != "gs-1" ||
		as.Addr != "127.0.0.1:7342" || as.CertSHA256 != sum || len(as.Tickets) != 2 {
		t.Fatalf("assignment %+v", as)
	}
	v, err := token.NewVerifier(token.VerifierConfig{Keys: []ed25519.PublicKey{pub}})
	if err != nil {
		t.Fatal(err)
	}
	for i, tk := range as.Tickets {
		p := m.Players[i]
		if tk.Match != "match-7" || tk.Room != "match-7" || tk.User != p.User || tk.Addr != as.Addr || tk.CertSHA256 != sum || tk.WaitMS != 0 {
			t.Errorf("ticket %d: %+v", i, tk)
		}
		raw, err := token.Decode(tk.Token)
		if err != nil {
			t.Fatal(err)
		}
		c, err := v.Verify(raw, time.Now())
		if err != nil {
			t.Fatalf("ticket %d: %v", i, err)
		}
		if c.Room != "match-7" || c.User != p.User || c.Name != p.Name || c.Team != p.Team || c.Class != p.Class ||
			c.NotBefore.Before(before) || c.Expires.Sub(c.NotBefore) != 2*time.Minute || !c.Expires.Equal(tk.Expires) {
			t.Errorf("ticket %d's claims %+v", i, c)
		}
	}
	if as.Tickets[0].Token == as.Tickets[1].Token {
		t.Error("two players, one token")
	}
}

// A match the tokens could not carry is refused before any allocation,
// naming what is wrong.
func TestBadMatches(t *testing.T) {
	a := allocatortest.New(t)
	gameServer(t, a, "gs-1")
	_, priv := signingKey(t)
	mm := newMatchmaker(t, config(t, a, priv))
	long := strings.Repeat("m", 61)
	for _, c := range []struct {
		match matchmaker.Match
		want  string
	}{
		{matchmaker.Match{ID: long, Players: twoPlayers("").Players}, `match id "` + long + `": want 1 to 60 of A-Z a-z 0-9 _ . -`},
		{matchmaker.Match{ID: "m/1", Players: twoPlayers("").Players}, `match id "m/1"`},
		{matchmaker.Match{ID: "m-1"}, "match m-1: 0 players, want 1 to 255"},
		{matchmaker.Match{ID: "m-1", Players: []matchmaker.Player{{User: "u", Name: "A"}, {User: "u", Name: "B"}}}, `player 2: user "u" is in the match twice`},
		{matchmaker.Match{ID: "m-1", Players: []matchmaker.Player{{User: "u", Name: "A\u202eB"}}}, `player 1 ("u"): token: name: character 2 is U+202E`},
		{matchmaker.Match{ID: "m-1", Players: []matchmaker.Player{{User: "u", Name: "A", Team: 3}}}, "token: team: 3 is not 0, 1 or 2"},
	} {
		_, err := mm.Allocate(t.Context(), c.match)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.match, err, c.want)
		}
	}
	if n := len(a.Requests()); n != 0 {
		t.Errorf("%d allocation requests for bad matches", n)
	}
}

// Each way the allocator can fail is an error that says what failed.
func TestAllocatorErrors(t *testing.T) {
	a := allocatortest.New(t)
	gameServer(t, a, "gs-1")
	_, priv := signingKey(t)
	other := allocatortest.New(t) // another allocator's certificates
	stranger, err := other.ClientCertificate()
	if err != nil {
		t.Fatal(err)
	}
	closed := allocatortest.New(t)
	closed.Close()
	otherCA := x509.NewCertPool()
	otherCA.AddCert(other.CA())
	for _, c := range []struct {
		name   string
		change func(*matchmaker.Config)
		want   string
		is     error
	}{
		{"unreachable", func(c *matchmaker.Config) { c.Allocator = closed.Addr() },
			"the allocator " + closed.Addr() + " is unreachable: ", nil},
		{"no client certificate", func(c *matchmaker.Config) { c.ClientCert = tls.Certificate{} },
			"the allocator refused the TLS handshake: it requires a client certificate, and Config.ClientCert is empty: ", nil},
		{"a certificate it does not allow", func(c *matchmaker.Config) { c.ClientCert = stranger },
			"the allocator refused the TLS handshake: is Config.ClientCert signed by a CA of the allocator-client-ca Secret", nil},
		{"another CA", func(c *matchmaker.Config) { c.AllocatorCA = otherCA },
			"the allocator's certificate does not verify with Config.AllocatorCA", nil},
		{"another name", func(c *matchmaker.Config) { c.ServerName = "allocator.example.com" },
			"the allocator's certificate does not verify with Config.AllocatorCA (the allocator-tls-ca Secret's tls-ca.crt) for allocator.example.com: ", nil},
		{"another namespace", func(c *matchmaker.Config) { c.Namespace = "games" },
			"allocating room m-1: the allocator answered 429 Too Many Requests (code 8): there is no available GameServer to allocate", matchmaker.ErrNoGameServer},
		{"another Fleet", func(c *matchmaker.Config) { c.Fleet = "rewind-density" },
			"the allocator answered 429", matchmaker.ErrNoGameServer},
		{"another port name", func(c *matchmaker.Config) { c.Port = "game" },
			`room m-1: the allocated GameServer gs-1 has no port named "game" (Config.Port)`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config(t, a, priv)
			c.change(&cfg)
			_, err := newMatchmaker(t, cfg).Allocate(t.Context(), twoPlayers("m-1"))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v\nwant %q", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%v is not %v", err, c.is)
			}
			if c.is == nil && errors.Is(err, matchmaker.ErrNoGameServer) {
				t.Errorf("%v is ErrNoGameServer", err)
			}
			t.Log(err)
		})
	}
}

// The answers the allocator may give, as documented and as its gateway
// writes them, and what the matchmaker makes of each.
func TestAnswers(t *testing.T) {
	full := func(annotations, lists string) string {
		return `{"gameServerName":"rewind-x7k2p-9tq4c","ports":[{"name":"default","port":7342}],"address":"203.0.113.10",
			"addresses":[{"type":"ExternalIP","address":"203.0.113.10"}],"nodeName":"node-3","source":"local",
			"metadata":{"labels":{"agones.dev/fleet":"rewind"},"annotations":` + annotations + `},
			"counters":{"rooms":{"count":"1","capacity":"16"}},"lists":` + lists + `}`
	}
	cert := `{"agones.dev/sdk-rewind-cert-sha256":"` + sum + `","rewind.gg/match":"m-1"}`
	for _, c := range []struct {
		name    string
		matches string
		status  int
		body    string
		want    string // the error; "" for none
		is      error
	}{
		{"every field", matchmaker.MatchesAnnotation, 200, full(cert, "{}"), "", nil},
		{"high density", matchmaker.MatchesList, 200, full(cert, `{"matches":{"values":["m-0","m-1"],"capacity":"16"}}`), "", nil},
		{"without the CountsAndLists fields", matchmaker.MatchesList, 200,
			`{"gameServerName":"gs","ports":[{"name":"default","port":7342}],"address":"203.0.113.10","metadata":{"annotations":` + cert + `}}`, "", nil},
		// The Allocator Service guide's example answer: no metadata.
		{"the guide's example", matchmaker.MatchesAnnotation, 200,
			`{"gameServerName":"game-server-name","ports":[{"name":"default","port":7463}],"address":"1.2.3.4","nodeName":"node-name"}`,
			"the allocated GameServer game-server-name has no annotation agones.dev/sdk-rewind-cert-sha256: is it a Rewind server?", nil},
		{"metadata null", matchmaker.MatchesAnnotation, 200, strings.Replace(full(cert, "{}"), `{"labels":{"agones.dev/fleet":"rewind"},"annotations":`+cert+`}`, "null", 1),
			"has no annotation agones.dev/sdk-rewind-cert-sha256", nil},
		{"a bad hash", matchmaker.MatchesAnnotation, 200, full(`{"agones.dev/sdk-rewind-cert-sha256":"5b19"}`, "{}"),
			`annotation agones.dev/sdk-rewind-cert-sha256: "5b19" is not a SHA-256 in hex`, nil},
		{"no address", matchmaker.MatchesAnnotation, 200, strings.ReplaceAll(full(cert, "{}"), `"address":"203.0.113.10"`, `"address":""`),
			"the allocated GameServer rewind-x7k2p-9tq4c has no address", nil},
		{"the room not on the List", matchmaker.MatchesList, 200, full(cert, `{"matches":{"values":["m-0"],"capacity":"1"}}`),
			"3 allocations (Config.MaxAllocations), none usable: room m-1.3 on rewind-x7k2p-9tq4c: the GameServer's matches List did not take the room (full)", nil},
		{"not JSON", matchmaker.MatchesAnnotation, 200, "<html>", "the allocator's answer is not an AllocationResponse", nil},
		{"no GameServer", matchmaker.MatchesAnnotation, 429, `{"code":8,"message":"there is no available GameServer to allocate","details":[]}`,
			"the allocator answered 429 Too Many Requests (code 8): there is no available GameServer to allocate", matchmaker.ErrNoGameServer},
		// The allocator's http-unallocated-status-code set to 503: code 14.
		{"no GameServer, another status", matchmaker.MatchesAnnotation, 503, `{"code":14,"message":"there is no available GameServer to allocate","details":[]}`,
			"the allocator answered 503 Service Unavailable (code 14)", matchmaker.ErrNoGameServer},
		{"contention", matchmaker.MatchesAnnotation, 409, `{"code":10,"message":"too many concurrent requests have overwhelmed the system","details":[]}`,
			"the allocator answered 409 Conflict (code 10): too many concurrent requests have overwhelmed the system", nil},
		{"invalid", matchmaker.MatchesAnnotation, 500, `{"code":422,"message":"GameServerAllocation.allocation.agones.dev \"\" is invalid: spec.metadata.annotations: Invalid value: \"Bad Key\"","details":[]}`,
			`the allocator answered 500 Internal Server Error (code 422): GameServerAllocation.allocation.agones.dev "" is invalid: spec.metadata.annotations`, nil},
		{"a proxy's page", matchmaker.MatchesAnnotation, 502, "<html>bad gateway</html>\n", "the allocator answered 502 Bad Gateway: <html>bad gateway</html>", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				fmt.Fprint(w, c.body)
			}))
			t.Cleanup(srv.Close)
			ca := x509.NewCertPool()
			ca.AddCert(srv.Certificate())
			_, priv := signingKey(t)
			mm := newMatchmaker(t, matchmaker.Config{Allocator: srv.Listener.Addr().String(), AllocatorCA: ca, Fleet: "rewind", Key: priv, Matches: c.matches})
			as, err := mm.Allocate(t.Context(), twoPlayers("m-1"))
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want == "":
				if as.Addr == "" || as.CertSHA256 != sum || len(as.Tickets) != 2 {
					t.Errorf("assignment %+v", as)
				}
			case err == nil || !strings.Contains(err.Error(), c.want):
				t.Fatalf("%v\nwant %q", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%v is not %v", err, c.is)
			}
		})
	}
}

// A refusal is answered by what it calls for: the same room after a wait
// while the room may not be open yet; a new allocation, in a new room, for
// wrong_room after that or for full; the current room for a report about a
// room the match has left; an error for any other code, and once the
// allocations run out.
func TestRefused(t *testing.T) {
	a := allocatortest.New(t)
	for _, name := range []string{"gs-1", "gs-2"} {
		gameServer(t, a, name)
	}
	_, priv := signingKey(t)
	cfg := config(t, a, priv)
	cfg.Matches, cfg.MaxAllocations, cfg.RoomOpenWait = matchmaker.MatchesList, 3, time.Hour
	mm := newMatchmaker(t, cfg)
	ctx := t.Context()
	first, err := mm.Allocate(ctx, twoPlayers("m-1"))
	if err != nil {
		t.Fatal(err)
	}
	refuse := func(room, user string, code uint8) (matchmaker.Ticket, error) {
		return mm.Refused(ctx, matchmaker.Refusal{Match: "m-1", Room: room, User: user, Code: code, Reason: "test"})
	}

	// wrong_room within RoomOpenWait: the same room, later.
	tk, err := refuse("m-1", "u-2", protocol.RejectWrongRoom)
	if err != nil || tk.Room != "m-1" || tk.WaitMS != 1000 || tk.Token == first.Tickets[1].Token {
		t.Errorf("wrong_room at once: %+v, %v; want room m-1, a wait of 1000 ms, a new token", tk, err)
	}
	if n := len(a.Requests()); n != 1 {
		t.Errorf("%d allocations after a wrong_room at once, want 1", n)
	}

	// full: a new allocation, the room m-1.2, on the GameServer with the
	// least room left (gs-1 again, which has one room).
	tk, err = refuse("m-1", "u-2", protocol.RejectFull)
	if err != nil || tk.Room != "m-1.2" || tk.User != "u-2" || tk.WaitMS != 0 {
		t.Fatalf("full: %+v, %v", tk, err)
	}
	cur, ok := mm.Current("m-1")
	if !ok || cur.Room != "m-1.2" || cur.Allocation != 2 || cur.Tickets[1].Room != "m-1.2" {
		t.Errorf("Current after a re-allocation: %+v, %v", cur, ok)
	}
	reqs := a.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[1], `"addValues":["m-1.2"]`) {
		t.Errorf("requests %q, want a second one adding m-1.2", reqs)
	}

	// Another player reports the first room: the match has left it.
	tk, err = refuse("m-1", "u-1", protocol.RejectWrongRoom)
	if err != nil || tk.Room != "m-1.2" || tk.User != "u-1" {
		t.Errorf("a report about the left room: %+v, %v; want a ticket to m-1.2", tk, err)
	}
	if n := len(a.Requests()); n != 2 {
		t.Errorf("%d allocations, want 2: a report about a room the match left allocates nothing", n)
	}

	// Codes a new allocation does not cure.
	if _, err := refuse("m-1.2", "u-1", protocol.RejectTokenExpired); err == nil || !strings.Contains(err.Error(), "refused with 9 (token_expired): not one a new allocation cures") {
		t.Errorf("token_expired: %v", err)
	}
	if _, err := refuse("m-1.2", "u-9", protocol.RejectFull); err == nil || !strings.Contains(err.Error(), `match m-1 has no user "u-9"`) {
		t.Errorf("a stranger: %v", err)
	}
	if _, err := mm.Refused(ctx, matchmaker.Refusal{Match: "m-2", Room: "m-2", User: "u-1", Code: protocol.RejectFull}); err == nil ||
		!strings.Contains(err.Error(), `no match "m-2"`) {
		t.Errorf("another match: %v", err)
	}

	// The third allocation is the last.
	if tk, err = refuse("m-1.2", "u-1", protocol.RejectFull); err != nil || tk.Room != "m-1.3" {
		t.Fatalf("full again: %+v, %v", tk, err)
	}
	_, err = refuse("m-1.3", "u-1", protocol.RejectFull)
	if err == nil || !strings.Contains(err.Error(), "room m-1.3 refused user \"u-1\" with full (test), and the match has had its 3 allocations (Config.MaxAllocations): giving up") {
		t.Errorf("past MaxAllocations: %v", err)
	}

	// A reconnection's ticket: a new token to the current room.
	tk, err = mm.Ticket("m-1", "u-2")
	if err != nil || tk.Room != "m-1.3" || tk.User != "u-2" {
		t.Errorf("Ticket: %+v, %v", tk, err)
	}
	mm.Forget("m-1")
	if _, err := mm.Ticket("m-1", "u-2"); err == nil {
		t.Error("a ticket for a forgotten match")
	}
	if _, ok := mm.Current("m-1"); ok {
		t.Error("Current of a forgotten match")
	}
	if _, err := mm.Allocate(ctx, twoPlayers("m-1")); err != nil {
		t.Errorf("allocating a forgotten match's id again: %v", err)
	}
	if _, err := mm.Allocate(ctx, twoPlayers("m-1")); err == nil || !strings.Contains(err.Error(), `match "m-1" is allocated already`) {
		t.Errorf("allocating a match twice: %v", err)
	}
}

// Twelve players reporting the same refusal at once make one allocation.
func TestConcurrentRefusals(t *testing.T) {
	a := allocatortest.New(t)
	gameServer(t, a, "gs-1")
	_, priv := signingKey(t)
	cfg := config(t, a, priv)
	cfg.Matches = matchmaker.MatchesList
	mm := newMatchmaker(t, cfg)
	m := matchmaker.Match{ID: "m-1"}
	for i := range 3 { // the GameServer holds 3 rooms: the original and two more
		m.Players = append(m.Players, matchmaker.Player{User: fmt.Sprintf("u-%d", i), Name: fmt.Sprintf("P%d", i)})
	}
	if _, err := mm.Allocate(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	rooms := make(chan string, len(m.Players))
	errs := make(chan error, len(m.Players))
	for _, p := range m.Players {
		go func() {
			tk, err := mm.Refused(context.Background(), matchmaker.Refusal{Match: "m-1", Room: "m-1", User: p.User, Code: protocol.RejectFull})
			rooms <- tk.Room
			errs <- err
		}()
	}
	for range m.Players {
		if room, err := <-rooms, <-errs; err != nil || room != "m-1.2" {
			t.Errorf("%q, %v; want m-1.2", room, err)
		}
	}
	if n := len(a.Requests()); n != 2 {
		t.Errorf("%d allocations, want 2", n)
	}
}

// A Config with a required field missing or a value out of range is an
// error naming the field.
func TestConfigErrors(t *testing.T) {
	_, priv := signingKey(t)
	good := matchmaker.Config{Allocator: "203.0.113.5", Fleet: "rewind", Key: priv}
	if _, err := matchmaker.New(good); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		change func(*matchmaker.Config)
		want   string
	}{
		{func(c *matchmaker.Config) { c.Allocator = "" }, "matchmaker: Config.Allocator: empty"},
		{func(c *matchmaker.Config) { c.Fleet = "" }, "matchmaker: Config.Fleet: empty"},
		{func(c *matchmaker.Config) { c.Key = nil }, "matchmaker: Config.Key: 0 bytes, want an Ed25519 private key"},
		{func(c *matchmaker.Config) { c.Matches = "lists" }, `matchmaker: Config.Matches: "lists" is neither "annotation" nor "list"`},
		{func(c *matchmaker.Config) { c.MaxAllocations = 100 }, "matchmaker: Config.MaxAllocations: 100 is outside 1..99"},
		{func(c *matchmaker.Config) { c.TokenLifetime = time.Millisecond }, "matchmaker: Config.TokenLifetime: 1ms"},
		{func(c *matchmaker.Config) { c.RoomOpenWait = -time.Second }, "matchmaker: Config.RoomOpenWait: -1s is negative"},
	} {
		cfg := good
		c.change(&cfg)
		if _, err := matchmaker.New(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}
