package client

import (
	"math"
	"slices"
	"time"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/spread"
)

// View is what the client shows at a tick: its own player where it predicts
// it (smoothed), everybody else interpolated at RenderTime.
type View struct {
	Tick       int64   // the tick being predicted
	RenderTime float64 // the server time remote entities are shown at, in ticks
	Self       Self
	Players    []Player
	Level      *Level // the level played (the Welcome's digest)
	Welcome    *protocol.Welcome
}

// Self is the local player.
type Self struct {
	ID      uint32
	Team    uint8
	Alive   bool
	Health  float32
	Pos     geom.Vec3 // displayed: the prediction plus the correction being smoothed
	Predict geom.Vec3 // predicted
	Yaw     float64
	Pitch   float64
	// Motion is the predicted movement state (velocity, crouched, on the
	// ground and the ground's normal).
	Motion movement.State
}

// Player is a remote player as shown.
type Player struct {
	ID       uint32
	Team     uint8
	Alive    bool
	Crouched bool // its capsule is the Welcome's crouch_height tall
	Health   uint8
	Pos      geom.Vec3 // feet
	Yaw      float64
	Pitch    float64
}

// Capsule returns the player's hitbox as the client shows it: standing, or
// crouched.
func (v *View) Capsule(p *Player) geom.Capsule {
	return hitbox(v.Welcome).Capsule(p.Pos, p.Crouched)
}

// hitbox is every player's hitbox, as the Welcome gives it.
func hitbox(w *protocol.Welcome) ecs.Hitbox {
	return ecs.Hitbox{Radius: w.Radius, Height: w.Height, HeadHeight: w.HeadHeight, CrouchHeight: w.CrouchHeight}
}

// Eye returns where the local player's shots start: its predicted feet,
// plus the eye height standing or crouched.
func (v *View) Eye() geom.Vec3 { return eye(v.Welcome, v.Self.Predict, v.Self.Motion.Crouched) }

func eye(w *protocol.Welcome, feet geom.Vec3, crouched bool) geom.Vec3 {
	if crouched {
		return feet.Add(geom.V(0, w.CrouchEyeHeight, 0))
	}
	return feet.Add(geom.V(0, w.EyeHeight, 0))
}

func (c *Client) buildView() {
	v := &c.view
	v.Tick, v.RenderTime, v.Level, v.Welcome = c.tick, c.renderTime, c.level, &c.welcome
	v.Self = Self{ID: c.welcome.Player, Team: c.welcome.Team, Alive: c.alive, Health: c.health,
		Pos: c.state.Pos.Add(c.offset), Predict: c.state.Pos, Yaw: c.yaw, Pitch: c.pitch, Motion: c.state}
	v.Players = v.Players[:0]
	a, b, frac := c.interpolated(c.renderTime)
	if a == nil {
		return
	}
	if b != nil && int64(b.Tick)-int64(a.Tick) > c.snapEvery {
		// A snapshot between them was lost: nobody knows where the players
		// were in between, and a straight line through the gap would show
		// them where they never stood (the server rewinds to where they
		// did). Show a, at a's time, until the render time passes the gap.
		b, frac, v.RenderTime = nil, 0, float64(a.Tick)
	}
	// Past the newest snapshot (the next is late): extrapolate from the
	// two newest, for at most maxExtrapolation (advanceRender caps the
	// render time).
	var prev *protocol.State
	ahead := v.RenderTime - float64(a.Tick)
	if b == nil && ahead > 0 {
		prev = c.before(a.Tick)
	}
	find := func(s *protocol.State, id uint32) (protocol.EntityState, bool) {
		j, ok := slices.BinarySearchFunc(s.Players, id, func(e protocol.Entity, id uint32) int { return int(int64(e.ID) - int64(id)) })
		if !ok {
			return protocol.EntityState{}, false
		}
		return s.Players[j].State, true
	}
	// Two states of a player are one motion when it is alive in both and
	// did not teleport (respawn) between them: nobody stood in between.
	moving := func(x, y *protocol.EntityState) bool {
		return x.Flags&protocol.FlagAlive != 0 && y.Flags&protocol.FlagAlive != 0 && x.Flags&protocol.FlagTeleports == y.Flags&protocol.FlagTeleports
	}
	for _, pa := range a.Players {
		p := Player{ID: pa.ID, Team: pa.State.Team, Alive: pa.State.Flags&protocol.FlagAlive != 0,
			Crouched: pa.State.Flags&protocol.FlagCrouched != 0, Health: pa.State.Health,
			Pos: protocol.VecValue(pa.State.Pos), Yaw: protocol.YawValue(pa.State.Yaw), Pitch: protocol.PitchValue(pa.State.Pitch)}
		switch {
		case b != nil:
			if pb, ok := find(b, pa.ID); ok && moving(&pa.State, &pb) {
				p.Pos = p.Pos.Lerp(protocol.VecValue(pb.Pos), frac)
				p.Yaw = lerpAngle(p.Yaw, protocol.YawValue(pb.Yaw), frac)
			}
		case prev != nil:
			if pp, ok := find(prev, pa.ID); ok && moving(&pp, &pa.State) {
				v := p.Pos.Sub(protocol.VecValue(pp.Pos)).Scale(1 / float64(a.Tick-prev.Tick))
				p.Pos = p.Pos.Add(v.Scale(ahead))
			}
		}
		v.Players = append(v.Players, p)
	}
}

func lerpAngle(a, b, t float64) float64 {
	d := math.Remainder(b-a, 2*math.Pi)
	return a + d*t
}

// fired records what the local player saw its hitscan shot hit: the first
// enemy capsule on the ray, unless the level stops the ray first, as shown
// at the render time. The server's lag compensation should agree
// (Stats.SeenConfirmed).
func (c *Client) fired(f *frame) {
	c.stats.ShotsFired++
	w := c.welcome.Weapons[f.q.Weapon]
	if w.Kind != "hitscan" {
		c.shots[f.q.Shot%shotRing] = shotRecord{shot: f.q.Shot, tick: f.tick, valid: true}
		return
	}
	o := eye(&c.welcome, f.st.Pos, f.st.Crouched)
	aim := movement.Aim(f.in.Yaw, f.in.Pitch)
	r := shotRecord{shot: f.q.Shot, tick: f.tick, hitscan: true, valid: true}
	key := spread.Key(c.welcome.SpreadSeed, c.welcome.Player, f.seq)
	n := 0
	for p := range max(int(w.Pellets), 1) { // the server's own pellets (package spread)
		if t := c.firstEnemy(o, spread.Dir(aim, w.Spread, key, p), w.Range); t != 0 && !r.saw(t) && n < maxSeen {
			r.seen[n] = t
			n++
		}
	}
	c.shots[f.q.Shot%shotRing] = r
	if n > 0 {
		c.stats.HitsSeen++
		c.mu.Lock()
		for _, t := range r.seen[:n] {
			c.target(t).HitsSeen++
		}
		c.mu.Unlock()
	}
}

// firstEnemy returns the enemy a ray touches first on the client's screen,
// or 0 when the level (its triangles that block shots) or nothing comes
// first.
func (c *Client) firstEnemy(o, d geom.Vec3, rng float64) uint32 {
	v := &c.view
	best, target := math.Inf(1), uint32(0)
	if h, ok := v.Level.Mesh.Raycast(o, d, rng, level.ShotMask); ok {
		best = h.T
	}
	for i := range v.Players {
		p := &v.Players[i]
		if !p.Alive || p.Team == c.welcome.Team || p.ID == c.welcome.Player {
			continue
		}
		if t, ok := geom.RayCapsule(o, d, rng, v.Capsule(p)); ok && t < best {
			best, target = t, p.ID
		}
	}
	return target
}

// Stats are a client's counters.
type Stats struct {
	Ticks            uint64 // client ticks predicted (inputs produced)
	ServerTick       uint32 // the newest snapshot's tick
	DatagramsSent    uint64
	BytesOut         uint64
	BytesIn          uint64 // snapshot bytes received
	Snapshots        uint64 // decoded
	FullSnapshots    uint64
	SnapshotsDropped uint64 // undecodable (baseline gone) or malformed
	Corrections      uint64 // prediction rewinds while alive: the server's state after a tick differed from the prediction (a lost input)
	MaxCorrection    float64
	Respawns         uint64 // predictions restarted from the server's state as the player came back to life
	ClockJumps       uint64
	ShotsFired       uint64
	HitsSeen         uint64 // hitscan shots that hit an enemy on the client's screen
	HitsConfirmed    uint64 // hits the server confirmed that dealt damage (Hit events)
	NoDamage         uint64 // hits the server registered on a target that took no damage (invulnerable, already dead)
	SeenConfirmed    uint64 // hits seen (shots) that the server registered on a target the shot's pellets hit on the screen (with or without damage)
	// HitEvents counts the Hit and NoDamage events of the player's own
	// hitscan shots; FalsePositives those of them on a target that no pellet
	// of the shot hit on the client's screen.
	HitEvents, FalsePositives uint64
	// SpreadCorrections counts snapshots whose count of the player's shots
	// differed from the prediction (a fire input lost for good): the client
	// took the server's, and its next pellets are the server's again.
	SpreadCorrections uint64
	// Shots (and hits seen) fired after the server had killed the player,
	// learnt from the kill event: the server never fired them.
	ShotsAfterDeath    uint64
	HitsSeenAfterDeath uint64
	Kills, Deaths      uint64
	RTT                time.Duration
	// Hit markers shown (one per shot and target), by what brought them
	// first, and the ticks from each shot to its marker, summed.
	MarkersFromSnapshots, MarkersFromEvents uint64
	MarkerDelayTicks                        uint64
	// The clocks: the interpolation delay in use, the ticks remote players
	// were extrapolated past the newest snapshot, and input packets the
	// sender had not sent yet when the next replaced them.
	Interp          time.Duration
	Extrapolated    uint64
	SendsSuperseded uint64
	// SnapshotDelayP95 is the 95th percentile of how much later than the
	// fastest the last 100 new snapshots arrived: the path's jitter, plus
	// any delay the transport adds.
	SnapshotDelayP95 time.Duration
	// MarginLow is the input clock's low percentile of the margins the
	// server measured, in ticks, net of its steering since.
	MarginLow float64
	// Settling says the input clock is in its first second of snapshots
	// received since Run began, when it may still jump ahead; after it, it
	// only steers. True from Dial until Run has run that second.
	Settling bool
}

// TargetStats counts the player's hitscan hits on one target.
type TargetStats struct {
	HitsSeen       uint64 // shots with a pellet that hit it on the client's screen
	SeenConfirmed  uint64 // of those shots, the ones the server registered on it
	HitEvents      uint64 // hit events (Hit and NoDamage) on it of the player's hitscan shots
	FalsePositives uint64 // hit events on it of shots that no pellet hit it with on the screen
}

// target returns the counters of a target, creating them; c.mu is held.
func (c *Client) target(id uint32) *TargetStats {
	if c.targets == nil {
		c.targets = map[uint32]*TargetStats{}
	}
	t := c.targets[id]
	if t == nil {
		t = &TargetStats{}
		c.targets[id] = t
	}
	return t
}

// Targets returns the player's hit counters per target entity id. It is
// safe to call from any goroutine.
func (c *Client) Targets() map[uint32]TargetStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[uint32]TargetStats, len(c.targets))
	for id, t := range c.targets {
		m[id] = *t
	}
	return m
}

// Stats returns the client's counters as of its last tick. It is safe to
// call from any goroutine.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	s := c.published
	c.mu.Unlock()
	s.BytesIn = c.bytesIn.Load()
	s.RTT = c.roundTrip()
	return s
}

// Prediction is the local player's predicted state at the end of a tick.
type Prediction struct {
	Tick  int64          // the last tick predicted
	Pos   geom.Vec3      // the predicted position after it
	State movement.State // the predicted movement state after it
	Acked int64          // the newest input tick the server has processed
	// Server is the server's position after Acked, from the newest snapshot.
	Server geom.Vec3
}

// Predicted returns the prediction as of the client's last tick. It is safe
// to call from any goroutine.
func (c *Client) Predicted() Prediction {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.prediction
}
