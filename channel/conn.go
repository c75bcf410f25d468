package channel

import (
	"context"

	"github.com/quic-go/quic-go"
)

// Conn carries one session's datagrams. Send is called from one goroutine
// and Receive from one other.
type Conn interface {
	// Send sends one datagram (at most protocol.MaxDatagram bytes); it does
	// not wait for the network. p may be reused once it returns.
	Send(p []byte) error
	// Receive returns the next datagram, valid until the next Receive.
	Receive(ctx context.Context) ([]byte, error)
}

// QUIC carries datagrams as QUIC DATAGRAM frames on a connection.
type QUIC struct{ Conn *quic.Conn }

// Send sends p as a DATAGRAM frame.
func (q QUIC) Send(p []byte) error { return q.Conn.SendDatagram(p) }

// Receive returns the next DATAGRAM frame.
func (q QUIC) Receive(ctx context.Context) ([]byte, error) { return q.Conn.ReceiveDatagram(ctx) }
