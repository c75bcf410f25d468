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

	"github.com/quic-go/quic-go"
)

// DemuxConfig configures a Demux.
type DemuxConfig struct {
	// Transport is the server's QUIC transport: sealed packets share its
	// socket.
	Transport *quic.Transport
	// Queue is how many opened packets can wait for a peer's receiver
	// (default 16); more are dropped (ReasonQueue).
	Queue int
	// Drop is called with every dropped packet's reason, from the Demux's
	// goroutine.
	Drop func(Reason)
	// Migrate is called when a peer's address changes, from the Demux's
	// goroutine.
	Migrate func(from, to net.Addr)
}

// Demux is the server's end of the sealed channel: it reads the non-QUIC
// packets of the transport and routes them by session id to their Peers.
type Demux struct {
	cfg   DemuxConfig
	mu    sync.RWMutex
	peers map[uint32]*Peer
}

// NewDemux returns a Demux; Run reads its packets.
func NewDemux(cfg DemuxConfig) *Demux {
	if cfg.Queue <= 0 {
		cfg.Queue = 16
	}
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
		if r := peer.deliver(p, from); r != 0 {
			d.cfg.Drop(r)
		}
	}
}

// Open registers a new session of a QUIC connection: it draws the session
// id, derives the keys from the connection's TLS exporter, and returns the
// session's Peer, which sends to the connection's address until an
// authentic packet comes from another. Close the Peer when the session
// ends.
func (d *Demux) Open(conn *quic.Conn) (*Peer, error) {
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
		p, err = newPeer(d, id, up, down, conn.RemoteAddr())
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

// Peer is one session at the server: it sends sealed snapshots to the
// client's address and receives its inputs from the Demux.
type Peer struct {
	d       *Demux
	id      uint32
	sealer  *Sealer // the sender's
	out     []byte  // the sender's packet buffer
	opener  *Opener // the Demux goroutine's
	addr    atomic.Pointer[net.Addr]
	queue   chan []byte // opened payloads, to the receiver
	free    chan []byte // their buffers, back to the Demux
	held    []byte      // the receiver's current payload
	closed  chan struct{}
	closing sync.Once
	// Migrations counts the address changes.
	migrations atomic.Uint64
}

func newPeer(d *Demux, id uint32, up, down Key, addr net.Addr) (*Peer, error) {
	s, err := NewSealer(down, id)
	if err != nil {
		return nil, err
	}
	o, err := NewOpener(up, id)
	if err != nil {
		return nil, err
	}
	p := &Peer{d: d, id: id, sealer: s, opener: o, out: make([]byte, 0, MaxPacket),
		queue: make(chan []byte, d.cfg.Queue), free: make(chan []byte, d.cfg.Queue+1), closed: make(chan struct{})}
	for range d.cfg.Queue + 1 {
		p.free <- make([]byte, 0, MaxPacket)
	}
	p.addr.Store(&addr)
	return p, nil
}

// ID is the session id the Welcome carries.
func (p *Peer) ID() uint32 { return p.id }

// Addr is where the Peer sends: the address of the newest authentic packet.
func (p *Peer) Addr() net.Addr { return *p.addr.Load() }

// Migrations counts the times the client's address changed.
func (p *Peer) Migrations() uint64 { return p.migrations.Load() }

// deliver opens a packet for the peer, on the Demux's goroutine, and
// returns why it was dropped (0: delivered).
func (p *Peer) deliver(pkt []byte, from net.Addr) Reason {
	var buf []byte
	select {
	case buf = <-p.free:
	default:
		return ReasonQueue
	}
	out, _, newest, err := p.opener.Open(buf[:0], pkt)
	if err != nil {
		p.free <- buf
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
	select {
	case p.queue <- out:
		return 0
	default:
		p.free <- buf
		return ReasonQueue
	}
}

// ErrClosed is returned by a closed Peer's Receive.
var ErrClosed = errors.New("channel: closed")

// Send seals p and writes it to the client's address.
func (p *Peer) Send(b []byte) error {
	p.out = p.sealer.Seal(p.out[:0], b)
	if _, err := p.d.cfg.Transport.WriteTo(p.out, p.Addr()); err != nil {
		return fmt.Errorf("channel: send: %w", err)
	}
	return nil
}

// Receive returns the next authentic payload from the client.
func (p *Peer) Receive(ctx context.Context) ([]byte, error) {
	if p.held != nil {
		p.free <- p.held[:0]
		p.held = nil
	}
	select {
	case b := <-p.queue:
		p.held = b
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.closed:
		return nil, ErrClosed
	}
}

// Close unregisters the session: its packets are dropped from now on.
func (p *Peer) Close() {
	p.closing.Do(func() {
		p.d.mu.Lock()
		delete(p.d.peers, p.id)
		p.d.mu.Unlock()
		close(p.closed)
	})
}
