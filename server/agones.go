package server

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/agones"
)

// agonesHost runs the server's side of the Agones lifecycle through the SDK
// server's REST API: Ready once listening, Health while every room loop
// makes progress, the allocated match's room opened from the allocation,
// players reported as they join and leave, and Shutdown once the match has
// ended when the process serves one match.
type agonesHost struct {
	s     *Server
	c     *agones.Client
	cfg   *AgonesConfig
	log   zerolog.Logger
	calls chan agonesCall // REST calls made off the room goroutines, in order
	done  chan struct{}   // closed by close: the worker makes the calls left, then stops
	once  sync.Once

	mu    sync.Mutex
	match string // the allocated match's room, "" before an allocation
	off   bool   // the SDK server was unreachable at start and fail_open is set
}

type agonesCall struct {
	what string
	do   func(context.Context) error
}

// CertAnnotation is the annotation the server sets, through the SDK, to its
// certificate's SHA-256 (hex): the matchmaker reads it with the allocation
// and hands it to players with their tokens, to pin. The SDK server stores
// SDK annotations under its own prefix: the GameServer shows it as
// agones.dev/sdk-rewind-cert-sha256.
const CertAnnotation = "rewind-cert-sha256"

// agonesCallQueue bounds the REST calls waiting for the worker.
const agonesCallQueue = 1024

// newAgonesHost returns the Agones integration the configuration asks for:
// nil when Agones is off, or absent in auto mode.
func newAgonesHost(s *Server, cfg *AgonesConfig) (*agonesHost, error) {
	if cfg.Mode == "off" {
		return nil, nil
	}
	ac := agones.Config{Addr: cfg.SDKAddress}
	if ac.Addr == "" {
		env, present, err := agones.ConfigFromEnv(os.Getenv)
		if err != nil {
			return nil, fmt.Errorf("config: agones: %w", err)
		}
		if !present {
			if cfg.Mode == "on" {
				return nil, fmt.Errorf("config: agones.mode: on, but %s is not set and agones.sdk_address is empty", agones.EnvPort)
			}
			return nil, nil
		}
		ac = env
	}
	return &agonesHost{s: s, c: agones.New(ac), cfg: cfg, calls: make(chan agonesCall, agonesCallQueue), done: make(chan struct{}),
		log: s.log.With().Str("component", "agones").Str("sdk", ac.Addr).Logger()}, nil
}

// start sets the certificate annotation and reports Ready (the server
// listens), then starts the health, watch and call loops. The SDK server
// may come up after the game server (its REST gateway listens only once it
// reaches the Kubernetes API), so both calls are retried for
// agones.ready_timeout, as Agones' own SDKs do; still unreachable after
// that is an error, or, with fail_open, a logged error and a server
// without Agones.
func (a *agonesHost) start() error {
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
	a.log.Info().Msg("agones: ready")
	if a.cfg.Players == "alpha" {
		a.enqueue("set the player capacity", func(ctx context.Context) error {
			return a.c.SetPlayerCapacity(ctx, int64(a.s.cfg.MaxPlayers))
		})
	}
	a.s.wg.Add(3)
	go a.health()
	go a.watch()
	go a.work()
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
			a.log.Warn().Err(err).Msg("agones: not healthy: Health withheld")
			continue
		}
		ctx, cancel := context.WithTimeout(a.s.ctx, a.cfg.HealthPeriod)
		if err := a.c.Health(ctx); err != nil && a.s.ctx.Err() == nil {
			a.log.Warn().Err(err).Msg("agones: health")
		}
		cancel()
	}
}

// watch follows the GameServer: an allocation opens its match's room, a
// Shutdown state stops the server. A broken watch is watched again.
func (a *agonesHost) watch() {
	defer a.s.wg.Done()
	for {
		err := a.c.WatchGameServer(a.s.ctx, a.onGameServer)
		if a.s.ctx.Err() != nil {
			return
		}
		a.log.Warn().Err(err).Msg("agones: watch broke; watching again")
		select {
		case <-a.s.ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (a *agonesHost) onGameServer(gs agones.GameServer) {
	switch gs.State {
	case "Allocated":
		id := gs.Annotations[a.cfg.MatchKey]
		if id == "" {
			id = gs.Labels[a.cfg.MatchKey]
		}
		a.mu.Lock()
		seen := a.match
		if id != "" {
			a.match = id
		}
		a.mu.Unlock()
		if id == "" || id == seen {
			if id == "" && seen == "" {
				a.log.Warn().Str("key", a.cfg.MatchKey).Msg("agones: allocated without a match annotation or label: no room opened")
			}
			return
		}
		switch err := a.s.OpenRoom(id); {
		case err == nil, errors.Is(err, errRoomExists):
			a.log.Info().Str("room", id).Msg("agones: allocated: the match's room is open")
		default:
			a.log.Error().Err(err).Str("room", id).Msg("agones: allocated, but the match's room could not be opened")
		}
	case "Shutdown":
		a.s.stop("agones: the GameServer is shutting down")
	}
}

// work makes the queued REST calls, one at a time, in order, each within
// agonesCallTimeout of its own (not the server's context: a Shutdown after
// the last match, or the last players leaving, must still be sent while the
// server stops). When close is called it makes the calls left, then
// returns.
func (a *agonesHost) work() {
	defer a.s.wg.Done()
	for {
		select {
		case c := <-a.calls:
			a.call(c)
		case <-a.done:
			for {
				select {
				case c := <-a.calls:
					a.call(c)
				default:
					return
				}
			}
		}
	}
}

// agonesCallTimeout bounds each queued REST call.
const agonesCallTimeout = 5 * time.Second

func (a *agonesHost) call(c agonesCall) {
	ctx, cancel := context.WithTimeout(context.Background(), agonesCallTimeout)
	defer cancel()
	if err := c.do(ctx); err != nil {
		a.log.Warn().Err(err).Msg("agones: " + c.what)
	}
}

// close tells the worker that no call will come any more: Shutdown calls it
// once every room has closed (and queued its last calls).
func (a *agonesHost) close() {
	if a != nil {
		a.once.Do(func() { close(a.done) })
	}
}

func (a *agonesHost) enqueue(what string, do func(context.Context) error) {
	select {
	case a.calls <- agonesCall{what: what, do: do}:
	default:
		a.log.Error().Msg("agones: call queue full, dropped: " + what)
	}
}

// playerJoined and playerLeft report a player, by user id.
func (a *agonesHost) playerJoined(user string) { a.player(user, true) }
func (a *agonesHost) playerLeft(user string)   { a.player(user, false) }

func (a *agonesHost) player(user string, joined bool) {
	if !a.active() {
		return
	}
	switch a.cfg.Players {
	case "list":
		if joined {
			a.enqueue("add player "+user, func(ctx context.Context) error { return a.c.AddListValue(ctx, a.cfg.PlayersList, user) })
		} else {
			a.enqueue("remove player "+user, func(ctx context.Context) error { return a.c.RemoveListValue(ctx, a.cfg.PlayersList, user) })
		}
	case "alpha":
		if joined {
			a.enqueue("player connect "+user, func(ctx context.Context) error { return a.c.PlayerConnect(ctx, user) })
		} else {
			a.enqueue("player disconnect "+user, func(ctx context.Context) error { return a.c.PlayerDisconnect(ctx, user) })
		}
	}
}

// roomClosed shuts the GameServer down once its allocated match has closed,
// when the process serves one match.
func (a *agonesHost) roomClosed(id string) {
	if !a.active() || !a.cfg.OneMatch {
		return
	}
	a.mu.Lock()
	match := a.match
	a.mu.Unlock()
	if id != match {
		return
	}
	a.enqueue("shutdown", func(ctx context.Context) error {
		err := a.c.Shutdown(ctx)
		if err == nil {
			a.log.Info().Str("room", id).Msg("agones: the match has ended: shutdown")
		}
		return err
	})
	a.s.stop("the allocated match " + id + " has ended")
}
