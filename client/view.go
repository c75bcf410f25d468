package client

import (
	"slices"
	"time"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/protocol"
)

// View is what the client shows at a tick: its own player where it predicts
// it (smoothed), everybody else interpolated at RenderTime.
type View struct {
	Tick       int64   // the tick being predicted
	RenderTime float64 // the server time remote entities are shown at, in ticks
	Self       Self
	Players    []Player
	Objects    []Object // projectiles and shields, at RenderTime
	Level      *Level   // the level played (the Welcome's digest)
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

// Object is a projectile or a placed shield as shown.
type Object struct {
	ID     uint32
	Kind   uint8 // protocol.KindProjectile or protocol.KindShield
	Team   uint8
	Owner  uint32 // the player that fired or placed it
	Weapon uint8  // a weapon id of the Welcome
	// Pos is a projectile's centre at RenderTime (where it was fired, moved
	// along Vel one step per server tick), or a shield's lowest corner.
	Pos geom.Vec3
	// Vel is a projectile's velocity in m/s, or a shield's size in metres.
	Vel geom.Vec3
}

// Capsule returns the player's hitbox as the client shows it: standing, or
// crouched.
func (v *View) Capsule(p *Player) geom.Capsule {
	return hitbox(v.Welcome).Capsule(p.Pos, p.Crouched)
}

// hitbox is every player's hitbox, as the Welcome gives it.
func hitbox(w *protocol.Welcome) geom.Hitbox {
	return geom.Hitbox{Radius: w.Radius, Height: w.Height, HeadHeight: w.HeadHeight, CrouchHeight: w.CrouchHeight}
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
	v.Players, v.Objects = v.Players[:0], v.Objects[:0]
	a, b, frac := c.interpolated(c.renderTime)
	if a == nil {
		return
	}
	if b != nil && int64(b.Tick)-int64(a.Tick) > c.interval {
		// A snapshot between them was lost: nobody knows where the players
		// were in between, and a straight line through the gap would show
		// them where they never stood (the server rewinds to where they
		// did). Show a, at a's time, until the render time passes the gap.
		b, frac, v.RenderTime = nil, 0, float64(a.Tick)
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
				p.Yaw = geom.LerpAngle(p.Yaw, protocol.YawValue(pb.Yaw), frac)
			}
		}
		v.Players = append(v.Players, p)
	}
	// A projectile moves one step of Vel/tick_rate per server tick from
	// where it was fired: after tick t it is at Pos + Vel·(t − Start + 1)/
	// tick_rate (docs/protocol.md), which RenderTime continues between ticks.
	// It is shown from the newest snapshot at or before the render time
	// that has it.
	for _, o := range a.Objects {
		if o.State.Kind != protocol.KindProjectile {
			continue
		}
		steps := v.RenderTime - float64(o.State.Start) + 1
		if steps < 0 {
			continue // fired after the time shown
		}
		ob := object(&o)
		ob.Pos = ob.Pos.AddScaled(ob.Vel, steps/float64(c.welcome.TickRate))
		v.Objects = append(v.Objects, ob)
	}
	// Shields are never rewound: a shot meets the shields of the tick it
	// is fired in, not of the time shown. So they are shown as the newest
	// snapshot has them, until the tick being predicted (the tick this
	// client's shots are fired in) reaches the first tick they no longer
	// stand (Start).
	if n := c.newestState(); n != nil {
		for _, o := range n.Objects {
			if o.State.Kind == protocol.KindShield && (o.State.Start == 0 || v.Tick < int64(o.State.Start)) {
				v.Objects = append(v.Objects, object(&o))
			}
		}
	}
}

// object is an object as a snapshot carries it.
func object(o *protocol.Entity) Object {
	return Object{ID: o.ID, Kind: o.State.Kind, Team: o.State.Team, Owner: o.State.Owner, Weapon: o.State.Weapon,
		Pos: protocol.VecValue(o.State.Pos), Vel: protocol.VecValue(o.State.Vel)}
}

// newestState returns the newest snapshot's state, nil before the first.
func (c *Client) newestState() *protocol.State {
	if !c.haveSnap {
		return nil
	}
	for i := range c.states {
		if s := &c.states[i]; s.Tick == c.newestSnap {
			return s
		}
	}
	return nil
}

// fired remembers a shot the player fired, for its hit markers, and shows
// it to OnShot.
func (c *Client) fired(f *frame) {
	c.stats.ShotsFired++
	c.shots[f.q.Shot%shotRing] = shotRecord{shot: f.q.Shot, tick: f.tick, view: f.in.ViewTime.Ticks(), valid: true}
	if c.cfg.OnShot != nil {
		c.cfg.OnShot(Shot{ID: f.q.Shot, Tick: f.tick, Weapon: f.q.Weapon, Eye: eye(&c.welcome, f.st.Pos, f.st.Crouched),
			Yaw: f.in.Yaw, Pitch: f.in.Pitch, Seq: f.seq, View: &c.view})
	}
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
	// SnapshotLoss is the share of the recent snapshots that never arrived
	// (the newest ticks' gaps).
	SnapshotLoss  float64
	Corrections   uint64 // prediction rewinds while alive: the server's state after a tick differed from the prediction (a lost input)
	MaxCorrection float64
	Respawns      uint64 // predictions restarted from the server's state as the player came back to life
	ClockJumps    uint64
	ShotsFired    uint64
	HitsConfirmed uint64 // hits the server confirmed that dealt damage (Hit events)
	NoDamage      uint64 // hits the server registered on a target that took no damage (invulnerable, already dead)
	// HitsClamped counts the player's hits (Hit and NoDamage events) that
	// the server resolved more than half a tick later than the shot's view
	// time: its bound on view lag (what it measured of this client) cut
	// the claim, and the shot was judged nearer the present than it was
	// seen.
	HitsClamped uint64
	// SpreadCorrections counts snapshots whose count of the player's shots
	// differed from the prediction (a fire input lost for good): the client
	// took the server's, and its next pellets are the server's again.
	SpreadCorrections uint64
	Kills, Deaths     uint64
	RTT               time.Duration
	// Hit markers shown (one per shot and target), by what brought them
	// first, and the ticks from each shot to its marker, summed.
	MarkersFromSnapshots, MarkersFromEvents uint64
	MarkerDelayTicks                        uint64
	// The clocks: the interpolation delay in use, the ticks remote players
	// were held at the newest snapshot because the next was late (the
	// client never shows them past it), and input packets the sender had
	// not sent yet when the next replaced them.
	Interp time.Duration
	Held   uint64
	// InputBudget is how many inputs an input datagram carries at most
	// now, and BudgetCuts how often a queue on the path cut it
	// (Config.Redundancy).
	InputBudget int
	BudgetCuts  uint64
	// AwaitingLate counts the snapshots not reconciled with because they
	// showed ticks rooted whose inputs may still run late.
	AwaitingLate    uint64
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
