package server

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/channel"
	"github.com/rewind-gg/rewind/limits"
	"github.com/rewind-gg/rewind/names"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/replication"
	"github.com/rewind-gg/rewind/token"
)

// session is one client connection. Its receiver decodes the client's input
// datagrams into the session's input slot, which the room drains once a
// tick: on the sealed channel the receiver is the Demux's goroutine, on
// QUIC DATAGRAMs one of the session's own. The room seals and batches
// sealed snapshots itself (replication.Sealer); on QUIC DATAGRAMs the
// session's sender writes the snapshots the room encoded
// (replication.Queue). The control writer writes events. The room talks to
// the session only through bounded channels and the slot, and never waits
// for it.
type session struct {
	srv  *Server
	conn *quic.Conn
	src  netip.Addr // the source address, for the per-source limits
	log  zerolog.Logger

	reply chan joinReply // room → session: the answer to the join
	// Made by makeQueues once the join goes to a room:
	ctrl chan protocol.Event // room → control writer
	// snapshots is the channel the room sends the client's snapshots on;
	// queue is it on QUIC DATAGRAMs (room → sender), nil on the sealed
	// channel.
	snapshots replication.Channel
	queue     *replication.Queue
	// inputs holds the input datagrams received since the room's last tick.
	inputs replication.Slot
	done   chan struct{} // closed when the session ends

	// seated is set once a room admitted the session: from then on the
	// room closes its connection, with the match's reason.
	seated atomic.Bool
	// closing is the close the server sends the player (its room's end,
	// a kick), set before it goes out: the client may close the
	// connection first on reading it (the sealed channel's Close datagram
	// outruns QUIC's CONNECTION_CLOSE), and the leave is still the
	// server's.
	closing atomic.Pointer[protocol.Close]

	// releaseHandshake frees the connection's handshake slot (package
	// limits) once its join is answered; idempotent.
	releaseHandshake func()

	// sealed says the session's inputs and snapshots take the sealed
	// channel (else the connection's QUIC DATAGRAMs), set before the join
	// reaches the room; peer is its end of the sealed channel, nil until
	// it is open (after the room admitted the player: the room reads it).
	sealed bool
	peer   atomic.Pointer[channel.Peer]

	// Flood guard, network samples and flow control, touched only by the
	// receiver.
	tokens     float64
	last       time.Time
	sampled    time.Time       // when RTT and loss were last observed
	rtt        replication.RTT // QUIC's estimate of the round trip then (quicRTT)
	rttSampled bool            // QUIC had taken a sample of the round trip then
	sent, lost uint64          // QUIC's packet counters then
	flow       replication.Flow
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

// identity is who a join says the player is, once admitted: from its token,
// or (open development mode) from the Join itself.
type identity struct {
	user, name, room, class string
	team                    uint8
	create                  bool // the join may create its room
	token                   bool // the identity comes from a verified token
}

func newSession(s *Server, conn *quic.Conn) *session {
	se := &session{
		srv: s, conn: conn, src: limits.Source(conn.RemoteAddr()), releaseHandshake: func() {},
		log:   s.log.With().Str("remote", conn.RemoteAddr().String()).Logger(),
		reply: make(chan joinReply, 1),
		done:  make(chan struct{}),
	}
	return se
}

// makeQueues makes the queues between the session and its room r, once its
// join goes to r (se.sealed set): a join refused before costs none of them
// (20 KB of events). The sealed channel needs no snapshot buffers: the
// room seals its snapshots itself, with its Sealer.
func (se *session) makeQueues(r *room) {
	se.ctrl = make(chan protocol.Event, ctrlQueue)
	if se.sealed {
		se.snapshots = r.sealer.For(&se.peer)
		return
	}
	se.queue = replication.NewQueue(sendBuffers)
	se.snapshots = se.queue
}

var roomName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

func (se *session) run() {
	defer se.srv.wg.Done()
	defer se.srv.sessionDone(se)
	defer close(se.done)
	// The connection holds one of its source's handshake slots until its
	// join is answered (or it ends).
	if release, ok := se.conn.Context().Value(handshakeKey{}).(func()); ok {
		se.releaseHandshake = release
	}
	defer se.releaseHandshake()
	stream, join, rej, err := se.readJoin()
	if err != nil {
		se.log.Debug().Err(err).Msg("join failed")
		return
	}
	if rej != nil {
		se.refuse(stream, rej, &join)
		return
	}
	id, rej := se.srv.identify(&join, se.src)
	if rej != nil {
		se.refuse(stream, rej, &join)
		return
	}
	r, rej := se.srv.roomFor(id.room, id.create, se.src)
	if rej != nil {
		se.refuse(stream, rej, &join)
		return
	}
	sealed, rej := se.srv.chooseChannel(join.Channels)
	if rej != nil {
		se.srv.joinDone(r)
		se.refuse(stream, rej, &join)
		return
	}
	releasePlayer, ok := se.srv.limiter.Player(se.src)
	if !ok {
		se.srv.joinDone(r)
		se.refuse(stream, &protocol.Reject{Code: protocol.RejectRateLimited, Reason: "too many players from your address"}, &join)
		return
	}
	defer releasePlayer()
	se.sealed = sealed
	se.makeQueues(r)
	rep, ok := r.join(se, &id, join.InterpDelay)
	if !ok {
		if se.conn.Context().Err() == nil { // the room closed under the join
			se.refuse(stream, &protocol.Reject{Code: protocol.RejectWrongRoom, Reason: "room " + id.room + " has just closed"}, &join)
		}
		return
	}
	if rep.reject != nil {
		se.refuse(stream, rep.reject, &join)
		return
	}
	se.seated.Store(true)
	se.releaseHandshake()
	// Before the receiver starts: it logs with it.
	se.log = se.log.With().Str("room", id.room).Uint32("player", rep.welcome.Player).Str("name", id.name).Str("user", id.user).Logger()
	se.startReceiver()
	rep.welcome.Channel = protocol.ChannelQUIC
	if sealed {
		peer, err := se.srv.demux.Open(se.conn, se.sealedDatagram)
		if err != nil {
			se.log.Error().Err(err).Msg("sealed channel: no keys")
			se.conn.CloseWithError(protocol.CloseProtocol, "no sealed channel")
			r.leave(se)
			return
		}
		defer peer.Close()
		se.peer.Store(peer)
		rep.welcome.Channel, rep.welcome.Session = protocol.ChannelSealed, peer.ID()
	}
	se.srv.m.channels[rep.welcome.Channel].Inc()
	if _, err := protocol.WriteFrame(stream, nil, protocol.MsgWelcome, protocol.AppendWelcome(nil, &rep.welcome)); err != nil {
		// Only a broken stream gets here (New checked that a Welcome fits):
		// the client cannot play without it.
		se.conn.CloseWithError(protocol.CloseProtocol, "welcome not sent")
		r.leave(se)
		return
	}
	se.log.Info().Uint8("team", rep.welcome.Team).Msg("joined")
	se.srv.wg.Add(2)
	go se.writeEvents(stream)
	go se.readControl(stream)
	if !sealed {
		se.srv.wg.Add(1)
		go se.send()
		se.receive()
	} else {
		<-se.conn.Context().Done() // the Demux delivers the datagrams
	}
	r.leave(se)
	se.log.Info().Str("reason", se.leaveReason()).Msg("left")
}

// closeWith records the close the server is about to send the player.
func (se *session) closeWith(code quic.ApplicationErrorCode, reason string) {
	se.closing.CompareAndSwap(nil, &protocol.Close{Code: uint8(code), Reason: reason})
}

// leaveReason says why a joined player's connection ended, for the log:
// the server's close when it sent one, however the connection then ended.
func (se *session) leaveReason() string {
	if c := se.closing.Load(); c != nil {
		return fmt.Sprintf("closed by the server (%d): %s", c.Code, c.Reason)
	}
	cause := context.Cause(se.conn.Context())
	var ae *quic.ApplicationError
	var idle *quic.IdleTimeoutError
	switch {
	case errors.As(cause, &ae) && ae.Remote:
		return fmt.Sprintf("the client closed the connection (%d): %s", ae.ErrorCode, ae.ErrorMessage)
	case errors.As(cause, &ae):
		return fmt.Sprintf("closed by the server (%d): %s", ae.ErrorCode, ae.ErrorMessage)
	case errors.As(cause, &idle):
		return "the network went silent (QUIC idle timeout)"
	case cause != nil:
		return cause.Error()
	}
	return "unknown"
}

// identify decides who a join's player is: the verified token's identity
// (the Join's own fields may only repeat it), or in open development mode
// the Join's fields. It also spends one of the source's joins.
func (s *Server) identify(j *protocol.Join, src netip.Addr) (identity, *protocol.Reject) {
	if !s.limiter.Join(src, time.Now()) {
		return identity{}, &protocol.Reject{Code: protocol.RejectRateLimited, Reason: "too many joins from your address: slow down"}
	}
	bad := func(reason string) (identity, *protocol.Reject) {
		return identity{}, &protocol.Reject{Code: protocol.RejectBadJoin, Reason: reason}
	}
	switch {
	case j.Room != "" && !roomName.MatchString(j.Room):
		return bad("room: 1 to 64 of A-Z a-z 0-9 _ . -")
	case j.Team > 2:
		return bad("team: 0 (any), 1 or 2")
	}
	// A name, given, follows the one rule for names, with a token or not:
	// the room shows it to every player.
	if j.Name != "" || s.verifier == nil {
		if err := names.Check(j.Name); err != nil {
			return bad(err.Error())
		}
	}
	if s.verifier == nil { // open development mode: the Join says who; a token is ignored
		if j.Room == "" {
			return bad("room: 1 to 64 of A-Z a-z 0-9 _ . -")
		}
		return identity{user: j.Name, name: j.Name, room: j.Room, team: j.Team, class: j.Class, create: true}, nil
	}
	if s.cfg.Auth.Rooms == RoomsByOperator {
		// A token is single-use: do not spend it on a room that is not open
		// (yet: the allocation may still be on its way), so the player can
		// try again with it. Reading the room before the signature check
		// tells the sender only whether a room is open.
		if c, err := token.Parse(j.Token); err == nil && !s.hosts(c.Room) {
			return identity{}, &protocol.Reject{Code: protocol.RejectWrongRoom, Reason: "room " + c.Room + " is not open here (yet)"}
		}
	}
	c, rej := s.verifyToken(j.Token)
	if rej != nil {
		return identity{}, rej
	}
	notGranted := func(field, asked, granted string) (identity, *protocol.Reject) {
		return identity{}, &protocol.Reject{Code: protocol.RejectNotGranted,
			Reason: fmt.Sprintf("%s: the join asks for %q, the token grants %q", field, asked, granted)}
	}
	switch {
	case j.Room != "" && j.Room != c.Room:
		return identity{}, &protocol.Reject{Code: protocol.RejectWrongRoom, Reason: fmt.Sprintf("room: the token is for room %q, not %q", c.Room, j.Room)}
	case j.Name != "" && j.Name != c.Name:
		return notGranted("name", j.Name, c.Name)
	case j.Team != 0 && j.Team != c.Team:
		return notGranted("team", fmt.Sprint(j.Team), fmt.Sprint(c.Team))
	case j.Class != "" && j.Class != c.Class:
		return notGranted("class", j.Class, c.Class)
	}
	return identity{user: c.User, name: c.Name, room: c.Room, team: c.Team, class: c.Class,
		create: s.cfg.Auth.Rooms == RoomsByToken, token: true}, nil
}

// joinTimeout is how long a connection has to open its control stream and
// send its Join, all told: an idle connection holds a slot.
const joinTimeout = 5 * time.Second

// readJoin accepts the control stream and reads the Join within
// joinTimeout. A Join that cannot be accepted as it is comes back with the
// Reject to send; an error means there is no stream to answer on.
func (se *session) readJoin() (*quic.Stream, protocol.Join, *protocol.Reject, error) {
	deadline := time.Now().Add(joinTimeout)
	ctx, cancel := context.WithDeadline(se.conn.Context(), deadline)
	defer cancel()
	stream, err := se.conn.AcceptStream(ctx)
	if err != nil {
		se.conn.CloseWithError(protocol.CloseProtocol, "no control stream")
		return nil, protocol.Join{}, nil, err
	}
	stream.SetReadDeadline(deadline)
	typ, payload, _, err := protocol.ReadFrame(stream, nil)
	if err != nil {
		se.conn.CloseWithError(protocol.CloseProtocol, "no join")
		return nil, protocol.Join{}, nil, err
	}
	stream.SetReadDeadline(time.Time{})
	if typ != protocol.MsgJoin {
		se.conn.CloseWithError(protocol.CloseProtocol, "the first message must be a join")
		return nil, protocol.Join{}, nil, errors.New("first message not a join")
	}
	join, err := protocol.DecodeJoin(payload)
	switch {
	case join.Version != protocol.Version:
		return stream, join, &protocol.Reject{Code: protocol.RejectVersion, Reason: fmt.Sprintf("this server speaks protocol version %d", protocol.Version)}, nil
	case oversizedToken(err):
		// Refused as a token, as the verifier refuses one over token.MaxLen.
		return stream, join, &protocol.Reject{Code: protocol.RejectTokenInvalid,
			Reason: fmt.Sprintf("token: oversized: over %d bytes", protocol.MaxToken)}, nil
	case err != nil:
		return stream, join, &protocol.Reject{Code: protocol.RejectBadJoin, Reason: err.Error()}, nil
	}
	return stream, join, nil, nil
}

// oversizedToken reports whether a Join failed to decode because its token
// is longer than protocol.MaxToken.
func oversizedToken(err error) bool {
	var de *protocol.DecodeError
	return errors.As(err, &de) && de.Reason == protocol.ReasonValue && de.What == "join.token"
}

// refuse counts and logs a refused join (sampled: a flood of them cannot
// flood the log) and sends the Reject. The line names the room, the user
// and the signing key's id as far as the join says them: a token's claims
// when it carries one that parses (verified or not: a token refused for its
// signature or key names whom it claims), else the Join's own fields.
func (se *session) refuse(stream *quic.Stream, rj *protocol.Reject, j *protocol.Join) {
	se.releaseHandshake() // answered: it lingers only to read why
	se.srv.m.reject(rj.Code)
	ev := se.srv.rejectLog.Info().Str("remote", se.conn.RemoteAddr().String()).Str("code", protocol.RejectLabel(rj.Code)).
		Str("reason", rj.Reason)
	room, user, name := j.Room, "", j.Name
	if len(j.Token) > 0 {
		if c, err := token.Parse(j.Token); err == nil {
			room, user, name = c.Room, c.User, c.Name
			ev = ev.Str("key_id", token.KeyIDString(c.KeyID))
			if j.Room != "" && j.Room != c.Room {
				ev = ev.Str("join_room", j.Room)
			}
		}
	} else if se.srv.verifier == nil {
		user = j.Name // open development mode: the name is the user
	}
	if user != "" {
		ev = ev.Str("user", user)
	}
	ev.Str("room", room).Str("name", name).Msg("join rejected")
	se.reject(stream, *rj)
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

// startReceiver readies the flood guard and the network samples before the
// first datagram.
func (se *session) startReceiver() {
	burst := max(float64(se.srv.cfg.MaxDatagramRate)/4, 10)
	se.tokens, se.last = burst, time.Now()
	se.sampled = se.last
	st := se.conn.ConnectionStats()
	se.rtt, se.rttSampled = quicRTT(&st)
}

// quicRTT is QUIC's own estimate of the round trip: smoothed, and its mean
// deviation. QUIC measures it from its ACK frames, which the client's QUIC
// stack sends by itself (RFC 9002, section 5): a client that delays the
// acknowledgements in its inputs does not move it. sampled is false while
// QUIC has no sample: quic-go then reports its initial 100 ms with no
// deviation (its MeanDeviation is 0 only then, in practice: a sample sets
// it to half the first round trip).
func quicRTT(st *quic.ConnectionStats) (rtt replication.RTT, sampled bool) {
	return replication.RTT{SRTT: st.SmoothedRTT, RTTVar: st.MeanDeviation}, st.MeanDeviation > 0
}

// receive reads QUIC DATAGRAMs until the connection ends.
func (se *session) receive() {
	ctx := se.conn.Context()
	dg := channel.QUIC{Conn: se.conn}
	for {
		d, err := dg.Receive(ctx)
		if err != nil {
			return
		}
		if why := se.datagram(d, time.Now()); why != dropNone {
			se.srv.m.drop(why)
		}
	}
}

// sealedDatagram takes an opened sealed packet, on the Demux's goroutine;
// false: the input slot was full (the Demux counts it).
func (se *session) sealedDatagram(d []byte) bool {
	switch why := se.datagram(d, time.Now()); why {
	case dropNone:
	case dropInbox:
		return false
	default:
		se.srv.m.drop(why)
	}
	return true
}

// datagram takes one datagram from the client: rate-limited, decoded into
// the input slot for the room, or dropped. It returns the drop's reason,
// dropNone when kept.
func (se *session) datagram(d []byte, now time.Time) dropReason {
	rate := float64(se.srv.cfg.MaxDatagramRate)
	burst := max(rate/4, 10)
	se.tokens = min(burst, se.tokens+now.Sub(se.last).Seconds()*rate)
	se.last = now
	if se.tokens < 1 {
		return dropFlood
	}
	se.tokens--
	if now.Sub(se.sampled) >= replication.SampleInterval {
		st := se.conn.ConnectionStats()
		se.rtt, se.rttSampled = quicRTT(&st)
		se.observe(now, &st)
		if se.flow.Judge(now, se.rtt.Bound(), &se.srv.flow) {
			se.srv.m.flowHalved.Inc()
			se.log.Debug().Dur("rtt", se.rtt.Bound()).Float64("loss", se.flow.Loss()).Msg("flow control: halving the snapshot rate")
		}
	}
	rtt, sampled := se.rtt, se.rttSampled
	typ, err := protocol.DatagramType(d)
	if err != nil {
		return reasonOf(err)
	}
	switch typ {
	case protocol.DatagramInput:
	case protocol.DatagramPathResponse:
		// The sealed channel takes the well-formed ones itself; on QUIC
		// DATAGRAMs there is nothing to answer.
		if _, _, err := protocol.DecodePath(d); err != nil {
			return reasonOf(err)
		}
		return protocolDrop(protocol.ReasonType)
	default:
		return dropWrongType
	}
	se.srv.m.dgIn.Inc()
	dropped, err := se.inputs.Put(func(p *replication.Packet) error {
		if err := protocol.DecodeInputPacket(d, &p.Input); err != nil {
			return err
		}
		se.flow.Received(p.Input.Newest)
		p.Arrival = replication.Arrival{At: now, QUIC: rtt, QUICSampled: sampled, Halved: se.flow.Halved()}
		return nil
	})
	switch {
	case err != nil:
		return reasonOf(err)
	case dropped:
		return dropInbox
	}
	return dropNone
}

// observe records the share of the server's packets to the client that
// QUIC declared lost since the last sample. (The room records the round
// trip, which it measures.)
func (se *session) observe(now time.Time, st *quic.ConnectionStats) {
	if sent := st.PacketsSent - se.sent; st.PacketsSent > se.sent {
		lost := st.PacketsLost - min(se.lost, st.PacketsLost)
		se.srv.m.clientLoss.Observe(min(float64(lost)/float64(sent), 1))
	}
	se.sampled, se.sent, se.lost = now, st.PacketsSent, st.PacketsLost
}

// reasonOf is the drop reason of a datagram that did not decode.
func reasonOf(err error) dropReason {
	var de *protocol.DecodeError
	if errors.As(err, &de) {
		return protocolDrop(de.Reason)
	}
	return dropUnknown
}

// send writes the snapshots the room encoded and returns their buffers.
func (se *session) send() {
	defer se.srv.wg.Done()
	for {
		select {
		case <-se.done:
			return
		case b := <-se.queue.Out():
			err := se.conn.SendDatagram(b) // copies b
			se.queue.Return(b)
			if err != nil && se.conn.Context().Err() != nil {
				return
			}
		}
	}
}

// writeEvents writes the room's events to the control stream.
func (se *session) writeEvents(stream *quic.Stream) {
	defer se.srv.wg.Done()
	var payload, frames []byte
	for {
		select {
		case <-se.done:
			return
		case ev := <-se.ctrl:
			// The events queued since the last write (a room queues a tick's
			// at once) go in one write: one QUIC packet, one acknowledgement.
			frames = frames[:0]
			for more := true; more; {
				payload = protocol.AppendEvent(payload[:0], &ev)
				var err error
				if frames, err = protocol.AppendFrame(frames, protocol.MsgEvent, payload); err != nil {
					return
				}
				select {
				case ev = <-se.ctrl:
				default:
					more = false
				}
			}
			if _, err := stream.Write(frames); err != nil {
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

// queueEvent hands an event to the control writer; it never blocks.
func (se *session) queueEvent(ev protocol.Event) bool {
	select {
	case se.ctrl <- ev:
		return true
	default:
		return false
	}
}

// chooseChannel picks the datagram channel of a join that offers channels:
// sealed when the server and the client both can, else QUIC DATAGRAMs.
func (s *Server) chooseChannel(offered uint8) (sealed bool, rej *protocol.Reject) {
	switch {
	case s.demux != nil && offered&protocol.ChannelSealed != 0:
		return true, nil
	case offered&protocol.ChannelQUIC != 0:
		return false, nil
	}
	return false, &protocol.Reject{Code: protocol.RejectBadJoin,
		Reason: fmt.Sprintf("channels: %#x offers no channel this server speaks (datagrams.channel = %q)", offered, s.cfg.Datagrams.Channel)}
}
