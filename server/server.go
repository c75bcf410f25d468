package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/quic-go/quic-go"
	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/weapons"
)

// Server hosts rooms over QUIC.
type Server struct {
	cfg     Config
	log     zerolog.Logger
	m       *metrics
	tls     *tls.Config
	certSum []byte // SHA-256 of the certificate, for clients to pin
	weapons *weapons.File
	catalog *weapons.Catalog
	welcome protocol.Welcome // the parts every room's welcomes share

	udp     *net.UDPConn
	tr      *quic.Transport
	ln      *quic.Listener
	admin   *http.Server
	adminLn net.Listener

	mu       sync.Mutex
	rooms    map[string]*room
	sessions map[*session]struct{}
	closing  bool

	ctx    context.Context // cancelled at shutdown: stops accepting and joining
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the server started
}

// New checks the configuration and prepares a server; Start runs it.
func New(cfg Config, log zerolog.Logger) (*Server, error) {
	if err := cfg.validate(false); err != nil { // the weapons file is read once, below
		return nil, err
	}
	tc, err := tlsConfig(cfg.TLS)
	if err != nil {
		return nil, err
	}
	file, err := cfg.LoadWeapons()
	if err != nil {
		return nil, fmt.Errorf("config: weapons_file: %w", err)
	}
	catalog, err := file.Catalog(cfg.registry())
	if err != nil {
		return nil, fmt.Errorf("config: weapons_file: %w", err)
	}
	s := &Server{cfg: cfg, log: log, m: newMetrics(), tls: tc, certSum: certSHA256(tc), weapons: file, catalog: catalog,
		rooms: map[string]*room{}, sessions: map[*session]struct{}{}}
	if err := fitsTheWire(&cfg, file, catalog); err != nil {
		return nil, err
	}
	s.welcome = welcomeTemplate(&cfg, catalog)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// fitsTheWire checks what the protocol carries in one byte or one frame:
// weapon ids in events and inputs, names in the Welcome and the Join, and the
// Welcome itself. A definition file beyond them would be cut short on the
// wire, silently; it is refused here instead, naming what is too big.
func fitsTheWire(c *Config, file *weapons.File, cat *weapons.Catalog) error {
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
	w := welcomeTemplate(c, cat)
	w.Class = strings.Repeat("x", protocol.MaxNameLen)
	w.Room, w.Name = strings.Repeat("x", protocol.MaxRoomLen), w.Class
	w.Loadout = make([]uint8, ecs.MaxLoadout)
	if n := 1 + len(protocol.AppendWelcome(nil, &w)); n > protocol.MaxControl {
		return fmt.Errorf("config: arena.boxes: %d boxes make a Welcome of up to %d bytes, over the control frame limit of %d", len(c.Arena.Boxes), n, protocol.MaxControl)
	}
	return nil
}

// welcomeTemplate is what every welcome says about the room's rules; its
// digest covers them all (the room's spread seed and the player's own
// fields are set per welcome, after).
func welcomeTemplate(c *Config, cat *weapons.Catalog) protocol.Welcome {
	maxUnlag := c.LagCompConfig().MaxUnlag()
	w := protocol.Welcome{
		Version: protocol.Version, TickRate: uint16(c.TickRate), SnapshotRate: uint16(c.SnapshotRate),
		WindowTicks: uint16(c.LagComp.WindowTicks), MaxUnlag: maxUnlag, Speed: c.Arena.Speed,
		Arena:     protocol.BoxOf(c.Arena.Bounds()),
		EyeHeight: c.Match.EyeHeight, Radius: c.Match.Radius, Height: c.Match.Height, HeadHeight: c.Match.HeadHeight,
		Health: c.Match.Health, RespawnTicks: uint16(min(c.Match.RespawnTicks, math.MaxUint16)),
		InvulnerableTicks: uint16(min(c.Match.InvulnerableTicks, math.MaxUint16)), FriendlyFire: c.Match.FriendlyFire,
		InputTimeout: uint32(min(c.InputTimeout.Milliseconds(), math.MaxUint32)),
	}
	for id := range cat.Len() {
		d := cat.At(uint16(id))
		rewind, _ := d.Rewind(maxUnlag)
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
	for _, b := range c.Arena.Boxes {
		w.Map = append(w.Map, protocol.Box{Min: b.Min, Max: b.Max})
	}
	h := fnv.New64a()
	h.Write(protocol.AppendWelcome(nil, &w))
	w.ConfigDigest = h.Sum64()
	return w
}

// Start binds the QUIC listener (and the admin port, if configured) and
// starts accepting clients.
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
	if s.udp, err = net.ListenUDP("udp", addr); err != nil {
		return fmt.Errorf("server: listen %s: %w", s.cfg.Listen, err)
	}
	s.tr = &quic.Transport{Conn: s.udp}
	ln, err := s.tr.Listen(s.tls, qc)
	if err != nil {
		s.udp.Close()
		return fmt.Errorf("server: listen %s: %w", s.cfg.Listen, err)
	}
	s.ln = ln
	if s.cfg.Admin.Listen != "" {
		if err := s.startAdmin(); err != nil {
			ln.Close()
			s.tr.Close()
			s.udp.Close()
			return err
		}
	}
	s.wg.Add(1)
	go s.accept()
	s.log.Info().Str("addr", ln.Addr().String()).Int("tick_rate", s.cfg.TickRate).
		Int("window_ticks", s.cfg.LagComp.WindowTicks).Hex("cert_sha256", s.certSum).Msg("listening")
	return nil
}

func (s *Server) startAdmin() error {
	ln, err := net.Listen("tcp", s.cfg.Admin.Listen)
	if err != nil {
		return fmt.Errorf("server: admin listen %s: %w", s.cfg.Admin.Listen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{Registry: s.m.reg}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	s.adminLn = ln
	s.admin = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.admin.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error().Err(err).Msg("admin server")
		}
	}()
	s.log.Info().Str("addr", ln.Addr().String()).Msg("admin: /metrics, /debug/pprof/")
	return nil
}

// CertSHA256 returns the SHA-256 of the server's certificate (DER): what a
// client pins when no CA vouches for the server (a self-signed
// certificate), as the matchmaker hands it out with the token.
func (s *Server) CertSHA256() []byte { return slices.Clone(s.certSum) }

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// AdminAddr returns the admin port's address, or nil.
func (s *Server) AdminAddr() net.Addr {
	if s.adminLn == nil {
		return nil
	}
	return s.adminLn.Addr()
}

// Registry returns the server's Prometheus registry.
func (s *Server) Registry() *prometheus.Registry { return s.m.reg }

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

// roomFor returns the room called id, created if needed, and counts a join
// on its way to it; nil when the server is full or shutting down.
func (s *Server) roomFor(id string) (*room, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil, protocol.RejectShutdown
	}
	r := s.rooms[id]
	if r == nil {
		if len(s.rooms) >= s.cfg.MaxRooms {
			return nil, protocol.RejectFull
		}
		var err error
		if r, err = newRoom(s, id); err != nil {
			s.log.Error().Err(err).Str("room", id).Msg("room not created")
			return nil, protocol.RejectFull
		}
		s.rooms[id] = r
		s.m.rooms.Inc()
		s.wg.Add(1)
		go r.run()
	}
	r.pending++
	return r, 0
}

// joinDone counts a join that reached its room (or gave up on the way).
func (s *Server) joinDone(r *room) {
	s.mu.Lock()
	r.pending--
	s.mu.Unlock()
}

// closeRoomIfEmpty removes an empty room with no join on its way, and
// reports whether it did: the room's goroutine then returns.
func (s *Server) closeRoomIfEmpty(r *room) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(r.members) > 0 || r.pending > 0 || s.rooms[r.id] != r {
		return false
	}
	delete(s.rooms, r.id)
	s.m.rooms.Dec()
	return true
}

func (s *Server) sessionDone(se *session) {
	s.mu.Lock()
	delete(s.sessions, se)
	s.mu.Unlock()
}

// Shutdown stops the server gracefully: no new connections or joins, every
// room finishes its current tick and closes its clients' connections with a
// reason, the admin port closes. It returns when every goroutine has ended,
// or with ctx's error if that comes first.
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
		close(r.stop)
	}
	for _, r := range rooms {
		select {
		case <-r.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// Sessions that never reached a room.
	for _, se := range sessions {
		se.conn.CloseWithError(protocol.CloseShutdown, "server shutting down")
	}
	if s.admin != nil {
		s.admin.Shutdown(ctx)
	}
	err := s.wait(ctx)
	if s.tr != nil {
		s.tr.Close()
		s.udp.Close()
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
