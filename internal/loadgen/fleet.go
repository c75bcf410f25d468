package loadgen

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"golang.org/x/net/ipv4"

	"github.com/rewind-gg/rewind/channel"
	sdk "github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/protocol"
)

// Mode is what a Fleet's clients speak.
type Mode string

const (
	// Rewind: light Rewind clients on the sealed channel.
	Rewind Mode = "rewind"
	// FloorUDP: plain UDP packets to an EchoUDP server.
	FloorUDP Mode = "udp"
	// FloorQUIC: quic-go DATAGRAMs to an EchoQUIC server.
	FloorQUIC Mode = "quic"
)

// Config configures a Fleet.
type Config struct {
	// Addr is the server's address (a loopback address).
	Addr string
	Mode Mode // default Rewind
	// Players is how many clients a room gets (default 12).
	Players int
	// Rate is how many packets a floor client sends a second (default 20).
	// Rewind clients send an input packet a tick, at the tick rate of
	// their Welcome.
	Rate int
	// Classes are the classes a room's players join with, in turn (player
	// i takes Classes[i%len(Classes)]); none: the server's default class.
	// A Rewind client fires its loadout's weapons in turn, switching every
	// few seconds, so a fleet of several classes fires every kind of
	// weapon (projectiles among them).
	Classes []string
	// JoinTimeout bounds one attempt of a client to connect and join
	// (default 10 s); AddRoom tries a client that timed out once more.
	JoinTimeout time.Duration
	// KeepAlive is the QUIC keep-alive period of a Rewind client's
	// connection (default the Go SDK's client.KeepAlive's).
	KeepAlive time.Duration
	// InterpDelay is the interpolation delay Rewind clients join with
	// (default 100 ms).
	InterpDelay time.Duration
	// Size is a floor client's packet size (default 80 bytes).
	Size int
	// Seed seeds the clients' phases and scripts.
	Seed uint64
}

// Stats counts a Fleet's traffic.
type Stats struct {
	Clients       int
	Sent, Recv    uint64 // packets
	SentBytes     uint64
	RecvBytes     uint64
	Dropped       uint64 // packets received that did not open or decode
	LateSlots     uint64 // send slots served more than 5 ms late: the fleet itself is overloaded
	Slots         uint64 // send slots served
	Disconnected  uint64 // clients whose connection ended
	SnapshotTicks uint64 // snapshots received (Rewind)
	Retried       uint64 // clients tried again after a join that timed out
}

// LateSlot is how late a send slot may be served before it counts as late.
const LateSlot = 5 * time.Millisecond

// Fleet is a set of light clients sharing one process, one QUIC transport
// and one socket for their packets.
type Fleet struct {
	cfg   Config
	raddr *net.UDPAddr
	tls   *tls.Config
	qudp  *net.UDPConn
	tr    *quic.Transport
	udp   *net.UDPConn     // the packets' socket
	pc    *ipv4.PacketConn // its batch reads and writes
	rng   *rand.Rand

	mu      sync.Mutex
	slots   [][]sender // by millisecond of the second: who sends then
	clients []*client
	byID    sync.Map // uint32 session or client id → *client

	sent, recv, sentBytes, recvBytes, dropped, late, served, gone, snaps, retried atomic.Uint64
}

// sender is one light client, seen by the send loop.
type sender interface {
	// send appends its packet to batch (or sends it itself) at now.
	send(now time.Time, b *batch)
}

// New opens a Fleet's sockets; Run sends and receives.
func New(cfg Config) (*Fleet, error) {
	if cfg.Mode == "" {
		cfg.Mode = Rewind
	}
	if cfg.Players <= 0 {
		cfg.Players = 12
	}
	if cfg.Rate <= 0 {
		cfg.Rate = 20
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = sdk.KeepAlive
	}
	if cfg.InterpDelay <= 0 {
		cfg.InterpDelay = 100 * time.Millisecond
	}
	if cfg.JoinTimeout <= 0 {
		cfg.JoinTimeout = 10 * time.Second
	}
	if cfg.Size <= 0 {
		cfg.Size = 80
	}
	raddr, err := net.ResolveUDPAddr("udp4", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("loadgen: addr: %w", err)
	}
	if !raddr.IP.IsLoopback() {
		return nil, fmt.Errorf("loadgen: addr %s: only loopback addresses are a target", cfg.Addr)
	}
	if cfg.Rate > 1000 {
		return nil, fmt.Errorf("loadgen: rate %d: at most 1000 packets a second", cfg.Rate)
	}
	f := &Fleet{cfg: cfg, raddr: raddr, rng: rand.New(rand.NewPCG(cfg.Seed, 0x6c6f6164)),
		tls: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{protocol.ALPN}}}
	if cfg.Mode == FloorQUIC {
		f.tls.NextProtos = []string{EchoALPN}
	}
	f.slots = make([][]sender, wheel)
	local := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
	if f.udp, err = net.ListenUDP("udp4", local); err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	setBuffers(f.udp)
	f.pc = ipv4.NewPacketConn(f.udp)
	if cfg.Mode != FloorUDP {
		if f.qudp, err = net.ListenUDP("udp4", local); err != nil {
			f.udp.Close()
			return nil, fmt.Errorf("loadgen: %w", err)
		}
		setBuffers(f.qudp)
		f.tr = &quic.Transport{Conn: f.qudp}
	}
	return f, nil
}

// setBuffers asks for 4 MiB socket buffers: a fleet's bursts are large.
func setBuffers(c *net.UDPConn) {
	c.SetReadBuffer(4 << 20)
	c.SetWriteBuffer(4 << 20)
}

// Close closes the Fleet's connections and sockets.
func (f *Fleet) Close() {
	f.mu.Lock()
	cs := f.clients
	f.mu.Unlock()
	for _, c := range cs {
		if c.conn != nil {
			c.conn.CloseWithError(0, "load generator done")
		}
	}
	if f.tr != nil {
		f.tr.Close()
		f.qudp.Close()
	}
	f.udp.Close()
}

// Stats returns the Fleet's counters.
func (f *Fleet) Stats() Stats {
	f.mu.Lock()
	n := len(f.clients)
	f.mu.Unlock()
	return Stats{Clients: n, Sent: f.sent.Load(), Recv: f.recv.Load(), SentBytes: f.sentBytes.Load(),
		RecvBytes: f.recvBytes.Load(), Dropped: f.dropped.Load(), LateSlots: f.late.Load(), Slots: f.served.Load(),
		Disconnected: f.gone.Load(), SnapshotTicks: f.snaps.Load(), Retried: f.retried.Load()}
}

// Run sends every client's packets on its phase and reads the replies
// until ctx ends.
//
// The first error of any of its loops stops the others, and Run returns
// it; the sockets stay open (Close closes them).
func (f *Fleet) Run(ctx context.Context) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	errs := make(chan error, 3)
	go func() { errs <- f.read(ctx) }()
	go func() { errs <- f.sendLoop(ctx) }()
	n := 2
	if f.cfg.Mode == Rewind {
		// Snapshots sent before a client's sealed channel moved to the
		// fleet's socket come on the QUIC transport's.
		go func() { errs <- f.readTransport(ctx) }()
		n++
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil && ctx.Err() == nil {
			first = err
			stop()
		}
	}
	return first
}

// AddRoom connects Players clients into room (Rewind), or Players floor
// clients (the room name only labels them), and schedules them. A client
// whose attempt to connect and join timed out (a loaded machine) is tried
// once more; a refusal, or a second timeout, is an error.
func (f *Fleet) AddRoom(ctx context.Context, room string) error {
	for i := range f.cfg.Players {
		f.mu.Lock()
		seed := f.rng.Uint64()
		id := uint32(len(f.clients) + 1)
		f.mu.Unlock()
		c := &client{f: f, id: id, rng: rand.New(rand.NewPCG(seed, uint64(i))), buf: make([]byte, 0, channel.MaxPacket), rate: f.cfg.Rate}
		err := c.connect(ctx, room, i)
		if err != nil && timedOut(err) && ctx.Err() == nil {
			f.retried.Add(1)
			err = c.connect(ctx, room, i)
		}
		if err != nil {
			return fmt.Errorf("loadgen: room %s, client %d: %w", room, i, err)
		}
		if f.cfg.Mode != Rewind {
			f.byID.Store(id, c)
		}
		f.mu.Lock()
		f.clients = append(f.clients, c)
		for _, at := range sendSlots(c.rate, seed) {
			f.slots[at] = append(f.slots[at], c)
		}
		f.mu.Unlock()
	}
	return nil
}

// connect makes one attempt, within the fleet's JoinTimeout, to connect
// the client (a Rewind client joins room as its i-th player).
func (c *client) connect(ctx context.Context, room string, i int) error {
	ctx, cancel := context.WithTimeout(ctx, c.f.cfg.JoinTimeout)
	defer cancel()
	switch c.f.cfg.Mode {
	case Rewind:
		return c.join(ctx, room, i)
	case FloorQUIC:
		return c.dialEcho(ctx)
	}
	return nil
}

// wheel is the number of the send loop's slots: one a millisecond, over a
// second.
const wheel = 1000

// sendSlots are the slots of the wheel a client sending rate packets a
// second sends in: rate of them, evenly spread from a random phase within
// its first period (a rate that does not divide 1000 rounds each down to
// its millisecond).
func sendSlots(rate int, seed uint64) []int {
	periodUS := uint64(1_000_000 / rate)
	phase := seed % periodUS
	at := make([]int, rate)
	for k := range at {
		at[k] = int((phase + uint64(k)*1_000_000/uint64(rate)) / 1000 % wheel)
	}
	return at
}

// timedOut reports whether err is a client's attempt that ran out of time
// (its context's deadline, QUIC's handshake or idle timeout), not a refusal.
func timedOut(err error) bool {
	var idle *quic.IdleTimeoutError
	var handshake *quic.HandshakeTimeoutError
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &idle) || errors.As(err, &handshake) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// batch is a send slot's packets, written in one sendmmsg.
type batch struct {
	msgs []ipv4.Message
	bufs [][]byte
	n    int
}

// next returns the next message's buffer, empty.
func (b *batch) next() []byte {
	if b.n == len(b.msgs) {
		b.msgs = append(b.msgs, ipv4.Message{Buffers: [][]byte{nil}})
		b.bufs = append(b.bufs, make([]byte, 0, channel.MaxPacket))
	}
	return b.bufs[b.n][:0]
}

// add queues p (the buffer next returned, filled) to addr.
func (b *batch) add(p []byte, addr net.Addr) {
	b.bufs[b.n] = p
	b.msgs[b.n].Buffers[0] = p
	b.msgs[b.n].Addr = addr
	b.n++
}

func (f *Fleet) sendLoop(ctx context.Context) error {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	var b batch
	var due []sender
	start := time.Now()
	served := int64(0) // slots served since start
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			// Serve every slot up to now: a late wakeup sends the slots it
			// missed, late.
			upTo := int64(now.Sub(start) / time.Millisecond)
			for ; served <= upTo; served++ {
				slotTime := start.Add(time.Duration(served) * time.Millisecond)
				if now.Sub(slotTime) > LateSlot {
					f.late.Add(1)
				}
				f.served.Add(1)
				f.mu.Lock()
				due = append(due[:0], f.slots[served%wheel]...)
				f.mu.Unlock()
				for _, s := range due {
					s.send(now, &b)
				}
			}
			if err := f.flush(&b); err != nil {
				return err
			}
		}
	}
}

// flush writes the batch.
func (f *Fleet) flush(b *batch) error {
	for off := 0; off < b.n; {
		n, err := f.pc.WriteBatch(b.msgs[off:b.n], 0)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("loadgen: send: %w", err)
		}
		for _, m := range b.msgs[off : off+n] {
			f.sentBytes.Add(uint64(len(m.Buffers[0])))
		}
		f.sent.Add(uint64(n))
		off += n
	}
	b.n = 0
	return nil
}

func (f *Fleet) read(ctx context.Context) error {
	const n = 64
	msgs := make([]ipv4.Message, n)
	for i := range msgs {
		msgs[i].Buffers = [][]byte{make([]byte, channel.MaxPacket+1)}
	}
	context.AfterFunc(ctx, func() { f.udp.SetReadDeadline(time.Now()) })
	for {
		k, err := f.pc.ReadBatch(msgs, 0)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("loadgen: read: %w", err)
		}
		for _, m := range msgs[:k] {
			f.receive(m.Buffers[0][:m.N])
		}
	}
}

func (f *Fleet) readTransport(ctx context.Context) error {
	buf := make([]byte, channel.MaxPacket+1)
	for {
		n, _, err := f.tr.ReadNonQUICPacket(ctx, buf)
		if err != nil {
			return nil // the context ended or the transport closed
		}
		f.receive(buf[:n])
	}
}

// receive routes a packet to its client.
func (f *Fleet) receive(p []byte) {
	f.recv.Add(1)
	f.recvBytes.Add(uint64(len(p)))
	var id uint32
	switch f.cfg.Mode {
	case Rewind:
		s, err := channel.Session(p)
		if err != nil {
			f.dropped.Add(1)
			return
		}
		id = s
	default:
		if len(p) < 4 {
			f.dropped.Add(1)
			return
		}
		id = uint32(p[0])<<24 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3])
	}
	c, ok := f.byID.Load(id)
	if !ok {
		f.dropped.Add(1)
		return
	}
	if f.cfg.Mode == Rewind && !c.(*client).snapshot(p) {
		f.dropped.Add(1)
	}
}

// discard reads a stream to its end: a client that did not read its events
// would stall its control stream.
func discard(s io.Reader) { io.Copy(io.Discard, s) }
