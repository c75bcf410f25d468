package channel

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/quic-go/quic-go"

	"github.com/rewind-gg/rewind/protocol"
)

// Endpoint is the client's end of the sealed channel, on the transport its
// QUIC connection uses. It answers the server's path challenges itself.
type Endpoint struct {
	tr     *quic.Transport
	server net.Addr
	// sending guards sealer and out: Send's goroutine sends inputs and
	// Receive's answers path challenges, with one sequence of nonces.
	sending sync.Mutex
	sealer  *Sealer
	out     []byte
	opener  *Opener
	in      []byte // the packet read
	buf     []byte // the payload returned
	answer  []byte // a path response
	// Dropped counts the packets that did not open, by Reason.
	dropped [ReasonQueue + 1]atomic.Uint64
	// challenges counts the path challenges answered.
	challenges atomic.Uint64
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
		out: make([]byte, 0, MaxPacket), in: make([]byte, MaxPacket+1), buf: make([]byte, 0, MaxPacket),
		answer: make([]byte, 0, 16)}, nil
}

// Send seals p and writes it to the server.
func (e *Endpoint) Send(p []byte) error {
	e.sending.Lock()
	defer e.sending.Unlock()
	e.out = e.sealer.Seal(e.out[:0], p)
	if _, err := e.tr.WriteTo(e.out, e.server); err != nil {
		return fmt.Errorf("channel: send: %w", err)
	}
	return nil
}

// Receive returns the next authentic payload from the server, dropping (and
// counting) every packet that does not open. It answers a path challenge
// at once, from the socket the challenge reached, and does not return it.
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
		if len(out) >= 2 && out[1] == protocol.DatagramPathChallenge {
			if typ, data, err := protocol.DecodePath(out); err == nil && typ == protocol.DatagramPathChallenge {
				e.answer = protocol.AppendPathResponse(e.answer[:0], data)
				if e.Send(e.answer) == nil {
					e.challenges.Add(1)
				}
			}
			continue
		}
		return out, nil
	}
}

// Challenges returns how many path challenges the endpoint answered: how
// often the server saw it at a new address.
func (e *Endpoint) Challenges() uint64 { return e.challenges.Load() }

// Dropped returns how many packets were dropped for a reason.
func (e *Endpoint) Dropped(r Reason) uint64 {
	if int(r) >= len(e.dropped) {
		return 0
	}
	return e.dropped[r].Load()
}
