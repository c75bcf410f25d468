package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/rewind-gg/rewind/arsenal"
	"github.com/rewind-gg/rewind/channel"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/input"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/protocol"
)

// Config configures a Client.
type Config struct {
	Addr string // the server, host:port
	// Token is the connect token the matchmaker handed out (its text form:
	// base64url, docs/tokens.md). It names the room, the player, its team
	// and class; a server in open development mode takes none.
	Token string
	// Room, Name, Team and Class: with a token, leave them empty (0) to take
	// the token's; anything else must equal it. Without a token (open
	// development mode), the room is created on demand and team 0 lets the
	// server choose.
	Room  string
	Name  string
	Team  uint8
	Class string
	// TLS verifies the server: nil verifies its certificate against the
	// system's roots for the host of Addr.
	TLS *tls.Config
	// ServerCertSHA256 pins the server's certificate instead: the SHA-256 of
	// its DER encoding, as the matchmaker hands it out with the token (and
	// rewind serve logs it). No CA is needed then.
	ServerCertSHA256 []byte
	// InsecureSkipVerify accepts any certificate the server shows:
	// development only, never against a server on another machine.
	InsecureSkipVerify bool
	// Input decides what the player does every tick.
	Input InputSource
	// Level is the level the client holds: a glTF file (.glb or .gltf), or
	// "arena" (or empty) for the built-in arena of the default config.
	// LevelData, when set, is that file's content instead, Level then its
	// name. Level holds it already loaded (LoadLevel), shared by the
	// clients of a process; the other two are then ignored. The client
	// refuses to play when the server plays another level (*LevelError).
	Level     string
	LevelData []byte
	Loaded    *Level
	// InterpDelay is the longest the client shows remote entities behind the
	// newest snapshot (default 250 ms, the server's default bound): it
	// declares it at the join, the server grants view lag for it, and the
	// client adapts its delay below it to the snapshots' jitter and loss.
	InterpDelay time.Duration
	// Redundancy is the most inputs one datagram carries (default and
	// maximum 32; 1 sends each input once). The client carries fewer when
	// the path shows a queue building (budget.go), so that a thin uplink
	// never fills with repeated inputs.
	Redundancy int
	// Lead is how many ticks ahead of the server the client starts
	// predicting, beyond a round trip (default 4). The join's estimate of
	// the server's tick is rough (one round-trip sample, the tick's phase,
	// a Welcome held up by a retransmission), and an input that comes too
	// late is lost: the clock starts generous and takes the lead down to
	// what the margins the server measures call for. (A negative lead
	// starts behind, as a Welcome held up on its way would.)
	Lead int
	// Channel is the datagram channel to offer: "" (the sealed channel, or
	// QUIC DATAGRAMs if the server only has those) or "quic" (QUIC DATAGRAMs
	// only).
	Channel string
	// OnEvent receives game events, on the goroutine that runs Run.
	OnEvent func(protocol.Event)
	// OnHitMarker receives each of the player's hits once, as soon as a
	// snapshot or the control stream confirms it, on the goroutine that
	// runs Run.
	OnHitMarker func(HitMarker)
	// OnShot receives each shot the player fires, as the client predicted
	// and showed it, on the goroutine that runs Run: what a client that
	// scores its own shots needs (package bots' Tally does).
	OnShot func(Shot)
	// Log receives the client's diagnostics (nil: none). A program that logs
	// with zerolog passes slog.New(zerolog.NewSlogHandler(logger)).
	Log *slog.Logger
}

// InputSource decides a player's input for a tick, seeing what the client
// shows at that tick.
type InputSource interface {
	Intent(v *View) Intent
}

// HoldFire wraps an InputSource and cancels its firing while Hold is set:
// stop shooting a little before leaving, and every hit event of the shots
// fired arrives before the connection closes.
type HoldFire struct {
	Source InputSource
	Hold   *atomic.Bool
}

// Intent is Source's intent, without firing while Hold is set.
func (h HoldFire) Intent(v *View) Intent {
	in := h.Source.Intent(v)
	if h.Hold.Load() {
		in.Fire = false
	}
	return in
}

// Intent is what a player does for one tick.
type Intent struct {
	MoveX, MoveZ float64 // strafe right and forward, each in [−1, 1]
	Yaw, Pitch   float64 // aim, radians
	Fire         bool
	Reload       bool
	Weapon       uint8 // a weapon id of the Welcome's loadout
	// Jump, Crouch and Sprint are held buttons (movement.Input): a jump
	// needs Jump down after a tick with it up; crouched while Crouch is
	// down; Sprint runs faster with the stick forward, standing.
	Jump, Crouch, Sprint bool
}

// Movement returns the part of an input that moves the player, quantised
// as the wire carries it: the stick, the aim, the jump, crouch and sprint
// buttons.
func (in *Intent) Movement() protocol.Input {
	q := protocol.Input{MoveX: protocol.QuantizeAxis(in.MoveX), MoveZ: protocol.QuantizeAxis(in.MoveZ),
		Yaw: protocol.QuantizeYaw(in.Yaw), Pitch: protocol.QuantizePitch(in.Pitch)}
	for _, b := range [...]struct {
		held bool
		bit  uint8
	}{{in.Jump, input.ButtonJump}, {in.Crouch, input.ButtonCrouch}, {in.Sprint, input.ButtonSprint}} {
		if b.held {
			q.Buttons |= b.bit
		}
	}
	return q
}

// Shot is a shot the player fired, as the client predicted and showed it.
type Shot struct {
	ID         uint16 // the shot counter, which the server's events echo
	Tick       int64  // the tick it was fired at
	Weapon     uint8  // a weapon id of the Welcome
	Eye        geom.Vec3
	Yaw, Pitch float64 // the aim, as the server applies it
	// Seq is the shot's index in the player's spread sequence: with the
	// Welcome's spread seed, the directions of its pellets (package spread).
	Seq uint32
	// View is what the client showed when it fired; it is valid during the
	// call only.
	View *View
}

// HitMarker is a hit of the player's the server confirmed.
type HitMarker struct {
	protocol.HitConfirm
	// ViaSnapshot: a snapshot brought it before the control stream did.
	ViaSnapshot bool
}

// RejectError is a join the server refused.
type RejectError struct{ protocol.Reject }

func (e *RejectError) Error() string {
	return fmt.Sprintf("client: join rejected (%d): %s", e.Code, e.Reason)
}

// Client is a connected player.
type Client struct {
	cfg     Config
	conn    *quic.Conn
	tr      *quic.Transport
	udp     *net.UDPConn
	closing sync.Once
	// closedBy is the server's Close datagram, once one arrived.
	closedBy  atomic.Pointer[CloseError]
	done      chan struct{} // closed when the client leaves
	stream    *quic.Stream
	welcome   protocol.Welcome
	welcomeAt time.Time          // when the Welcome arrived: the server clock has run since
	joinRTT   time.Duration      // from the Join written to the Welcome read
	char      movement.Character // the player's class's, from the Welcome
	level     *Level
	dt        time.Duration

	dg        channel.Conn      // inputs and snapshots
	sealed    *channel.Endpoint // the sealed channel's, nil on QUIC DATAGRAMs
	datagrams chan arrival      // received, to the tick loop
	freeIn    chan []byte       // their buffers, back to the reader
	sendq     chan []byte       // input packets, to the sender
	freeOut   chan []byte       // their buffers, back to the tick loop
	events    chan protocol.Event

	// Prediction.
	tick       int64 // the next tick to predict
	firstTick  int64
	ring       [ringSize]frame
	state      movement.State // predicted, after the last tick predicted
	yaw, pitch float64        // the aim of the last tick predicted
	alive      bool
	health     float32
	offset     geom.Vec3   // display error being smoothed away
	ackedInput int64       // the newest input tick the server processed, −1: none
	budget     inputBudget // how many inputs a datagram carries (budget.go)
	marginSeen bool        // a snapshot brought a margin of the current clock: the settling jump ahead is over
	reconciled int64       // the InputAck of the last snapshot reconciled against
	shot       uint16
	arsenal    arsenal.Arsenal      // the loadout, under the server's rules (arsenal.Use); Fired: the spread sequence
	rules      []arsenal.Rules      // the rules of each weapon id, from the Welcome
	shots      [shotRing]shotRecord // recent shots, by shot id modulo shotRing

	// Snapshots and interpolation.
	states     [protocol.Baselines]protocol.State // decoded snapshots: baselines, and interpolated
	scratch    protocol.State
	newestSnap uint32
	haveSnap   bool
	renderTime float64 // the time remote entities are shown at, server ticks
	interp     float64 // the longest interpolation delay, ticks
	snapEvery  int64   // ticks between snapshots, at the Welcome's rate
	interval   int64   // ticks between snapshots at the rate in effect (the newest snapshot's interval)
	render     renderClock
	epoch      time.Time // local time 0 of the clocks

	// Clock.
	scale        float64 // tick interval multiplier: <1 runs faster
	clock        inputClock
	runSnapshots uint64 // snapshots received since Run began (settling)

	view    View
	sendBuf []byte

	mu         sync.Mutex // guards what other goroutines may read
	published  Stats
	prediction Prediction
	serverPos  geom.Vec3
	packet     protocol.InputPacket
	stats      Stats
	bytesIn    atomic.Uint64
}

// shotRecord is what the client remembers of a recent shot: when it was
// fired, and the targets of the hit markers shown for it.
type shotRecord struct {
	shot   uint16
	tick   int64
	view   float64 // the view time it claimed, in ticks
	marked [maxMarked]uint32
	valid  bool
}

// clampTolerance is how much later than its shot claimed (in ticks) the
// server may resolve a hit before the client counts the claim as cut: the
// server rounds view times to its view resolution, at most half a tick.
const clampTolerance = 0.5

// maxMarked is how many distinct targets one shot's hit markers are
// remembered for (a shotgun's pellets on several enemies).
const maxMarked = 8

// shotRing is how many recent shots are remembered for hit confirmation:
// far more than can be in flight in a round trip.
const shotRing = 256

// ringSize is the prediction ring: 51 s of ticks at 20 Hz (seed 001's 1024).
const ringSize = 1024

type frame struct {
	tick   int64
	q      protocol.Input // as sent
	in     input.Input    // as the server will apply it
	st     movement.State // the predicted state after it
	seq    uint32         // the shot's index in the spread sequence, when it fired
	shots  uint32         // shots fired through this tick, as predicted (the server's own count corrects it)
	offset float64        // the input clock's offset when the input was produced
	sent   float64        // local time it was first sent, ticks (inputBudget's samples)
}

// Dial connects to the server and joins the configured room.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.Input == nil {
		return nil, errors.New("client: Config.Input is required")
	}
	if cfg.InterpDelay == 0 {
		cfg.InterpDelay = 250 * time.Millisecond
	}
	if cfg.Channel != "" && cfg.Channel != "quic" {
		return nil, fmt.Errorf("client: Config.Channel: %q is neither \"\" (sealed) nor \"quic\"", cfg.Channel)
	}
	if cfg.Redundancy == 0 {
		cfg.Redundancy = protocol.MaxInputs
	}
	cfg.Redundancy = min(max(cfg.Redundancy, 1), protocol.MaxInputs)
	if cfg.Lead == 0 {
		cfg.Lead = 4
	}
	lvl := cfg.Loaded
	if lvl == nil {
		var err error
		if lvl, err = LoadLevel(cfg.Level, cfg.LevelData); err != nil {
			return nil, err
		}
	}
	tc, err := tlsConfig(&cfg)
	if err != nil {
		return nil, err
	}
	raddr, err := net.ResolveUDPAddr("udp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	// The client owns its socket and transport, so that leaving closes them
	// at once instead of after QUIC's closing period.
	udp, err := net.ListenUDP("udp", nil)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	tr := &quic.Transport{Conn: udp}
	// On the sealed channel the connection is otherwise quiet: the server
	// keeps it alive (a PING after a third of its idle timeout without a
	// packet), and the client's keep-alive is the fallback. Nothing else
	// needs them: the server measures the round trip from snapshots and
	// inputs, and sends its close on the sealed channel too.
	conn, err := tr.Dial(ctx, raddr, tc, &quic.Config{EnableDatagrams: true, MaxIdleTimeout: 10 * time.Second, KeepAlivePeriod: KeepAlive,
		DisablePathMTUDiscovery: true})
	if err != nil {
		tr.Close()
		udp.Close()
		return nil, fmt.Errorf("client: dial %s: %w", cfg.Addr, err)
	}
	c := &Client{cfg: cfg, conn: conn, tr: tr, udp: udp, done: make(chan struct{}),
		datagrams: make(chan arrival, inQueue), freeIn: make(chan []byte, inQueue+2),
		sendq: make(chan []byte, outBuffers), freeOut: make(chan []byte, outBuffers),
		events: make(chan protocol.Event, 256), ackedInput: -1, reconciled: -1, scale: 1, level: lvl,
		budget: newInputBudget(cfg.Redundancy)}
	// Until Run's first tick publishes, the clock has not started: it is
	// settling (a caller waiting for the end of settling must not take the
	// zero Stats for it).
	c.published.Settling = true
	for range inQueue + 2 {
		c.freeIn <- make([]byte, 0, protocol.MaxDatagram)
	}
	for range outBuffers {
		c.freeOut <- make([]byte, 0, protocol.MaxDatagram)
	}
	for i := range c.states {
		c.states[i].Tick = protocol.NoTick // no snapshot kept there yet
	}
	// quic-go queues non-QUIC packets only once they are read: start now,
	// so the sealed channel's first snapshots wait for the reader.
	done, cancel := context.WithCancel(ctx)
	cancel()
	tr.ReadNonQUICPacket(done, nil)
	if err := c.join(ctx); err != nil {
		c.leave("join failed")
		return nil, err
	}
	c.dg = channel.QUIC{Conn: conn}
	if c.welcome.Channel == protocol.ChannelSealed {
		cs := conn.ConnectionState().TLS
		if c.sealed, err = channel.NewEndpoint(tr, raddr, &cs, c.welcome.Session); err != nil {
			c.leave("no sealed channel")
			return nil, fmt.Errorf("client: %w", err)
		}
		c.dg = c.sealed
	}
	go c.readDatagrams()
	go c.readEvents()
	go c.sendDatagrams()
	return c, nil
}

// inQueue is how many received datagrams can wait for the tick loop, and
// outBuffers how many input packets can be with the sender.
const (
	inQueue    = 64
	outBuffers = 2
)

// tlsConfig is how the client checks the server: a pinned certificate hash,
// the caller's TLS configuration (system roots by default), or, explicitly,
// nothing.
func tlsConfig(cfg *Config) (*tls.Config, error) {
	var tc *tls.Config
	switch {
	case len(cfg.ServerCertSHA256) > 0:
		if len(cfg.ServerCertSHA256) != sha256.Size {
			return nil, fmt.Errorf("client: ServerCertSHA256: %d bytes, want %d", len(cfg.ServerCertSHA256), sha256.Size)
		}
		pin := slices.Clone(cfg.ServerCertSHA256)
		// The chain is not checked (a pinned certificate may be self-signed);
		// VerifyConnection still runs and compares the leaf with the pin.
		tc = &tls.Config{InsecureSkipVerify: true, VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("client: the server showed no certificate")
			}
			if sum := sha256.Sum256(cs.PeerCertificates[0].Raw); !bytes.Equal(sum[:], pin) {
				return fmt.Errorf("client: the server's certificate %x is not the pinned %x", sum, pin)
			}
			return nil
		}}
	case cfg.InsecureSkipVerify:
		tc = &tls.Config{InsecureSkipVerify: true}
	case cfg.TLS != nil:
		tc = cfg.TLS.Clone()
	default:
		tc = &tls.Config{}
	}
	tc.NextProtos = []string{protocol.ALPN}
	return tc, nil
}

func (c *Client) join(ctx context.Context) error {
	stream, err := c.conn.OpenStreamSync(ctx)
	if err != nil {
		return fmt.Errorf("client: control stream: %w", err)
	}
	c.stream = stream
	var tok []byte
	if c.cfg.Token != "" {
		if tok, err = base64.RawURLEncoding.DecodeString(c.cfg.Token); err != nil {
			return fmt.Errorf("client: Token: not base64url: %w", err)
		}
	}
	j := protocol.Join{Version: protocol.Version, Token: tok, Room: c.cfg.Room, Name: c.cfg.Name, Team: c.cfg.Team, Class: c.cfg.Class,
		InterpDelay: uint16(min(c.cfg.InterpDelay.Milliseconds(), math.MaxUint16)), Channels: protocol.ChannelQUIC}
	if c.cfg.Channel == "" {
		j.Channels |= protocol.ChannelSealed
	}
	sent := time.Now()
	if _, err := protocol.WriteFrame(stream, nil, protocol.MsgJoin, protocol.AppendJoin(nil, &j)); err != nil {
		return fmt.Errorf("client: join: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		stream.SetReadDeadline(dl)
	}
	typ, payload, _, err := protocol.ReadFrame(stream, nil)
	if err != nil {
		return fmt.Errorf("client: join: %w", err)
	}
	stream.SetReadDeadline(time.Time{})
	switch typ {
	case protocol.MsgReject:
		rj, err := protocol.DecodeReject(payload)
		if err != nil {
			return fmt.Errorf("client: join: %w", err)
		}
		return &RejectError{rj}
	case protocol.MsgWelcome:
	default:
		return fmt.Errorf("client: join: unexpected message type %d", typ)
	}
	w, err := protocol.DecodeWelcome(payload)
	if err != nil {
		return fmt.Errorf("client: welcome: %w", err)
	}
	if w.Version != protocol.Version {
		return fmt.Errorf("client: server speaks protocol version %d", w.Version)
	}
	if w.Channel&j.Channels == 0 || (w.Channel != protocol.ChannelQUIC && w.Channel != protocol.ChannelSealed) {
		return fmt.Errorf("client: welcome: channel %d was not offered", w.Channel)
	}
	if level.Digest(w.LevelDigest) != c.level.Digest {
		return &LevelError{Server: w.Level, ServerDigest: w.LevelDigest, Client: c.level.Level.Name, ClientDigest: c.level.Digest}
	}
	c.welcome, c.welcomeAt = w, time.Now()
	c.joinRTT = c.welcomeAt.Sub(sent)
	c.dt = time.Second / time.Duration(w.TickRate)
	if c.char, err = CharacterOf(&w); err != nil {
		return fmt.Errorf("client: welcome: %w", err)
	}
	c.state = movement.State{Pos: geom.FromArray(w.Spawn)}
	c.yaw = protocol.YawValue(w.SpawnYaw)
	c.alive = true
	for _, wi := range w.Weapons {
		c.rules = append(c.rules, arsenal.Rules{FireInterval: int(wi.FireInterval), Magazine: int(wi.Magazine), ReloadTicks: int(wi.ReloadTicks)})
	}
	ids := make([]uint16, len(w.Loadout))
	for i, id := range w.Loadout {
		ids[i] = uint16(id)
	}
	c.arsenal = arsenal.Arm(ids, c.magazine)
	// The server grants view lag for at most the delay it accepted: render
	// no further back, or shots would be resolved later than they were seen.
	c.interp = float64(min(c.cfg.InterpDelay.Milliseconds(), int64(w.InterpDelay))) / 1000 * float64(w.TickRate)
	c.snapEvery = 1
	if w.SnapshotRate > 0 && w.TickRate >= w.SnapshotRate {
		c.snapEvery = int64(w.TickRate / w.SnapshotRate)
	}
	c.interval = c.snapEvery // until a snapshot says otherwise
	c.render.min, c.render.max = float64(c.snapEvery), max(c.interp, float64(c.snapEvery))
	return nil
}

// Welcome returns what the server said at the join.
func (c *Client) Welcome() protocol.Welcome { return c.welcome }

// CharacterOf returns the character a Welcome says its player moves as:
// its class's movement and the match's capsule. An error names the value
// out of range (movement.Character.Validate).
func CharacterOf(w *protocol.Welcome) (movement.Character, error) {
	m := &w.Movement
	c := movement.Character{RunSpeed: m.RunSpeed, SprintSpeed: m.SprintSpeed, CrouchSpeed: m.CrouchSpeed,
		GroundAccel: m.GroundAccel, AirAccel: m.AirAccel, AirWishSpeed: m.AirWishSpeed, Friction: m.Friction,
		StopSpeed: m.StopSpeed, Gravity: m.Gravity, JumpHeight: m.JumpHeight, StepHeight: m.StepHeight,
		MaxSlope: m.MaxSlope, Radius: w.Radius, Height: w.Height, CrouchHeight: w.CrouchHeight,
		EyeHeight: w.EyeHeight, CrouchEyeHeight: w.CrouchEyeHeight, Skin: m.Skin}
	return c, c.Validate()
}

// Character returns the character the player moves as (CharacterOf its
// Welcome).
func (c *Client) Character() movement.Character { return c.char }

// ID returns the player's entity id.
func (c *Client) ID() uint32 { return c.welcome.Player }

// readDatagrams hands the datagrams received to the tick loop, in buffers
// it returns; when the tick loop is behind, the oldest give way (the newest
// snapshots matter more).
func (c *Client) readDatagrams() {
	ctx := c.conn.Context()
	for {
		d, err := c.dg.Receive(ctx)
		if err != nil {
			close(c.datagrams)
			return
		}
		c.bytesIn.Add(uint64(len(d)))
		if len(d) >= 2 && d[1] == protocol.DatagramClose {
			// The server closes the connection; its CONNECTION_CLOSE,
			// which says the same, may be lost.
			if cl, err := protocol.DecodeClose(d); err == nil && c.closedBy.CompareAndSwap(nil, &CloseError{Code: uint64(cl.Code), Reason: cl.Reason}) {
				c.conn.CloseWithError(protocol.CloseNormal, "closed by the server")
			}
			continue
		}
		at := time.Now()
		var buf []byte
		select {
		case buf = <-c.freeIn:
		default:
			buf = (<-c.datagrams).b // all the others are queued: there is one
		}
		c.datagrams <- arrival{append(buf[:0], d...), at} // there is room: this buffer's
	}
}

// arrival is a datagram received, and when.
type arrival struct {
	b  []byte
	at time.Time
}

// sendDatagrams sends the input packets the tick loop queues, so that the
// tick loop never waits for the network.
func (c *Client) sendDatagrams() {
	for {
		select {
		case <-c.done:
			return
		case b := <-c.sendq:
			c.dg.Send(b)
			c.freeOut <- b
		}
	}
}

func (c *Client) readEvents() {
	var buf []byte
	for {
		typ, payload, b, err := protocol.ReadFrame(c.stream, buf)
		buf = b
		if err != nil {
			close(c.events)
			return
		}
		if typ != protocol.MsgEvent {
			continue
		}
		if ev, err := protocol.DecodeEvent(payload); err == nil {
			select {
			case c.events <- ev:
			case <-c.done: // nobody will read it any more
				return
			}
		}
	}
}

// KeepAlive is how long a client's connection waits without a packet before
// it sends a QUIC PING: half the idle timeout, quic-go's ceiling; the
// server's keep-alive comes first (docs/protocol.md). Each PING costs the
// server a QUIC packet and an acknowledgement, and buys nothing on the
// sealed channel.
const KeepAlive = 5 * time.Second

// CloseError is why the server closed the connection.
type CloseError struct {
	Code   uint64
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("client: connection closed by the server (%d): %s", e.Code, e.Reason)
}

// roundTrip is the round trip the input clock starts from: quic-go's
// smoothed estimate once it has taken a sample. Until then quic-go reports
// its default of 100 ms (with no deviation), and on a lossy path the
// handshake and the join can end without a sample: every packet whose
// acknowledgement would have given one lost. At an 850 ms round trip that
// default started the clock 15 ticks short, and every input of the first
// second came too late. The join's own round trip (the Join written to the
// Welcome read) is then the estimate: never short, and long only by the
// server's wait for its next tick and any retransmission.
func (c *Client) roundTrip() time.Duration {
	if st := c.conn.ConnectionStats(); st.MeanDeviation > 0 {
		return st.SmoothedRTT
	}
	return c.joinRTT
}

// pathRTT is the round trip the input clock starts from and settles by: the
// smallest quic-go has seen once it has a sample (else the join's, as in
// roundTrip). A queue at a thin uplink inflates the smoothed estimate (the
// handshake's padded packets take a third of a second each at 32 kbit/s),
// and on the sealed channel QUIC carries too little to sample it down
// again: a clock started from it ran a second ahead and claimed a second
// more view lag than it needed. One started a little short costs little:
// inputs that come late still run (systems.InputLate), and the margins
// the server measures put the clock right within the first second.
func (c *Client) pathRTT() time.Duration {
	if st := c.conn.ConnectionStats(); st.MeanDeviation > 0 && st.MinRTT > 0 {
		return st.MinRTT
	}
	return c.joinRTT
}

// Run plays until ctx ends (then it leaves and returns nil) or the server
// closes the connection (then it returns a *CloseError or the network error).
func (c *Client) Run(ctx context.Context) error {
	// The server is at its Welcome tick plus the time since (Run may start
	// well after Dial); an input sent now arrives half a round trip later,
	// and the Welcome left half a round trip before it arrived.
	rate := float64(c.welcome.TickRate)
	c.epoch = time.Now()
	since := c.epoch.Sub(c.welcomeAt).Seconds() * rate
	c.tick = max(int64(c.welcome.ServerTick)+int64(math.Ceil(since+c.pathRTT().Seconds()*rate))+int64(c.cfg.Lead), 0)
	c.firstTick = c.tick
	for i := range c.ring {
		c.ring[i].tick = -1 // never predicted
	}
	// Until a snapshot arrives: the Welcome's tick, aged.
	c.renderTime = float64(c.welcome.ServerTick) + since - c.interp
	next := c.epoch
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			c.leave("bye")
			return nil
		case <-c.conn.Context().Done():
			err := c.closeReason()
			c.leave("")
			return err
		case <-timer.C:
		}
		c.step()
		next = next.Add(time.Duration(float64(c.dt) * c.scale))
		if now := time.Now(); now.Sub(next) > 5*c.dt {
			next = now // too far behind: do not replay a burst of ticks
		}
		timer.Reset(time.Until(next))
	}
}

func (c *Client) closeReason() error {
	if ce := c.closedBy.Load(); ce != nil {
		return ce
	}
	err := context.Cause(c.conn.Context())
	var ae *quic.ApplicationError
	if errors.As(err, &ae) {
		return &CloseError{Code: uint64(ae.ErrorCode), Reason: ae.ErrorMessage}
	}
	return err
}

// Close leaves the room. It may be called more than once, and after Run.
func (c *Client) Close() error {
	c.leave("bye")
	return nil
}

// leave closes the connection (telling the server why), the transport and
// the socket; once.
func (c *Client) leave(reason string) {
	c.closing.Do(func() {
		close(c.done)
		if c.cfg.Log != nil && c.sealed != nil {
			c.cfg.Log.Debug("sealed packets dropped", "auth", c.sealed.Dropped(channel.ReasonAuth), "replay", c.sealed.Dropped(channel.ReasonReplay))
		}
		c.conn.CloseWithError(protocol.CloseNormal, reason)
		c.tr.Close()
		c.udp.Close()
	})
}

// step is one client tick.
func (c *Client) step() {
	c.drainSnapshots()
	c.drainEvents()
	c.advanceRender()
	c.buildView()
	intent := c.cfg.Input.Intent(&c.view)
	f := &c.ring[c.tick%ringSize]
	*f = frame{tick: c.tick}
	f.q = intent.Movement()
	f.q.Weapon = intent.Weapon
	f.q.ViewLag = protocol.QuantizeLag(float64(c.tick) - c.view.RenderTime) // the time shown
	if c.alive && int(intent.Weapon) < len(c.rules) {
		def := &c.rules[intent.Weapon]
		if intent.Reload {
			arsenal.Reload(&c.arsenal, uint16(intent.Weapon), *def, c.tick)
			f.q.Buttons |= input.ButtonReload
		}
		// The server's own rules: a shot it would refuse is not sent.
		seq := c.arsenal.Fired
		if intent.Fire && arsenal.Use(&c.arsenal, uint16(intent.Weapon), *def, c.tick) == 0 {
			c.shot++
			f.q.Buttons |= input.ButtonFire
			f.q.Shot = c.shot
			f.seq = seq
		}
	}
	f.shots = c.arsenal.Fired
	f.offset = c.clock.offset
	f.in = f.q.Value(c.tick)
	if c.alive {
		c.yaw, c.pitch = movement.Look(f.in.Yaw, f.in.Pitch)
		movement.Move(&c.char, &c.state, f.in.Movement(), c.dt.Seconds(), c.level.Mesh, level.MovementMask)
	}
	f.st = c.state
	if f.q.Buttons&input.ButtonFire != 0 {
		c.fired(f)
	}
	c.sendInputs()
	c.offset = c.offset.Scale(0.9)
	c.clock.tick(c.scale)
	c.stats.Ticks++
	c.stats.Interp = time.Duration(c.render.interp() * float64(c.dt))
	c.stats.Settling = c.settling()
	c.stats.InputBudget, c.stats.BudgetCuts = c.budget.inputs(), c.budget.cuts
	c.mu.Lock()
	c.published = c.stats
	c.prediction = Prediction{Tick: c.tick, Pos: c.state.Pos, State: c.state, Acked: c.ackedInput, Server: c.serverPos}
	c.mu.Unlock()
	c.tick++
}

// sendInputs sends every input the server has not acknowledged, newest last,
// as many as the input budget allows (budget.go: at most Redundancy).
func (c *Client) sendInputs() {
	from := max(c.ackedInput+1, c.tick-int64(c.budget.inputs())+1, c.firstTick)
	c.ring[c.tick%ringSize].sent = c.local()
	p := &c.packet
	p.Newest = uint32(c.tick)
	p.Count = int(c.tick - from + 1)
	p.SnapshotAck = protocol.NoTick
	if c.haveSnap {
		p.SnapshotAck = c.newestSnap
	}
	for i := range p.Count {
		p.Inputs[i] = c.ring[(from+int64(i))%ringSize].q
	}
	var buf []byte
	select {
	case buf = <-c.freeOut:
	default:
		// The sender still has both: the one waiting is superseded (this
		// packet repeats its inputs).
		select {
		case buf = <-c.sendq:
			c.stats.SendsSuperseded++
		case buf = <-c.freeOut:
		}
	}
	buf = protocol.AppendInputPacket(buf[:0], p)
	c.sendq <- buf // there is room: this buffer's
	c.stats.DatagramsSent++
	c.stats.BytesOut += uint64(len(buf))
}

func (c *Client) drainEvents() {
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				c.events = nil
				return
			}
			c.onEvent(ev)
		default:
			return
		}
	}
}

func (c *Client) onEvent(ev protocol.Event) {
	switch ev.Kind {
	case protocol.EventHit, protocol.EventNoDamage:
		if ev.Player == c.welcome.Player {
			if ev.Kind == protocol.EventHit {
				c.stats.HitsConfirmed++
			} else {
				c.stats.NoDamage++
			}
			if r := &c.shots[ev.Shot%shotRing]; r.valid && r.shot == ev.Shot &&
				float64(ev.ViewTick)+float64(ev.ViewFrac)/65536 > r.view+clampTolerance {
				c.stats.HitsClamped++
			}
			hc := protocol.HitConfirm{Tick: ev.Tick, Target: ev.Other, Shot: ev.Shot, Flags: ev.Flags, Damage: ev.Damage}
			if ev.Kind == protocol.EventNoDamage {
				hc.Reason = ev.Reason
			}
			c.marker(&hc, false)
		}
	case protocol.EventRespawn:
		if ev.Player == c.welcome.Player {
			c.yaw, c.pitch = protocol.YawValue(ev.Yaw), 0 // facing the way the spawn does
		}
	case protocol.EventKill:
		if ev.Player == c.welcome.Player && ev.Other != ev.Player {
			c.stats.Kills++
		}
		if ev.Other == c.welcome.Player {
			c.stats.Deaths++
		}
	}
	if c.cfg.OnEvent != nil {
		c.cfg.OnEvent(ev)
	}
}

// marker shows a hit of the player's once, whichever of a snapshot and the
// control stream confirms it first, and counts it: one hit marker per shot
// and target.
func (c *Client) marker(hc *protocol.HitConfirm, viaSnapshot bool) {
	r := &c.shots[hc.Shot%shotRing]
	if !r.valid || r.shot != hc.Shot {
		return // a shot from before the join, or long gone
	}
	if hc.Target == 0 || slices.Contains(r.marked[:], hc.Target) {
		return
	}
	if i := slices.Index(r.marked[:], 0); i >= 0 {
		r.marked[i] = hc.Target
	}
	if viaSnapshot {
		c.stats.MarkersFromSnapshots++
	} else {
		c.stats.MarkersFromEvents++
	}
	c.stats.MarkerDelayTicks += uint64(max(c.tick-r.tick, 0))
	if c.cfg.OnHitMarker != nil {
		c.cfg.OnHitMarker(HitMarker{HitConfirm: *hc, ViaSnapshot: viaSnapshot})
	}
}

// magazine returns weapon id's magazine size, from the Welcome.
func (c *Client) magazine(weapon uint16) int { return c.rules[weapon].Magazine }
