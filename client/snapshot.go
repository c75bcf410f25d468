package client

import (
	"math"
	"time"

	"github.com/rewind-gg/rewind/arsenal"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/input"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/protocol"
)

// correctionThreshold is the prediction error, in metres (and metres per
// second for the velocity), above which the client rewinds and replays.
// Client and server run the same float64 code on the same quantised inputs,
// so any real misprediction (a lost input, a respawn) is far larger.
const correctionThreshold = 1e-6

// snapThreshold is the correction beyond which the display snaps instead of
// smoothing (seed 001: 2 m).
const snapThreshold = 2.0

func (c *Client) drainSnapshots() {
	var newest protocol.SnapshotHeader
	var newestAt time.Time
	fresh := false
	for {
		select {
		case d, ok := <-c.datagrams:
			if !ok {
				c.datagrams = nil
				break
			}
			if h, isNew := c.onDatagram(d.b, d.at); isNew {
				newest, newestAt, fresh = h, d.at, true
			}
			select {
			case c.freeIn <- d.b:
			default:
			}
			continue
		default:
		}
		break
	}
	if fresh { // the clock moves once a tick, on the newest news
		c.adjustClock(&newest, newestAt)
	}
}

// slot is where the state of a snapshot tick is kept: snapshots are counted
// (the server deltas against any of its last protocol.Baselines snapshots).
func (c *Client) slot(tick uint32) *protocol.State {
	return &c.states[protocol.BaselineSlot(tick, c.snapEvery)]
}

// onDatagram decodes a snapshot against its baseline, keeps it, and
// reconciles with it when it is the newest; it reports whether it was.
func (c *Client) onDatagram(d []byte, at time.Time) (protocol.SnapshotHeader, bool) {
	var h protocol.SnapshotHeader
	if err := protocol.DecodeSnapshotHeader(d, &h); err != nil {
		c.stats.SnapshotsDropped++
		return h, false
	}
	// Hit confirmations count even in a snapshot too late for anything else.
	for i := range h.NConfirms {
		c.marker(&h.Confirms[i], true)
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
	if !at.Before(c.epoch) {
		c.runSnapshots++
	}
	if c.haveSnap && h.Tick <= c.newestSnap {
		return h, false // late: kept as a baseline, but nothing newer to learn
	}
	gap := c.snapEvery
	if c.haveSnap {
		gap = int64(h.Tick) - int64(c.newestSnap)
	}
	c.render.arrived(at.Sub(c.epoch).Seconds()*float64(c.welcome.TickRate), h.Tick, gap)
	c.interval = int64(h.Interval)
	c.stats.SnapshotLoss = c.render.loss(c.interval)
	c.clock.lossy = c.stats.SnapshotLoss > lossyPath
	c.stats.SnapshotDelayP95 = time.Duration(c.render.late(0.95) * float64(c.dt))
	c.newestSnap, c.haveSnap = h.Tick, true
	c.stats.ServerTick = h.Tick
	c.sampleAck(&h, at)
	c.reconcile(&h)
	return h, true
}

// sampleAck gives the input budget the round trip of the input a snapshot
// acknowledges first: from its first sending to the snapshot's arrival.
func (c *Client) sampleAck(h *protocol.SnapshotHeader, at time.Time) {
	a := int64(h.InputAck)
	if h.InputAck == protocol.NoTick || a <= c.ackedInput {
		return
	}
	if f := &c.ring[a%ringSize]; f.tick == a && f.sent > 0 {
		now := at.Sub(c.epoch).Seconds() * float64(c.welcome.TickRate)
		c.budget.sample(now-f.sent, f.offset, now)
	}
}

// lateLimit is how many ticks after its own an input still runs late on
// the server: a second's, at most 64 (systems.Simulation.LateLimit).
func (c *Client) lateLimit() int64 { return min(int64(c.welcome.TickRate), 64) }

// window is how many ticks back the kept states reach.
func (c *Client) window() int64 { return protocol.Baselines * c.snapEvery }

// stateValid guards against a slot left from long ago whose tick happens to
// match: only the states of the last protocol.Baselines snapshots are trusted.
func (c *Client) stateValid(s *protocol.State) bool {
	return !c.haveSnap || (s.Tick <= c.newestSnap && int64(c.newestSnap)-int64(s.Tick) < c.window())
}

// adjustClock steers the input clock by the snapshot's margin (clock.go):
// it feeds the margin to the window and sets the tick speed, or jumps when
// the margin is far off (the start, a stall). A margin means nothing unless
// its input was produced on the current clock: from firstTick on, and still
// in the ring.
func (c *Client) adjustClock(h *protocol.SnapshotHeader, at time.Time) {
	if c.settling() && !c.marginSeen {
		// Settling, until the first margin: the newest snapshot says where
		// the server is at least (its tick, aged by its age and a round
		// trip: the snapshot's way here and the next input's way there).
		// The Welcome's estimate was short when the Welcome itself was held
		// up (a retransmission, a busy server): jump ahead now rather than
		// lose every input until the first margins, a round trip and more
		// later, tell. Once they have, they know better than any round
		// trip: one a queue inflated (a thin uplink's handshake) jumped the
		// clock ahead again after every pause, each jump rooting the ticks
		// it skipped.
		rate := float64(c.welcome.TickRate)
		age := time.Since(at).Seconds() * rate
		rtt := c.pathRTT().Seconds() * rate
		if j := int64(math.Ceil(float64(h.Tick)+age+rtt+marginSafety+1)) - c.tick; j > 0 {
			c.jump(j)
			return
		}
	}
	if n := int64(h.Tick) + int64(h.InputLead); n < c.firstTick || n > c.tick {
		return
	}
	if h.Margin != protocol.NoMargin {
		t := int64(h.MarginTick)
		if f := &c.ring[t%ringSize]; t >= c.firstTick && t < c.tick && f.tick == t {
			m := float64(h.Margin) / 256
			c.marginSeen = true
			// Far off (the start, a long stall), as the clock stands now (net
			// of the steering, jumps and pauses since the input was
			// produced): behind, jump ahead to a margin of a couple of
			// ticks; ahead, pause as long. A jump back would produce inputs
			// again for ticks whose inputs the server already holds (and
			// keeps: later copies are duplicates), so the server would
			// apply the old ones while the client predicted with the new.
			switch now := m - f.offset + c.clock.offset; {
			case now < -maxMarginBehind:
				c.jump(int64(math.Ceil(2 - now)))
				return
			case now > maxMarginAhead:
				// The whole lead at once (a margin measures it: jitter
				// only makes margins smaller), but at most half the
				// input timeout: a seat is lost to input_timeout without
				// inputs, and the next margins say what is left. (A
				// second at a time, a start four seconds ahead on an
				// 850 ms path took four round trips and more to undo,
				// every shot meanwhile claiming seconds of view lag.)
				c.scale = 1 + min(now-2, c.maxPause())
				c.stats.ClockJumps++
				return
			}
			c.clock.observe(m, f.offset)
			c.stats.MarginLow = c.clock.low()
			// In the first second of snapshots the start's estimate (the round trip at
			// the join) is corrected by a jump ahead rather than by a slew:
			// inputs late meanwhile are lost.
			e := c.clock.error()
			if c.settling() && e > 1 {
				c.jump(int64(math.Ceil(e)))
				return
			}
			// Until the window holds settleMargins margins, a start far
			// ahead (the join's round trip inflated by a queue on a thin
			// uplink) is corrected by a pause: the next tick waits -e
			// ticks longer. A slew at maxSkew would take ten times as long,
			// and every input meanwhile claims that much more view lag.
			if c.clock.n < settleMargins && e < -settlePause {
				c.scale = 1 + min(-e, c.maxPause())
				c.stats.ClockJumps++
				return
			}
		}
	}
	c.scale = c.clock.scale()
}

// maxPause is the longest pause of the input clock, in ticks: half the
// Welcome's input timeout (a second when it gives none).
func (c *Client) maxPause() float64 {
	rate := float64(c.welcome.TickRate)
	if c.welcome.InputTimeout == 0 {
		return rate
	}
	return max(float64(c.welcome.InputTimeout)/1000*rate/2, 1)
}

// jump moves the input clock j ticks (ahead when positive). Nothing from
// before the jump is sent again. The ticks skipped get no input, so the
// server roots the player through them (moves it with an empty input: no
// stick, no button): the ring records them so, and a snapshot from before
// the jump still corrects the prediction.
func (c *Client) jump(j int64) {
	for t := max(c.tick, c.tick+j-ringSize); t < c.tick+j; t++ { // (a jump past the whole ring: the next snapshot corrects)
		in := input.Input{Tick: t, Yaw: c.yaw, Pitch: c.pitch}
		if c.alive {
			movement.Move(&c.char, &c.state, in.Movement(), c.dt.Seconds(), c.level.Mesh, level.MovementMask)
		}
		c.ring[t%ringSize] = frame{tick: t, in: in, st: c.state, shots: c.arsenal.Fired, offset: c.clock.offset}
	}
	c.tick += j
	c.clock.offset += float64(j)
	c.firstTick = c.tick
	c.stats.ClockJumps++
	c.scale = 1
}

// settleSnapshots is how many snapshots (a second's at 20 Hz) the input
// clock may still jump ahead during.
const settleSnapshots = 20

// settling reports whether the input clock is in its first settleSnapshots
// snapshots received since Run began (those that waited for Run are older
// news, and count for nothing here).
func (c *Client) settling() bool { return c.runSnapshots < settleSnapshots }

// settleMargins is how many margins the input clock's window holds before
// it stops correcting a start too far ahead by a pause, and settlePause how
// far ahead, in ticks, it must be for one.
const (
	settleMargins = 40
	settlePause   = 8
)

// A margin beyond these, in ticks, makes the input clock jump.
const (
	maxMarginBehind = 16
	maxMarginAhead  = 32
)

// reconcile compares the server's state after the snapshot's tick with the
// prediction for that tick, and on a difference rewinds to the server's
// state and replays the inputs since.
func (c *Client) reconcile(h *protocol.SnapshotHeader) {
	c.health = h.Own.Health
	server := movement.State{Pos: geom.FromArray(h.Own.Pos), Vel: geom.FromArray(h.Own.Vel),
		Crouched: h.Own.Crouched(), JumpHeld: h.Own.JumpHeld()}
	c.serverPos = server.Pos
	wasAlive := c.alive
	c.alive = h.Own.Alive()
	if h.InputAck != protocol.NoTick {
		c.ackedInput = max(c.ackedInput, int64(h.InputAck))
	}
	c.reconcileShots(h)
	if !c.alive {
		c.state, c.offset = server, geom.Vec3{}
		return
	}
	if !wasAlive {
		arsenal.Refill(&c.arsenal, c.magazine) // respawned, with a full arsenal
	}
	// The server's position is the state after the snapshot's tick: its
	// inputs up to input_ack applied, any later tick rooted. Those later
	// ticks' inputs, if they come within a second, run late, and the server
	// then moves the player again from input_ack through them
	// (systems.InputLate): where this client predicted it. So while they
	// may still come, this snapshot's position is no correction; else
	// compare it with the prediction of that tick and replay the ticks
	// after it.
	k := int64(h.Tick)
	if k < c.reconciled {
		return
	}
	c.reconciled = k
	f := &c.ring[k%ringSize]
	if f.tick != k || k >= c.tick {
		return // not predicted (yet, or any more)
	}
	if ack := int64(h.InputAck); wasAlive && h.InputAck != protocol.NoTick && ack < k && k-ack < c.lateLimit() {
		if g := &c.ring[(ack+1)%ringSize]; g.tick == ack+1 && g.sent > 0 { // sent: not a tick a jump skipped
			c.stats.AwaitingLate++
			return
		}
	}
	errLen := server.Pos.Sub(f.st.Pos).Len()
	if !wasAlive {
		c.stats.Respawns++ // back to life where the server put it: no misprediction
	} else if errLen <= correctionThreshold && server.Vel.Sub(f.st.Vel).Len() <= correctionThreshold &&
		server.Crouched == f.st.Crouched && server.JumpHeld == f.st.JumpHeld {
		return
	} else {
		c.stats.Corrections++
		c.stats.MaxCorrection = max(c.stats.MaxCorrection, errLen)
	}
	displayed := c.state.Pos.Add(c.offset)
	st := server
	f.st = st
	dt := c.dt.Seconds()
	for t := k + 1; t < c.tick; t++ {
		g := &c.ring[t%ringSize]
		in := g.in
		if g.tick != t { // never predicted: the server rooted it
			in = input.Input{Tick: t, Yaw: f.in.Yaw, Pitch: f.in.Pitch}
		}
		movement.Move(&c.char, &st, in.Movement(), dt, c.level.Mesh, level.MovementMask)
		g.st = st
	}
	c.state = st
	c.offset = displayed.Sub(c.state.Pos)
	if c.offset.Len() > snapThreshold {
		c.offset = geom.Vec3{}
	}
}

// reconcileShots takes the server's weapons and count of the player's
// shots at the snapshot's tick, and replays the fire and reload buttons
// sent since under the same rules (arsenal.Use, arsenal.Reload, as the
// server will apply them). The client then never fires a shot the server
// refuses (a reload the server started, an input lost for good), and its
// next pellets follow the server's spread sequence.
func (c *Client) reconcileShots(h *protocol.SnapshotHeader) {
	k := int64(h.Tick)
	f := &c.ring[k%ringSize]
	if f.tick != k || k >= c.tick || !c.alive || h.Own.NSlots != c.arsenal.Count {
		return // not predicted (yet, or any more), or nothing to replay
	}
	a := c.arsenal
	for i := range a.Count {
		w := &h.Own.Slots[i]
		a.Slots[i].Ready, a.Slots[i].Ammo = int64(w.Ready), int(w.Ammo)
		a.Slots[i].Reloading, a.Slots[i].Reloaded = w.Reloading, int64(w.Reloaded)
	}
	a.Fired = h.Own.Shots
	differs := f.shots != h.Own.Shots
	f.shots = a.Fired
	for t := k + 1; t < c.tick; t++ {
		g := &c.ring[t%ringSize]
		if g.tick != t {
			continue
		}
		if int(g.q.Weapon) < len(c.rules) {
			def := &c.rules[g.q.Weapon]
			if g.q.Buttons&input.ButtonReload != 0 {
				arsenal.Reload(&a, uint16(g.q.Weapon), *def, t)
			}
			if g.q.Buttons&input.ButtonFire != 0 {
				arsenal.Use(&a, uint16(g.q.Weapon), *def, t)
			}
		}
		g.shots = a.Fired
	}
	if differs {
		c.stats.SpreadCorrections++
	}
	c.arsenal = a
}

// local is the client's local time since Run started, in ticks.
func (c *Client) local() float64 {
	return time.Since(c.epoch).Seconds() * float64(c.welcome.TickRate)
}

// advanceRender sets the time remote entities are shown at: the render
// clock's (clock.go), but never past the newest snapshot. That is the time
// shown, and the view lag the inputs claim. When the next snapshot is late
// (a handover's stall, a burst of loss) remote players are held where the
// newest put them rather than extrapolated: the server rewinds a shot to
// where they were at its view time, and a guess past the newest snapshot
// is a place they may never have been (a shot at it a false hit or a
// miss). The trade is the victim's: a shooter stalled for a while may hit
// it where it stood at the stall, up to the view lag the server measured
// and max_unlag.
func (c *Client) advanceRender() {
	if !c.haveSnap {
		c.renderTime += c.scale // the Welcome's estimate, until a snapshot
		return
	}
	// On the view lag's grid (1/256 tick): the server rewinds to exactly
	// the time shown.
	t := math.Floor(c.render.at(c.local())*protocol.LagScale) / protocol.LagScale
	if t > float64(c.newestSnap) {
		t = float64(c.newestSnap)
		c.stats.Held++
	}
	c.renderTime = t
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
