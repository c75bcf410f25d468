package channel

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/quic-go/quic-go"
)

// DemuxConfig configures a Demux.
type DemuxConfig struct {
	// Transport is the server's QUIC transport: sealed packets share its
	// socket.
	Transport *quic.Transport
	// Drop is called with every dropped packet's reason, from the Demux's
	// goroutine.
	Drop func(Reason)
	// Migrate is called when a peer's address changes, from the Demux's
	// goroutine.
	Migrate func(from, to net.Addr)
}

// Demux is the server's end of the sealed channel: it reads the non-QUIC
// packets of the transport, routes them by session id to their Peers and
// opens them, and hands each payload to its session on the Demux's own
// goroutine: a packet crosses no other goroutine on its way in.
type Demux struct {
	cfg   DemuxConfig
	mu    sync.RWMutex
	peers map[uint32]*Peer
}

// NewDemux returns a Demux; Run reads its packets.
func NewDemux(cfg DemuxConfig) *Demux {
	if cfg.Drop == nil {
		cfg.Drop = func(Reason) {}
	}
	return &Demux{cfg: cfg, peers: map[uint32]*Peer{}}
}

// Run reads and routes packets until ctx ends or the transport closes.
func (d *Demux) Run(ctx context.Context) error {
	buf := make([]byte, MaxPacket+1) // one more: a longer packet shows
	for {
		n, from, err := d.cfg.Transport.ReadNonQUICPacket(ctx, buf)
		if err != nil {
			return err
		}
		p := buf[:n]
		id, err := Session(p)
		if err != nil {
			d.cfg.Drop(ReasonOf(err))
			continue
		}
		d.mu.RLock()
		peer := d.peers[id]
		d.mu.RUnlock()
		if peer == nil {
			d.cfg.Drop(ReasonSession)
			continue
		}
		if r := peer.receive(p, from); r != 0 {
			d.cfg.Drop(r)
		}
	}
}

// Open registers a new session of a QUIC connection: it draws the session
// id, derives the keys from the connection's TLS exporter, and returns the
// session's Peer, which sends to the connection's address until an
// authentic packet comes from another. deliver is called with every
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
	d       *Demux
	id      uint32
	sealer  *Sealer // the sender's
	out     []byte  // Send's packet buffer
	opener  *Opener // the Demux goroutine's
	in      []byte  // the Demux goroutine's payload buffer
	deliver func([]byte) bool
	addr    atomic.Pointer[net.Addr]
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
// goroutine, and returns why it was dropped (0: delivered).
func (p *Peer) receive(pkt []byte, from net.Addr) Reason {
	out, _, newest, err := p.opener.Open(p.in[:0], pkt)
	if err != nil {
		return ReasonOf(err)
	}
	// Only an authentic packet, and the newest yet (a late one from the old
	// address must not move the client back), moves the address.
	if old := p.Addr(); newest && from.String() != old.String() {
		p.addr.Store(&from)
		p.migrations.Add(1)
		if p.d.cfg.Migrate != nil {
			p.d.cfg.Migrate(old, from)
		}
	}
	if !p.deliver(out) {
		return ReasonQueue
	}
	return 0
}

// Seal appends payload, sealed for the client, to dst, and returns it and
// the address to send it to: the sender's way to batch its writes (Send
// writes one). Seal and Send are called from one goroutine.
func (p *Peer) Seal(dst, payload []byte) ([]byte, net.Addr) {
	return p.sealer.Seal(dst, payload), p.Addr()
}

// Send seals b and writes it to the client's address.
func (p *Peer) Send(b []byte) error {
	var to net.Addr
	p.out, to = p.Seal(p.out[:0], b)
	if _, err := p.d.cfg.Transport.WriteTo(p.out, to); err != nil {
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
