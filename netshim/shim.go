package netshim

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// maxPacketSize is the largest UDP payload the shim relays; it bounds every
// read buffer.
const maxPacketSize = 1 << 16

// socketBufferSize is asked for on every socket, as quic-go does, so bursts
// are not lost in the kernel before the impairment model sees them. The
// kernel may cap it; that only makes bursts lossier.
const socketBufferSize = 2 << 20

// Config configures a Shim.
//
// Each direction of each client connection draws from its own random stream,
// derived from Seed and the connection's index (clients are numbered in the
// order their first packet arrives), so runs with the same seed and the same
// arrival order make the same decisions.
type Config struct {
	Listen string     // UDP address the shim listens on, e.g. "127.0.0.1:0"; must be a loopback IP
	Target string     // UDP address of the server, e.g. "127.0.0.1:4433"; must be a loopback IP (never send anywhere else)
	Up     Conditions // client → server
	Down   Conditions // server → client
	Seed   uint64     // seeds the random decisions (loss, jitter, reorder); same seed, same decision sequence per direction
	// Drop, when set, drops each packet it returns true for (down: server
	// → client), before the conditions apply: a test's loss of one kind of
	// packet. It is called from the direction's reader goroutine, and must
	// not keep p.
	Drop func(down bool, p []byte) bool
}

// Stats counts the traffic of both directions since Start.
type Stats struct{ Up, Down DirStats }

// DirStats counts the traffic of one direction, summed over all clients.
//
// Packets is the number of packets received from the sender. Each of them is
// eventually forwarded (Forwarded, with their payload bytes in Bytes),
// dropped (Dropped: by Loss, a burst, a full rate-capped queue, or because no
// socket towards the server could be opened), or discarded when the shim
// closes. Overflowed counts the drops of a full rate-capped queue. Reordered
// counts the packets that were held back so later ones could overtake them;
// they are also counted in Forwarded once sent.
type DirStats struct{ Packets, Forwarded, Dropped, Overflowed, Reordered, Bytes uint64 }

// dirCounters are the live counters behind a DirStats.
type dirCounters struct {
	packets, forwarded, dropped, overflowed, reordered, bytes atomic.Uint64
}

func (c *dirCounters) snapshot() DirStats {
	return DirStats{
		Packets:    c.packets.Load(),
		Forwarded:  c.forwarded.Load(),
		Dropped:    c.dropped.Load(),
		Overflowed: c.overflowed.Load(),
		Reordered:  c.reordered.Load(),
		Bytes:      c.bytes.Load(),
	}
}

// conditions is the pair installed by Start and SetConditions.
type conditions struct{ up, down Conditions }

// Shim is a running impairment relay. Its methods are safe for concurrent
// use. A client's connection, with its socket towards the server, lasts
// until Close; the shim never expires idle clients.
type Shim struct {
	listen *net.UDPConn
	target netip.AddrPort
	seed   uint64
	drop   func(down bool, p []byte) bool

	cond atomic.Pointer[conditions]

	up, down           dirCounters
	upSched, downSched *scheduler

	done      chan struct{} // closed by Close
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	mu      sync.Mutex
	closed  bool
	conns   map[netip.AddrPort]*conn // by client address; only touched by the listen reader and Close
	nextIdx uint64                   // index of the next connection, for its random streams
	runErr  error                    // first unexpected read error, returned by Close
}

// conn relays the traffic of one client through its own socket to the
// server.
type conn struct {
	sock     *net.UDPConn // bound to a loopback port, talks to the target only
	up, down *lane
}

// lane is one direction of one connection.
type lane struct {
	model *model // owned by the goroutine that reads this direction

	// pending counts this lane's packets in the scheduler. While it is zero
	// the reader may write a due packet directly without overtaking anything.
	pending atomic.Int64

	sock  *net.UDPConn
	dst   netip.AddrPort
	stats *dirCounters
	sched *scheduler
}

// Start validates cfg, binds the listening socket and starts relaying until
// Close. Listen and Target must resolve to loopback addresses and Target
// needs a port; in both Conditions durations must not be negative and
// probabilities must be in [0, 1]. Errors name the offending field.
func Start(cfg Config) (*Shim, error) {
	listenAddr, err := resolveLoopback("listen", cfg.Listen)
	if err != nil {
		return nil, err
	}
	target, err := resolveLoopback("target", cfg.Target)
	if err != nil {
		return nil, err
	}
	if target.Port() == 0 {
		return nil, fmt.Errorf("netshim: target: %s has no port", cfg.Target)
	}
	if err := cfg.Up.validate("up"); err != nil {
		return nil, err
	}
	if err := cfg.Down.validate("down"); err != nil {
		return nil, err
	}

	l, err := net.ListenUDP(udpNetwork(listenAddr.Addr()), net.UDPAddrFromAddrPort(listenAddr))
	if err != nil {
		return nil, fmt.Errorf("netshim: listen: %w", err)
	}
	setBuffers(l)

	s := &Shim{
		listen:    l,
		target:    target,
		seed:      cfg.Seed,
		drop:      cfg.Drop,
		upSched:   newScheduler(),
		downSched: newScheduler(),
		done:      make(chan struct{}),
		conns:     make(map[netip.AddrPort]*conn),
	}
	s.cond.Store(&conditions{up: cfg.Up, down: cfg.Down})

	s.wg.Add(3)
	go func() { defer s.wg.Done(); s.upSched.run(s.done) }()
	go func() { defer s.wg.Done(); s.downSched.run(s.done) }()
	go func() { defer s.wg.Done(); s.readClients() }()
	return s, nil
}

// resolveLoopback resolves addr and insists that it is a loopback address,
// which keeps the shim from ever relaying traffic off the machine.
func resolveLoopback(field, addr string) (netip.AddrPort, error) {
	if addr == "" {
		return netip.AddrPort{}, fmt.Errorf("netshim: %s: address is empty", field)
	}
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("netshim: %s: %w", field, err)
	}
	ap := ua.AddrPort()
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	if !ap.Addr().IsLoopback() {
		return netip.AddrPort{}, fmt.Errorf("netshim: %s: %s is not a loopback address", field, addr)
	}
	return ap, nil
}

// udpNetwork pins a socket to the family of a, so addresses read from it
// are never IPv4-mapped IPv6 addresses.
func udpNetwork(a netip.Addr) string {
	if a.Is4() {
		return "udp4"
	}
	return "udp6"
}

func setBuffers(c *net.UDPConn) {
	// Best effort: the kernel caps the sizes, and a smaller buffer still works.
	_ = c.SetReadBuffer(socketBufferSize)
	_ = c.SetWriteBuffer(socketBufferSize)
}

// Addr returns the address clients dial instead of the server's.
func (s *Shim) Addr() *net.UDPAddr {
	// A copy, so callers cannot modify the socket's own address.
	a := *s.listen.LocalAddr().(*net.UDPAddr)
	a.IP = slices.Clone(a.IP)
	return &a
}

// Stats returns a snapshot of the counters. Each counter is read atomically;
// counters may move relative to each other while the snapshot is taken.
func (s *Shim) Stats() Stats {
	return Stats{Up: s.up.snapshot(), Down: s.down.snapshot()}
}

// SetConditions replaces the conditions of both directions for every client,
// existing and new. They apply to packets read from now on; packets already
// queued keep their delivery times. It panics if either is invalid by the
// rules Start applies, as that is a programming error.
func (s *Shim) SetConditions(up, down Conditions) {
	if err := errors.Join(up.validate("up"), down.validate("down")); err != nil {
		panic(err)
	}
	s.cond.Store(&conditions{up: up, down: down})
}

// Close stops the shim: it closes all sockets, stops the schedulers,
// discards queued packets and waits for every goroutine to exit. It returns
// errors from closing sockets and any unexpected read error seen before
// Close. Calling it again returns the same error.
func (s *Shim) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true // stops the listen reader from adding connections
		conns := s.conns
		s.mu.Unlock()

		close(s.done)
		errs := []error{s.listen.Close()}
		for _, c := range conns {
			errs = append(errs, c.sock.Close())
		}
		s.wg.Wait()

		s.mu.Lock()
		errs = append(errs, s.runErr)
		s.mu.Unlock()
		if err := errors.Join(errs...); err != nil {
			s.closeErr = fmt.Errorf("netshim: close: %w", err)
		}
	})
	return s.closeErr
}

// readFailed records err unless the shim is closing, in which case it is the
// expected result of closing the socket.
func (s *Shim) readFailed(err error) {
	select {
	case <-s.done:
		return
	default:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runErr == nil {
		s.runErr = err
	}
}

// readClients reads packets from clients and feeds them to their
// connection's up lane.
func (s *Shim) readClients() {
	buf := make([]byte, maxPacketSize)
	for {
		n, from, err := s.listen.ReadFromUDPAddrPort(buf)
		if err != nil {
			s.readFailed(fmt.Errorf("reading from clients: %w", err))
			return
		}
		c, err := s.connFor(from)
		if err != nil {
			s.up.packets.Add(1)
			s.up.dropped.Add(1)
			continue
		}
		if c == nil {
			return // closed
		}
		if s.drop != nil && s.drop(false, buf[:n]) {
			c.up.stats.packets.Add(1)
			c.up.stats.dropped.Add(1)
			continue
		}
		c.up.handle(buf[:n], s.cond.Load().up)
	}
}

// connFor returns the connection of client, opening it on its first packet.
// It returns nil, nil once the shim is closed.
func (s *Shim) connFor(client netip.AddrPort) (*conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil
	}
	if c, ok := s.conns[client]; ok {
		return c, nil
	}

	// Bind to the loopback address of the target's family, so the packets
	// towards the server never leave the loopback interface either.
	local := netip.IPv6Loopback()
	if s.target.Addr().Is4() {
		local = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	sock, err := net.ListenUDP(udpNetwork(local), net.UDPAddrFromAddrPort(netip.AddrPortFrom(local, 0)))
	if err != nil {
		return nil, fmt.Errorf("netshim: opening socket for client %s: %w", client, err)
	}
	setBuffers(sock)

	idx := s.nextIdx
	s.nextIdx++
	c := &conn{
		sock: sock,
		up: &lane{
			model: newModel(s.seed, 2*idx),
			sock:  sock,
			dst:   s.target,
			stats: &s.up,
			sched: s.upSched,
		},
		down: &lane{
			model: newModel(s.seed, 2*idx+1),
			sock:  s.listen,
			dst:   client,
			stats: &s.down,
			sched: s.downSched,
		},
	}
	s.conns[client] = c
	// Added under s.mu before Close can set closed, so Close's Wait sees it.
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.readServer(c) }()
	return c, nil
}

// readServer reads the server's packets for one client and feeds them to the
// connection's down lane.
func (s *Shim) readServer(c *conn) {
	buf := make([]byte, maxPacketSize)
	for {
		n, from, err := c.sock.ReadFromUDPAddrPort(buf)
		if err != nil {
			s.readFailed(fmt.Errorf("reading from server for client %s: %w", c.down.dst, err))
			return
		}
		if from != s.target {
			continue // not the server: nothing to relay to the client
		}
		if s.drop != nil && s.drop(true, buf[:n]) {
			c.down.stats.packets.Add(1)
			c.down.stats.dropped.Add(1)
			continue
		}
		c.down.handle(buf[:n], s.cond.Load().down)
	}
}

// handle applies cond to a packet just read; b is only valid during the
// call. It is only called from the goroutine that reads this lane.
func (l *lane) handle(b []byte, cond Conditions) {
	l.stats.packets.Add(1)
	now := time.Now()
	d := l.model.decide(now, len(b), cond)
	if d.drop {
		l.stats.dropped.Add(1)
		if d.overflow {
			l.stats.overflowed.Add(1)
		}
		return
	}
	if d.reordered {
		l.stats.reordered.Add(1)
	}
	if !d.at.After(now) && l.pending.Load() == 0 {
		// Due now and nothing of this lane is queued ahead of it: send it
		// without a copy or a scheduler round trip, so unimpaired traffic
		// passes straight through.
		l.deliver(b)
		return
	}
	l.pending.Add(1)
	l.sched.push(d.at, append([]byte(nil), b...), l)
}

// deliver writes b to the lane's destination. Write errors are not reported:
// to the relayed protocol they are just lost packets.
func (l *lane) deliver(b []byte) {
	if _, err := l.sock.WriteToUDPAddrPort(b, l.dst); err == nil {
		l.stats.forwarded.Add(1)
		l.stats.bytes.Add(uint64(len(b)))
	}
}
