package client

import (
	"math"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/weapons"
)

// correctionThreshold is the prediction error, in metres, above which the
// client rewinds and replays. Client and server run the same float64 code on
// the same quantised inputs, so any real misprediction (a lost input, a
// respawn) is far larger.
const correctionThreshold = 1e-6

// snapThreshold is the correction beyond which the display snaps instead of
// smoothing (seed 001: 2 m).
const snapThreshold = 2.0

func (c *Client) drainSnapshots() {
	var newest protocol.SnapshotHeader
	fresh := false
	for {
		select {
		case d, ok := <-c.datagrams:
			if !ok {
				c.datagrams = nil
				break
			}
			if h, isNew := c.onDatagram(d); isNew {
				newest, fresh = h, true
			}
			continue
		default:
		}
		break
	}
	if fresh { // the clock moves once a tick, on the newest news
		c.adjustClock(&newest)
	}
}

// slot is where the state of a snapshot tick is kept: snapshots are counted
// (the server deltas against any of its last protocol.Baselines snapshots).
func (c *Client) slot(tick uint32) *protocol.State {
	return &c.states[protocol.BaselineSlot(tick, c.snapEvery)]
}

// onDatagram decodes a snapshot against its baseline, keeps it, and
// reconciles with it when it is the newest; it reports whether it was.
func (c *Client) onDatagram(d []byte) (protocol.SnapshotHeader, bool) {
	var h protocol.SnapshotHeader
	if err := protocol.DecodeSnapshotHeader(d, &h); err != nil {
		c.stats.SnapshotsDropped++
		return h, false
	}
	if c.haveSnap && int64(c.newestSnap)-int64(h.Tick) >= c.window() {
		c.stats.SnapshotsDropped++ // too late: its slot holds a newer state now
		return h, false
	}
	var base *protocol.State
	if h.Baseline != protocol.NoTick {
		if b := c.slot(h.Baseline); b.Tick == h.Baseline && c.stateValid(b) {
			base = b
		} else {
			c.stats.SnapshotsDropped++ // its baseline is gone; the next ack fixes it
			return h, false
		}
	} else {
		c.stats.FullSnapshots++
	}
	if err := protocol.DecodeSnapshot(d, base, &h, &c.scratch); err != nil {
		c.stats.SnapshotsDropped++
		return h, false
	}
	slot := c.slot(h.Tick)
	*slot, c.scratch = c.scratch, *slot // keep both slices' storage
	c.stats.Snapshots++
	if c.haveSnap && h.Tick <= c.newestSnap {
		return h, false // late: kept as a baseline, but nothing newer to learn
	}
	c.newestSnap, c.haveSnap = h.Tick, true
	c.stats.ServerTick = h.Tick
	c.reconcile(&h)
	return h, true
}

// window is how many ticks back the kept states reach.
func (c *Client) window() int64 { return protocol.Baselines * c.snapEvery }

// stateValid guards against a slot left from long ago whose tick happens to
// match: only the states of the last protocol.Baselines snapshots are trusted.
func (c *Client) stateValid(s *protocol.State) bool {
	return !c.haveSnap || (s.Tick <= c.newestSnap && int64(c.newestSnap)-int64(s.Tick) < c.window())
}

// adjustClock keeps the client's inputs Lead ticks ahead of the server:
// slightly faster ticks when they arrive late, slower when too early, a jump
// when far off (Overwatch-style time dilation). The lead means nothing
// until the server has received an input sent on the current clock: one
// from before it (before the join, or before a jump) is older than
// firstTick, or newer than the clock after a jump back.
func (c *Client) adjustClock(h *protocol.SnapshotHeader) {
	if n := int64(h.Tick) + int64(h.InputLead); n < c.firstTick || n > c.tick {
		return
	}
	lead := int(h.InputLead)
	want := c.cfg.Lead
	switch {
	case lead < want-8 || lead > want+24:
		rtt := c.conn.ConnectionStats().SmoothedRTT.Seconds() * float64(c.welcome.TickRate)
		c.tick = int64(h.Tick) + int64(math.Ceil(rtt)) + int64(want)
		// Send nothing from before the jump: the ring holds no input for the
		// ticks skipped, only older ones.
		c.firstTick = c.tick
		c.stats.ClockJumps++
		c.scale = 1
	case lead < want:
		c.scale = 0.9
	case lead > want+2:
		c.scale = 1.1
	default:
		c.scale = 1
	}
}

// reconcile compares the server's state after the last input it processed
// with the prediction for that tick, and on a difference rewinds to the
// server's state and replays the inputs since.
func (c *Client) reconcile(h *protocol.SnapshotHeader) {
	c.health = h.Own.Health
	server := geom.FromArray(h.Own.Pos)
	c.serverPos = server
	wasAlive := c.alive
	c.alive = h.Own.Alive
	if h.InputAck != protocol.NoTick {
		c.ackedInput = max(c.ackedInput, int64(h.InputAck))
	}
	c.reconcileShots(h)
	if !c.alive {
		c.tf.Pos, c.offset = server, geom.Vec3{}
		return
	}
	if !wasAlive {
		weapons.Refill(&c.arsenal, c.defs) // respawned, with a full arsenal
	}
	// The server's position is the state after the snapshot's tick: its
	// inputs up to input_ack applied, any later tick rooted (their inputs
	// come too late now). So compare with the prediction of that tick and
	// replay the ticks after it.
	k := int64(h.Tick)
	if k < c.reconciled || k < c.firstTick {
		return
	}
	c.reconciled = k
	f := &c.ring[k%ringSize]
	if f.tick != k || k >= c.tick {
		return // not predicted (yet, or any more)
	}
	errLen := server.Sub(f.pos).Len()
	if errLen <= correctionThreshold && wasAlive {
		return
	}
	displayed := c.tf.Pos.Add(c.offset)
	tf := ecs.Transform{Pos: server, Yaw: f.in.Yaw, Pitch: f.in.Pitch}
	var vel ecs.Velocity
	f.pos = server
	dt := c.dt.Seconds()
	for t := k + 1; t < c.tick; t++ {
		g := &c.ring[t%ringSize]
		movement.Step(&tf, &vel, &g.in, dt, c.params)
		g.pos = tf.Pos
	}
	c.tf.Pos = tf.Pos
	c.offset = displayed.Sub(c.tf.Pos)
	if c.offset.Len() > snapThreshold {
		c.offset = geom.Vec3{}
	}
	c.stats.Corrections++
	c.stats.MaxCorrection = max(c.stats.MaxCorrection, errLen)
}

// reconcileShots takes the server's count of the player's shots: the spread
// sequence is the server's, and a shot the client predicted but the server
// never fired (its input lost for good) would put the client's pellets one
// behind for the rest of the match.
func (c *Client) reconcileShots(h *protocol.SnapshotHeader) {
	k := int64(h.Tick)
	f := &c.ring[k%ringSize]
	if f.tick != k || k >= c.tick || k < c.firstTick {
		return // not predicted (yet, or any more)
	}
	d := h.Own.Shots - f.shots // modulo 2³²
	if d == 0 {
		return
	}
	for t := k; t < c.tick; t++ {
		g := &c.ring[t%ringSize]
		g.shots += d
		g.seq += d
	}
	c.arsenal.Fired += d
	c.stats.SpreadCorrections++
}

// advanceRender moves the time remote entities are shown at: one tick per
// tick at the current speed, pulled gently toward the interpolation delay
// behind the newest snapshot, snapped when far off.
func (c *Client) advanceRender() {
	c.renderTime += c.scale
	if !c.haveSnap {
		return
	}
	target := float64(c.newestSnap) - c.interp
	if d := target - c.renderTime; math.Abs(d) > 3 {
		c.renderTime = target
	} else {
		c.renderTime += 0.1 * d
	}
}

// interpolated returns two snapshots around time t (a at or before, b after;
// b nil when there is none yet) and the fraction of the way from a to b.
func (c *Client) interpolated(t float64) (a, b *protocol.State, frac float64) {
	if !c.haveSnap {
		return nil, nil, 0
	}
	for i := range c.states {
		s := &c.states[i]
		if !c.stateValid(s) { // never written (NoTick), or from long ago
			continue
		}
		st := float64(s.Tick)
		if st <= t && (a == nil || s.Tick > a.Tick) {
			a = s
		}
		if st > t && (b == nil || s.Tick < b.Tick) {
			b = s
		}
	}
	if a == nil {
		return b, nil, 0
	}
	if b != nil {
		frac = (t - float64(a.Tick)) / float64(b.Tick-a.Tick)
	}
	return a, b, frac
}
