package matchmaker

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/token"
)

// How the allocations name their matches: the server's agones.matches.
const (
	// MatchesAnnotation is one match a GameServer: the allocation takes a
	// Ready GameServer and names the match in the annotation MatchKey.
	MatchesAnnotation = "annotation"
	// MatchesList is high density: the allocation takes an Allocated
	// GameServer with a free slot (else a Ready one), adds one to the
	// Counter RoomsCounter and the room to the List MatchesList.
	MatchesList = "list"
)

// CertAnnotation is the annotation that carries the SHA-256 of the game
// server's certificate (hex) in the allocator's answer: the server sets
// "rewind-cert-sha256" through the SDK, which prefixes it.
const CertAnnotation = "agones.dev/sdk-rewind-cert-sha256"

// Config configures a Matchmaker. Allocator, Fleet and Key are required;
// every other field has a default.
type Config struct {
	// Allocator is the allocator service, host or host:port (port 443 if
	// none): the EXTERNAL-IP of `kubectl get service agones-allocator -n
	// agones-system`.
	Allocator string
	// ClientCert is the matchmaker's client certificate and key, which the
	// allocator's mTLS requires: the allocator-client.default Secret's
	// tls.crt and tls.key (Helm installs), or a certificate signed by a CA
	// in the allocator-client-ca Secret. Load it with tls.LoadX509KeyPair.
	// Leave it empty only for an allocator with mTLS disabled.
	ClientCert tls.Certificate
	// AllocatorCA verifies the allocator's certificate: the
	// allocator-tls-ca Secret's tls-ca.crt. Nil: the system's roots.
	AllocatorCA *x509.CertPool
	// ServerName is the name (or IP) the allocator's certificate is
	// checked for; empty: the host of Allocator.
	ServerName string
	// Timeout bounds each allocation request (default 10s).
	Timeout time.Duration

	// Namespace is the game servers' namespace (default "default").
	Namespace string
	// Fleet is the Fleet to allocate from: the selectors match the label
	// agones.dev/fleet.
	Fleet string
	// Matches is MatchesAnnotation (the default) or MatchesList, as the
	// Fleet's servers have agones.matches.
	Matches string
	// MatchKey is the annotation that names the match (default
	// "rewind.gg/match", the server's agones.match_key).
	MatchKey string
	// MatchesList and RoomsCounter are the List and the Counter of high
	// density (defaults "matches" and "rooms", the server's
	// agones.matches_list and agones.rooms_counter).
	MatchesList  string
	RoomsCounter string
	// Port is the name of the GameServer port players connect to (default
	// "default", the manifests').
	Port string

	// Key signs the connect tokens: the matchmaker's private key
	// (token.LoadPrivateKey; `rewind keygen` makes the pair).
	Key ed25519.PrivateKey
	// TokenLifetime is how long a token is valid (default 2m); the servers
	// refuse more than their auth.max_token_lifetime.
	TokenLifetime time.Duration
	// MaxAllocations bounds the allocations of one match, the first and
	// those made after refusals (default 3, at most 99).
	MaxAllocations int
	// RoomOpenWait is how long after an allocation a wrong_room refusal is
	// taken for a room not open yet, and answered with the same room after
	// a wait, rather than with a new allocation (default 5s). The server
	// opens the room when its watch shows the allocation, a moment after
	// the allocator answers.
	RoomOpenWait time.Duration
	// Remember is how long a match is kept after its last allocation, for
	// Refused, Ticket and Current (default 15m).
	Remember time.Duration
}

// Player is a player of a match: what their token grants.
type Player struct {
	User  string `json:"user"`  // stable user id: 1 to 64 bytes of UTF-8, no control characters
	Name  string `json:"name"`  // display name, by the server's rule for names (package names)
	Team  uint8  `json:"team"`  // 1 or 2; 0 lets the server balance the teams
	Class string `json:"class"` // empty: the server's default class
}

// Match is a match to allocate.
type Match struct {
	// ID names the match: 1 to 60 of A-Z a-z 0-9 _ . -, unique. The room
	// of its first allocation is the id; a re-allocation's is the id with
	// ".2", ".3", … after it, so every id ending so must be left to them.
	ID      string   `json:"id"`
	Players []Player `json:"players"`
}

// Ticket is what one player needs to join: where, the certificate to pin,
// and the token.
type Ticket struct {
	Match      string    `json:"match"`
	Room       string    `json:"room"`
	User       string    `json:"user"`
	Addr       string    `json:"addr"`        // host:port, UDP (QUIC)
	CertSHA256 string    `json:"cert_sha256"` // the server's certificate's SHA-256, hex: pin it
	Token      string    `json:"token"`       // base64url (docs/tokens.md)
	Expires    time.Time `json:"expires"`     // the token's end
	// WaitMS asks the player to wait this many milliseconds before
	// dialing: the answer to a wrong_room refusal right after the
	// allocation (the room is not open yet).
	WaitMS int64 `json:"wait_ms,omitempty"`
}

// Assignment is a match's allocation: the GameServer and a ticket for each
// player, in the order of the match's players.
type Assignment struct {
	Match string `json:"match"`
	Room  string `json:"room"`
	// Allocation counts the match's allocations: 1 for the first.
	Allocation int       `json:"allocation"`
	GameServer string    `json:"game_server"`
	Addr       string    `json:"addr"`
	CertSHA256 string    `json:"cert_sha256"`
	At         time.Time `json:"allocated_at"`
	Tickets    []Ticket  `json:"tickets"`
}

// Refusal is a join the server refused, as the player reports it.
type Refusal struct {
	Match  string `json:"match"`
	Room   string `json:"room"` // the room of the ticket refused
	User   string `json:"user"`
	Code   uint8  `json:"code"`   // the Reject's code (docs/protocol.md): 12 wrong_room, 2 full
	Reason string `json:"reason"` // the Reject's text, for the logs
}

// Matchmaker allocates matches from a Fleet through the Agones allocator
// service, and mints their players' tokens. Its methods may be called from
// several goroutines at once.
type Matchmaker struct {
	cfg       Config
	http      *http.Client
	url, host string

	mu      sync.Mutex
	matches map[string]*match
}

// match is a match the matchmaker has allocated.
type match struct {
	mu          sync.Mutex // held while it is allocated and while tickets are minted
	id          string
	players     []Player
	allocations int        // made, answered or not
	current     Assignment // the newest usable one
	forgotten   bool

	until time.Time // when it is forgotten, under Matchmaker.mu
}

// New returns a Matchmaker for cfg. It does not connect: the first
// allocation does.
func New(cfg Config) (*Matchmaker, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	host := cfg.Allocator
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(strings.Trim(host, "[]"), "443")
	}
	tc := &tls.Config{RootCAs: cfg.AllocatorCA, ServerName: cfg.ServerName, MinVersion: tls.VersionTLS12}
	if len(cfg.ClientCert.Certificate) > 0 {
		tc.Certificates = []tls.Certificate{cfg.ClientCert}
	}
	// HTTP/1.1, as Agones' curl example: the allocator serves REST over
	// either, and over HTTP/2 Go reports a refused client certificate as
	// "http2: client conn could not be established", without the TLS alert.
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tc,
		TLSHandshakeTimeout: cfg.Timeout, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second}
	return &Matchmaker{
		cfg:     cfg,
		http:    &http.Client{Transport: tr, Timeout: cfg.Timeout},
		url:     "https://" + host + "/gameserverallocation",
		host:    host,
		matches: map[string]*match{},
	}, nil
}

// defaults checks c and fills in its defaults.
func (c *Config) defaults() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("matchmaker: Config.%s: %s", field, fmt.Sprintf(format, args...))
	}
	set := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	set(&c.Namespace, "default")
	set(&c.Matches, MatchesAnnotation)
	set(&c.MatchKey, "rewind.gg/match")
	set(&c.MatchesList, "matches")
	set(&c.RoomsCounter, "rooms")
	set(&c.Port, "default")
	for _, d := range []struct {
		field string
		p     *time.Duration
		v     time.Duration
	}{{"Timeout", &c.Timeout, 10 * time.Second}, {"TokenLifetime", &c.TokenLifetime, 2 * time.Minute},
		{"RoomOpenWait", &c.RoomOpenWait, 5 * time.Second}, {"Remember", &c.Remember, 15 * time.Minute}} {
		switch {
		case *d.p == 0:
			*d.p = d.v
		case *d.p < 0:
			return bad(d.field, "%v is negative", *d.p)
		}
	}
	if c.MaxAllocations == 0 {
		c.MaxAllocations = 3
	}
	switch {
	case c.Allocator == "":
		return bad("Allocator", "empty: the allocator service's host[:port]")
	case c.Fleet == "":
		return bad("Fleet", "empty: the Fleet's name (its label agones.dev/fleet)")
	case len(c.Key) != ed25519.PrivateKeySize:
		return bad("Key", "%d bytes, want an Ed25519 private key (token.LoadPrivateKey)", len(c.Key))
	case c.Matches != MatchesAnnotation && c.Matches != MatchesList:
		return bad("Matches", "%q is neither %q nor %q", c.Matches, MatchesAnnotation, MatchesList)
	case c.TokenLifetime < time.Second:
		return bad("TokenLifetime", "%v: tokens have whole seconds", c.TokenLifetime)
	case c.MaxAllocations < 1 || c.MaxAllocations > 99:
		return bad("MaxAllocations", "%d is outside 1..99", c.MaxAllocations)
	}
	return nil
}

// Allocate allocates a GameServer for the match and mints a token for each
// player. In list mode, an allocation whose GameServer's List did not take
// the room (it was full) is made again, within MaxAllocations. The error
// says what failed: a player's claims, the allocator (unreachable, its TLS,
// its answer: errors.Is(err, ErrNoGameServer) when no GameServer was
// free), or the answer's GameServer (no address, port or certificate
// annotation).
func (m *Matchmaker) Allocate(ctx context.Context, mt Match) (Assignment, error) {
	if err := m.check(mt); err != nil {
		return Assignment{}, err
	}
	st := &match{id: mt.ID, players: slices.Clone(mt.Players)}
	st.mu.Lock()
	defer st.mu.Unlock()
	m.mu.Lock()
	now := time.Now()
	for id, old := range m.matches {
		if now.After(old.until) {
			delete(m.matches, id)
		}
	}
	if _, dup := m.matches[mt.ID]; dup {
		m.mu.Unlock()
		return Assignment{}, fmt.Errorf("matchmaker: match %q is allocated already: Forget it first, or give the match a new id", mt.ID)
	}
	m.matches[mt.ID] = st
	st.until = now.Add(m.cfg.Remember)
	m.mu.Unlock()

	a, err := m.allocateLocked(ctx, st)
	if err != nil {
		m.mu.Lock()
		delete(m.matches, mt.ID)
		m.mu.Unlock()
		st.forgotten = true
		return Assignment{}, err
	}
	return a, nil
}

// check refuses a match whose id or players no token could carry.
func (m *Matchmaker) check(mt Match) error {
	if !validMatchID(mt.ID) {
		return fmt.Errorf("matchmaker: match id %q: want 1 to %d of A-Z a-z 0-9 _ . -", mt.ID, maxMatchID)
	}
	if len(mt.Players) == 0 || len(mt.Players) > 255 {
		return fmt.Errorf("matchmaker: match %s: %d players, want 1 to 255", mt.ID, len(mt.Players))
	}
	seen := map[string]bool{}
	now := time.Now()
	for i, p := range mt.Players {
		if seen[p.User] {
			return fmt.Errorf("matchmaker: match %s: player %d: user %q is in the match twice", mt.ID, i+1, p.User)
		}
		seen[p.User] = true
		c := m.claims(p, roomName(mt.ID, m.cfg.MaxAllocations), now)
		if err := c.Validate(); err != nil {
			return fmt.Errorf("matchmaker: match %s: player %d (%q): %w", mt.ID, i+1, p.User, err)
		}
	}
	return nil
}

// maxMatchID leaves a room id room for the suffix of the 99th allocation.
const maxMatchID = 60

// validMatchID reports whether id is 1 to maxMatchID of the characters of
// a room id.
func validMatchID(id string) bool {
	return len(id) >= 1 && len(id) <= maxMatchID && strings.Trim(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == ""
}

// roomName is the room of a match's n-th allocation.
func roomName(id string, n int) string {
	if n <= 1 {
		return id
	}
	return id + "." + strconv.Itoa(n)
}

// allocateLocked makes the match's next allocation; st.mu is held.
func (m *Matchmaker) allocateLocked(ctx context.Context, st *match) (Assignment, error) {
	var last error
	for st.allocations < m.cfg.MaxAllocations {
		// Every attempt takes a new room: one that timed out may have
		// allocated a GameServer, which would refuse its room again.
		st.allocations++
		room := roomName(st.id, st.allocations)
		resp, err := m.post(ctx, m.request(room))
		if err != nil {
			return Assignment{}, fmt.Errorf("matchmaker: match %s: allocating room %s: %w", st.id, room, err)
		}
		a, err := m.assignment(st, room, resp)
		if errors.Is(err, errNotListed) {
			last = fmt.Errorf("room %s on %s: %w", room, resp.GameServerName, err)
			continue
		}
		if err != nil {
			return Assignment{}, fmt.Errorf("matchmaker: match %s: room %s: %w", st.id, room, err)
		}
		st.current = a
		m.mu.Lock()
		st.until = a.At.Add(m.cfg.Remember)
		m.mu.Unlock()
		return clone(a), nil
	}
	if last == nil {
		last = errors.New("no allocation left")
	}
	return Assignment{}, fmt.Errorf("matchmaker: match %s: %d allocations (Config.MaxAllocations), none usable: %w", st.id, st.allocations, last)
}

// errNotListed is a high-density allocation whose GameServer's List did not
// take the room: Agones drops values past a List's capacity, and still
// allocates.
var errNotListed = errors.New("the GameServer's matches List did not take the room (full)")

// assignment reads the allocator's answer for room and mints the tickets.
func (m *Matchmaker) assignment(st *match, room string, resp allocationResponse) (Assignment, error) {
	name := resp.GameServerName
	if resp.Address == "" {
		return Assignment{}, fmt.Errorf("the allocated GameServer %s has no address", name)
	}
	i := slices.IndexFunc(resp.Ports, func(p struct {
		Name string `json:"name"`
		Port int32  `json:"port"`
	}) bool {
		return p.Name == m.cfg.Port
	})
	if i < 0 {
		return Assignment{}, fmt.Errorf("the allocated GameServer %s has no port named %q (Config.Port); it has %v", name, m.cfg.Port, resp.Ports)
	}
	var sum string
	if resp.Metadata != nil {
		sum = resp.Metadata.Annotations[CertAnnotation]
	}
	if sum == "" {
		return Assignment{}, fmt.Errorf("the allocated GameServer %s has no annotation %s: is it a Rewind server? It sets the annotation before it is Ready", name, CertAnnotation)
	}
	if b, err := hex.DecodeString(sum); err != nil || len(b) != sha256.Size {
		return Assignment{}, fmt.Errorf("the allocated GameServer %s: annotation %s: %q is not a SHA-256 in hex", name, CertAnnotation, sum)
	}
	if m.cfg.Matches == MatchesList {
		if l, ok := resp.Lists[m.cfg.MatchesList]; ok && !slices.Contains(l.Values, room) {
			return Assignment{}, errNotListed
		}
	}
	a := Assignment{Match: st.id, Room: room, Allocation: st.allocations, GameServer: name,
		Addr: net.JoinHostPort(resp.Address, strconv.Itoa(int(resp.Ports[i].Port))), CertSHA256: sum, At: time.Now()}
	for _, p := range st.players {
		t, err := m.mint(a, p)
		if err != nil {
			return Assignment{}, err
		}
		a.Tickets = append(a.Tickets, t)
	}
	return a, nil
}

// claims are p's token claims for room from now, without a nonce.
func (m *Matchmaker) claims(p Player, room string, now time.Time) token.Claims {
	return token.Claims{NotBefore: now, Expires: now.Add(m.cfg.TokenLifetime),
		User: p.User, Name: p.Name, Room: room, Team: p.Team, Class: p.Class}
}

// mint returns a ticket for p in a's room, with a fresh token.
func (m *Matchmaker) mint(a Assignment, p Player) (Ticket, error) {
	c := m.claims(p, a.Room, time.Now())
	var err error
	if c.Nonce, err = token.NewNonce(nil); err != nil {
		return Ticket{}, fmt.Errorf("matchmaker: %w", err)
	}
	tok, err := token.Sign(m.cfg.Key, c)
	if err != nil {
		return Ticket{}, fmt.Errorf("matchmaker: match %s: user %q: %w", a.Match, p.User, err)
	}
	return Ticket{Match: a.Match, Room: a.Room, User: p.User, Addr: a.Addr, CertSHA256: a.CertSHA256,
		Token: token.Encode(tok), Expires: c.Expires.Truncate(time.Second)}, nil
}

// Refused takes a player's report that the server refused their join, and
// returns the ticket they should try next:
//
//   - for a room the match has since left (another player's report moved
//     it), a ticket to its current room;
//   - for wrong_room within RoomOpenWait of the allocation, a ticket to the
//     same room with WaitMS set: the room is not open yet;
//   - for wrong_room after that (the server refused the allocation, or the
//     room closed before the players came), or full: a new allocation of
//     the whole match, in a new room (a server refuses a match id it has
//     hosted before), and the player's ticket to it. The other
//     players need their tickets of the new allocation too (Current);
//     those in the refused room leave it.
//
// Another code is an error: a new allocation cures none (a token_expired
// or token_replayed needs only a new token: Ticket). So is a report once
// MaxAllocations are made.
func (m *Matchmaker) Refused(ctx context.Context, r Refusal) (Ticket, error) {
	st, i, err := m.lookup(r.Match, r.User)
	if err != nil {
		return Ticket{}, err
	}
	defer st.mu.Unlock()
	cur := st.current
	label := protocol.RejectLabel(r.Code)
	switch since := time.Since(cur.At); {
	case r.Room != cur.Room:
		return m.mint(cur, st.players[i])
	case r.Code != protocol.RejectWrongRoom && r.Code != protocol.RejectFull:
		return Ticket{}, fmt.Errorf("matchmaker: match %s: user %q refused with %d (%s): not one a new allocation cures", st.id, r.User, r.Code, label)
	case r.Code == protocol.RejectWrongRoom && since < m.cfg.RoomOpenWait:
		t, err := m.mint(cur, st.players[i])
		t.WaitMS = max(min(time.Second, m.cfg.RoomOpenWait-since).Milliseconds(), 1)
		return t, err
	case st.allocations >= m.cfg.MaxAllocations:
		return Ticket{}, fmt.Errorf("matchmaker: match %s: room %s refused user %q with %s (%s), and the match has had its %d allocations (Config.MaxAllocations): giving up",
			st.id, r.Room, r.User, label, r.Reason, st.allocations)
	}
	a, err := m.allocateLocked(ctx, st)
	if err != nil {
		return Ticket{}, fmt.Errorf("%w (after room %s refused user %q with %s)", err, r.Room, r.User, label)
	}
	return a.Tickets[i], nil
}

// Ticket returns a new ticket for a player of the match, to its current
// room: every join needs a fresh token (a reconnection, one that expired).
func (m *Matchmaker) Ticket(matchID, user string) (Ticket, error) {
	st, i, err := m.lookup(matchID, user)
	if err != nil {
		return Ticket{}, err
	}
	defer st.mu.Unlock()
	return m.mint(st.current, st.players[i])
}

// Current returns the match's newest allocation, with the tickets minted
// with it, and whether the matchmaker has the match.
func (m *Matchmaker) Current(matchID string) (Assignment, bool) {
	m.mu.Lock()
	st := m.matches[matchID]
	m.mu.Unlock()
	if st == nil {
		return Assignment{}, false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.forgotten {
		return Assignment{}, false
	}
	return clone(st.current), true
}

// Forget drops the match: its players have joined, or it is over. It
// waits for an allocation of the match under way.
func (m *Matchmaker) Forget(matchID string) {
	m.mu.Lock()
	st := m.matches[matchID]
	delete(m.matches, matchID)
	m.mu.Unlock()
	if st != nil {
		st.mu.Lock()
		st.forgotten = true
		st.mu.Unlock()
	}
}

// lookup returns the match, locked, and the index of user among its
// players.
func (m *Matchmaker) lookup(matchID, user string) (*match, int, error) {
	m.mu.Lock()
	st := m.matches[matchID]
	m.mu.Unlock()
	if st == nil {
		return nil, 0, fmt.Errorf("matchmaker: no match %q (never allocated, forgotten, or over Config.Remember)", matchID)
	}
	st.mu.Lock()
	i := slices.IndexFunc(st.players, func(p Player) bool { return p.User == user })
	switch {
	case st.forgotten:
		st.mu.Unlock()
		return nil, 0, fmt.Errorf("matchmaker: match %q was forgotten", matchID)
	case i < 0:
		st.mu.Unlock()
		return nil, 0, fmt.Errorf("matchmaker: match %s has no user %q", matchID, user)
	}
	return st, i, nil
}

func clone(a Assignment) Assignment {
	a.Tickets = slices.Clone(a.Tickets)
	return a
}
