package channel

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/quic-go/quic-go"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/rewind-gg/rewind/protocol"
)

// DemuxConfig configures a Demux.
type DemuxConfig struct {
	// Conn is the server's socket. The Demux alone reads it: it opens the
	// sealed packets itself and hands the QUIC packets to the QUIC
	// transport built on QUIC().
	Conn *net.UDPConn
	// QUICQueue is how many QUIC packets may wait for the transport to read
	// them (default 1024); past that they are dropped, as ReasonQUICQueue.
	QUICQueue int
	// Drop is called with every dropped packet's reason, from the Demux's
	// goroutine.
	Drop func(Reason)
	// Migrate is called when a peer's address changes (the new one was
	// validated), from the Demux's goroutine.
	Migrate func(from, to net.Addr)
	// Path is called with each step of the validation of a peer's new
	// address, from the Demux's goroutine.
	Path func(PathEvent)
	// PathTimeout is how long a new address has to answer its challenge
	// (default DefaultPathTimeout).
	PathTimeout time.Duration
}

// demuxBatch is how many packets one read takes from the socket
// (recvmmsg(2) on Linux), and demuxBuffer the size of each packet's
// buffer: room for a sealed packet and for the largest QUIC packet quic-go
// sends (1452 bytes). A packet that fills the buffer may have been cut.
const (
	demuxBatch  = 64
	demuxBuffer = 2048
)

// Demux is the server's end of the sealed channel. It reads the server's
// socket in batches, routes each sealed packet by session id to its Peer,
// opens it and hands the payload to its session on the Demux's own
// goroutine: a packet crosses no other goroutine on its way in, and one
// wakeup serves every packet that came since the last. The QUIC packets it
// queues for the QUIC transport (quic.Transport{Conn: d.QUIC()}), which are
// few on the sealed channel: the control stream, acknowledgements,
// keep-alives. quic-go's own queue of non-QUIC packets (32, dropped
// silently when full) is not on this path.
type Demux struct {
	cfg   DemuxConfig
	mu    sync.RWMutex
	peers map[uint32]*Peer
	quic  *quicConn
	// read takes a batch of packets from the socket: ipv4's or ipv6's
	// ReadBatch, whichever family the socket is.
	read func([]ipv4.Message, int) (int, error)
	msgs []ipv4.Message
}

// NewDemux returns a Demux; Run reads its packets.
func NewDemux(cfg DemuxConfig) *Demux {
	if cfg.Drop == nil {
		cfg.Drop = func(Reason) {}
	}
	if cfg.QUICQueue <= 0 {
		cfg.QUICQueue = 1024
	}
	if cfg.PathTimeout <= 0 {
		cfg.PathTimeout = DefaultPathTimeout
	}
	d := &Demux{cfg: cfg, peers: map[uint32]*Peer{}, msgs: make([]ipv4.Message, demuxBatch)}
	if a, ok := cfg.Conn.LocalAddr().(*net.UDPAddr); ok && a.IP.To4() != nil {
		d.read = ipv4.NewPacketConn(cfg.Conn).ReadBatch
	} else {
		d.read = ipv6.NewPacketConn(cfg.Conn).ReadBatch
	}
	d.quic = newQUICConn(cfg.Conn, cfg.QUICQueue)
	for i := range d.msgs {
		d.msgs[i].Buffers = [][]byte{make([]byte, demuxBuffer)}
	}
	return d
}

// QUIC is the packet connection the server's QUIC transport reads: the
// QUIC packets of the socket, queued by Run. Its writes go to the socket;
// its buffer sizes and socket options are the socket's.
func (d *Demux) QUIC() net.PacketConn { return d.quic }

// Run reads and routes packets until ctx ends (context.Cause's error) or
// the socket closes (nil). When it returns, reads of QUIC() fail too: the
// QUIC transport stops reading.
func (d *Demux) Run(ctx context.Context) error {
	defer d.quic.Close()
	stop := context.AfterFunc(ctx, func() { d.cfg.Conn.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	for {
		n, err := d.read(d.msgs, 0)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return context.Cause(ctx)
			case errors.Is(err, net.ErrClosed):
				return nil
			case transient(err):
				continue
			}
			return fmt.Errorf("channel: read: %w", err)
		}
		for i := range d.msgs[:n] {
			d.route(&d.msgs[i])
		}
	}
}

// transient says whether a read error concerns one packet or one peer,
// not the socket: an ICMP error a platform reports on the next read, a
// signal, a moment without memory. Reading goes on; any other error ends
// it, as it ends quic-go's.
func transient(err error) bool {
	for _, e := range []syscall.Errno{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EHOSTUNREACH,
		syscall.ENETUNREACH, syscall.EINTR, syscall.ENOBUFS, syscall.ENOMEM, syscall.EMSGSIZE} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// route takes one packet read: QUIC packets to the transport's queue (the
// buffer goes with it, and the message gets another), sealed ones opened
// for their Peer.
func (d *Demux) route(m *ipv4.Message) {
	p := m.Buffers[0][:m.N]
	if len(p) == 0 {
		return
	}
	// Every QUIC packet has the fixed bit (0x40) set or is a long header
	// (0x80); a sealed packet's marker has neither (docs/protocol.md).
	if p[0]&0xc0 != 0 {
		if len(p) == demuxBuffer { // cut: it would not decrypt
			d.cfg.Drop(ReasonQUICQueue)
			return
		}
		if d.quic.queue(p, m.Addr) {
			m.Buffers[0] = d.quic.buffer()
		} else {
			d.cfg.Drop(ReasonQUICQueue)
		}
		return
	}
	id, err := Session(p)
	if err != nil {
		d.cfg.Drop(ReasonOf(err))
		return
	}
	d.mu.RLock()
	peer := d.peers[id]
	d.mu.RUnlock()
	if peer == nil {
		d.cfg.Drop(ReasonSession)
		return
	}
	if r := peer.receive(p, m.Addr); r != 0 {
		d.cfg.Drop(r)
	}
}

// Open registers a new session of a QUIC connection: it draws the session
// id, derives the keys from the connection's TLS exporter, and returns the
// session's Peer, which sends to the connection's address until the client
// proves it receives at another (path.go). deliver is called with every
// authentic payload, on the Demux's goroutine, and must not keep it or
// wait; it returns false when the session dropped a payload for want of
// room (this one, or an older one it held), counted as ReasonQueue. Close the Peer when the session ends.
func (d *Demux) Open(conn *quic.Conn, deliver func(payload []byte) bool) (*Peer, error) {
	d.mu.Lock()
	var id uint32
	for {
		var b [4]byte
		rand.Read(b[:])
		id = binary.BigEndian.Uint32(b[:])
		if _, taken := d.peers[id]; id != 0 && !taken {
			break
		}
	}
	d.peers[id] = nil // reserved
	d.mu.Unlock()
	cs := conn.ConnectionState().TLS
	up, down, err := Keys(&cs, id)
	var p *Peer
	if err == nil {
		p, err = newPeer(d, id, up, down, conn.RemoteAddr(), deliver)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		delete(d.peers, id)
		return nil, err
	}
	d.peers[id] = p
	return p, nil
}

// Peers returns how many sessions are registered.
func (d *Demux) Peers() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.peers)
}

// Peer is one session at the server: it seals snapshots for the client's
// address and opens its inputs for the Demux.
type Peer struct {
	d  *Demux
	id uint32
	// sealing guards sealer and out: the room seals snapshots and the
	// Demux seals path challenges, with one sequence of nonces.
	sealing sync.Mutex
	sealer  *Sealer
	out     []byte  // Send's and the challenges' packet buffer
	opener  *Opener // the Demux goroutine's
	in      []byte  // the Demux goroutine's payload buffer
	deliver func([]byte) bool
	addr    atomic.Pointer[net.Addr] // validated: where snapshots go
	probe   probe                    // the Demux goroutine's
	closing sync.Once
	// Migrations counts the address changes.
	migrations atomic.Uint64
}

func newPeer(d *Demux, id uint32, up, down Key, addr net.Addr, deliver func([]byte) bool) (*Peer, error) {
	s, err := NewSealer(down, id)
	if err != nil {
		return nil, err
	}
	o, err := NewOpener(up, id)
	if err != nil {
		return nil, err
	}
	p := &Peer{d: d, id: id, sealer: s, opener: o, out: make([]byte, 0, MaxPacket), in: make([]byte, 0, MaxPacket), deliver: deliver}
	p.addr.Store(&addr)
	return p, nil
}

// ID is the session id the Welcome carries.
func (p *Peer) ID() uint32 { return p.id }

// Addr is where the Peer sends: the address of the newest authentic packet.
func (p *Peer) Addr() net.Addr { return *p.addr.Load() }

// Migrations counts the times the client's address changed.
func (p *Peer) Migrations() uint64 { return p.migrations.Load() }

// receive opens a packet for the peer and delivers it, on the Demux's
// goroutine, and returns why it was dropped (0: delivered, or a path
// response taken).
func (p *Peer) receive(pkt []byte, from net.Addr) Reason {
	out, _, newest, err := p.opener.Open(p.in[:0], pkt)
	if err != nil {
		return ReasonOf(err)
	}
	if !sameAddr(from, p.Addr()) {
		p.fromElsewhere(from, len(pkt), newest)
	}
	if len(out) >= 2 && out[1] == protocol.DatagramPathResponse {
		if _, data, err := protocol.DecodePath(out); err == nil {
			p.responded(from, data)
			return 0
		} // a malformed one goes to the session, which counts it
	}
	if !p.deliver(out) {
		return ReasonQueue
	}
	return 0
}

// Seal appends payload, sealed for the client, to dst, and returns it and
// the address to send it to (the validated one): the sender's way to batch
// its writes (Send writes one).
func (p *Peer) Seal(dst, payload []byte) ([]byte, net.Addr) {
	p.sealing.Lock()
	defer p.sealing.Unlock()
	return p.sealer.Seal(dst, payload), p.Addr()
}

// Send seals b and writes it to the client's address.
func (p *Peer) Send(b []byte) error {
	p.sealing.Lock()
	defer p.sealing.Unlock()
	return p.sendTo(b, p.Addr())
}

// sendTo seals b and writes it to addr; p.sealing is held.
func (p *Peer) sendTo(b []byte, addr net.Addr) error {
	p.out = p.sealer.Seal(p.out[:0], b)
	if _, err := p.d.cfg.Conn.WriteTo(p.out, addr); err != nil {
		return fmt.Errorf("channel: send: %w", err)
	}
	return nil
}

// Close unregisters the session: its packets are dropped from now on.
func (p *Peer) Close() {
	p.closing.Do(func() {
		p.d.mu.Lock()
		delete(p.d.peers, p.id)
		p.d.mu.Unlock()
	})
}

// sameAddr says whether two addresses are the same UDP address, without
// the allocations of comparing their strings (once a packet).
func sameAddr(a, b net.Addr) bool {
	ua, ok1 := a.(*net.UDPAddr)
	ub, ok2 := b.(*net.UDPAddr)
	if ok1 && ok2 {
		return ua.Port == ub.Port && ua.Zone == ub.Zone && ua.IP.Equal(ub.IP)
	}
	return a.String() == b.String()
}
