package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/protocol"
)

// Config configures a Session: client.Config (where to connect, who to be,
// how to verify the server, the level the game holds), whose Input and
// callbacks are the session's own, and the session's bounds.
type Config struct {
	client.Config
	// DialTimeout bounds the connection and the join (default 10 s).
	DialTimeout time.Duration
	// Events is how many events wait for Events before newer ones are
	// dropped (and counted in Stats.EventsDropped); default 256.
	Events int
	// OnTick, when set, runs on the tick loop's goroutine at every client
	// tick, with the view the client shows, before the session takes the
	// intent for the tick: a host that mirrors the session where the game
	// reads it (librewind, in C memory) copies the view and the events and
	// sets the intent there. It must not keep v.
	OnTick func(v *client.View)
}

// Status is where a session is.
type Status int32

// A session's statuses, in the order it goes through them.
const (
	Connecting Status = iota // dialling and joining
	Playing                  // joined: Frame shows the match
	Closed                   // over: Err says why (nil when Close ended it)
)

func (s Status) String() string {
	switch s {
	case Connecting:
		return "connecting"
	case Playing:
		return "playing"
	case Closed:
		return "closed"
	}
	return fmt.Sprintf("status(%d)", int32(s))
}

// Intent is what the player does (client.Intent): the sticks, the aim, the
// weapon and the fire, reload, jump, crouch and sprint buttons.
type Intent = client.Intent

// Player is a remote player as shown (client.Player); Object a projectile
// or a placed shield (client.Object).
type (
	Player = client.Player
	Object = client.Object
)

// Self is the local player as shown.
type Self struct {
	ID       uint32
	Team     uint8
	Alive    bool
	Health   float32
	Pos      geom.Vec3 // the feet: the prediction, with a correction being smoothed away
	Yaw      float64   // radians
	Pitch    float64
	Vel      geom.Vec3 // m/s, as predicted
	Crouched bool
	OnGround bool
}

// Frame is what to draw now.
type Frame struct {
	Status Status
	// Tick is the client tick of the newer of the two views blended, and
	// Alpha how far the frame is from the older (0) to it (1).
	Tick  int64
	Alpha float64
	// RenderTime is the server time the remote players and projectiles are
	// shown at, in ticks; TickRate the server's ticks per second.
	RenderTime float64
	TickRate   int
	Self       Self
	// Players and Objects are how many remote players and objects there
	// are: Frame writes the first len(buffer) of them.
	Players, Objects int
}

// Session is one player's connection, driven by the game's frame loop.
type Session struct {
	cfg    Config
	cancel context.CancelFunc
	done   chan struct{}
	status atomic.Int32

	mu      sync.Mutex // guards what follows: the tick loop and the game meet here
	err     error
	intent  Intent
	pressed Intent // buttons pressed since the tick loop last took the intent
	views   [2]view
	cur     int // the newer view
	events  queue
	client  *client.Client
	now     func() time.Time // the clock Frame blends by (tests set it)
}

// view is what the client showed at one of its ticks.
type view struct {
	valid      bool
	at         time.Time
	tick       int64
	dt         time.Duration // the tick's length
	renderTime float64
	tickRate   int
	self       Self
	players    []Player
	objects    []Object
}

// Start checks cfg and starts connecting in the background; it does not
// wait for the network. Status and Err say how it goes.
func Start(cfg Config) (*Session, error) {
	if cfg.Addr == "" {
		return nil, errors.New("session: Config.Addr is empty")
	}
	if cfg.Input != nil || cfg.OnEvent != nil || cfg.OnHitMarker != nil || cfg.OnShot != nil {
		return nil, errors.New("session: Config.Input, OnEvent, OnHitMarker and OnShot are the session's own: leave them nil")
	}
	if cfg.Channel != "" && cfg.Channel != "quic" {
		return nil, fmt.Errorf("session: Config.Channel: %q is neither \"\" (sealed) nor \"quic\"", cfg.Channel)
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := newSession(cfg)
	s.cancel = cancel
	go s.run(ctx)
	return s, nil
}

// newSession is a session that has not started.
func newSession(cfg Config) *Session {
	if cfg.Events <= 0 {
		cfg.Events = 256
	}
	s := &Session{cfg: cfg, cancel: func() {}, done: make(chan struct{}), now: time.Now}
	s.events.init(cfg.Events)
	return s
}

// run dials, plays until the session ends, and reports how it ended.
func (s *Session) run(ctx context.Context) {
	defer close(s.done)
	cc := s.cfg.Config
	cc.Input, cc.OnEvent, cc.OnHitMarker = s, s.onEvent, s.onHitMarker
	dctx, dcancel := context.WithTimeout(ctx, s.cfg.DialTimeout)
	c, err := client.Dial(dctx, cc)
	dcancel()
	if err != nil {
		if ctx.Err() != nil {
			err = nil // Close while connecting
		}
		s.finish(err)
		return
	}
	s.mu.Lock()
	s.client = c
	s.mu.Unlock()
	s.status.Store(int32(Playing))
	s.finish(c.Run(ctx))
	c.Close()
}

// finish ends the session with err (nil: closed by Close) and queues the
// Closed event.
func (s *Session) finish(err error) {
	ev := Event{Kind: EventClosed, Name: "closed"}
	var ce *client.CloseError
	switch {
	case errors.As(err, &ce):
		ev.Code, ev.Name = ce.Code, ce.Reason
	case err != nil:
		ev.Code, ev.Name = CloseError, err.Error()
	}
	s.mu.Lock()
	s.err = err
	s.events.last(ev)
	s.mu.Unlock()
	s.status.Store(int32(Closed))
}

// CloseError is the Code of a Closed event for a session that ended on an
// error of its own (a refused join, a level mismatch, a network error)
// rather than a close from the server: above every code the server sends.
const CloseError = 1 << 16

// Status returns where the session is.
func (s *Session) Status() Status { return Status(s.status.Load()) }

// Err returns why the session closed: nil while it runs and when Close
// ended it.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close ends the session: it leaves the room (telling the server) in the
// background and returns at once. It may be called more than once, from
// any goroutine.
func (s *Session) Close() { s.cancel() }

// Wait waits until the session has closed and its connection is gone, or
// ctx ends.
func (s *Session) Wait(ctx context.Context) error {
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SetIntent sets what the player does from now on. A fire, reload or jump
// button that is down in any intent set between two client ticks is down
// for the next tick, even if a later intent released it: a press shorter
// than a tick still fires once, reloads or jumps.
func (s *Session) SetIntent(in Intent) {
	s.mu.Lock()
	s.intent = in
	s.pressed.Fire = s.pressed.Fire || in.Fire
	s.pressed.Reload = s.pressed.Reload || in.Reload
	s.pressed.Jump = s.pressed.Jump || in.Jump
	s.mu.Unlock()
}

// Intent implements client.InputSource for the tick loop: it keeps the view
// the client shows at this tick for Frame, and takes the latest intent,
// with the buttons pressed since the last tick.
func (s *Session) Intent(v *client.View) Intent {
	if s.cfg.OnTick != nil {
		s.cfg.OnTick(v)
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur ^= 1
	p := &s.views[s.cur]
	p.valid, p.at, p.tick, p.renderTime = true, now, v.Tick, v.RenderTime
	p.tickRate = int(v.Welcome.TickRate)
	p.dt = time.Second / time.Duration(max(p.tickRate, 1))
	m := &v.Self.Motion
	p.self = Self{ID: v.Self.ID, Team: v.Self.Team, Alive: v.Self.Alive, Health: v.Self.Health, Pos: v.Self.Pos,
		Yaw: v.Self.Yaw, Pitch: v.Self.Pitch, Vel: m.Vel, Crouched: m.Crouched, OnGround: m.OnGround}
	p.players = append(p.players[:0], v.Players...)
	p.objects = append(p.objects[:0], v.Objects...)
	in := s.intent
	in.Fire = in.Fire || s.pressed.Fire
	in.Reload = in.Reload || s.pressed.Reload
	in.Jump = in.Jump || s.pressed.Jump
	s.pressed = Intent{}
	return in
}

// teleport is how far, in metres, a player or projectile may move between
// two client ticks and still be drawn moving: further is a respawn or a
// new entity, drawn where it is now.
const teleport = 4.0

// Frame fills f with what to draw now, and players and objects with the
// remote players and the projectiles and shields (the first len of each;
// f.Players and f.Objects say how many there are). It returns how many of
// each it wrote. Before the first tick, and after the session closed, f
// holds the status and the last view.
func (s *Session) Frame(f *Frame, players []Player, objects []Object) (np, no int) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, prev := &s.views[s.cur], &s.views[s.cur^1]
	*f = Frame{Status: s.Status()}
	if !cur.valid {
		return 0, 0
	}
	alpha := 1.0
	if prev.valid && cur.tick == prev.tick+1 {
		alpha = min(max(float64(now.Sub(cur.at))/float64(cur.dt), 0), 1)
	} else {
		prev = cur // a jump of the clock, or the first view: nothing to blend
	}
	f.Tick, f.Alpha, f.TickRate = cur.tick, alpha, cur.tickRate
	f.RenderTime = prev.renderTime + (cur.renderTime-prev.renderTime)*alpha
	f.Self = cur.self
	if cur.self.Alive == prev.self.Alive && cur.self.Pos.Sub(prev.self.Pos).Len() <= teleport {
		f.Self.Pos = prev.self.Pos.Lerp(cur.self.Pos, alpha)
		f.Self.Yaw = geom.LerpAngle(prev.self.Yaw, cur.self.Yaw, alpha)
		f.Self.Pitch = prev.self.Pitch + (cur.self.Pitch-prev.self.Pitch)*alpha
	}
	f.Players, f.Objects = len(cur.players), len(cur.objects)
	np, no = min(len(players), len(cur.players)), min(len(objects), len(cur.objects))
	blend(players[:np], cur.players, prev.players, alpha, playerID, mixPlayer)
	blend(objects[:no], cur.objects, prev.objects, alpha, objectID, mixObject)
	return np, no
}

// blend writes to out the first len(out) entities of cur, each mixed with
// its namesake in prev by alpha, when prev has it (both in id order, the
// snapshot's).
func blend[T any](out, cur, prev []T, alpha float64, id func(*T) uint32, mix func(q, p *T, alpha float64)) {
	j := 0
	for i := range out {
		out[i] = cur[i]
		p := &out[i]
		for j < len(prev) && id(&prev[j]) < id(p) {
			j++
		}
		if j < len(prev) && id(&prev[j]) == id(p) {
			mix(&prev[j], p, alpha)
		}
	}
}

func playerID(p *Player) uint32 { return p.ID }
func objectID(o *Object) uint32 { return o.ID }

// mixPlayer moves p back toward q, where it was a tick before, unless it
// died, came back or teleported in between.
func mixPlayer(q, p *Player, alpha float64) {
	if q.Alive == p.Alive && q.Pos.Sub(p.Pos).Len() <= teleport {
		p.Pos = q.Pos.Lerp(p.Pos, alpha)
		p.Yaw = geom.LerpAngle(q.Yaw, p.Yaw, alpha)
		p.Pitch = q.Pitch + (p.Pitch-q.Pitch)*alpha
	}
}

// mixObject moves a projectile back toward where it was a tick before.
func mixObject(q, o *Object, alpha float64) {
	if o.Kind == protocol.KindProjectile && q.Pos.Sub(o.Pos).Len() <= teleport {
		o.Pos = q.Pos.Lerp(o.Pos, alpha)
	}
}

// Stats are a session's counters.
type Stats struct {
	Status Status
	// RTT is the round trip to the server; SnapshotLoss the share of the
	// recent snapshots that never arrived.
	RTT          time.Duration
	SnapshotLoss float64
	// ServerTick is the newest snapshot's tick; Ticks the client ticks
	// predicted; Snapshots those decoded, SnapshotsDropped those dropped
	// (undecodable, too late); Corrections the predictions the server's
	// state corrected.
	ServerTick                             uint32
	Ticks, Snapshots, SnapshotsDropped     uint64
	Corrections                            uint64
	ShotsFired, HitsConfirmed, HitsClamped uint64
	Kills, Deaths                          uint64
	BytesIn, BytesOut                      uint64
	Interp                                 time.Duration // the interpolation delay in use
	EventsDropped                          uint64
}

// Stats returns the session's counters.
func (s *Session) Stats() Stats {
	s.mu.Lock()
	c, dropped := s.client, s.events.dropped
	s.mu.Unlock()
	st := Stats{Status: s.Status(), EventsDropped: dropped}
	if c == nil {
		return st
	}
	cs := c.Stats()
	st.RTT, st.SnapshotLoss, st.ServerTick = cs.RTT, cs.SnapshotLoss, cs.ServerTick
	st.Ticks, st.Snapshots, st.SnapshotsDropped, st.Corrections = cs.Ticks, cs.Snapshots, cs.SnapshotsDropped, cs.Corrections
	st.ShotsFired, st.HitsConfirmed, st.HitsClamped = cs.ShotsFired, cs.HitsConfirmed, cs.HitsClamped
	st.Kills, st.Deaths, st.BytesIn, st.BytesOut, st.Interp = cs.Kills, cs.Deaths, cs.BytesIn, cs.BytesOut, cs.Interp
	return st
}

// Welcome returns the match the session joined (the server's Welcome: the
// player's id and team, the tick rate, the character's sizes and eye
// heights, the weapons), once it is Playing.
func (s *Session) Welcome() (protocol.Welcome, bool) {
	s.mu.Lock()
	c := s.client
	s.mu.Unlock()
	if c == nil {
		return protocol.Welcome{}, false
	}
	return c.Welcome(), true
}
