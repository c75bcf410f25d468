package server

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/agones"
)

// agonesHost runs the server's side of the Agones lifecycle through the SDK
// server's REST API: Ready once listening, Health while every room loop
// makes progress, the allocated matches' rooms opened, players reported,
// and the GameServer returned to Ready, or shut down, once its matches have
// ended.
//
// It is level-triggered, as Kubernetes controllers are: one goroutine (the
// reconciler) compares what the GameServer shows (from the watch) with what
// the rooms hold, and makes the SDK calls that close the gap, retried with
// backoff. So a failed call, a lost answer or an SDK server outage delays
// the GameServer's record, never corrupts it: once calls go through again,
// the lists match the rooms' truth.
type agonesHost struct {
	s       *Server
	c       *agones.Client
	cfg     *AgonesConfig
	log     zerolog.Logger
	m       agonesMetrics
	started time.Time

	updates chan agones.GameServer // the watch's newest GameServer: capacity 1, a newer one replaces it
	wake    chan struct{}          // capacity 1: the rooms changed
	done    chan struct{}          // closed by close: the reconciler makes its last calls, then stops
	stopped chan struct{}          // closed when the reconciler has stopped
	once    sync.Once

	mu      sync.Mutex
	running bool           // the loops were started
	off     bool           // the SDK server was unreachable at start and fail_open is set
	players map[string]int // user → the rooms they play in, from the room goroutines
	closed  []string       // rooms closed since the reconciler last looked
}

// CertAnnotation is the annotation the server sets, through the SDK, to its
// certificate's SHA-256 (hex): the matchmaker reads it with the allocation
// and hands it to players with their tokens, to pin. The SDK server stores
// SDK annotations under its own prefix: the GameServer shows it as
// agones.dev/sdk-rewind-cert-sha256.
const CertAnnotation = "rewind-cert-sha256"

// The reconciler's timing.
const (
	// agonesCallTimeout bounds each SDK call.
	agonesCallTimeout = 5 * time.Second
	// agonesSettle is how long a write the SDK server answered may take to
	// show in the GameServer before the reconciler makes it again. The SDK
	// server batches writes and Kubernetes is eventually consistent
	// (Agones: "it may take approximately a second").
	agonesSettle = 3 * time.Second
	// agonesRetryFirst and agonesRetryMax bound the backoff of a failed
	// call, and of the watch: the wait doubles from the first to the max.
	agonesRetryFirst = 250 * time.Millisecond
	agonesRetryMax   = 8 * time.Second
	// agonesWatchHealthy is how long a watch stream must last for its
	// backoff to start again from the first wait.
	agonesWatchHealthy = 10 * time.Second
	// agonesLastPass bounds the calls made once the server stops.
	agonesLastPass = 5 * time.Second
	// agonesMatchMemory bounds the match ids remembered as hosted (an id
	// allocated again is refused), and the allocations remembered as shown
	// (an annotation stays on the GameServer after its match).
	agonesMatchMemory = 4096
)

// newAgonesHost returns the Agones integration the configuration asks for:
// nil when Agones is off, or absent in auto mode.
func newAgonesHost(s *Server, cfg *AgonesConfig) (*agonesHost, error) {
	ac, on, err := agonesClientConfig(cfg, os.Getenv)
	if err != nil || !on {
		return nil, err
	}
	return &agonesHost{s: s, c: agones.New(ac), cfg: cfg,
		log:     s.log.With().Str("component", "agones").Str("sdk", ac.Addr).Logger(),
		m:       newAgonesMetrics(s.m.reg),
		updates: make(chan agones.GameServer, 1), wake: make(chan struct{}, 1),
		done: make(chan struct{}), stopped: make(chan struct{}),
		players: map[string]int{}}, nil
}

// agonesClientConfig returns the SDK server's address the configuration
// and the environment (read with getenv) give, and whether Agones is on.
func agonesClientConfig(cfg *AgonesConfig, getenv func(string) string) (agones.Config, bool, error) {
	if cfg.Mode == "off" {
		return agones.Config{}, false, nil
	}
	if cfg.SDKAddress != "" {
		return agones.Config{Addr: cfg.SDKAddress}, true, nil
	}
	env, present, err := agones.ConfigFromEnv(getenv)
	switch {
	case err != nil:
		return agones.Config{}, false, fmt.Errorf("config: agones: %w", err)
	case !present && cfg.Mode == "on":
		return agones.Config{}, false, fmt.Errorf("config: agones.mode: on, but %s is not set and agones.sdk_address is empty", agones.EnvPort)
	}
	return env, present, nil
}

// agonesMetrics count what the SDK server was told, and what failed.
type agonesMetrics struct {
	callErrors     *prometheus.CounterVec // SDK calls that failed, by call
	healthWithheld prometheus.Counter     // Health pings not sent: a room loop was stuck
	refused        *prometheus.CounterVec // allocations that opened no room, by reason
	hosting        prometheus.Gauge       // allocated matches hosted now
}

func newAgonesMetrics(reg prometheus.Registerer) agonesMetrics {
	m := agonesMetrics{
		callErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_agones_call_errors_total",
			Help: "Calls to the Agones SDK server that failed (each is retried), by call."}, []string{"call"}),
		healthWithheld: prometheus.NewCounter(prometheus.CounterOpts{Name: "rewind_agones_health_withheld_total",
			Help: "Agones Health pings withheld because a room loop made no progress."}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_agones_allocations_refused_total",
			Help: "Allocations that opened no room, by reason; their capacity is given back."}, []string{"reason"}),
		hosting: prometheus.NewGauge(prometheus.GaugeOpts{Name: "rewind_agones_matches",
			Help: "Allocated matches this game server hosts."}),
	}
	// Every label value from the start: a series born at its first event
	// would hide that event from rate() and increase().
	for _, call := range []string{"ready", "health", "shutdown", "allocate", "counter", "list_remove",
		"player_add", "player_remove", "player_capacity", "watch"} {
		m.callErrors.WithLabelValues(call)
	}
	for _, reason := range []string{"no_match", "invalid", "repeated", "full", "draining", "retiring"} {
		m.refused.WithLabelValues(reason)
	}
	reg.MustRegister(m.callErrors, m.healthWithheld, m.refused, m.hosting)
	return m
}

// start sets the certificate annotation and reports Ready (the server
// listens), then starts the health, watch and reconciler loops. The SDK
// server may come up after the game server (its REST gateway listens only
// once it reaches the Kubernetes API), so both calls are retried for
// agones.ready_timeout, as Agones' own SDKs do; still unreachable after
// that is an error, or, with fail_open, a logged error and a server
// without Agones.
func (a *agonesHost) start() error {
	a.started = time.Now()
	ctx, cancel := context.WithTimeout(a.s.ctx, a.cfg.ReadyTimeout)
	defer cancel()
	err := retry(ctx, func(ctx context.Context) error {
		// The annotation first: an allocation right after Ready then
		// carries it.
		return a.c.SetAnnotation(ctx, CertAnnotation, hex.EncodeToString(a.s.certSum))
	})
	if err == nil {
		err = retry(ctx, a.c.Ready)
	}
	if err != nil {
		if !a.cfg.FailOpen {
			return fmt.Errorf("%w (for %v; set agones.fail_open to serve without Agones)", err, a.cfg.ReadyTimeout)
		}
		a.log.Error().Err(err).Msg("the Agones SDK server is unreachable: serving without Agones (agones.fail_open)")
		a.mu.Lock()
		a.off = true
		a.mu.Unlock()
		return nil
	}
	a.log.Info().Str("matches", a.cfg.Matches).Int("max_matches", a.cfg.MaxMatches).Msg("agones: ready")
	a.mu.Lock()
	a.running = true
	a.mu.Unlock()
	a.s.wg.Add(3)
	go a.health()
	go a.watch()
	go a.reconcile()
	return nil
}

// retry calls do until it succeeds or ctx ends, waiting 250 ms, then twice
// as long each time up to 2 s, between attempts; it returns the last error.
func retry(ctx context.Context, do func(context.Context) error) error {
	wait := 250 * time.Millisecond
	for {
		err := do(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

func (a *agonesHost) active() bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.off
}

// health sends Health every health_period while every room loop makes
// progress: a stuck room stops it, and Agones marks the GameServer
// Unhealthy.
func (a *agonesHost) health() {
	defer a.s.wg.Done()
	t := time.NewTicker(a.cfg.HealthPeriod)
	defer t.Stop()
	for {
		select {
		case <-a.s.ctx.Done():
			return
		case <-t.C:
		}
		if err := a.s.Healthy(); err != nil {
			a.m.healthWithheld.Inc()
			a.log.Warn().Err(err).Msg("agones: not healthy: Health withheld")
			continue
		}
		ctx, cancel := context.WithTimeout(a.s.ctx, a.cfg.HealthPeriod)
		if err := a.c.Health(ctx); err != nil && a.s.ctx.Err() == nil {
			a.m.callErrors.WithLabelValues("health").Inc()
			a.log.Warn().Err(err).Msg("agones: health")
		}
		cancel()
	}
}

// watch follows the GameServer and hands every update to the reconciler.
// A broken watch is watched again after a backoff: 250 ms, doubling to
// 8 s, from 250 ms again once a stream has lasted 10 s.
func (a *agonesHost) watch() {
	defer a.s.wg.Done()
	b := backoff{first: agonesRetryFirst, max: agonesRetryMax}
	for {
		began := time.Now()
		err := a.c.WatchGameServer(a.s.ctx, func(gs agones.GameServer) {
			select {
			case <-a.updates: // a newer GameServer replaces the one not read yet
			default:
			}
			a.updates <- gs
		})
		if a.s.ctx.Err() != nil {
			return
		}
		if time.Since(began) >= agonesWatchHealthy {
			b.reset()
		}
		wait := b.next()
		a.m.callErrors.WithLabelValues("watch").Inc()
		a.log.Warn().Err(err).Dur("retry_in", wait).Msg("agones: watch broke; watching again")
		select {
		case <-a.s.ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// backoff is a doubling wait between first and max.
type backoff struct {
	first, max, wait time.Duration
}

// next returns the wait before the next attempt.
func (b *backoff) next() time.Duration {
	if b.wait == 0 {
		b.wait = b.first
	} else {
		b.wait = min(2*b.wait, b.max)
	}
	return b.wait
}

func (b *backoff) reset() { b.wait = 0 }

// close tells the reconciler that the server is stopping: every room has
// closed (and reported its players gone), so it makes its last calls, then
// stops; close returns when it has, at most agonesLastPass later.
func (a *agonesHost) close() {
	if a == nil {
		return
	}
	a.once.Do(func() { close(a.done) })
	a.mu.Lock()
	running := a.running
	a.mu.Unlock()
	if !running {
		return
	}
	select {
	case <-a.stopped:
	case <-time.After(agonesLastPass + agonesCallTimeout):
	}
}

// signal wakes the reconciler.
func (a *agonesHost) signal() {
	if a == nil {
		return
	}
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// playerJoined and playerLeft report a player, by user id. They are called
// from room goroutines, and only note the change.
func (a *agonesHost) playerJoined(user string) { a.player(user, 1) }
func (a *agonesHost) playerLeft(user string)   { a.player(user, -1) }

func (a *agonesHost) player(user string, d int) {
	if !a.active() || a.cfg.Players == "none" {
		return
	}
	a.mu.Lock()
	if n := a.players[user] + d; n > 0 {
		a.players[user] = n
	} else {
		delete(a.players, user)
	}
	a.mu.Unlock()
	a.signal()
}

// roomClosed notes that the room id has closed.
func (a *agonesHost) roomClosed(id string) {
	if !a.active() {
		return
	}
	a.mu.Lock()
	a.closed = append(a.closed, id)
	a.mu.Unlock()
	a.signal()
}

// reconciler is the state of the reconciler goroutine, which alone reads
// and writes it.
type reconciler struct {
	a    *agonesHost
	gs   agones.GameServer // the newest GameServer the watch showed
	have bool              // one was shown
	seq  uint64            // GameServers shown so far

	live     map[string]bool   // allocated matches whose room is open
	gone     map[string]string // matches to take off the matches list (ended, refused), and why
	seen     map[string]bool   // match ids hosted (never opened again), and annotation mode's allocations shown
	seenFIFO []string
	hosted   int    // matches hosted since start
	retiring string // why the server takes no more matches, "" while it does
	final    bool   // the server is stopping: the last pass
	warned   map[string]bool
	capacity bool // the alpha player capacity is set

	calls map[string]*callState // by call key (e.g. "ready", "list+ players alice")
}

// callState is the record of a call the reconciler makes until the
// GameServer shows its effect.
type callState struct {
	b        backoff
	after    time.Time // not before then: a backoff after a failure, or the settling of a success
	failures int
	atSeq    uint64 // the GameServer shown when it last succeeded
}

// reconcile runs the reconciler until close.
func (a *agonesHost) reconcile() {
	defer a.s.wg.Done()
	defer close(a.stopped)
	r := &reconciler{a: a, live: map[string]bool{}, gone: map[string]string{}, seen: map[string]bool{},
		warned: map[string]bool{}, calls: map[string]*callState{}}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case gs := <-a.updates:
			r.gs, r.have = gs, true
			r.seq++
		case <-a.wake:
		case <-timer.C:
		case <-a.done:
			r.lastPass()
			return
		}
		next := r.pass(context.Background())
		timer.Reset(next)
	}
}

// lastPass makes the calls left once the server stops: the players who
// left, the matches that ended, and the Shutdown of a retired server.
func (r *reconciler) lastPass() {
	ctx, cancel := context.WithTimeout(context.Background(), agonesLastPass)
	defer cancel()
	// Failed calls are made once more, now; calls that succeeded are
	// not repeated (the watch has stopped, so the GameServer would not
	// show them: a Counter difference made twice would count twice).
	r.final = true
	for _, c := range r.calls {
		if c.failures > 0 {
			c.after = time.Time{}
		}
	}
	select {
	case gs := <-r.a.updates:
		r.gs, r.have = gs, true
		r.seq++
	default:
	}
	r.pass(ctx)
}

// pass compares the GameServer with the rooms and makes the calls that
// close the gap; it returns when to look again.
func (r *reconciler) pass(ctx context.Context) time.Duration {
	a := r.a
	now := time.Now()
	next := time.Hour
	soon := func(t time.Time) {
		if d := t.Sub(now); d < next {
			next = max(d, time.Millisecond)
		}
	}

	a.mu.Lock()
	closed := a.closed
	a.closed = nil
	want := slices.Sorted(maps.Keys(a.players))
	a.mu.Unlock()
	for _, id := range closed {
		if r.live[id] {
			delete(r.live, id)
			if a.cfg.Matches == "list" {
				r.gone[id] = "ended"
			}
			a.log.Info().Str("room", id).Int("hosting", len(r.live)).Msg("agones: the match has ended")
		}
	}
	a.m.hosting.Set(float64(len(r.live)))
	if !r.have {
		return next
	}
	gs := r.gs
	if gs.State == "Shutdown" {
		a.s.stop("agones: the GameServer is shutting down")
		return next
	}

	// A draining server (SIGTERM, Agones' Shutdown) takes no more
	// allocations and does not go Ready: Kubernetes is deleting it.
	draining := a.s.draining.Load() || a.s.ctx.Err() != nil
	named := r.named(gs)
	for _, id := range named {
		r.retire(now, soon)
		r.admit(id, draining)
	}
	// The match that reaches retire_after_matches retires the server in
	// the same pass, so its capacity closes with the same calls.
	r.retire(now, soon)
	a.m.hosting.Set(float64(len(r.live)))

	// The matches list and the rooms Counter.
	if a.cfg.Matches == "list" {
		for id, why := range r.gone {
			if !slices.Contains(named, id) {
				delete(r.gone, id)
				r.forget("list- " + id)
				continue
			}
			r.call(ctx, now, soon, "list- "+id, "list_remove", func(ctx context.Context) error {
				err := a.c.RemoveListValue(ctx, a.cfg.MatchesList, id)
				if notInList(err) {
					return nil
				}
				if err == nil {
					a.log.Info().Str("room", id).Str("why", why).Msg("agones: the match is off the matches list")
				}
				return err
			})
		}
		r.syncCounter(ctx, now, soon, gs, named, draining)
	}

	// The lifecycle: back to Ready once nothing is hosted, or Shutdown
	// when retiring; Allocated again if a match came as it went Ready.
	empty := len(r.live) == 0 && (a.cfg.Matches != "list" || len(named) == 0)
	switch {
	case (r.final || draining) && r.retiring == "":
		// Stopping for another reason (a SIGTERM, Agones' Shutdown):
		// Kubernetes deletes the pod.
	case r.retiring != "" && (empty || r.final):
		r.call(ctx, now, soon, "shutdown", "shutdown", func(ctx context.Context) error {
			err := a.c.Shutdown(ctx)
			if err == nil {
				a.log.Info().Str("why", r.retiring).Msg("agones: retired: shutdown")
				a.s.stop("agones: retired: " + r.retiring)
			}
			return err
		})
	case r.retiring == "" && empty && gs.State == "Allocated" && r.unlocked(gs) == 0:
		r.call(ctx, now, soon, "ready", "ready", func(ctx context.Context) error {
			err := a.c.Ready(ctx)
			if err == nil {
				a.log.Info().Msg("agones: no match left: Ready again")
			}
			return err
		})
	case len(r.live) > 0 && (gs.State == "Ready" || gs.State == "Reserved"):
		// A match allocated as the server went Ready: a Ready server can
		// be deleted by a scale down, so it allocates itself.
		r.call(ctx, now, soon, "allocate", "allocate", a.c.Allocate)
	}
	if gs.State != "Allocated" {
		r.forget("ready")
	}
	if gs.State == "Allocated" {
		r.forget("allocate")
	}

	// Players: the list (or alpha player tracking) as the rooms hold them.
	r.syncPlayers(ctx, now, soon, gs, want)
	return next
}

// retire decides whether the server retires: it has hosted
// agones.retire_after_matches matches, or run agones.retire_after; soon is
// told when the latter comes.
func (r *reconciler) retire(now time.Time, soon func(time.Time)) {
	a := r.a
	if r.retiring != "" {
		return
	}
	switch {
	case a.cfg.RetireAfterMatches > 0 && r.hosted >= a.cfg.RetireAfterMatches:
		r.retiring = fmt.Sprintf("hosted %d matches (agones.retire_after_matches)", r.hosted)
	case a.cfg.RetireAfter > 0 && now.Sub(a.started) >= a.cfg.RetireAfter:
		r.retiring = fmt.Sprintf("ran %v (agones.retire_after)", a.cfg.RetireAfter)
	}
	if r.retiring != "" {
		a.log.Info().Str("why", r.retiring).Msg("agones: retiring: no more allocations; Shutdown once the matches have ended")
	} else if a.cfg.RetireAfter > 0 {
		soon(a.started.Add(a.cfg.RetireAfter))
	}
}

// named returns the matches the GameServer's allocations name: the values
// of the matches list, or the annotation (else label) match_key of an
// Allocated GameServer.
func (r *reconciler) named(gs agones.GameServer) []string {
	a := r.a
	if a.cfg.Matches == "list" {
		l, ok := gs.Lists[a.cfg.MatchesList]
		if !ok {
			r.warnOnce("list", func(e *zerolog.Event) {
				e.Str("list", a.cfg.MatchesList).Msg("agones: the GameServer declares no such List: declare it in spec.lists (deploy/agones/fleet.yaml); no match can be allocated")
			})
		}
		return l.Values
	}
	if gs.State != "Allocated" {
		return nil
	}
	id := gs.Annotations[a.cfg.MatchKey]
	if id == "" {
		id = gs.Labels[a.cfg.MatchKey]
	}
	// Agones stamps every allocation with agones.dev/last-allocated: an
	// allocation not shown before is a new one, even if it names a match
	// again (the annotation stays on the GameServer after its match).
	// Without the stamp, the match id names the allocation.
	last, stamped := gs.Annotations["agones.dev/last-allocated"]
	alloc := "\x00" + last
	if !stamped {
		alloc = "\x00" + id
	}
	fresh := !r.seen[alloc]
	r.remember(alloc)
	switch {
	case id != "" && r.live[id]:
	case !fresh:
		// This allocation's match has ended, or it was refused: the
		// server is on its way back to Ready.
		return nil
	case id == "":
		// An allocation that names no match: it is refused, and the
		// server goes back to Ready.
		if len(r.live) == 0 {
			r.refuse("", "no_match", fmt.Sprintf("allocated without the annotation or label %q", a.cfg.MatchKey))
		}
		return nil
	case r.seen[id]:
		r.refuse(id, "repeated", fmt.Sprintf("allocated for the match %q, which this server hosted before: an allocation must name a new match", id))
		return nil
	}
	return []string{id}
}

// admit opens the room of the allocated match id, unless it is open or on
// its way off the matches list. It refuses (gives back) an id it hosted
// before (a matchmaker retrying a match id: a match is played once, and the
// id would otherwise hold the list, and the GameServer Allocated, for
// ever), an allocation that came as the server stopped taking them
// (draining, retiring), and one too many. An id refused before is admitted
// if it comes again and the server can host it now.
func (r *reconciler) admit(id string, draining bool) {
	a := r.a
	switch {
	case r.live[id] || r.gone[id] != "":
		return
	case r.seen[id]:
		r.refuse(id, "repeated", "this server hosted the match before: an allocation must name a new match")
		return
	case draining:
		r.refuse(id, "draining", "the server is draining or shutting down")
		return
	case r.retiring != "":
		r.refuse(id, "retiring", "the server is retiring: "+r.retiring)
		return
	case len(r.live) >= a.cfg.MaxMatches:
		r.refuse(id, "full", fmt.Sprintf("the server already hosts %d matches (agones.max_matches)", len(r.live)))
		return
	}
	switch err := a.s.OpenRoom(id); {
	case err == nil, errors.Is(err, errRoomExists):
		r.remember(id)
		r.live[id] = true
		r.hosted++
		// The room logs "room open" itself.
		a.log.Debug().Str("room", id).Int("hosting", len(r.live)).Msg("agones: allocated: the match's room is open")
	case errors.Is(err, errDraining):
		r.refuse(id, "draining", err.Error())
	case errors.Is(err, errServerFull):
		r.refuse(id, "full", err.Error())
	default:
		r.refuse(id, "invalid", err.Error())
	}
}

// refuse gives back an allocation that opened no room: off the matches
// list (its Counter slot follows), or, for an annotation, the server goes
// Ready again once it hosts nothing.
func (r *reconciler) refuse(id, reason, why string) {
	a := r.a
	if id != "" && a.cfg.Matches == "list" {
		r.gone[id] = "refused: " + why
	}
	a.m.refused.WithLabelValues(reason).Inc()
	a.log.Error().Str("room", id).Str("why", why).Msg("agones: an allocation opened no room: its capacity is given back")
}

// remember notes a match id as seen, forgetting the oldest beyond
// agonesMatchMemory.
func (r *reconciler) remember(id string) {
	if r.seen[id] {
		return
	}
	r.seen[id] = true
	r.seenFIFO = append(r.seenFIFO, id)
	if len(r.seenFIFO) > agonesMatchMemory {
		delete(r.seen, r.seenFIFO[0])
		r.seenFIFO = r.seenFIFO[1:]
	}
}

// unlocked returns the capacity the rooms Counter shows (0 without one, or
// in annotation mode): the server goes Ready only once the Counter's
// capacity is 0, so that no allocation races its Ready.
func (r *reconciler) unlocked(gs agones.GameServer) int64 {
	if r.a.cfg.Matches != "list" {
		return 0
	}
	return gs.Counters[r.a.cfg.RoomsCounter].Capacity
}

// syncCounter keeps the rooms Counter's count equal to the number of
// matches on the list that are not on their way off it (an allocation adds
// one to each; an allocation without a list value, or a match ended or
// refused, leaves the count higher, which gives the slot back), and its
// capacity at max_matches, or at the count when the server takes no more
// (retiring, draining, or about to go Ready). A count is changed by a
// difference, so allocations meanwhile keep theirs.
func (r *reconciler) syncCounter(ctx context.Context, now time.Time, soon func(time.Time), gs agones.GameServer, named []string, draining bool) {
	a := r.a
	c, ok := gs.Counters[a.cfg.RoomsCounter]
	if !ok {
		r.warnOnce("counter", func(e *zerolog.Event) {
			e.Str("counter", a.cfg.RoomsCounter).Msg("agones: the GameServer declares no such Counter: declare it in spec.counters (deploy/agones/fleet.yaml)")
		})
		return
	}
	count := int64(0)
	for _, id := range named {
		if r.gone[id] == "" {
			count++
		}
	}
	capacity := int64(a.cfg.MaxMatches)
	if r.retiring != "" || draining || (len(r.live) == 0 && len(named) == 0 && gs.State == "Allocated") {
		capacity = count
	}
	if c.Count == count && c.Capacity == capacity {
		r.forget("counter")
		return
	}
	u := agones.CounterUpdate{CountDiff: count - c.Count}
	if c.Capacity != capacity {
		u.Capacity = &capacity
	}
	r.call(ctx, now, soon, "counter", "counter", func(ctx context.Context) error {
		_, err := a.c.UpdateCounter(ctx, a.cfg.RoomsCounter, u)
		return err
	})
}

// syncPlayers makes the players list (or alpha player tracking) hold the
// users the rooms hold.
func (r *reconciler) syncPlayers(ctx context.Context, now time.Time, soon func(time.Time), gs agones.GameServer, want []string) {
	a := r.a
	var have []string
	switch a.cfg.Players {
	case "list":
		l, ok := gs.Lists[a.cfg.PlayersList]
		if !ok {
			r.warnOnce("players", func(e *zerolog.Event) {
				e.Str("list", a.cfg.PlayersList).Msg("agones: the GameServer declares no such List: players are not reported; declare it in spec.lists")
			})
			return
		}
		have = l.Values
	case "alpha":
		have = gs.Players
		if !r.capacity {
			r.call(ctx, now, soon, "capacity", "player_capacity", func(ctx context.Context) error {
				err := a.c.SetPlayerCapacity(ctx, int64(a.cfg.MaxMatches*a.s.cfg.MaxPlayers))
				r.capacity = err == nil
				return err
			})
		}
	default:
		return
	}
	for _, u := range want {
		if slices.Contains(have, u) {
			r.forget("player+ " + u)
			continue
		}
		r.forget("player- " + u)
		r.call(ctx, now, soon, "player+ "+u, "player_add", r.playerCall(u, true))
	}
	for _, u := range have {
		if _, ok := slices.BinarySearch(want, u); ok {
			continue
		}
		r.forget("player+ " + u)
		r.call(ctx, now, soon, "player- "+u, "player_remove", r.playerCall(u, false))
	}
	// Calls for users neither wanted nor shown are done.
	for key := range r.calls {
		if u, ok := strings.CutPrefix(key, "player+ "); ok && !slices.Contains(want, u) {
			delete(r.calls, key)
		}
		if u, ok := strings.CutPrefix(key, "player- "); ok && !slices.Contains(have, u) {
			delete(r.calls, key)
		}
	}
}

// playerCall returns the call that reports the user joined (or left):
// through the players list, or alpha player tracking. A user already in the
// list (or not in it) is not an error: an earlier call went through.
func (r *reconciler) playerCall(user string, joined bool) func(context.Context) error {
	a := r.a
	return func(ctx context.Context) error {
		switch {
		case a.cfg.Players == "alpha" && joined:
			return a.c.PlayerConnect(ctx, user)
		case a.cfg.Players == "alpha":
			return a.c.PlayerDisconnect(ctx, user)
		case joined:
			if err := a.c.AddListValue(ctx, a.cfg.PlayersList, user); !inList(err) {
				return err
			}
		default:
			if err := a.c.RemoveListValue(ctx, a.cfg.PlayersList, user); !notInList(err) {
				return err
			}
		}
		return nil
	}
}

// call makes the call key (counted as kind when it fails) unless it is
// backing off after a failure, or settling after a success the GameServer
// does not show yet; soon is told when to look again.
func (r *reconciler) call(ctx context.Context, now time.Time, soon func(time.Time), key, kind string, do func(context.Context) error) {
	c := r.calls[key]
	if c == nil {
		c = &callState{b: backoff{first: agonesRetryFirst, max: agonesRetryMax}}
		r.calls[key] = c
	}
	if now.Before(c.after) {
		soon(c.after)
		return
	}
	cctx, cancel := context.WithTimeout(ctx, agonesCallTimeout)
	err := do(cctx)
	cancel()
	if err != nil {
		c.failures++
		wait := c.b.next()
		c.after = time.Now().Add(wait)
		r.a.m.callErrors.WithLabelValues(kind).Inc()
		r.a.log.Warn().Err(err).Str("call", key).Int("failures", c.failures).Dur("retry_in", wait).Msg("agones: call failed")
	} else {
		if c.failures > 0 {
			r.a.log.Info().Str("call", key).Int("failures", c.failures).Msg("agones: call made after failures")
		}
		c.failures = 0
		c.b.reset()
		c.atSeq = r.seq
		c.after = time.Now().Add(agonesSettle)
	}
	soon(c.after)
}

// forget drops the record of the call key: the GameServer shows its
// effect.
func (r *reconciler) forget(key string) { delete(r.calls, key) }

func (r *reconciler) warnOnce(key string, log func(*zerolog.Event)) {
	if !r.warned[key] {
		r.warned[key] = true
		log(r.a.log.Error())
	}
}

// inList and notInList report the SDK server's errors for a value already
// in a list and a value not in it (pkg/sdkserver/sdkserver.go,
// AddListValue and RemoveListValue: plain errors, so gRPC Unknown, 500).
func inList(err error) bool {
	var se *agones.StatusError
	return errors.As(err, &se) && strings.HasPrefix(se.Message, "already exists")
}

func notInList(err error) bool {
	var se *agones.StatusError
	return errors.As(err, &se) && strings.HasPrefix(se.Message, "not found")
}
