package tests

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/server"
)

// squatter is a raw player that keeps its seat with as few inputs as it
// can: every period it sends one packet of n inputs for the ticks just
// ahead of the server (n = 1: a trickle; n = protocol.MaxInputs: the most
// ticks one packet can give the server an input for).
type squatter struct {
	*rawPlayer
	period time.Duration
	n      int
}

// run sends the squatter's packets, the first at once, until ctx ends or
// the server closes the connection. It reads every snapshot, to know the
// server's tick.
func (s *squatter) run(ctx context.Context) {
	next := time.Now()
	for s.nextSnapshot(ctx) {
		if now := time.Now(); now.Before(next) {
			continue
		}
		// The snapshot of tick t leaves once t is simulated: the server
		// is at t+1, and the packet's inputs are for t+1 to t+n.
		pkt := protocol.InputPacket{Newest: s.newest + uint32(s.n), SnapshotAck: s.newest, Count: s.n}
		if err := s.conn.SendDatagram(protocol.AppendInputPacket(nil, &pkt)); err != nil {
			return
		}
		next = next.Add(s.period)
	}
}

// driveBy sends the Join j from the loopback address local and leaves at
// once, as a source that only wants rooms open does; it returns the
// Reject, if the join was refused. Its socket is closed before it returns.
func driveBy(ctx context.Context, srv *server.Server, local string, j protocol.Join) (*protocol.Reject, error) {
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(local)})
	if err != nil {
		return nil, err
	}
	tr := &quic.Transport{Conn: udp}
	defer func() { tr.Close(); udp.Close() }()
	pin := srv.CertSHA256()
	conn, err := tr.Dial(ctx, srv.Addr(), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{protocol.ALPN},
		VerifyConnection: func(cs tls.ConnectionState) error { return pinned(cs, pin) }},
		&quic.Config{EnableDatagrams: true, MaxIdleTimeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	defer conn.CloseWithError(0, "")
	st, err := conn.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	j.Version, j.Channels = protocol.Version, protocol.ChannelQUIC
	if _, err := protocol.WriteFrame(st, nil, protocol.MsgJoin, protocol.AppendJoin(nil, &j)); err != nil {
		return nil, err
	}
	if d, ok := ctx.Deadline(); ok {
		st.SetReadDeadline(d)
	}
	typ, payload, _, err := protocol.ReadFrame(st, nil)
	if err != nil {
		return nil, err
	}
	if typ == protocol.MsgReject {
		rj, err := protocol.DecodeReject(payload)
		return &rj, err
	}
	return nil, nil
}
