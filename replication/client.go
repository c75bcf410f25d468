package replication

import (
	"math"
	"time"

	"github.com/rewind-gg/rewind/input"
	"github.com/rewind-gg/rewind/protocol"
)

// Client is what a room knows of one client beyond the world, and what it
// sends it. The room's goroutine alone uses it.
type Client struct {
	r      *Replicator
	self   uint32  // the client's player, left out of its snapshots
	out    Channel // where its snapshots go
	interp float64 // the interpolation delay granted at join, ticks

	ring   [protocol.Baselines]protocol.State // what the client knows if it got each recent snapshot
	sentAt [protocol.Baselines]time.Time      // when each went out
	acked  uint32                             // the newest snapshot the client acknowledged, NoTick

	rtt         RTT       // from snapshots to the inputs that acknowledge them
	rttObserved time.Time // when rtt was last reported (Arrived.RTT)
	quic        RTT       // QUIC's estimate with the latest packet
	lagBound    float64   // the view lag the latest packet's arrival allows, beyond its input lead, ticks
	// The round trip its acknowledgements show has been capped at QUIC's
	// estimate since cappedSince (zero: the latest packet's was not), with
	// the latest capped packet at cappedAt; cappedFor is how long in all,
	// flagged once a run reached RTTDisagreement.
	cappedSince, cappedAt time.Time
	cappedFor             time.Duration
	flagged               bool

	newestInput int64 // the newest input tick of the latest packet
	// The clock the client steers by: the newest input tick received, and
	// the smallest margin of an input's first arrival since the last
	// snapshot (protocol.SnapshotHeader.Margin).
	received   int64
	margin     float64
	marginTick int64
	hasMargin  bool
	// halved: flow control found the path bad, and the client gets every
	// other snapshot.
	halved bool
	// confirms are the hits to repeat in snapshots until acknowledged.
	confirms []pendingConfirm

	target protocol.State // the world without the client's own player, reused
}

// RTTDisagreement is how long a client's two round-trip estimates must
// disagree without a break before it is flagged: QUIC samples the round
// trip only when it sends an ack-eliciting packet (an event, a
// keep-alive), so after a path slows down (a mobile handover's spike of a
// second or two) its estimate follows a few seconds late.
const RTTDisagreement = 5 * time.Second

// Arrived is what a packet's arrival told the room.
type Arrived struct {
	// Earliest is the earliest view time, in ticks, that any of the
	// packet's inputs may claim (input.Input.Earliest).
	Earliest float64
	// RTT, when not 0, is the client's smoothed round trip to report: at
	// most once every SampleInterval.
	RTT time.Duration
	// Flagged: the round trip the client's acknowledgements show has just
	// exceeded QUIC's estimate plus the margin for RTTDisagreement without
	// a break (once per Client): a fake-lag signature.
	Flagged bool
}

// OnInput takes an input packet that arrived before the room's tick now,
// which began at tickStart and whose successor simulates tick now: it
// records the packet's acknowledgement (a round-trip sample) and the
// margin of its first new input, and returns the bound of the view lag its
// inputs may claim. An honest client was rendering no earlier than the
// arrival tick minus the round trip, its interpolation delay, a snapshot
// interval (two while halved), two ticks, and the jitter tolerance
// (docs/protocol.md, "View lag"); a claim beyond is cut.
func (c *Client) OnInput(p *Packet, now int64, tickStart time.Time) Arrived {
	in := &p.Input
	var a Arrived
	c.halved = p.Halved
	slack := c.r.lagSlack
	if c.halved {
		slack += float64(c.r.cfg.Interval) // snapshots come half as often
	}
	// The round trip: from a snapshot leaving to the first input that
	// acknowledges it, which holds the client's wait for its next tick (a
	// tick of the slack that QUIC's round trip, before the first sample,
	// leaves out).
	if ack := in.SnapshotAck; ack != protocol.NoTick && (c.acked == protocol.NoTick || ack > c.acked) && ack < uint32(now) {
		if i := c.r.slot(ack); c.ring[i].Tick == ack {
			c.rtt.Add(p.At.Sub(c.sentAt[i]))
			if p.At.Sub(c.rttObserved) >= SampleInterval {
				a.RTT, c.rttObserved = c.rtt.SRTT, p.At
			}
		}
		c.acked = ack
	}
	var rtt time.Duration
	rtt, a.Flagged = c.grant(p)
	if c.rtt.n == 0 {
		slack++
	}
	a.Earliest = float64(now) - c.r.cfg.ticks(rtt) - c.interp - slack
	c.lagBound = float64(now) - a.Earliest
	// The margin of the first arrival of the packet's first new input: how
	// long before the server simulates its tick it came (the room
	// simulates tick now at tickStart + one tick).
	if newest := int64(in.Newest); newest > c.received {
		first := max(c.received+1, int64(in.Tick(0)))
		margin := float64(first-now) + (tickStart.Add(c.r.tickEvery).Sub(p.At)).Seconds()*float64(c.r.cfg.TickRate)
		if !c.hasMargin || margin < c.margin {
			c.margin, c.marginTick, c.hasMargin = margin, first, true
		}
		c.received = newest
	}
	// The lead the client steers by: its latest packet's newest input (a
	// maximum would stick after the client's clock jumps back).
	c.newestInput = int64(in.Newest)
	return a
}

// grant is the round trip the view-lag bound of a packet's inputs takes:
// the one measured from the client's acknowledgements (smoothed, or this
// packet's own when longer: the time since the snapshot it acknowledges,
// the newest acknowledged, left, which a stall lengthens at once where the
// smoothed one follows over several packets), but no more than QUIC's own estimate
// (its smoothed round trip plus twice its deviation, as the room bounds its
// own) plus the margin, so that delaying acknowledgements alone buys
// nothing; QUIC's until the first sample. flagged: the estimates have just
// disagreed for RTTDisagreement without a break, the first time.
func (c *Client) grant(p *Packet) (rtt time.Duration, flagged bool) {
	c.quic = p.QUIC
	if c.rtt.n == 0 {
		return p.QUIC.Bound(), false
	}
	rtt, limit := c.rtt.Bound(), p.QUIC.Bound()+c.r.rttMargin
	if ack := p.Input.SnapshotAck; ack != protocol.NoTick && ack == c.acked {
		if i := c.r.slot(ack); c.ring[i].Tick == ack {
			rtt = max(rtt, p.At.Sub(c.sentAt[i]))
		}
	}
	if !p.QUICSampled || rtt <= limit {
		c.cappedSince = time.Time{}
		return rtt, false
	}
	if c.cappedSince.IsZero() {
		c.cappedSince = p.At
	} else {
		c.cappedFor += p.At.Sub(c.cappedAt)
	}
	c.cappedAt = p.At
	if !c.flagged && p.At.Sub(c.cappedSince) >= RTTDisagreement {
		c.flagged, flagged = true, true
	}
	return limit, flagged
}

// pendingConfirm is a hit confirmation and the first snapshot it went in.
type pendingConfirm struct {
	protocol.HitConfirm
	sentIn uint32 // NoTick: not yet sent
}

// MaxPendingConfirms bounds the confirmations waiting for an
// acknowledgement; the oldest give way (the control stream still has
// them).
const MaxPendingConfirms = 32

// Confirm queues a hit confirmation (a Hit or NoDamage event of which the
// client's player is the shooter) for the client's snapshots, which repeat
// it until one that carried it is acknowledged.
func (c *Client) Confirm(e *protocol.Event) {
	if len(c.confirms) == MaxPendingConfirms {
		copy(c.confirms, c.confirms[1:])
		c.confirms = c.confirms[:MaxPendingConfirms-1]
	}
	hc := protocol.HitConfirm{Tick: e.Tick, Target: e.Other, Shot: e.Shot, Flags: e.Flags, Damage: e.Damage}
	if e.Kind == protocol.EventNoDamage {
		hc.Reason = e.Reason
	}
	c.confirms = append(c.confirms, pendingConfirm{HitConfirm: hc, sentIn: protocol.NoTick})
}

// putConfirms drops the confirmations the client acknowledged (it got a
// snapshot they were in) and puts the oldest others in hdr.
func (c *Client) putConfirms(hdr *protocol.SnapshotHeader) {
	kept := c.confirms[:0]
	for _, pc := range c.confirms {
		if pc.sentIn != protocol.NoTick && c.acked != protocol.NoTick && pc.sentIn <= c.acked {
			continue
		}
		kept = append(kept, pc)
	}
	c.confirms = kept
	hdr.NConfirms = min(len(kept), protocol.MaxConfirms)
	for i := range hdr.NConfirms {
		hdr.Confirms[i] = kept[i].HitConfirm
		if kept[i].sentIn == protocol.NoTick {
			kept[i].sentIn = hdr.Tick
		}
	}
}

// SnapshotsAround returns, for a view time a client reported, the two
// snapshots the client drew the world between, as ViewTime.Back and Span:
// the newest snapshot sent at or before it, A, and the next one sent, B
// (0, 0 when they are one tick apart, when the time is A's own, or when A
// is older than the snapshots the Client still remembers). A client draws
// the line from A to B when it holds both and they are no further apart
// than its interval; when it lost one in between, it shows A at A's time
// (docs/protocol.md, "View time"), and the time is A's own.
func (c *Client) SnapshotsAround(t input.ViewTime) (back, span uint8) {
	newest, a, b := int64(-1), int64(-1), int64(-1)
	for i := range c.ring {
		if tk := c.ring[i].Tick; tk != protocol.NoTick {
			newest = max(newest, int64(tk))
			if int64(tk) <= t.Tick {
				a = max(a, int64(tk))
			}
		}
	}
	// Every snapshot sent from here on is still in the ring (a slot is
	// taken again only Baselines intervals later); older slots may hold
	// ticks from before a halving.
	held := newest - (protocol.Baselines-1)*c.r.cfg.Interval
	if a < held || a < 0 || (a == t.Tick && t.Frac == 0) {
		return 0, 0
	}
	for i := range c.ring {
		if tk := c.ring[i].Tick; tk != protocol.NoTick && int64(tk) > a && (b < 0 || int64(tk) < b) {
			b = int64(tk)
		}
	}
	if b < 0 || b-a <= 1 || b-a > math.MaxUint8 || t.Tick-a > math.MaxUint8 {
		return 0, 0
	}
	return uint8(t.Tick - a), uint8(b - a)
}

// Due reports whether the client gets the snapshot of tick (a multiple of
// the interval): every other one while flow control halves its rate.
func (c *Client) Due(tick int64) bool {
	return !c.halved || (tick/c.r.cfg.Interval)%2 == 0
}

// Sent is what became of a snapshot.
type Sent struct {
	Drop  Drop // DropNone: sent
	Bytes int  // its size, when sent
	Full  bool // sent against no baseline
}

// Snapshot encodes the client's snapshot of world (its tick the
// snapshot's; the client's own player among its players, left out) and
// sends it on the client's channel at time at. The room fills hdr's Own
// and InputAck; the rest of the header is the client's: tick, baseline,
// input lead, interval, margin, confirmations. The baseline is the newest
// snapshot the client acknowledged, unless its slot in the ring is the
// new snapshot's (too old: it was overwritten).
func (c *Client) Snapshot(hdr *protocol.SnapshotHeader, world *protocol.State, at time.Time) Sent {
	buf, drop := c.out.Buffer()
	if buf == nil {
		return Sent{Drop: drop}
	}
	tick := int64(world.Tick)
	hdr.Tick, hdr.Baseline = world.Tick, protocol.NoTick
	hdr.InputLead = int8(min(max(c.newestInput-tick, -127), 127))
	hdr.Interval = uint8(min(c.r.cfg.Interval, 127))
	if c.halved {
		hdr.Interval *= 2 // every other snapshot (Due)
	}
	hdr.Margin, hdr.MarginTick = protocol.NoMargin, 0
	if c.hasMargin {
		hdr.Margin = int16(min(max(math.Round(c.margin*256), math.MinInt16+1), math.MaxInt16))
		hdr.MarginTick = uint32(c.marginTick)
	}
	c.putConfirms(hdr)
	var base *protocol.State
	slot := c.r.slot(hdr.Tick)
	if a := c.acked; a != protocol.NoTick && c.r.slot(a) != slot {
		if b := &c.ring[c.r.slot(a)]; b.Tick == a {
			base, hdr.Baseline = b, a
		}
	}
	c.target.Tick = hdr.Tick
	c.target.Players = c.target.Players[:0]
	for _, p := range world.Players {
		if p.ID != c.self {
			c.target.Players = append(c.target.Players, p)
		}
	}
	c.target.Objects = world.Objects
	known := &c.ring[slot]
	d := protocol.AppendSnapshot(buf, hdr, base, &c.target, known)
	if drop := c.out.Send(d); drop != DropNone {
		known.Tick = protocol.NoTick // never sent: not a baseline
		return Sent{Drop: drop}
	}
	c.hasMargin = false
	c.sentAt[slot] = at
	return Sent{Bytes: len(d), Full: base == nil}
}

// Stats is what a Client measured of its client.
type Stats struct {
	// RTT is the round trip measured from the client's acknowledgements
	// (smoothed; 0 before the first sample), RTTBound it plus twice its
	// deviation.
	RTT, RTTBound time.Duration
	// QUICRTT and QUICDev are QUIC's smoothed round trip and its mean
	// deviation, with the latest packet.
	QUICRTT, QUICDev time.Duration
	// LagBound is the view lag, in ticks, that the latest packet's arrival
	// allows beyond each input's lead.
	LagBound float64
	// Capped is how long in all the round trip of the acknowledgements
	// was capped at QUIC's estimate plus the margin.
	Capped time.Duration
}

// Stats returns what the Client measured.
func (c *Client) Stats() Stats {
	return Stats{RTT: c.rtt.SRTT, RTTBound: c.rtt.Bound(), QUICRTT: c.quic.SRTT, QUICDev: c.quic.RTTVar,
		LagBound: c.lagBound, Capped: c.cappedFor}
}
