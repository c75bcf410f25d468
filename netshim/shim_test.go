package netshim

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitTimeout bounds every wait in these tests; a correct shim needs a tiny
// fraction of it.
const waitTimeout = 5 * time.Second

// waitFor polls cond until it holds, failing the test at waitTimeout. It is
// for counters that have no channel to wait on.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

func startShim(t *testing.T, cfg Config) *Shim {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	s, err := Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// collector reads every packet arriving on a socket, optionally echoing it
// back to its sender, until the socket is closed.
type collector struct {
	conn *net.UDPConn
	done chan struct{}

	mu      sync.Mutex
	packets [][]byte
	sources map[netip.AddrPort]int
}

// serve starts a collector on conn and closes conn at the end of the test.
func serve(t *testing.T, conn *net.UDPConn, echo bool) *collector {
	t.Helper()
	c := &collector{conn: conn, done: make(chan struct{}), sources: make(map[netip.AddrPort]int)}
	go func() {
		defer close(c.done)
		buf := make([]byte, maxPacketSize)
		for {
			n, from, err := conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			c.mu.Lock()
			c.packets = append(c.packets, bytes.Clone(buf[:n]))
			c.sources[from]++
			c.mu.Unlock()
			if echo {
				if _, err := conn.WriteToUDPAddrPort(buf[:n], from); err != nil {
					return
				}
			}
		}
	}()
	t.Cleanup(c.stop)
	return c
}

// stop closes the socket and waits for the reader to exit.
func (c *collector) stop() {
	c.conn.Close()
	<-c.done
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.packets)
}

func (c *collector) received() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.packets)
}

func (c *collector) numSources() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sources)
}

// anySource is a source the collector has seen; with one client it is the
// shim's socket for that client.
func (c *collector) anySource() netip.AddrPort {
	c.mu.Lock()
	defer c.mu.Unlock()
	for a := range c.sources {
		return a
	}
	return netip.AddrPort{}
}

func listenLoopback(t *testing.T) *net.UDPConn {
	t.Helper()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	setBuffers(conn)
	t.Cleanup(func() { conn.Close() })
	return conn
}

func dialShim(t *testing.T, s *Shim) *net.UDPConn {
	t.Helper()
	conn, err := net.DialUDP("udp4", nil, s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	setBuffers(conn)
	t.Cleanup(func() { conn.Close() })
	return conn
}

// ping sends payload through conn and waits for the echo, returning the
// round-trip time.
func ping(conn *net.UDPConn, payload []byte) (time.Duration, error) {
	start := time.Now()
	if _, err := conn.Write(payload); err != nil {
		return 0, err
	}
	buf := make([]byte, maxPacketSize)
	if err := conn.SetReadDeadline(time.Now().Add(waitTimeout)); err != nil {
		return 0, err
	}
	n, err := conn.Read(buf)
	if err != nil {
		return 0, err
	}
	rtt := time.Since(start)
	if !bytes.Equal(buf[:n], payload) {
		return 0, fmt.Errorf("echo of %d bytes came back as %d different bytes", len(payload), n)
	}
	return rtt, nil
}

func seqPacket(i int) []byte { return binary.BigEndian.AppendUint32(make([]byte, 0, 32), uint32(i)) }

func seqOf(p []byte) int { return int(binary.BigEndian.Uint32(p)) }

// sendWindowed sends n numbered packets, at most window before every packet
// sent so far is accounted for by settled, so bursts never overflow kernel
// socket buffers and the only losses are the shim's.
func sendWindowed(t *testing.T, n, window int, send func(p []byte) error, settled func() int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if err := send(seqPacket(i)); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if sent := i + 1; sent%window == 0 || sent == n {
			waitFor(t, fmt.Sprintf("%d packets to arrive or be dropped", sent), func() bool { return settled() == sent })
		}
	}
}

func TestRelayTransparent(t *testing.T) {
	server := serve(t, listenLoopback(t), true)
	s := startShim(t, Config{Target: server.conn.LocalAddr().String()})

	const clients, pings = 12, 40
	conns := make([]*net.UDPConn, clients)
	var wg sync.WaitGroup
	for c := range conns {
		conns[c] = dialShim(t, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range pings {
				payload := fmt.Appendf(nil, "client %d packet %d", c, i)
				if _, err := ping(conns[c], payload); err != nil {
					t.Errorf("client %d ping %d: %v", c, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// Near the UDP maximum, one at a time so the 64 KiB datagrams cannot
	// overflow a socket buffer on the way.
	big := bytes.Repeat([]byte("0123456789abcdef"), 60000/16)
	for c, conn := range conns {
		if _, err := ping(conn, big); err != nil {
			t.Fatalf("client %d, %d-byte ping: %v", c, len(big), err)
		}
	}

	if got := server.numSources(); got != clients {
		t.Errorf("server saw %d distinct peers, want one per client (%d)", got, clients)
	}
	var wantBytes uint64
	for _, p := range server.received() {
		wantBytes += uint64(len(p))
	}
	const packets = clients * (pings + 1)
	want := DirStats{Packets: packets, Forwarded: packets, Bytes: wantBytes}
	// A packet can reach its receiver, and even be echoed back, before the
	// shim has counted it, so wait for the counters to settle.
	waitFor(t, "the counters to settle", func() bool {
		st := s.Stats()
		return st.Up.Forwarded == packets && st.Down.Forwarded == packets
	})
	if st := s.Stats(); st.Up != want || st.Down != want {
		t.Errorf("Stats() = %+v, want %+v both ways", st, want)
	}
}

func TestLatency(t *testing.T) {
	const up, down = 15 * time.Millisecond, 25 * time.Millisecond
	server := serve(t, listenLoopback(t), true)
	s := startShim(t, Config{
		Target: server.conn.LocalAddr().String(),
		Up:     Conditions{Latency: up},
		Down:   Conditions{Latency: down},
	})
	conn := dialShim(t, s)

	var rtts []time.Duration
	for i := range 8 {
		rtt, err := ping(conn, seqPacket(i))
		if err != nil {
			t.Fatalf("ping %d: %v", i, err)
		}
		if rtt < up+down {
			t.Errorf("ping %d: RTT %v is below the configured %v", i, rtt, up+down)
		}
		rtts = append(rtts, rtt)
	}
	// Generous headroom for loaded machines and the race detector, but far
	// below what a double-applied or per-client-serialised delay would give.
	if best, limit := slices.Min(rtts), up+down+40*time.Millisecond; best > limit {
		t.Errorf("best RTT %v exceeds %v (RTTs %v)", best, limit, rtts)
	}
}

func TestLoss(t *testing.T) {
	const n, loss = 2000, 0.25
	for _, dir := range []string{"up", "down"} {
		t.Run(dir, func(t *testing.T) {
			server := listenLoopback(t)
			lossy := Conditions{Loss: loss}
			cfg := Config{Target: server.LocalAddr().String(), Seed: 7}
			if dir == "up" {
				cfg.Up = lossy
			} else {
				cfg.Down = lossy
			}
			s := startShim(t, cfg)
			client := dialShim(t, s)

			send, recv, stat := direction(t, dir, s, server, client)

			sendWindowed(t, n, 100, send, func() int { return recv.count() + int(stat().Dropped) })
			// A packet can arrive before the shim counts it as forwarded.
			waitFor(t, "the counters to settle", func() bool { st := stat(); return st.Forwarded+st.Dropped == n })

			st := stat()
			if st.Packets != n || st.Forwarded+st.Dropped != n || st.Forwarded != uint64(recv.count()) {
				t.Fatalf("stats %+v with %d received, want %d packets all forwarded or dropped", st, recv.count(), n)
			}
			rate := float64(st.Dropped) / n
			if math.Abs(rate-loss) > 0.05 {
				t.Errorf("dropped %d of %d (%.3f), want %.2f ± 0.05", st.Dropped, n, rate, loss)
			}
		})
	}
}

// direction returns, for dir ("up" or "down"), how to send a packet
// through the shim s, what collects the packets arriving, and the
// direction's stats.
func direction(t *testing.T, dir string, s *Shim, server, client *net.UDPConn) (func([]byte) error, *collector, func() DirStats) {
	if dir == "up" {
		send := func(p []byte) error { _, err := client.Write(p); return err }
		return send, serve(t, server, false), func() DirStats { return s.Stats().Up }
	}
	// The client speaks first so the shim opens its connection; the server
	// then answers the address it was reached from.
	sink := serve(t, server, false)
	if _, err := client.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "hello at the server", func() bool { return sink.count() == 1 })
	shimSide := sink.anySource()
	send := func(p []byte) error { _, err := server.WriteToUDPAddrPort(p, shimSide); return err }
	return send, serve(t, client, false), func() DirStats { return s.Stats().Down }
}

// inversions counts packets that arrived after a packet sent later.
func inversions(packets [][]byte) int {
	n, highest := 0, -1
	for _, p := range packets {
		if seq := seqOf(p); seq < highest {
			n++
		} else {
			highest = seq
		}
	}
	return n
}

func TestReorder(t *testing.T) {
	const n = 300
	for _, tc := range []struct {
		name    string
		cond    Conditions
		reorder bool
	}{
		{"reorder", Conditions{Latency: 5 * time.Millisecond, Jitter: 2 * time.Millisecond, Reorder: 0.2}, true},
		{"reorder without delay", Conditions{Reorder: 0.2}, true},
		// Jitter alone would shuffle a burst thoroughly; FIFO must hold.
		{"jitter keeps FIFO", Conditions{Latency: 5 * time.Millisecond, Jitter: 5 * time.Millisecond}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := serve(t, listenLoopback(t), false)
			s := startShim(t, Config{Target: sink.conn.LocalAddr().String(), Up: tc.cond, Seed: 3})
			client := dialShim(t, s)

			sendWindowed(t, n, 50, func(p []byte) error { _, err := client.Write(p); return err }, sink.count)

			got := sink.received()
			inv := inversions(got)
			st := s.Stats().Up
			t.Logf("%d inversions, %d reordered of %d", inv, st.Reordered, n)
			if tc.reorder {
				if inv == 0 || st.Reordered == 0 {
					t.Errorf("%d inversions, %d reordered: want both > 0", inv, st.Reordered)
				}
				// Every overtaken packet was one the shim chose to hold back.
				if uint64(inv) > st.Reordered {
					t.Errorf("%d inversions but only %d packets reordered", inv, st.Reordered)
				}
			} else if inv != 0 || st.Reordered != 0 {
				t.Errorf("%d inversions, %d reordered with Reorder=0: want FIFO", inv, st.Reordered)
			}
			seen := make(map[int]bool)
			for _, p := range got {
				seen[seqOf(p)] = true
			}
			if len(seen) != n || len(got) != n {
				t.Errorf("received %d packets (%d distinct), want each of %d once", len(got), len(seen), n)
			}
		})
	}
}

func TestSetConditions(t *testing.T) {
	server := serve(t, listenLoopback(t), true)
	s := startShim(t, Config{Target: server.conn.LocalAddr().String()})
	conn := dialShim(t, s)

	if _, err := ping(conn, []byte("before")); err != nil {
		t.Fatal(err)
	}

	// The connection already exists; new conditions must still apply to it.
	const delay = 40 * time.Millisecond
	s.SetConditions(Conditions{Latency: delay / 2}, Conditions{Latency: delay / 2})
	rtt, err := ping(conn, []byte("delayed"))
	if err != nil {
		t.Fatal(err)
	}
	if rtt < delay {
		t.Errorf("RTT after SetConditions is %v, want at least %v", rtt, delay)
	}

	s.SetConditions(Conditions{Loss: 1}, Conditions{})
	before := s.Stats().Up
	if _, err := conn.Write([]byte("lost")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the packet to be dropped", func() bool { return s.Stats().Up.Dropped == before.Dropped+1 })
	if got := s.Stats().Up.Forwarded; got != before.Forwarded {
		t.Errorf("forwarded went from %d to %d with Loss=1", before.Forwarded, got)
	}

	s.SetConditions(Conditions{}, Conditions{})
	if _, err := ping(conn, []byte("after")); err != nil {
		t.Fatal(err)
	}

	defer func() {
		r := recover()
		if err, _ := r.(error); err == nil || !strings.Contains(err.Error(), "netshim: down.reorder: ") {
			t.Errorf("SetConditions with an invalid reorder panicked with %v, want the validation error", r)
		}
	}()
	s.SetConditions(Conditions{}, Conditions{Reorder: -0.1})
}

func TestStartValidation(t *testing.T) {
	const target = "127.0.0.1:4433"
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Listen: "127.0.0.1:0", Target: "10.0.0.1:9"}, "netshim: target: 10.0.0.1:9 is not a loopback address"},
		{Config{Listen: "192.168.1.1:0", Target: target}, "netshim: listen: 192.168.1.1:0 is not a loopback address"},
		{Config{Listen: ":0", Target: target}, "netshim: listen: :0 is not a loopback address"},
		{Config{Listen: "[::]:0", Target: target}, "netshim: listen: [::]:0 is not a loopback address"},
		{Config{Target: target}, "netshim: listen: address is empty"},
		{Config{Listen: "127.0.0.1:0"}, "netshim: target: address is empty"},
		{Config{Listen: "127.0.0.1:0", Target: "127.0.0.1"}, "netshim: target: "},
		{Config{Listen: "127.0.0.1:0", Target: "127.0.0.1:0"}, "netshim: target: 127.0.0.1:0 has no port"},
		{Config{Listen: "127.0.0.1:0", Target: target, Up: Conditions{Loss: 1.5}}, "netshim: up.loss: 1.5 is outside [0, 1]"},
		{Config{Listen: "127.0.0.1:0", Target: target, Up: Conditions{Loss: math.NaN()}}, "netshim: up.loss: NaN is outside [0, 1]"},
		{Config{Listen: "127.0.0.1:0", Target: target, Down: Conditions{Reorder: -0.5}}, "netshim: down.reorder: -0.5 is outside [0, 1]"},
		{Config{Listen: "127.0.0.1:0", Target: target, Down: Conditions{Reorder: math.NaN()}}, "netshim: down.reorder: NaN is outside [0, 1]"},
		{Config{Listen: "127.0.0.1:0", Target: target, Up: Conditions{Latency: -time.Millisecond}}, "netshim: up.latency: -1ms is negative"},
		{Config{Listen: "127.0.0.1:0", Target: target, Down: Conditions{Jitter: -time.Second}}, "netshim: down.jitter: -1s is negative"},
	} {
		s, err := Start(tc.cfg)
		if err == nil {
			s.Close()
			t.Errorf("Start(%+v) succeeded, want error %q", tc.cfg, tc.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Start(%+v) = %q, want %q", tc.cfg, err, tc.want)
		}
	}

	// Boundary values are valid, and a hostname is fine if it is loopback.
	s, err := Start(Config{Listen: "localhost:0", Target: target, Up: Conditions{Loss: 1, Reorder: 1}, Down: Conditions{Loss: 0}})
	if err != nil {
		t.Fatalf("Start with localhost and boundary probabilities: %v", err)
	}
	if !s.Addr().IP.IsLoopback() || s.Addr().Port == 0 {
		t.Errorf("Addr() = %v, want a bound loopback address", s.Addr())
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// shimGoroutines counts the goroutines whose stacks contain any of funcs
// (package-qualified names like "(*Shim).readServer"), from a dump of all
// stacks. Unlike runtime.NumGoroutine it is not disturbed by unrelated
// goroutines (the resolver, the testing package) coming and going.
func shimGoroutines(funcs ...string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, f := range funcs {
			if strings.Contains(g, "/netshim."+f+"(") {
				count++
				break
			}
		}
	}
	return count
}

func TestCloseStopsGoroutines(t *testing.T) {
	// The functions the shim's goroutines run, and the closures that start them.
	shimLoops := []string{"(*Shim).readClients", "(*Shim).readServer", "(*scheduler).run"}
	shimWrappers := []string{"Start.func1", "Start.func2", "Start.func3", "(*Shim).connFor.func1"}

	// The shims of earlier tests are closed, but a goroutine that has
	// called wg.Done may still be returning: the counts below are this
	// shim's only once those are gone (a leaked one never goes away).
	waitFor(t, "earlier tests' shim goroutines to exit", func() bool { return shimGoroutines(shimWrappers...) == 0 })
	before := runtime.NumGoroutine()

	server := listenLoopback(t)
	echo := serve(t, server, true)
	// Every packet is still queued at Close: an hour away.
	s, err := Start(Config{
		Listen: "127.0.0.1:0",
		Target: server.LocalAddr().String(),
		Up:     Conditions{Latency: time.Hour},
		Down:   Conditions{Latency: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	const clients = 12
	for c := range clients {
		conn := dialShim(t, s)
		for i := range 3 {
			if _, err := conn.Write(fmt.Appendf(nil, "%d/%d", c, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor(t, "the shim to read every packet", func() bool { return s.Stats().Up.Packets == clients*3 })
	// Both schedulers, the listen reader and one reader per client.
	if got, want := shimGoroutines(shimWrappers...), 3+clients; got != want {
		t.Errorf("%d shim goroutines running, want %d", got, want)
	}

	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Close did not return with packets queued")
	}
	// Close waits for its goroutines, so none can still be in its loop.
	if n := shimGoroutines(shimLoops...); n != 0 {
		t.Errorf("%d shim goroutines still running their loops after Close returned", n)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if st := s.Stats(); st.Up.Forwarded != 0 || st.Down.Packets != 0 {
		t.Errorf("Stats() = %+v, want nothing forwarded", st)
	}

	// A goroutine that has called wg.Done may still be returning, so poll
	// briefly; a leaked one never goes away.
	echo.stop()
	waitFor(t, "shim goroutines to exit", func() bool { return shimGoroutines(shimWrappers...) == 0 })
	waitFor(t, "the goroutine count to return to its baseline", func() bool { return runtime.NumGoroutine() <= before })
}

func TestModelDeterministic(t *testing.T) {
	cond := Conditions{Latency: 20 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.3, Reorder: 0.2}
	run := func(seed, stream uint64) []decision {
		m := newModel(seed, stream)
		now := time.Unix(0, 0)
		var ds []decision
		for range 500 {
			now = now.Add(time.Millisecond)
			ds = append(ds, m.decide(now, 100, cond))
		}
		return ds
	}
	a := run(42, 1)
	if b := run(42, 1); !slices.Equal(a, b) {
		t.Error("same seed and stream gave different decisions")
	}
	if b := run(43, 1); slices.Equal(a, b) {
		t.Error("different seeds gave identical decisions")
	}
	if b := run(42, 2); slices.Equal(a, b) {
		t.Error("different streams gave identical decisions")
	}
}

func TestModelDecide(t *testing.T) {
	const (
		lat = 20 * time.Millisecond
		jit = 8 * time.Millisecond
		n   = 2000
	)
	cond := Conditions{Latency: lat, Jitter: jit, Reorder: 0.25}
	hold := cond.reorderHold()
	m := newModel(1, 0)
	now := time.Unix(100, 0)
	var (
		floor, heldUntil     time.Time
		reordered, overtaken int
		minD, maxD           = time.Hour, time.Duration(0)
	)
	for range n {
		now = now.Add(100 * time.Microsecond)
		d := m.decide(now, 100, cond)
		if d.drop {
			t.Fatal("dropped a packet with Loss=0")
		}
		if d.reordered {
			reordered++
			if lo, hi := now.Add(lat-jit+hold), now.Add(lat+jit+hold); d.at.Before(lo) || d.at.After(hi) {
				t.Fatalf("reordered packet due %v after read, want within [%v, %v]", d.at.Sub(now), lo.Sub(now), hi.Sub(now))
			}
			heldUntil = d.at
			continue
		}
		if d.at.Before(floor) {
			t.Fatalf("non-reordered packet due before its predecessor (%v < %v)", d.at, floor)
		}
		if delay := d.at.Sub(now); delay < lat-jit || (delay > lat+jit && !d.at.Equal(floor)) {
			t.Fatalf("delay %v outside %v ± %v and not held by FIFO", delay, lat, jit)
		}
		if d.at.Before(heldUntil) {
			overtaken++
		}
		floor = d.at
		minD, maxD = min(minD, d.at.Sub(now)), max(maxD, d.at.Sub(now))
	}
	if r := float64(reordered) / n; math.Abs(r-0.25) > 0.05 {
		t.Errorf("reordered fraction %.3f, want 0.25 ± 0.05", r)
	}
	if overtaken == 0 {
		t.Error("no packet was due before an earlier reordered one")
	}
	if maxD-minD < jit {
		t.Errorf("delays span only %v..%v; jitter of ±%v not applied", minD, maxD, jit)
	}

	// Without impairment every packet is due immediately.
	m = newModel(1, 0)
	if d := m.decide(now, 100, Conditions{}); d.drop || d.reordered || !d.at.Equal(now) {
		t.Errorf("zero conditions gave %+v, want delivery at once", d)
	}
	// Jitter larger than latency never schedules into the past.
	for range 200 {
		if d := m.decide(now, 100, Conditions{Jitter: 10 * time.Millisecond}); d.at.Before(now) {
			t.Fatalf("delivery %v before read time", d.at.Sub(now))
		}
	}
}

// Drop drops exactly the packets it picks, in its direction only.
func TestDrop(t *testing.T) {
	const n = 400
	for _, dir := range []string{"up", "down"} {
		t.Run(dir, func(t *testing.T) {
			server := listenLoopback(t)
			odd := func(down bool, p []byte) bool { return down == (dir == "down") && len(p) == 4 && seqOf(p)%2 == 1 }
			s := startShim(t, Config{Target: server.LocalAddr().String(), Drop: odd})
			client := dialShim(t, s)
			send, recv, stat := direction(t, dir, s, server, client)
			sendWindowed(t, n, 100, send, func() int { return recv.count() + int(stat().Dropped) })
			waitFor(t, "the counters to settle", func() bool { st := stat(); return st.Forwarded+st.Dropped >= n })
			for _, p := range recv.received() {
				if seqOf(p)%2 == 1 {
					t.Fatalf("packet %d passed", seqOf(p))
				}
			}
			if st := stat(); st.Dropped != n/2 || recv.count() != n/2 {
				t.Errorf("stats %+v, %d received; want %d dropped and %d received", st, recv.count(), n/2, n/2)
			}
		})
	}
}
