package tests

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/internal/servertest"
	"github.com/rewind-gg/rewind/internal/starved"
	"github.com/rewind-gg/rewind/netshim"
	"github.com/rewind-gg/rewind/server"
)

// TestMain fails the package if any test leaves a goroutine behind: servers,
// clients and shims must all shut down cleanly.
func TestMain(m *testing.M) {
	if addr := os.Getenv(botProcessEnv); addr != "" {
		os.Exit(botProcess(addr))
	}
	goleak.VerifyTestMain(m)
}

// startServer starts a server on a free loopback port; the test shuts it
// down when it ends (and fails if that is not clean).
func startServer(t testing.TB, change func(*server.Config)) *server.Server {
	t.Helper()
	return servertest.Start(t, change)
}

// shim puts a network shim with a round trip of rtt (half each way), the
// given jitter and loss each way, in front of the server.
func shim(t testing.TB, srv *server.Server, rtt, jitter time.Duration, loss float64, seed uint64) string {
	t.Helper()
	way := netshim.Conditions{Latency: rtt / 2, Jitter: jitter, Loss: loss}
	sh, err := netshim.Start(netshim.Config{Listen: "127.0.0.1:0", Target: srv.Addr().String(), Up: way, Down: way, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	return sh.Addr().String()
}

// dial joins a client to srv (cfg.Addr may be a shim in front of it),
// pinning srv's certificate unless cfg says otherwise; the test closes it
// when it ends.
func dial(t testing.TB, srv *server.Server, cfg client.Config) *client.Client {
	t.Helper()
	if cfg.ServerCertSHA256 == nil && cfg.TLS == nil && !cfg.InsecureSkipVerify {
		cfg.ServerCertSHA256 = srv.CertSHA256()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var c *client.Client
	var err error
	for attempt := range 3 { // a handshake through a lossy shim may time out
		if c, err = client.Dial(ctx, cfg); err == nil {
			break
		}
		t.Logf("dial attempt %d: %v", attempt+1, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// play runs the clients for d and returns Run's errors.
func play(d time.Duration, clients ...*client.Client) []error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return runAll(ctx, clients...)()
}

// start runs the clients in the background until the returned stop is
// called; stop waits for them and returns Run's errors.
func start(clients ...*client.Client) (stop func() []error) {
	ctx, cancel := context.WithCancel(context.Background())
	wait := runAll(ctx, clients...)
	return func() []error { cancel(); return wait() }
}

// runAll runs the clients until ctx ends; wait waits for them and returns
// Run's errors.
func runAll(ctx context.Context, clients ...*client.Client) (wait func() []error) {
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.Run(ctx) }()
	}
	return func() []error { wg.Wait(); return errs }
}

func roomStats(t testing.TB, srv *server.Server, room string) server.RoomStats {
	t.Helper()
	r, ok := findRoom(t, srv, room)
	if !ok {
		t.Fatalf("no room %q", room)
	}
	return r
}

// findRoom returns a room's statistics, if the room is open.
func findRoom(t testing.TB, srv *server.Server, room string) (server.RoomStats, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	all, err := srv.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if r.ID == room {
			return r, true
		}
	}
	return server.RoomStats{}, false
}

// until polls cond every 20 ms (the server has no event to wait on for
// these conditions) and fails the test, saying what never happened, after
// timeout.
func until(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
		<-tick.C
	}
}

func playerStats(t testing.TB, srv *server.Server, room string, id uint32) server.PlayerStats {
	t.Helper()
	p, ok := seatedPlayer(t, srv, room, id)
	if !ok {
		t.Fatalf("no player %d in room %q", id, room)
	}
	return p
}

// seatedPlayer returns a player's statistics, and false if it is not in
// the room (any more).
func seatedPlayer(t testing.TB, srv *server.Server, room string, id uint32) (server.PlayerStats, bool) {
	t.Helper()
	for _, p := range roomStats(t, srv, room).Players {
		if p.ID == id {
			return p, true
		}
	}
	return server.PlayerStats{}, false
}

// waitTicks waits until the room has simulated n more ticks (polling the
// room's tick counter: the condition, not a guess of the time it takes).
func waitTicks(t testing.TB, srv *server.Server, room string, n int64) {
	t.Helper()
	from := roomStats(t, srv, room).Tick
	until(t, time.Duration(n)*time.Second/10+10*time.Second, fmt.Sprintf("room %q did not simulate %d ticks in time", room, n),
		func() bool { return roomStats(t, srv, room).Tick >= from+n })
}

// starvedProbe measures how long this process waits for a CPU while the
// test runs (internal/starved), for rooms ticking at the default rate: what
// a machine busier than its cores explains of a tick overrun or a packet
// read late, and on an idle machine nothing.
func starvedProbe(t testing.TB) *starved.Probe {
	p := starved.ForTicks(time.Second / time.Duration(server.DefaultConfig().TickRate))
	t.Cleanup(p.Stop)
	return p
}

// scripted is an InputSource that calls a function of the tick.
type scripted func(v *client.View) client.Intent

func (s scripted) Intent(v *client.View) client.Intent { return s(v) }

// strafer runs right and left across the arena, switching every period ticks.
func strafer(period int64) scripted {
	return func(v *client.View) client.Intent {
		if (v.Tick/period)%2 == 0 {
			return client.Intent{MoveX: 1}
		}
		return client.Intent{MoveX: -1}
	}
}

// waitPlayers waits until the room holds n players.
func waitPlayers(t testing.TB, srv *server.Server, room string, n int) {
	t.Helper()
	until(t, 30*time.Second, fmt.Sprintf("room %q never had %d players", room, n), func() bool {
		r, ok := findRoom(t, srv, room)
		return ok && len(r.Players) >= n
	})
}

// pinned checks that the server showed the certificate whose SHA-256 is pin.
func pinned(cs tls.ConnectionState, pin []byte) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("no certificate")
	}
	if sum := sha256.Sum256(cs.PeerCertificates[0].Raw); !bytes.Equal(sum[:], pin) {
		return fmt.Errorf("certificate %x, pinned %x", sum, pin)
	}
	return nil
}
