package server

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/quic-go/quic-go"
	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/protocol"
)

// session is one client connection. Its goroutines own the network: the
// receiver (decodes inputs, hands them to the room), the sender (writes the
// snapshots the room encoded) and the control writer (events). The room
// talks to it only through bounded channels and never waits for it.
type session struct {
	srv  *Server
	conn *quic.Conn
	log  zerolog.Logger

	reply chan joinReply      // room → session: the answer to the join
	ctrl  chan protocol.Event // room → control writer
	out   chan []byte         // room → sender: encoded snapshots
	free  chan []byte         // sender → room: snapshot buffers to reuse
	done  chan struct{}       // closed when the session ends

	// Flood guard, touched only by the receiver goroutine.
	tokens float64
	last   time.Time
}

// sendBuffers is how many snapshots can wait for a client's sender.
const sendBuffers = 4

// ctrlQueue is how many events can wait for a client's control writer; a
// client that lets more pile up is disconnected.
const ctrlQueue = 256

type joinReply struct {
	welcome protocol.Welcome
	reject  *protocol.Reject
	room    *room
}

func newSession(s *Server, conn *quic.Conn) *session {
	se := &session{
		srv: s, conn: conn,
		log:   s.log.With().Str("remote", conn.RemoteAddr().String()).Logger(),
		reply: make(chan joinReply, 1),
		ctrl:  make(chan protocol.Event, ctrlQueue),
		out:   make(chan []byte, sendBuffers),
		free:  make(chan []byte, sendBuffers),
		done:  make(chan struct{}),
	}
	for range sendBuffers {
		se.free <- make([]byte, 0, protocol.SnapshotBufferSize)
	}
	return se
}

var roomName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

func (se *session) run() {
	defer se.srv.wg.Done()
	defer se.srv.sessionDone(se)
	defer close(se.done)
	stream, join, err := se.readJoin()
	if err != nil {
		se.log.Debug().Err(err).Msg("join failed")
		return
	}
	r, code := se.srv.roomFor(join.Room)
	if r == nil {
		se.srv.m.rejected.WithLabelValues("server").Inc()
		se.reject(stream, protocol.Reject{Code: uint8(code), Reason: "the server is full or shutting down"})
		return
	}
	rep, ok := r.join(se, join)
	if !ok {
		return // the connection or the room went away
	}
	if rep.reject != nil {
		se.srv.m.rejected.WithLabelValues("room").Inc()
		se.reject(stream, *rep.reject)
		return
	}
	se.log = se.log.With().Str("room", join.Room).Uint32("player", rep.welcome.Player).Str("name", join.Name).Logger()
	if _, err := protocol.WriteFrame(stream, nil, protocol.MsgWelcome, protocol.AppendWelcome(nil, &rep.welcome)); err != nil {
		// Only a broken stream gets here (New checked that a Welcome fits):
		// the client cannot play without it.
		se.conn.CloseWithError(protocol.CloseProtocol, "welcome not sent")
		r.leave(se)
		return
	}
	se.log.Info().Uint8("team", rep.welcome.Team).Msg("joined")
	se.srv.wg.Add(3)
	go se.send()
	go se.writeEvents(stream)
	go se.readControl(stream)
	se.receive(r)
	r.leave(se)
	se.log.Info().Msg("left")
}

// joinTimeout is how long a connection has to open its control stream and
// send its Join, all told: an idle connection holds a slot.
const joinTimeout = 5 * time.Second

// readJoin accepts the control stream and reads the Join within joinTimeout.
func (se *session) readJoin() (*quic.Stream, protocol.Join, error) {
	deadline := time.Now().Add(joinTimeout)
	ctx, cancel := context.WithDeadline(se.conn.Context(), deadline)
	defer cancel()
	stream, err := se.conn.AcceptStream(ctx)
	if err != nil {
		se.conn.CloseWithError(protocol.CloseProtocol, "no control stream")
		return nil, protocol.Join{}, err
	}
	stream.SetReadDeadline(deadline)
	typ, payload, _, err := protocol.ReadFrame(stream, nil)
	if err != nil {
		se.conn.CloseWithError(protocol.CloseProtocol, "no join")
		return nil, protocol.Join{}, err
	}
	stream.SetReadDeadline(time.Time{})
	if typ != protocol.MsgJoin {
		se.conn.CloseWithError(protocol.CloseProtocol, "the first message must be a join")
		return nil, protocol.Join{}, errors.New("first message not a join")
	}
	join, err := protocol.DecodeJoin(payload)
	switch {
	case join.Version != protocol.Version:
		se.reject(stream, protocol.Reject{Code: protocol.RejectVersion, Reason: fmt.Sprintf("this server speaks protocol version %d", protocol.Version)})
		err = fmt.Errorf("protocol version %d", join.Version)
	case err != nil:
		se.reject(stream, protocol.Reject{Code: protocol.RejectBadJoin, Reason: err.Error()})
	case !roomName.MatchString(join.Room):
		se.reject(stream, protocol.Reject{Code: protocol.RejectBadJoin, Reason: "room: 1 to 64 of A-Z a-z 0-9 _ . -"})
		err = errors.New("bad room name")
	case join.Name == "" || !utf8.ValidString(join.Name):
		se.reject(stream, protocol.Reject{Code: protocol.RejectBadJoin, Reason: "name: 1 to 32 bytes of UTF-8"})
		err = errors.New("bad player name")
	case join.Team > 2:
		se.reject(stream, protocol.Reject{Code: protocol.RejectBadJoin, Reason: "team: 0 (any), 1 or 2"})
		err = errors.New("bad team")
	}
	if err != nil {
		se.srv.m.rejected.WithLabelValues("join").Inc()
	}
	return stream, join, err
}

// reject sends a Reject and closes the stream, then lets the client read it
// and leave: closing the connection at once could discard the Reject before
// it is delivered. A client that stays is closed after rejectLinger.
func (se *session) reject(stream *quic.Stream, r protocol.Reject) {
	protocol.WriteFrame(stream, nil, protocol.MsgReject, protocol.AppendReject(nil, &r))
	stream.Close()
	t := time.NewTimer(rejectLinger)
	defer t.Stop()
	select {
	case <-se.conn.Context().Done():
		return
	case <-t.C:
	case <-se.srv.ctx.Done():
	}
	se.conn.CloseWithError(protocol.CloseRejected, r.Reason)
}

// rejectLinger is how long a rejected client has to read why and leave.
const rejectLinger = 2 * time.Second

// receive reads datagrams until the connection ends: each is rate-limited,
// decoded and handed to the room, or dropped and counted.
func (se *session) receive(r *room) {
	m := se.srv.m
	rate := float64(se.srv.cfg.MaxDatagramRate)
	burst := max(rate/4, 10)
	se.tokens, se.last = burst, time.Now()
	for {
		d, err := se.conn.ReceiveDatagram(se.conn.Context())
		if err != nil {
			return
		}
		now := time.Now()
		se.tokens = min(burst, se.tokens+now.Sub(se.last).Seconds()*rate)
		se.last = now
		if se.tokens < 1 {
			m.drop(dropFlood)
			continue
		}
		se.tokens--
		typ, err := protocol.DatagramType(d)
		if err != nil {
			m.drop(reasonOf(err))
			continue
		}
		if typ != protocol.DatagramInput {
			m.drop(dropWrongType)
			continue
		}
		m.dgIn.Inc()
		st := se.conn.ConnectionStats()
		msg := roomMsg{kind: msgInput, sess: se, rtt: st.SmoothedRTT + 2*st.MeanDeviation}
		if err := protocol.DecodeInputPacket(d, &msg.input); err != nil {
			m.drop(reasonOf(err))
			continue
		}
		select {
		case r.inbox <- msg:
		default:
			m.drop(dropInbox)
		}
	}
}

func reasonOf(err error) string {
	var de *protocol.DecodeError
	if errors.As(err, &de) {
		return de.Reason.String()
	}
	return "unknown"
}

// send writes the snapshots the room encoded and returns their buffers.
func (se *session) send() {
	defer se.srv.wg.Done()
	for {
		select {
		case <-se.done:
			return
		case b := <-se.out:
			err := se.conn.SendDatagram(b) // copies b
			se.free <- b
			if err != nil && se.conn.Context().Err() != nil {
				return
			}
		}
	}
}

// writeEvents writes the room's events to the control stream.
func (se *session) writeEvents(stream *quic.Stream) {
	defer se.srv.wg.Done()
	var payload, frame []byte
	for {
		select {
		case <-se.done:
			return
		case ev := <-se.ctrl:
			payload = protocol.AppendEvent(payload[:0], &ev)
			var err error
			if frame, err = protocol.WriteFrame(stream, frame, protocol.MsgEvent, payload); err != nil {
				return
			}
		}
	}
}

// readControl reads the control stream after the join: clients send nothing
// more on it, so anything but its end breaks the protocol.
func (se *session) readControl(stream *quic.Stream) {
	defer se.srv.wg.Done()
	var buf [1]byte
	n, err := stream.Read(buf[:])
	if n > 0 || err == nil {
		se.conn.CloseWithError(protocol.CloseProtocol, "unexpected control message")
	}
}

// takeBuffer returns a snapshot buffer, or nil when all are in flight.
func (se *session) takeBuffer() []byte {
	select {
	case b := <-se.free:
		return b
	default:
		return nil
	}
}

// queueSnapshot hands an encoded snapshot to the sender; it never blocks.
func (se *session) queueSnapshot(b []byte) bool {
	select {
	case se.out <- b:
		return true
	default:
		return false
	}
}

// queueEvent hands an event to the control writer; it never blocks.
func (se *session) queueEvent(ev protocol.Event) bool {
	select {
	case se.ctrl <- ev:
		return true
	default:
		return false
	}
}
