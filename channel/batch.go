package channel

import (
	"errors"
	"fmt"
	"net"

	"golang.org/x/net/ipv4"
)

// Batch is sealed packets to write together: a room's snapshots of one
// tick. Its buffers are reused from one Reset to the next.
type Batch struct {
	msgs []ipv4.Message
	bufs [][]byte
	n    int
}

// Add seals payload for p's client and queues the packet.
func (b *Batch) Add(p *Peer, payload []byte) {
	if b.n == len(b.msgs) {
		b.msgs = append(b.msgs, ipv4.Message{Buffers: [][]byte{nil}})
		b.bufs = append(b.bufs, make([]byte, 0, MaxPacket))
	}
	pkt, to := p.Seal(b.bufs[b.n][:0], payload)
	b.bufs[b.n] = pkt
	b.msgs[b.n].Buffers[0], b.msgs[b.n].Addr = pkt, to
	b.n++
}

// Len is how many packets are queued.
func (b *Batch) Len() int { return b.n }

// Reset empties the batch.
func (b *Batch) Reset() { b.n = 0 }

// Writer writes batches on the server's socket, the one its QUIC transport
// reads: all of a batch in one sendmmsg(2) on Linux, for an IPv4 socket;
// elsewhere, and on IPv6 sockets (whose IPv4-mapped peers x/net would
// address as IPv4), one write a packet.
type Writer struct {
	conn *net.UDPConn
	pc   *ipv4.PacketConn // nil: one write a packet
}

// NewWriter returns a Writer on conn.
func NewWriter(conn *net.UDPConn) *Writer {
	w := &Writer{conn: conn}
	if a, ok := conn.LocalAddr().(*net.UDPAddr); ok && a.IP.To4() != nil {
		w.pc = ipv4.NewPacketConn(conn)
	}
	return w
}

// Write writes the batch's packets. A packet the network refuses is
// skipped and counted in failed, and the first such error returned; a
// closed socket ends the write (the rest count as failed).
func (w *Writer) Write(b *Batch) (failed int, err error) {
	for sent := 0; sent < b.n; {
		var n int
		var werr error
		if w.pc == nil {
			_, werr = w.conn.WriteTo(b.msgs[sent].Buffers[0], b.msgs[sent].Addr)
			if werr == nil {
				n = 1
			}
		} else {
			n, werr = w.pc.WriteBatch(b.msgs[sent:b.n], 0)
		}
		sent += n
		if werr == nil {
			continue
		}
		if err == nil {
			err = fmt.Errorf("channel: send to %v: %w", b.msgs[sent].Addr, werr)
		}
		if errors.Is(werr, net.ErrClosed) {
			return failed + b.n - sent, err
		}
		failed++
		sent++ // the packet refused
	}
	return failed, err
}
