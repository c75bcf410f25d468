package replication

import (
	"fmt"
	"time"

	"github.com/rewind-gg/rewind/protocol"
)

// Config is a room's replication settings.
type Config struct {
	TickRate int   // ticks a second (tick_rate)
	Interval int64 // ticks between a client's snapshots at the full rate (tick_rate / snapshot_rate)
	// ViewLagTolerance is the jitter the view-lag bound tolerates
	// (lagcomp.view_lag_tolerance).
	ViewLagTolerance time.Duration
	// RTTMargin is how far the round trip a client's acknowledgements show
	// may exceed QUIC's estimate before the grant is capped there, besides
	// the tick a client may hold a snapshot before its next input
	// (lagcomp.rtt_margin).
	RTTMargin time.Duration
	// MaxInterpDelay caps the interpolation delay a client declares
	// (lagcomp.max_interp_delay).
	MaxInterpDelay time.Duration
}

// Replicator is a room's replication: its settings, and its clients'
// Clients.
type Replicator struct {
	cfg       Config
	tickEvery time.Duration
	// What the room adds to a client's round trip to bound the view lag
	// it grants (besides the client's interpolation delay), in ticks: a
	// snapshot interval, a tick of the server's phase, and the jitter
	// tolerance. The round trip the room measures holds the tick a client
	// may keep a snapshot before its next input; QUIC's, taken until the
	// first sample, does not, and gets that tick added.
	lagSlack float64
	// rttMargin is how far the round trip a client's acknowledgements
	// show may exceed QUIC's own estimate before it is capped there: the
	// tick a client may hold a snapshot before the input that
	// acknowledges it, and Config.RTTMargin.
	rttMargin time.Duration
}

// New returns a room's Replicator.
func New(c Config) (*Replicator, error) {
	switch {
	case c.TickRate <= 0:
		return nil, fmt.Errorf("replication: TickRate: %d must be positive", c.TickRate)
	case c.Interval <= 0:
		return nil, fmt.Errorf("replication: Interval: %d ticks between snapshots must be positive", c.Interval)
	case c.ViewLagTolerance < 0:
		return nil, fmt.Errorf("replication: ViewLagTolerance: %v must not be negative", c.ViewLagTolerance)
	case c.RTTMargin < 0:
		return nil, fmt.Errorf("replication: RTTMargin: %v must not be negative", c.RTTMargin)
	case c.MaxInterpDelay < 0:
		return nil, fmt.Errorf("replication: MaxInterpDelay: %v must not be negative", c.MaxInterpDelay)
	}
	tick := time.Second / time.Duration(c.TickRate)
	return &Replicator{cfg: c, tickEvery: tick,
		lagSlack:  float64(c.Interval) + 1 + c.ticks(c.ViewLagTolerance),
		rttMargin: tick + c.RTTMargin}, nil
}

// ticks converts a duration into (fractional) ticks.
func (c *Config) ticks(d time.Duration) float64 { return d.Seconds() * float64(c.TickRate) }

// Interp is the interpolation delay a client that declared ms (its Join's)
// is granted: no more than MaxInterpDelay.
func (r *Replicator) Interp(ms uint16) time.Duration {
	return min(time.Duration(ms)*time.Millisecond, r.cfg.MaxInterpDelay)
}

// NewClient returns the replication of a client seated at tick now, with
// the interpolation delay Interp granted it, whose player has the wire id
// self (left out of its own snapshots), sending on out.
func (r *Replicator) NewClient(self uint32, interp time.Duration, now int64, out Channel) *Client {
	c := &Client{r: r, self: self, out: out, interp: r.cfg.ticks(interp), acked: protocol.NoTick,
		newestInput: now - 1, received: -1, confirms: make([]pendingConfirm, 0, MaxPendingConfirms)}
	for i := range c.ring {
		c.ring[i].Tick = protocol.NoTick // nothing sent yet
	}
	return c
}

// slot is the baseline ring's slot of a snapshot's tick.
func (r *Replicator) slot(tick uint32) int { return protocol.BaselineSlot(tick, r.cfg.Interval) }
