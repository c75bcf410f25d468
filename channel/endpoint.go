package channel

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync/atomic"

	"github.com/quic-go/quic-go"
)

// Endpoint is the client's end of the sealed channel, on the transport its
// QUIC connection uses.
type Endpoint struct {
	tr     *quic.Transport
	server net.Addr
	sealer *Sealer
	opener *Opener
	out    []byte
	in     []byte // the packet read
	buf    []byte // the payload returned
	// Dropped counts the packets that did not open, by Reason.
	dropped [ReasonQueue + 1]atomic.Uint64
}

// NewEndpoint returns the client's end of a session: it sends to server and
// reads the transport's non-QUIC packets. cs is the QUIC connection's TLS
// state, session the Welcome's session id.
func NewEndpoint(tr *quic.Transport, server net.Addr, cs *tls.ConnectionState, session uint32) (*Endpoint, error) {
	up, down, err := Keys(cs, session)
	if err != nil {
		return nil, err
	}
	s, err := NewSealer(up, session)
	if err != nil {
		return nil, err
	}
	o, err := NewOpener(down, session)
	if err != nil {
		return nil, err
	}
	return &Endpoint{tr: tr, server: server, sealer: s, opener: o,
		out: make([]byte, 0, MaxPacket), in: make([]byte, MaxPacket+1), buf: make([]byte, 0, MaxPacket)}, nil
}

// Send seals p and writes it to the server.
func (e *Endpoint) Send(p []byte) error {
	e.out = e.sealer.Seal(e.out[:0], p)
	if _, err := e.tr.WriteTo(e.out, e.server); err != nil {
		return fmt.Errorf("channel: send: %w", err)
	}
	return nil
}

// Receive returns the next authentic payload from the server, dropping (and
// counting) every packet that does not open.
func (e *Endpoint) Receive(ctx context.Context) ([]byte, error) {
	for {
		n, _, err := e.tr.ReadNonQUICPacket(ctx, e.in)
		if err != nil {
			return nil, err
		}
		out, _, _, err := e.opener.Open(e.buf[:0], e.in[:n])
		if err != nil {
			e.dropped[ReasonOf(err)].Add(1)
			continue
		}
		return out, nil
	}
}

// Dropped returns how many packets were dropped for a reason.
func (e *Endpoint) Dropped(r Reason) uint64 {
	if int(r) >= len(e.dropped) {
		return 0
	}
	return e.dropped[r].Load()
}
