package tests

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/server"
)

// rawPlayer is a client written from docs/protocol.md alone, as a cheater
// would write one: it joins, decodes snapshots and sends whatever inputs it
// likes (any view lag, any shot counter). It keeps every player's position
// at every snapshot tick, to aim at the past.
type rawPlayer struct {
	t       testing.TB
	conn    *quic.Conn
	stream  *quic.Stream
	welcome protocol.Welcome
	events  chan protocol.Event

	states  [protocol.Baselines]protocol.State
	scratch protocol.State
	header  protocol.SnapshotHeader // of the newest snapshot
	newest  uint32
	have    bool
	// seen[tick][player id] is a player's position (feet, decoded) in the
	// snapshot of tick, if it was alive.
	seen map[uint32]map[uint32][3]float64
	// inputs keeps what was sent, by tick, for redundancy.
	inputs map[uint32]protocol.Input
}

// joinRaw connects to addr (srv or a shim in front of it), pins srv's
// certificate and joins; it fails the test unless a Welcome comes back.
func joinRaw(t testing.TB, srv *server.Server, addr string, j protocol.Join) *rawPlayer {
	t.Helper()
	p, typ, payload := dialRaw(t, srv, addr, j)
	if typ != protocol.MsgWelcome {
		rj, _ := protocol.DecodeReject(payload)
		t.Fatalf("join %+v: not welcome but type %d %+v", j, typ, rj)
	}
	w, err := protocol.DecodeWelcome(payload)
	if err != nil {
		t.Fatal(err)
	}
	p.welcome = w
	go p.readEvents()
	return p
}

// dialRaw connects and sends the Join; it returns the answer's type and
// payload.
func dialRaw(t testing.TB, srv *server.Server, addr string, j protocol.Join) (*rawPlayer, uint8, []byte) {
	t.Helper()
	return dialRawFrom(t, srv, addr, "127.0.0.1", j)
}

// connectFrom opens a QUIC connection to addr from the loopback address
// local (127.0.0.0/8 gives every test source an address of its own),
// pinning srv's certificate; the test closes it when it ends.
func connectFrom(t testing.TB, srv *server.Server, addr, local string) (*quic.Conn, error) {
	t.Helper()
	conn, _, err := connectOn(t, srv, addr, local)
	return conn, err
}

// connectOn is connectFrom, with the connection's transport (which sends
// and reads non-QUIC packets on its socket).
func connectOn(t testing.TB, srv *server.Server, addr, local string) (*quic.Conn, *quic.Transport, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(local)})
	if err != nil {
		t.Fatal(err)
	}
	tr := &quic.Transport{Conn: udp}
	t.Cleanup(func() { tr.Close(); udp.Close() })
	raddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	pin := srv.CertSHA256()
	conn, err := tr.Dial(ctx, raddr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{protocol.ALPN},
		VerifyConnection: func(cs tls.ConnectionState) error { return pinned(cs, pin) }},
		&quic.Config{EnableDatagrams: true, MaxIdleTimeout: 10 * time.Second, KeepAlivePeriod: 2 * time.Second})
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(func() { conn.CloseWithError(0, "") })
	return conn, tr, nil
}

// dialRawFrom is dialRaw from the loopback address local.
func dialRawFrom(t testing.TB, srv *server.Server, addr, local string, j protocol.Join) (*rawPlayer, uint8, []byte) {
	t.Helper()
	if j.Version == 0 {
		j.Version = protocol.Version
	}
	if j.Channels == 0 {
		j.Channels = protocol.ChannelQUIC // a raw player sends QUIC DATAGRAMs
	}
	return dialRawPayload(t, srv, addr, local, protocol.AppendJoin(nil, &j))
}

// dialRawPayload is dialRawFrom with the Join's payload as it is sent, to
// send one AppendJoin would not write.
func dialRawPayload(t testing.TB, srv *server.Server, addr, local string, join []byte) (*rawPlayer, uint8, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := connectFrom(t, srv, addr, local)
	if err != nil {
		t.Fatal(err)
	}
	st, err := conn.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := protocol.WriteFrame(st, nil, protocol.MsgJoin, join); err != nil {
		t.Fatal(err)
	}
	st.SetReadDeadline(time.Now().Add(10 * time.Second))
	typ, payload, _, err := protocol.ReadFrame(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	st.SetReadDeadline(time.Time{})
	p := &rawPlayer{t: t, conn: conn, stream: st, events: make(chan protocol.Event, 4096),
		seen: map[uint32]map[uint32][3]float64{}, inputs: map[uint32]protocol.Input{}}
	for i := range p.states {
		p.states[i].Tick = protocol.NoTick
	}
	return p, typ, payload
}

func (p *rawPlayer) readEvents() {
	var buf []byte
	for {
		typ, payload, b, err := protocol.ReadFrame(p.stream, buf)
		buf = b
		if err != nil {
			close(p.events)
			return
		}
		if typ == protocol.MsgEvent {
			if ev, err := protocol.DecodeEvent(payload); err == nil {
				select {
				case p.events <- ev:
				default:
					p.t.Error("raw player: event queue overflow")
				}
			}
		}
	}
}

// nextSnapshot waits for the next snapshot newer than any before, decodes
// it and records what it shows; false when the connection ends.
func (p *rawPlayer) nextSnapshot(ctx context.Context) bool {
	for {
		d, err := p.conn.ReceiveDatagram(ctx)
		if err != nil {
			return false
		}
		var h protocol.SnapshotHeader
		if protocol.DecodeSnapshotHeader(d, &h) != nil {
			continue
		}
		var base *protocol.State
		if h.Baseline != protocol.NoTick {
			b := &p.states[protocol.BaselineSlot(h.Baseline, 1)]
			if b.Tick != h.Baseline {
				continue
			}
			base = b
		}
		if protocol.DecodeSnapshot(d, base, &h, &p.scratch) != nil {
			p.t.Errorf("raw player: undecodable snapshot of tick %d", h.Tick)
			continue
		}
		slot := &p.states[protocol.BaselineSlot(h.Tick, 1)]
		*slot, p.scratch = p.scratch, *slot
		if p.have && h.Tick <= p.newest {
			continue
		}
		p.newest, p.have, p.header = h.Tick, true, h
		pos := map[uint32][3]float64{}
		for _, e := range slot.Players {
			if e.State.Flags&protocol.FlagAlive != 0 {
				pos[e.ID] = protocol.VecValue(e.State.Pos).Array()
			}
		}
		p.seen[h.Tick] = pos
		return true
	}
}

// send sends the input of tick, with the inputs of the 7 ticks before it
// that it sent (redundancy), acknowledging the newest snapshot.
func (p *rawPlayer) send(tick uint32, in protocol.Input) {
	p.inputs[tick] = in
	pkt := protocol.InputPacket{Newest: tick, SnapshotAck: p.newest}
	first := tick
	for first > 0 && tick-first < 7 {
		if _, ok := p.inputs[first-1]; !ok {
			break
		}
		first--
	}
	for k := first; k <= tick; k++ {
		pkt.Inputs[pkt.Count] = p.inputs[k]
		pkt.Count++
	}
	if err := p.conn.SendDatagram(protocol.AppendInputPacket(nil, &pkt)); err != nil && p.conn.Context().Err() == nil {
		p.t.Errorf("raw player: send: %v", err)
	}
}

// closed waits for the server to close the connection and returns its code
// and reason.
func (p *rawPlayer) closed(t testing.TB, within time.Duration) (quic.ApplicationErrorCode, string) {
	t.Helper()
	select {
	case <-p.conn.Context().Done():
	case <-time.After(within):
		t.Fatalf("the server did not close the connection within %v", within)
	}
	var ae *quic.ApplicationError
	if !errors.As(context.Cause(p.conn.Context()), &ae) {
		t.Fatalf("closed with %v", context.Cause(p.conn.Context()))
	}
	return ae.ErrorCode, ae.ErrorMessage
}
