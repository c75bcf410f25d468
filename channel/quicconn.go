package channel

import (
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// quicConn is the server socket as its QUIC transport sees it through a
// Demux: reads return the QUIC packets the Demux queued, writes go to the
// socket. It also passes on the socket's buffer sizing and raw access, so
// that quic-go sizes the socket's buffers and sets its don't-fragment
// option (path MTU discovery) as it would on the socket itself.
type quicConn struct {
	udp     *net.UDPConn
	packets chan quicPacket
	free    chan []byte // buffers of packets read, for the Demux's next reads
	closed  chan struct{}
	once    sync.Once

	mu       sync.Mutex
	deadline time.Time
	changed  chan struct{} // closed when the read deadline changes
}

type quicPacket struct {
	data []byte // in a demuxBuffer-sized buffer
	from net.Addr
}

func newQUICConn(udp *net.UDPConn, queue int) *quicConn {
	return &quicConn{udp: udp, packets: make(chan quicPacket, queue), free: make(chan []byte, queue),
		closed: make(chan struct{}), changed: make(chan struct{})}
}

// queue hands a packet (and its buffer) to the reader; false when the
// queue is full.
func (c *quicConn) queue(p []byte, from net.Addr) bool {
	select {
	case c.packets <- quicPacket{data: p, from: from}:
		return true
	default:
		return false
	}
}

// buffer returns a read buffer: one a read gave back, or a new one.
func (c *quicConn) buffer() []byte {
	select {
	case b := <-c.free:
		return b[:demuxBuffer]
	default:
		return make([]byte, demuxBuffer)
	}
}

// ReadFrom returns the next QUIC packet, or an error once the read
// deadline passes (os.ErrDeadlineExceeded, which quic-go takes as
// temporary) or the Demux stops (net.ErrClosed).
func (c *quicConn) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		c.mu.Lock()
		deadline, changed := c.deadline, c.changed
		c.mu.Unlock()
		var timer *time.Timer
		var expired <-chan time.Time
		if !deadline.IsZero() {
			d := time.Until(deadline)
			if d <= 0 {
				return 0, nil, os.ErrDeadlineExceeded
			}
			timer = time.NewTimer(d)
			expired = timer.C
		}
		again, n, from, err := c.wait(b, expired, changed)
		if timer != nil {
			timer.Stop()
		}
		if !again {
			return n, from, err
		}
	}
}

// wait is one wait of ReadFrom; again: the deadline changed, wait anew.
func (c *quicConn) wait(b []byte, expired <-chan time.Time, changed <-chan struct{}) (again bool, n int, from net.Addr, err error) {
	select {
	case p := <-c.packets:
		n = copy(b, p.data)
		select {
		case c.free <- p.data:
		default:
		}
		return false, n, p.from, nil
	case <-c.closed:
		return false, 0, nil, net.ErrClosed
	case <-expired:
		return false, 0, nil, os.ErrDeadlineExceeded
	case <-changed:
		return true, 0, nil, nil
	}
}

// WriteTo writes a packet on the socket.
func (c *quicConn) WriteTo(b []byte, to net.Addr) (int, error) { return c.udp.WriteTo(b, to) }

// Close ends the reads; the socket stays open (its owner closes it).
func (c *quicConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *quicConn) LocalAddr() net.Addr { return c.udp.LocalAddr() }

// SetReadDeadline bounds the reads of QUIC packets (not the socket's).
func (c *quicConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	close(c.changed)
	c.changed = make(chan struct{})
	return nil
}

// SetWriteDeadline sets the socket's write deadline, which the sealed
// packets' writes share.
func (c *quicConn) SetWriteDeadline(t time.Time) error { return c.udp.SetWriteDeadline(t) }

func (c *quicConn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

// The socket's, for quic-go's buffer sizing and socket options.

func (c *quicConn) SetReadBuffer(n int) error             { return c.udp.SetReadBuffer(n) }
func (c *quicConn) SetWriteBuffer(n int) error            { return c.udp.SetWriteBuffer(n) }
func (c *quicConn) SyscallConn() (syscall.RawConn, error) { return c.udp.SyscallConn() }
