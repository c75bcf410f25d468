package loadgen

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/rewind-gg/rewind/channel"
	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/protocol"
)

// client is one light client.
type client struct {
	f    *Fleet
	id   uint32 // the session id (Rewind) or the fleet's own id (floors)
	rng  *rand.Rand
	buf  []byte
	rate int // packets a second: the floor's, or the Welcome's tick rate

	// Rewind
	conn      *quic.Conn
	sealer    *channel.Sealer // the send loop's
	welcomeAt time.Time
	startTick uint32
	lag       uint16 // the view lag claimed, 1/256 tick
	loadout   []uint8

	mu       sync.Mutex // the receivers': opener, header, payload
	opener   *channel.Opener
	header   protocol.SnapshotHeader
	payload  []byte
	snapTick atomic.Uint32
	snapAt   atomic.Int64 // unix nanoseconds
	inputAck atomic.Uint32
	haveSnap atomic.Bool
	// challenge is the path challenge to answer with the next input
	// (guarded by mu): the fleet's socket is a new address to the server,
	// which sends snapshots there once the client answers from it.
	challenge    protocol.PathData
	challenged   bool
	pathResponse []byte // the send loop's

	// The send loop's script state.
	newest uint32 // the newest input tick sent, 0: none
	inputs [64]protocol.Input
	pkt    protocol.InputPacket
	script protocol.Input
	shots  uint16
}

// join connects and joins room as the i-th player, on the sealed channel.
func (c *client) join(ctx context.Context, room string, i int) error {
	f := c.f
	conn, err := f.tr.Dial(ctx, f.raddr, f.tls, &quic.Config{EnableDatagrams: true, MaxIdleTimeout: 10 * time.Second, KeepAlivePeriod: f.cfg.KeepAlive})
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	fail := func(err error) error {
		conn.CloseWithError(0, "join failed")
		return err
	}
	stream, err := conn.OpenStreamSync(ctx)
	if err != nil {
		return fail(fmt.Errorf("control stream: %w", err))
	}
	j := protocol.Join{Version: protocol.Version, Room: room, Name: fmt.Sprintf("%s-%d", room, i), Team: uint8(1 + i%2),
		InterpDelay: uint16(f.cfg.InterpDelay.Milliseconds()), Channels: protocol.ChannelSealed}
	if n := len(f.cfg.Classes); n > 0 {
		j.Class = f.cfg.Classes[i%n]
	}
	if _, err := protocol.WriteFrame(stream, nil, protocol.MsgJoin, protocol.AppendJoin(nil, &j)); err != nil {
		return fail(fmt.Errorf("join: %w", err))
	}
	if dl, ok := ctx.Deadline(); ok {
		stream.SetReadDeadline(dl)
	}
	typ, payload, _, err := protocol.ReadFrame(stream, nil)
	if err != nil {
		return fail(fmt.Errorf("join: %w", err))
	}
	stream.SetReadDeadline(time.Time{})
	if typ != protocol.MsgWelcome {
		rj, _ := protocol.DecodeReject(payload)
		return fail(fmt.Errorf("join refused: %s", rj.Reason))
	}
	w, err := protocol.DecodeWelcome(payload)
	if err != nil {
		return fail(fmt.Errorf("welcome: %w", err))
	}
	if w.Channel != protocol.ChannelSealed {
		return fail(fmt.Errorf("welcome: channel %d, not sealed", w.Channel))
	}
	if w.TickRate < 1 || w.TickRate > 1000 {
		return fail(fmt.Errorf("welcome: tick rate %d, outside 1..1000", w.TickRate))
	}
	if len(w.Loadout) == 0 {
		return fail(fmt.Errorf("welcome: an empty loadout"))
	}
	cs := conn.ConnectionState().TLS
	up, down, err := channel.Keys(&cs, w.Session)
	if err == nil {
		c.sealer, err = channel.NewSealer(up, w.Session)
	}
	if err == nil {
		c.opener, err = channel.NewOpener(down, w.Session)
	}
	if err != nil {
		return fail(err)
	}
	c.conn, c.id, c.welcomeAt, c.startTick = conn, w.Session, time.Now(), w.ServerTick
	c.rate, c.loadout = int(w.TickRate), w.Loadout
	c.script.Weapon = w.Loadout[c.rng.IntN(len(w.Loadout))]
	c.payload = make([]byte, 0, channel.MaxPacket)
	// The view lag an honest client on loopback claims: its interpolation
	// delay and a tick.
	c.lag = uint16(min((float64(w.InterpDelay)/1000*float64(w.TickRate)+1)*protocol.LagScale, math.MaxUint16))
	f.byID.Store(c.id, c)
	go func() {
		discard(stream)
		<-conn.Context().Done()
		f.gone.Add(1)
	}()
	return nil
}

// snapshot opens a snapshot and keeps its header's clock and
// acknowledgements, or a Close and leaves; false: it did not open or decode.
func (c *client) snapshot(p []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out, _, _, err := c.opener.Open(c.payload[:0], p)
	if err != nil {
		return false
	}
	if len(out) >= 2 && out[1] == protocol.DatagramPathChallenge {
		typ, data, err := protocol.DecodePath(out)
		if err != nil || typ != protocol.DatagramPathChallenge {
			return false
		}
		c.challenge, c.challenged = data, true
		return true
	}
	if len(out) >= 2 && out[1] == protocol.DatagramClose {
		// The server closes the connection (its CONNECTION_CLOSE may be
		// lost): leave, as the SDK does.
		if _, err := protocol.DecodeClose(out); err != nil {
			return false
		}
		go c.conn.CloseWithError(protocol.CloseNormal, "closed by the server")
		return true
	}
	if err := protocol.DecodeSnapshotHeader(out, &c.header); err != nil {
		return false
	}
	if !c.haveSnap.Load() || c.header.Tick > c.snapTick.Load() {
		c.snapTick.Store(c.header.Tick)
		c.snapAt.Store(time.Now().UnixNano())
		c.haveSnap.Store(true)
	}
	c.inputAck.Store(c.header.InputAck)
	c.f.snaps.Add(1)
	return true
}

// lead is how many ticks ahead of the server's estimated tick a client's
// newest input is: on loopback the inputs arrive a tick or more early.
const lead = 2

func (c *client) send(now time.Time, b *batch) {
	switch c.f.cfg.Mode {
	case Rewind:
		c.sendInput(now, b)
	case FloorUDP:
		p := c.floorPacket(b.next())
		b.add(p, c.f.raddr)
	case FloorQUIC:
		if c.conn.SendDatagram(c.floorPacket(c.buf[:0])) == nil {
			c.f.sent.Add(1)
			c.f.sentBytes.Add(uint64(c.f.cfg.Size))
		}
	}
}

// floorPacket is a floor client's packet: its id, then zeros to Size.
func (c *client) floorPacket(p []byte) []byte {
	p = binary.BigEndian.AppendUint32(p, c.id)
	for len(p) < c.f.cfg.Size {
		p = append(p, 0)
	}
	return p
}

// sendInput sends the inputs the server has not acknowledged, the newest
// for the tick the client estimates the server will simulate lead ticks
// from now.
func (c *client) sendInput(now time.Time, b *batch) {
	period := time.Second / time.Duration(c.rate)
	var est uint32
	if c.haveSnap.Load() {
		est = c.snapTick.Load() + 1 + uint32((now.UnixNano()-c.snapAt.Load())/int64(period))
	} else {
		est = c.startTick + uint32(now.Sub(c.welcomeAt)/period)
	}
	newest := max(est+lead, c.newest+1)
	if c.newest != 0 && newest > est+lead+4 {
		newest = c.newest // running ahead: send the same again
	}
	if c.newest == 0 {
		c.newest = newest - 1
	}
	for t := c.newest + 1; t <= newest; t++ {
		c.inputs[t%uint32(len(c.inputs))] = c.next()
	}
	c.newest = newest
	from := newest - protocol.MaxInputs + 1
	if newest < protocol.MaxInputs {
		from = 0
	}
	if a := c.inputAck.Load(); a != protocol.NoTick && c.haveSnap.Load() && a+1 > from {
		from = a + 1
	}
	from = max(from, newest-uint32(len(c.inputs))+1)
	if from > newest {
		from = newest
	}
	c.pkt.Newest, c.pkt.Count = newest, int(newest-from+1)
	c.pkt.SnapshotAck = protocol.NoTick
	if c.haveSnap.Load() {
		c.pkt.SnapshotAck = c.snapTick.Load()
	}
	for i := range c.pkt.Count {
		c.pkt.Inputs[i] = c.inputs[(from+uint32(i))%uint32(len(c.inputs))]
	}
	c.mu.Lock()
	challenged, data := c.challenged, c.challenge
	c.challenged = false
	c.mu.Unlock()
	if challenged {
		c.pathResponse = protocol.AppendPathResponse(c.pathResponse[:0], data)
		b.add(c.sealer.Seal(b.next(), c.pathResponse), c.f.raddr)
	}
	c.buf = protocol.AppendInputPacket(c.buf[:0], &c.pkt)
	p := c.sealer.Seal(b.next(), c.buf)
	b.add(p, c.f.raddr)
}

// next is the script's next input, the same in seconds at every tick rate:
// runs in a direction for about a second, turns, fires in bursts (about
// half a second on, half off), and takes another weapon of its loadout
// about every 3 seconds.
func (c *client) next() protocol.Input {
	s := &c.script
	if c.rng.IntN(c.rate) == 0 {
		s.MoveX, s.MoveZ = int8(c.rng.IntN(255)-127), int8(c.rng.IntN(255)-127)
	}
	s.Yaw += uint16(c.rng.IntN(2049) - 1024)
	s.Pitch = int16(c.rng.IntN(2001) - 1000)
	if c.rng.IntN(max(1, c.rate/2)) == 0 {
		s.Buttons ^= ecs.ButtonFire
	}
	if len(c.loadout) > 1 && c.rng.IntN(3*c.rate) == 0 {
		s.Weapon = c.loadout[c.rng.IntN(len(c.loadout))]
	}
	if s.Buttons&ecs.ButtonFire != 0 {
		c.shots++
	}
	s.Shot, s.ViewLag = c.shots, c.lag
	return *s
}

// dialEcho connects a floor client to an EchoQUIC server and reads its
// replies.
func (c *client) dialEcho(ctx context.Context) error {
	f := c.f
	conn, err := f.tr.Dial(ctx, f.raddr, f.tls, &quic.Config{EnableDatagrams: true, MaxIdleTimeout: 10 * time.Second})
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	c.conn = conn
	go func() {
		for {
			d, err := conn.ReceiveDatagram(context.Background())
			if err != nil {
				f.gone.Add(1)
				return
			}
			f.recv.Add(1)
			f.recvBytes.Add(uint64(len(d)))
		}
	}()
	return nil
}
