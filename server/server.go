package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rewind-gg/rewind/channel"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/quic-go/quic-go"
	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/internal/buildinfo"
	"github.com/rewind-gg/rewind/limits"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/replication"
	"github.com/rewind-gg/rewind/results"
	"github.com/rewind-gg/rewind/token"
	"github.com/rewind-gg/rewind/weapons"
)

// Server hosts rooms over QUIC.
type Server struct {
	cfg       Config
	log       zerolog.Logger
	rejectLog zerolog.Logger // rejected joins: sampled, an attacker cannot flood the log
	m         *metrics
	tls       *tls.Config
	certSum   []byte // SHA-256 of the certificate, for clients to pin
	weapons   *weapons.File
	catalog   *weapons.Catalog
	level     *playedLevel     // loaded once; every room shares its mesh
	welcome   protocol.Welcome // the parts every room's welcomes share
	verifier  *token.Verifier  // nil: open development mode
	limiter   *limits.Limiter
	results   *results.Writer // nil: results are only logged
	agones    *agonesHost     // nil: not under Agones

	udp   *net.UDPConn
	tr    *quic.Transport
	demux *channel.Demux // the sealed channel's, nil with datagrams.channel = quic
	// demuxDone is closed when the Demux stops reading (the socket closed).
	demuxDone chan struct{}
	writer    *channel.Writer        // writes the rooms' sealed snapshots, nil with datagrams.channel = quic
	flow      replication.FlowConfig // datagrams.bad_loss, bad_rtt, recover
	ln        *quic.Listener
	admin     *httpListener
	pprof     *httpListener
	started   atomic.Bool

	mu       sync.Mutex
	rooms    map[string]*room
	ended    map[string]time.Time // rooms closed lately, by id: a token cannot reopen a match that ended
	sessions map[*session]struct{}
	closing  bool
	draining atomic.Bool

	viewMu sync.Mutex
	views  map[string]*liveView // the admin port's live views, by recording

	stopping     chan struct{} // closed when the server asks to be stopped (Agones)
	stoppingOnce sync.Once

	ctx    context.Context // cancelled at shutdown: stops accepting and joining
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the server started
}

// flowConfig is flow control's part of the datagrams settings.
func flowConfig(c *DatagramsConfig) replication.FlowConfig {
	return replication.FlowConfig{BadLoss: c.BadLoss, BadRTT: c.BadRTT, Recover: c.Recover}
}

// sealer returns a new room's writer of sealed snapshots: nil with
// datagrams.channel = quic.
func (s *Server) sealer() *replication.Sealer {
	if s.writer == nil {
		return nil
	}
	return replication.NewSealer(s.writer, func(n int) {
		for range n {
			s.m.drop(dropSendFailed)
		}
	})
}

// New checks the configuration and prepares a server: the TLS certificate,
// the weapons, the level (read, checked and its mesh built once, for every
// room), the matchmaker's keys, the results file and the Agones client.
// Start runs it.
func New(cfg Config, log zerolog.Logger) (*Server, error) {
	ld, err := load(&cfg, log)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, m: newMetrics(buildinfo.Read()), tls: ld.tls, certSum: certSHA256(ld.tls), weapons: ld.weapons,
		catalog: ld.catalog, level: ld.level, limiter: ld.limiter, verifier: ld.verifier, rooms: map[string]*room{}, ended: map[string]time.Time{},
		sessions: map[*session]struct{}{}, stopping: make(chan struct{}), flow: flowConfig(&cfg.Datagrams)}
	s.rejectLog = log.Sample(&zerolog.BurstSampler{Burst: 20, Period: time.Second})
	s.welcome = welcomeTemplate(&cfg, ld.catalog, ld.level)
	if s.agones, err = newAgonesHost(s, &cfg.Agones); err != nil {
		return nil, err
	}
	if err := recordDir(cfg.Record.Dir); err != nil {
		return nil, fmt.Errorf("config: record.dir: %w", err)
	}
	// Last: nothing after it can fail and leave the file open.
	if cfg.Results.File != "" {
		if s.results, err = results.Open(cfg.Results.File); err != nil {
			return nil, fmt.Errorf("config: results.file: %w", err)
		}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// loaded is what New reads and checks from the configuration before it
// opens anything.
type loaded struct {
	tls      *tls.Config
	weapons  *weapons.File
	catalog  *weapons.Catalog
	level    *playedLevel
	limiter  *limits.Limiter
	verifier *token.Verifier // nil: open development mode
}

// load checks the configuration and reads its files: the TLS certificate,
// the weapons, the level (its warnings logged) and the matchmaker's keys.
func load(cfg *Config, log zerolog.Logger) (loaded, error) {
	var ld loaded
	if err := cfg.validate(false); err != nil { // the weapons file is read once, below
		return ld, err
	}
	var err error
	if ld.tls, err = tlsConfig(cfg.TLS); err != nil {
		return ld, err
	}
	if ld.weapons, err = cfg.LoadWeapons(); err != nil {
		return ld, fmt.Errorf("config: weapons_file: %w", err)
	}
	if ld.catalog, err = cfg.Catalog(ld.weapons); err != nil {
		return ld, err
	}
	lvl, warns, err := cfg.loadLevel()
	if err != nil {
		return ld, err
	}
	for _, w := range warns {
		log.Warn().Str("level_name", lvl.level.Name).Str("subject", w.Subject).Msg("level: " + w.Message)
	}
	ld.level = lvl
	if err := fitsTheWire(cfg, ld.weapons, ld.catalog, lvl); err != nil {
		return ld, err
	}
	if ld.limiter, err = limits.New(cfg.LimitsConfig()); err != nil {
		return ld, fmt.Errorf("config: %w", err)
	}
	if ld.verifier, err = newVerifier(&cfg.Auth); err != nil {
		return ld, err
	}
	return ld, nil
}

// newVerifier loads the matchmaker's public keys; nil without any (open
// development mode).
func newVerifier(c *AuthConfig) (*token.Verifier, error) {
	keys := slices.Clone(c.Keys)
	for i, path := range c.PublicKeys {
		k, err := token.LoadPublicKey(path)
		if err != nil {
			return nil, fmt.Errorf("config: auth.public_keys[%d]: %w", i, err)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	v, err := token.NewVerifier(token.VerifierConfig{Keys: keys, Skew: c.ClockSkew, MaxLifetime: c.MaxTokenLifetime, Capacity: c.ReplayCache})
	if err != nil {
		return nil, fmt.Errorf("config: auth.public_keys: %w", err)
	}
	return v, nil
}

// fitsTheWire checks what the protocol carries in one byte or one frame:
// weapon ids in events and inputs, names in the Welcome and the Join, and the
// Welcome itself. A definition file beyond them would be cut short on the
// wire, silently; it is refused here instead, naming what is too big.
func fitsTheWire(c *Config, file *weapons.File, cat *weapons.Catalog, lvl *playedLevel) error {
	if cat.Len() > math.MaxUint8 {
		return fmt.Errorf("config: weapons_file: %d weapons, the protocol carries at most %d", cat.Len(), math.MaxUint8)
	}
	for id := range cat.Len() {
		d := cat.At(uint16(id))
		if len(d.Name) > protocol.MaxNameLen {
			return fmt.Errorf("config: weapons_file: %s: the name is %d bytes, the protocol carries at most %d", d.Name, len(d.Name), protocol.MaxNameLen)
		}
		if len(d.Kind) > protocol.MaxNameLen {
			return fmt.Errorf("config: weapons_file: %s.kind: %q is %d bytes, the protocol carries at most %d", d.Name, d.Kind, len(d.Kind), protocol.MaxNameLen)
		}
	}
	for _, cl := range file.Classes {
		if len(cl.Name) > protocol.MaxNameLen {
			return fmt.Errorf("config: weapons_file: class %s: the name is %d bytes, a Join carries at most %d", cl.Name, len(cl.Name), protocol.MaxNameLen)
		}
	}
	w := welcomeTemplate(c, cat, lvl)
	w.Class = strings.Repeat("x", protocol.MaxNameLen)
	w.Room, w.Name = strings.Repeat("x", protocol.MaxRoomLen), w.Class
	w.Loadout = make([]uint8, ecs.MaxLoadout)
	if n := 1 + len(protocol.AppendWelcome(nil, &w)); n > protocol.MaxControl {
		return fmt.Errorf("config: weapons_file: %d weapons make a Welcome of up to %d bytes, over the control frame limit of %d", cat.Len(), n, protocol.MaxControl)
	}
	return nil
}

// welcomeTemplate is what every welcome says about the room's rules; its
// digest covers them all (the room's spread seed and the player's own
// fields, its class's movement included, are set per welcome, after).
func welcomeTemplate(c *Config, cat *weapons.Catalog, lvl *playedLevel) protocol.Welcome {
	lc := c.LagCompConfig()
	maxUnlag := lc.MaxUnlag()
	w := protocol.Welcome{
		Version: protocol.Version, TickRate: uint16(c.TickRate), SnapshotRate: uint16(c.SnapshotRate),
		WindowTicks: uint16(lc.WindowTicks), MaxUnlag: maxUnlag,
		Level: lvl.level.Name, LevelDigest: lvl.level.Digest(),
		EyeHeight: c.Match.EyeHeight, CrouchEyeHeight: c.Match.CrouchEyeHeight, Radius: c.Match.Radius,
		Height: c.Match.Height, CrouchHeight: c.Match.CrouchHeight, HeadHeight: c.Match.HeadHeight,
		Health: c.Match.Health, RespawnTicks: uint16(min(c.Match.RespawnTicks, math.MaxUint16)),
		InvulnerableTicks: uint16(min(c.Match.InvulnerableTicks, math.MaxUint16)), FriendlyFire: c.Match.FriendlyFire,
		InputTimeout: uint32(min(c.InputTimeout.Milliseconds(), math.MaxUint32)),
	}
	for id := range cat.Len() {
		d := cat.At(uint16(id))
		rewind, _ := d.Rewind(maxUnlag, c.TickRate)
		w.Weapons = append(w.Weapons, protocol.WeaponInfo{Name: d.Name, Kind: d.Kind, Damage: d.Damage, Range: d.Range,
			Speed: d.Speed, Gravity: d.Gravity, Radius: d.Radius, Reach: d.Reach, Spread: d.Spread,
			LifetimeTicks: uint16(d.LifetimeTicks), FireInterval: uint16(d.FireInterval), Magazine: uint16(d.Magazine),
			ReloadTicks: uint16(d.ReloadTicks), WindupTicks: uint16(d.WindupTicks), Pellets: uint8(d.Pellets),
			CatchUp: d.Mode == weapons.ModeCatchUp, HeadMultiplier: d.HeadMultiplier,
			Falloff:    [3]float64{d.Falloff.Start, d.Falloff.End, d.Falloff.Min},
			Splash:     [3]float64{d.Splash.Radius, d.Splash.Damage, d.Splash.Min},
			StreakHits: uint16(min(d.Streak.Hits, math.MaxUint16)), StreakWindow: d.Streak.WindowTicks, StreakBonus: d.Streak.Bonus,
			MaxRewind: rewind})
	}
	h := fnv.New64a()
	h.Write(protocol.AppendWelcome(nil, &w))
	w.ConfigDigest = h.Sum64()
	return w
}

// handshakesBeforeRetry is how many connections may be in their handshake
// (all sources) before new ones must prove their address with a QUIC Retry:
// a spoofed address then cannot take another source's handshake slots.
const handshakesBeforeRetry = 64

type handshakeKey struct{}

// Start binds the QUIC listener (and the admin and pprof ports, if
// configured), starts accepting clients and, under Agones, reports Ready.
func (s *Server) Start() error {
	qc := &quic.Config{
		EnableDatagrams:       true,
		MaxIdleTimeout:        s.cfg.IdleTimeout,
		KeepAlivePeriod:       s.cfg.IdleTimeout / 3,
		HandshakeIdleTimeout:  5 * time.Second,
		MaxIncomingStreams:    1,  // the control stream
		MaxIncomingUniStreams: -1, // none
	}
	addr, err := net.ResolveUDPAddr("udp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("server: listen %s: %w", s.cfg.Listen, err)
	}
	// The server owns its socket and transport, so that Shutdown ends every
	// connection at once rather than after QUIC's closing period.
	// An IPv4 address gets an IPv4 socket (0.0.0.0 is every IPv4
	// interface), on which snapshots go out in batches (channel.Writer);
	// ":port" and IPv6 addresses get a dual-stack one.
	network := "udp"
	if addr.IP.To4() != nil {
		network = "udp4"
	}
	if s.udp, err = net.ListenUDP(network, addr); err != nil {
		return fmt.Errorf("server: listen %s: %w", s.cfg.Listen, err)
	}
	// On the sealed channel the Demux reads the socket: it opens the sealed
	// packets (nearly all of them) on its goroutine, a batch a read, and
	// queues the QUIC packets for the transport. With QUIC DATAGRAMs the
	// transport reads the socket itself.
	var quicConn net.PacketConn = s.udp
	if s.cfg.Datagrams.Channel == ChannelSealed {
		s.writer = channel.NewWriter(s.udp)
		s.demux = channel.NewDemux(channel.DemuxConfig{Conn: s.udp,
			Drop:    func(r channel.Reason) { s.m.drop(channelDrop(r)) },
			Migrate: func(from, to net.Addr) { s.m.migrations.Inc() },
			Path:    func(e channel.PathEvent) { s.m.paths.Inc(e) }})
		s.demuxDone = make(chan struct{})
		go func() {
			defer close(s.demuxDone)
			// It reads until the socket closes, after the connections'
			// closing period: the transport needs its packets to the end.
			if err := s.demux.Run(context.Background()); err != nil {
				s.log.Error().Err(err).Msg("the server's socket failed: no packets are read any more")
			}
		}()
		quicConn = s.demux.QUIC()
	}
	s.tr = &quic.Transport{Conn: quicConn,
		// A source holds at most limits.handshakes_per_source connections
		// that have not joined; the slot is freed when the connection joins
		// or ends (the context ends when the handshake fails too).
		ConnContext: func(ctx context.Context, info *quic.ClientInfo) (context.Context, error) {
			release, ok := s.limiter.Handshake(limits.Source(info.RemoteAddr))
			if !ok {
				s.m.reject(protocol.RejectRateLimited)
				return ctx, errors.New("too many handshakes from this address")
			}
			context.AfterFunc(ctx, release)
			return context.WithValue(ctx, handshakeKey{}, release), nil
		},
		VerifySourceAddress: func(net.Addr) bool { return s.limiter.Pending() >= handshakesBeforeRetry },
	}
	ln, err := s.tr.Listen(s.tls, qc)
	if err != nil {
		s.closeSocket()
		return fmt.Errorf("server: listen %s: %w", s.cfg.Listen, err)
	}
	s.ln = ln
	fail := func(err error) error {
		s.closeListeners()
		return err
	}
	if s.cfg.Admin.Listen != "" {
		if s.admin, err = s.listenHTTP(s.cfg.Admin.Listen, s.adminMux(), "admin"); err != nil {
			return fail(err)
		}
		s.warnIfExposed(s.admin, "admin.listen", s.cfg.Admin.Listen,
			"the admin port is not on a loopback address, and it has no authentication: "+
				"whoever reaches it can open rooms (POST /rooms), list the players (GET /rooms) and read the metrics; "+
				"limit who reaches it (a firewall, a Kubernetes NetworkPolicy)")
	}
	if s.cfg.Pprof.Listen != "" {
		if s.pprof, err = s.listenHTTP(s.cfg.Pprof.Listen, pprofMux(), "pprof"); err != nil {
			return fail(err)
		}
		s.warnIfExposed(s.pprof, "pprof.listen", s.cfg.Pprof.Listen,
			"the profiler is not on a loopback address, and it has no authentication: "+
				"whoever reaches it can read the process's heap profile, goroutine stacks and command line, and slow it "+
				"down with CPU profiles and traces; bind it to 127.0.0.1")
	}
	s.wg.Add(1)
	go s.accept()
	s.started.Store(true)
	ev := s.log.Info().Str("addr", ln.Addr().String()).Int("tick_rate", s.cfg.TickRate).
		Str("lagcomp_window", s.cfg.DescribeWindow()).Str("max_unlag", s.cfg.DescribeMaxUnlag()).Hex("cert_sha256", s.certSum).
		Str("level_name", s.level.level.Name).Str("level_digest", s.level.level.Digest().String())
	if s.verifier != nil {
		ev = ev.Strs("token_keys", s.verifier.KeyIDs()).Str("rooms_by", s.cfg.Auth.Rooms)
	}
	ev.Msg("listening")
	if s.verifier == nil {
		s.log.Warn().Str("addr", ln.Addr().String()).
			Msg("OPEN DEVELOPMENT MODE: no auth.public_keys, so anyone who reaches this address joins any room under any name; never run a real match like this")
	}
	if s.agones != nil {
		if err := s.agones.start(); err != nil {
			s.Shutdown(context.Background())
			return err
		}
	}
	return nil
}

func (s *Server) closeListeners() {
	for _, h := range []*httpListener{s.admin, s.pprof} {
		if h != nil {
			h.srv.Close()
		}
	}
	s.ln.Close()
	s.closeSocket()
}

// closeSocket closes the transport and the socket, and waits for the Demux
// that reads it.
func (s *Server) closeSocket() {
	s.tr.Close()
	s.udp.Close()
	if s.demuxDone != nil {
		<-s.demuxDone
	}
}

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// CertSHA256 returns the SHA-256 of the server's certificate (DER): what a
// client pins when no CA vouches for the server (a self-signed
// certificate), as the matchmaker hands it out with the token.
func (s *Server) CertSHA256() []byte { return slices.Clone(s.certSum) }

// AdminAddr returns the admin port's address, or nil.
func (s *Server) AdminAddr() net.Addr {
	if s.admin == nil {
		return nil
	}
	return s.admin.ln.Addr()
}

// PprofAddr returns the profiler's address, or nil.
func (s *Server) PprofAddr() net.Addr {
	if s.pprof == nil {
		return nil
	}
	return s.pprof.ln.Addr()
}

// Registry returns the server's Prometheus registry.
func (s *Server) Registry() *prometheus.Registry { return s.m.reg }

// Stopping is closed when the server asks to be stopped on its own: Agones
// moved its GameServer to Shutdown, or, serving one match per process, the
// match has ended. The program then drains and shuts it down.
func (s *Server) Stopping() <-chan struct{} { return s.stopping }

func (s *Server) stop(why string) {
	s.stoppingOnce.Do(func() {
		s.log.Info().Str("why", why).Msg("stopping")
		close(s.stopping)
	})
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept(s.ctx)
		if err != nil {
			return // closed by Shutdown
		}
		se := newSession(s, conn)
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			conn.CloseWithError(protocol.CloseShutdown, "server shutting down")
			continue
		}
		s.sessions[se] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go se.run()
	}
}

// Admitting reports whether the server admits players: it listens and is
// neither draining nor shutting down (/readyz).
func (s *Server) Admitting() bool {
	if !s.started.Load() || s.draining.Load() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closing
}

// errRoomExists, errDraining and errServerFull are OpenRoom's refusals.
var (
	errRoomExists = errors.New("the room exists")
	errDraining   = errors.New("the server is draining or shutting down")
	errServerFull = errors.New("max_rooms rooms are open")
)

// OpenRoom opens a room for a match, as the operator (the admin API, an
// Agones allocation) does when rooms are not created by tokens. The room
// waits match.empty_timeout for its first player.
func (s *Server) OpenRoom(id string) error {
	if !roomName.MatchString(id) {
		return fmt.Errorf("room %q: 1 to 64 of A-Z a-z 0-9 _ . -", id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closing || s.draining.Load():
		return errDraining
	case s.rooms[id] != nil:
		// A join created it first: it is the operator's match now, and
		// waits for its players as one the operator opened.
		s.rooms[id].byJoin.Store(false)
		return errRoomExists
	}
	_, err := s.newRoomLocked(id, nil)
	return err
}

// hosts reports whether the room called id is open.
func (s *Server) hosts(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rooms[id] != nil
}

// roomFor returns the room called id, created if create allows it (and
// src, the join's source, has not its limits.rooms_per_source open), and
// counts a join on its way to it; otherwise the Reject to send.
func (s *Server) roomFor(id string, create bool, src netip.Addr) (*room, *protocol.Reject) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing || s.draining.Load() {
		return nil, &protocol.Reject{Code: protocol.RejectShutdown, Reason: "the server is shutting down: it admits nobody"}
	}
	r := s.rooms[id]
	if r == nil {
		if !create {
			return nil, &protocol.Reject{Code: protocol.RejectWrongRoom, Reason: "room " + id + " is not hosted here"}
		}
		if _, over := s.ended[id]; over && s.verifier != nil {
			// A token (a reconnection, a late join) does not reopen a match
			// that ended: one match, one result.
			return nil, &protocol.Reject{Code: protocol.RejectWrongRoom, Reason: "match " + id + " is over"}
		}
		release, ok := s.limiter.Room(src)
		if !ok {
			return nil, &protocol.Reject{Code: protocol.RejectRateLimited, Reason: fmt.Sprintf(
				"too many rooms created from your address: %d of them are open, the most one address may have; join one, or wait until one closes",
				s.cfg.Limits.RoomsPerSource)}
		}
		var err error
		if r, err = s.newRoomLocked(id, release); err != nil {
			release()
			return nil, &protocol.Reject{Code: protocol.RejectFull, Reason: "the server is full"}
		}
	}
	r.pending++
	return r, nil
}

// newRoomLocked creates and starts a room; s.mu is held. A room a join
// creates comes with release, which frees it in its source's count of rooms
// when it closes; the operator's has none.
func (s *Server) newRoomLocked(id string, release func()) (*room, error) {
	if len(s.rooms) >= s.cfg.MaxRooms {
		return nil, errServerFull
	}
	r, err := newRoom(s, id)
	if err != nil {
		s.log.Error().Err(err).Str("room", id).Msg("room not created")
		return nil, err
	}
	r.byJoin.Store(release != nil)
	r.release = release
	s.rooms[id] = r
	s.m.rooms.Inc()
	s.wg.Add(1)
	go r.run()
	return r, nil
}

// joinDone counts a join that reached its room (or gave up on the way).
func (s *Server) joinDone(r *room) {
	s.mu.Lock()
	r.pending--
	s.mu.Unlock()
}

// closeRoomIfIdle removes a room with no member and no join on its way, and
// reports whether it did: the room then finishes, for why.
func (s *Server) closeRoomIfIdle(r *room, why endReason) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(r.members) > 0 || r.pending > 0 || s.rooms[r.id] != r {
		return false
	}
	s.removeRoomLocked(r, why)
	return true
}

// removeRoomLocked forgets a room that is closing, for why, remembering
// that its match ended for as long as a token for it may still be valid
// (unless it closed unplayed: it was no match, and a token may open it
// again); s.mu is held.
func (s *Server) removeRoomLocked(r *room, why endReason) {
	if s.rooms[r.id] != r {
		return
	}
	delete(s.rooms, r.id)
	s.m.rooms.Dec()
	if r.release != nil {
		r.release()
	}
	if why == endUnplayed {
		return
	}
	now := time.Now()
	keep := s.cfg.Auth.MaxTokenLifetime + s.cfg.Auth.ClockSkew
	for id, at := range s.ended {
		if now.Sub(at) > keep {
			delete(s.ended, id)
		}
	}
	s.ended[r.id] = now
}

func (s *Server) sessionDone(se *session) {
	s.mu.Lock()
	delete(s.sessions, se)
	s.mu.Unlock()
}

// Healthy reports whether every room loop has ticked recently (within ten
// tick intervals, and at least a second): a room that stopped making
// progress makes the server unhealthy (/healthz, Agones health).
func (s *Server) Healthy() error {
	limit := max(10*time.Second/time.Duration(s.cfg.TickRate), time.Second)
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, r := range s.rooms {
		if since := now.Sub(time.Unix(0, r.lastTick.Load())); since > limit {
			return fmt.Errorf("room %s: no tick for %v", id, since.Round(time.Millisecond))
		}
	}
	return nil
}

// ErrInterrupted is the cause (context.WithCancelCause) with which a
// program cancels a Drain's context to stop at once, as on a second Ctrl-C:
// the matches it cuts end with the reason "interrupted", not
// "drain_timeout".
var ErrInterrupted = errors.New("interrupted")

// Drain stops admitting players (joins are refused with code 4, /readyz
// fails) and lets the running matches finish: it returns when every room has
// closed by itself (its match ended, or everybody left), or, when ctx ends
// first, closes the rooms left and returns ctx's error. They end with the
// reason "drain_timeout", or "interrupted" when ctx's cause is
// ErrInterrupted. Shutdown follows it.
func (s *Server) Drain(ctx context.Context) error {
	s.draining.Store(true)
	// Under Agones, the rooms Counter's capacity closes now, not at the
	// next event: an allocation meanwhile would be refused.
	s.agones.signal()
	s.mu.Lock()
	rooms := make([]*room, 0, len(s.rooms))
	for _, r := range s.rooms {
		rooms = append(rooms, r)
	}
	s.mu.Unlock()
	s.log.Info().Int("rooms", len(rooms)).Msg("draining: admitting nobody, waiting for the matches to finish")
	var err error
	for _, r := range rooms {
		select {
		case <-r.done:
			continue
		case <-ctx.Done():
			err = ctx.Err()
		}
		break
	}
	if err != nil {
		why := endDrainTimeout
		if errors.Is(context.Cause(ctx), ErrInterrupted) {
			why = endInterrupted
		}
		for _, r := range rooms {
			r.end(why)
		}
		// A room whose loop is stuck (in a weapon kind's code, say) never
		// ends: wait a bounded time, and name it.
		bound := time.After(drainStuckBound)
		for _, r := range rooms {
			select {
			case <-r.done:
			case <-bound:
				s.log.Error().Str("room", r.id).Msg("drain: the room did not end: its loop is stuck")
			}
		}
		if why == endInterrupted {
			s.log.Warn().Msg("drain interrupted: the matches left were closed")
		} else {
			s.log.Warn().Msg("drain timed out: the matches left were closed")
		}
	}
	return err
}

// closingPeriod is how long Shutdown keeps the transport open after closing
// the connections, so that a lost close is sent again: quic-go answers a
// closed connection's packets with its close for three probe timeouts, which
// this covers on common paths. (A client on the sealed channel has also been
// sent the Close datagram: it sends QUIC packets too rarely for this.)
const closingPeriod = 300 * time.Millisecond

// drainStuckBound is how long Drain waits, after its timeout, for the rooms
// it ended.
const drainStuckBound = 5 * time.Second

// Shutdown stops the server: no new connections or joins, every room
// finishes its current tick, writes its result and closes its clients'
// connections with a reason, then the listeners close. It returns when every
// goroutine has ended, or with ctx's error if that comes first.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return s.wait(ctx)
	}
	s.closing = true
	rooms := make([]*room, 0, len(s.rooms))
	for _, r := range s.rooms {
		rooms = append(rooms, r)
	}
	sessions := make([]*session, 0, len(s.sessions))
	for se := range s.sessions {
		sessions = append(sessions, se)
	}
	s.mu.Unlock()
	s.log.Info().Int("rooms", len(rooms)).Msg("shutting down")
	s.cancel()
	if s.ln != nil {
		s.ln.Close()
	}
	for _, r := range rooms {
		r.end(endShutdown)
	}
	var err error
	for _, r := range rooms {
		select {
		case <-r.done:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	// The rooms have queued their last Agones calls (players leaving, the
	// Shutdown after one match): the worker makes them, then stops.
	s.agones.close()
	// Sessions that never reached a room (a room closes its players', with
	// its match's reason, from goroutines that may not have run yet).
	for _, se := range sessions {
		if !se.seated.Load() {
			se.conn.CloseWithError(protocol.CloseShutdown, "server shutting down")
		}
	}
	for _, h := range []*httpListener{s.admin, s.pprof} {
		if h != nil {
			h.srv.Shutdown(ctx)
		}
	}
	if werr := s.wait(ctx); err == nil {
		err = werr
	}
	if s.tr != nil {
		// QUIC's closing period: a client whose CONNECTION_CLOSE was lost
		// sends again, and the transport answers with the close, reason
		// included, for as long as it is open.
		if len(rooms)+len(sessions) > 0 {
			select {
			case <-time.After(closingPeriod):
			case <-ctx.Done():
			}
		}
		s.closeSocket()
	}
	if s.results != nil {
		if cerr := s.results.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}

func (s *Server) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// verifyToken checks a Join's token; the Reject says why not.
func (s *Server) verifyToken(tok []byte) (token.Claims, *protocol.Reject) {
	if len(tok) == 0 {
		return token.Claims{}, &protocol.Reject{Code: protocol.RejectNoToken, Reason: "this server admits only players with a connect token from the matchmaker"}
	}
	c, err := s.verifier.Verify(tok, time.Now())
	if err == nil {
		return c, nil
	}
	return token.Claims{}, &protocol.Reject{Code: rejectCode(err), Reason: err.Error()}
}

// rejectCode is the reject code of a token the verifier refused.
func rejectCode(err error) uint8 {
	var te *token.Error
	if !errors.As(err, &te) {
		return protocol.RejectTokenInvalid
	}
	switch te.Reason {
	case token.UnknownKey:
		return protocol.RejectTokenKey
	case token.BadSignature:
		return protocol.RejectTokenSignature
	case token.Expired:
		return protocol.RejectTokenExpired
	case token.NotYetValid:
		return protocol.RejectTokenEarly
	case token.Replayed:
		return protocol.RejectTokenReplayed
	case token.CacheFull:
		return protocol.RejectBusy
	}
	return protocol.RejectTokenInvalid // malformed, or valid for too long
}

// recordDir makes sure rooms can write their recordings into dir (empty:
// no recording): it exists, or is created, and takes a file.
func recordDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return writableDir(dir)
}

// movementInfo is a class's movement as the Welcome carries it.
func movementInfo(m *movement.Character) protocol.Movement {
	return protocol.Movement{RunSpeed: m.RunSpeed, SprintSpeed: m.SprintSpeed, CrouchSpeed: m.CrouchSpeed,
		GroundAccel: m.GroundAccel, AirAccel: m.AirAccel, AirWishSpeed: m.AirWishSpeed, Friction: m.Friction,
		StopSpeed: m.StopSpeed, Gravity: m.Gravity, JumpHeight: m.JumpHeight, StepHeight: m.StepHeight,
		MaxSlope: m.MaxSlope, Skin: m.Skin}
}
