package loadgen

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/internal/servertest"
	"github.com/rewind-gg/rewind/netshim"
	"github.com/rewind-gg/rewind/server"
)

// until polls cond (a fleet's counters have no event to wait on) until it
// holds or the deadline passes.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not in 20 s", what)
		}
		<-poll.C
	}
}

func runFleet(t *testing.T, f *Fleet) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		f.Close()
	})
}

func listen(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Floor clients send packets of their size at their rate, and the echoes
// answer each with one of theirs: plain UDP and quic-go DATAGRAMs.
func TestFleetFloors(t *testing.T) {
	cert, err := SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{FloorUDP, FloorQUIC} {
		t.Run(string(mode), func(t *testing.T) {
			conn := listen(t)
			ctx, cancel := context.WithCancel(context.Background())
			echoed := make(chan error, 1)
			go func() {
				if mode == FloorUDP {
					echoed <- EchoUDP(ctx, conn, 100)
				} else {
					echoed <- EchoQUIC(ctx, conn, cert, 100)
				}
			}()
			t.Cleanup(func() {
				cancel()
				if err := <-echoed; err != nil {
					t.Errorf("echo: %v", err)
				}
			})
			f, err := New(Config{Addr: conn.LocalAddr().String(), Mode: mode, Players: 3, Size: 40, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			runFleet(t, f)
			for _, room := range []string{"a", "b"} {
				if err := f.AddRoom(context.Background(), room); err != nil {
					t.Fatal(err)
				}
			}
			// A packet counts as sent once its write returns, and its
			// reply may be counted before that (and the counters are read
			// one by one): replies never outnumber the packets sent once
			// the counters agree.
			var st Stats
			until(t, "120 replies, each to a 40-byte packet sent, of 100 bytes each", func() bool {
				st = f.Stats()
				return st.Recv >= 120 && st.Sent >= st.Recv && st.SentBytes == 40*st.Sent && st.RecvBytes == 100*st.Recv
			})
			if st.Clients != 6 || st.Dropped != 0 {
				t.Errorf("stats %+v: want 6 clients, no drops, 40-byte packets answered by 100-byte ones", st)
			}
		})
	}
}

// Rewind clients join a real server's room on the sealed channel and play:
// the room applies their inputs, they open its snapshots.
func TestFleetPlaysARoom(t *testing.T) {
	srv := servertest.Start(t, nil)
	f, err := New(Config{Addr: srv.Addr().String(), Players: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	runFleet(t, f)
	if err := f.AddRoom(context.Background(), "fleet"); err != nil {
		t.Fatal(err)
	}
	applied := func() (n []uint64) {
		rooms, err := srv.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rooms {
			for _, p := range r.Players {
				n = append(n, p.Applied)
			}
		}
		return n
	}
	until(t, "40 inputs applied for each of 4 players", func() bool {
		n := applied()
		for _, a := range n {
			if a < 40 {
				return false
			}
		}
		return len(n) == 4
	})
	st := f.Stats()
	if st.Dropped != 0 || st.Disconnected != 0 || st.SnapshotTicks < 4*30 {
		t.Errorf("stats %+v: want no drops or disconnections, and snapshots opened", st)
	}
}

// Rewind clients send at their Welcome's tick rate: against a 60 Hz
// server, 60 inputs a second each, every one applied.
func TestFleetFollowsTheWelcomesRate(t *testing.T) {
	srv := servertest.Start(t, func(c *server.Config) { c.TickRate, c.SnapshotRate, c.MaxDatagramRate = 60, 60, 900 })
	f, err := New(Config{Addr: srv.Addr().String(), Players: 2, Seed: 1, Rate: 20})
	if err != nil {
		t.Fatal(err)
	}
	runFleet(t, f)
	if err := f.AddRoom(context.Background(), "fast"); err != nil {
		t.Fatal(err)
	}
	first := f.Stats()
	start := time.Now()
	until(t, "120 more inputs sent by each of 2 players", func() bool { return f.Stats().Sent >= first.Sent+2*120 })
	// Two seconds' worth at 60 Hz: under 1.5 s for 240 packets says the
	// clients did not send at the fleet's 20.
	if took := time.Since(start); took < 1500*time.Millisecond || took > 8*time.Second {
		t.Errorf("240 input packets took %v, want about 2 s (2 clients at 60 Hz)", took)
	}
}

// The first error of a fleet's loops stops the others, and Run returns it
// (it waited for ever when a Rewind fleet's transport reader was left).
func TestFleetRunReturnsItsFirstError(t *testing.T) {
	srv := servertest.Start(t, nil)
	f, err := New(Config{Addr: srv.Addr().String(), Players: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.AddRoom(context.Background(), "broken"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- f.Run(context.Background()) }()
	until(t, "snapshots read", func() bool { return f.Stats().SnapshotTicks > 0 })
	f.udp.SetReadDeadline(time.Now()) // the packets' socket fails
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "loadgen: read") {
			t.Errorf("Run returned %v, want the read's error", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after its read loop failed")
	}
}

// A join that times out (a loaded machine) is tried once more: through a
// path that drops every packet until the first attempt has timed out, the
// client joins on its second.
func TestFleetRetriesAJoinThatTimedOut(t *testing.T) {
	srv := servertest.Start(t, nil)
	cut := netshim.Conditions{Loss: 1}
	sh, err := netshim.Start(netshim.Config{Listen: "127.0.0.1:0", Target: srv.Addr().String(), Up: cut, Down: cut, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	f, err := New(Config{Addr: sh.Addr().String(), Players: 1, Seed: 1, JoinTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	runFleet(t, f)
	joined := make(chan error, 1)
	go func() { joined <- f.AddRoom(context.Background(), "retry") }()
	until(t, "the first attempt timed out", func() bool { return f.Stats().Retried == 1 })
	sh.SetConditions(netshim.Conditions{}, netshim.Conditions{})
	if err := <-joined; err != nil {
		t.Fatalf("AddRoom: %v", err)
	}
	if st := f.Stats(); st.Clients != 1 || st.Retried != 1 {
		t.Errorf("stats %+v: want 1 client, joined on its second attempt", st)
	}

	// Two timeouts are an error.
	sh.SetConditions(cut, cut)
	f, err = New(Config{Addr: sh.Addr().String(), Players: 1, Seed: 1, JoinTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runFleet(t, f)
	err = f.AddRoom(context.Background(), "never")
	if err == nil || !strings.Contains(err.Error(), "room never, client 0") {
		t.Errorf("AddRoom through a dead path: %v, want an error naming the client", err)
	}
	if st := f.Stats(); st.Retried != 1 || st.Clients != 0 {
		t.Errorf("stats %+v: want 1 join retried, no client", st)
	}
}
