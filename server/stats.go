package server

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/rewind-gg/rewind/systems"
)

// RoomStats is a room's state, as reported by Stats.
type RoomStats struct {
	ID        string
	Tick      int64
	Players   []PlayerStats
	Rewinds   int64         // travels to a past time so far
	Items     int64         // lag-compensated items resolved so far
	Buckets   int           // distinct view times last tick
	TickTime  time.Duration // the last tick's
	TickTotal time.Duration // all ticks', snapshots included
	Overruns  uint64
	// Recording is the file the match is recorded into (record.dir), or
	// empty.
	Recording string
}

// PlayerStats is what a room knows of one player.
type PlayerStats struct {
	ID     uint32
	User   string // the stable user id: its token's, or its name in open mode
	Name   string
	Team   uint8
	Inputs [systems.InputVerdicts]uint64 // inputs received, by systems.InputVerdict
	// Applied counts ticks simulated with the player's input, Rooted those
	// without (the player stood still); Late counts the inputs of rooted
	// ticks run late, at a later tick (systems.InputLate).
	Applied, Rooted uint64
	Late            uint64
	Clamped         uint64 // shots resolved with less view lag than the player claimed
	Hits            uint64 // hits confirmed to the player as shooter (they dealt damage)
	NoDamage        uint64 // hits registered for the player that dealt no damage (invulnerable or dead target)
	// Disputed counts the player's hits that were disputed (they dealt
	// damage to a victim out of its sight or reach in the victim's present:
	// package fairness), DisputedTaken the disputed hits it took.
	Disputed, DisputedTaken uint64
	Rejected                uint64 // shots the rules refused (too soon, no ammo, reloading, not carried)
	Kills, Deaths           uint64
	Snapshots               uint64
	FullSnapshots           uint64
	SnapshotsDropped        uint64
	SnapshotBytes           uint64
	Pos                     [3]float64 // the authoritative position now
	LastInput               int64      // the newest tick whose input was applied, −1: none
	// RTT is the client's round trip as the room measures it (from a
	// snapshot to the first input that acknowledges it, smoothed), 0 before
	// the first sample; QUICRTT is QUIC's own estimate (its smoothed round
	// trip), which bounds the first in the view lag granted
	// (docs/protocol.md, "View lag").
	RTT, QUICRTT time.Duration
	// RTTBound is the room's round trip plus twice its deviation, which
	// the view lag granted takes up to QUICRTT plus the margin; QUICDev is
	// QUIC's mean deviation.
	RTTBound, QUICDev time.Duration
	// LagBound is the view lag, in ticks, that the arrival of the player's
	// latest input packet allows beyond each input's lead: the measured
	// round trip, the interpolation delay and the slack (before max_unlag
	// and the weapons' caps).
	LagBound float64
	// RTTCapped is how long the round trip of the player's
	// acknowledgements exceeded QUIC's estimate plus the margin (and the
	// grant was capped there); RTTDisagreements is 1 once that reached 3 s.
	RTTCapped        time.Duration
	RTTDisagreements uint64
}

// Stats asks every room for its state.
func (s *Server) Stats(ctx context.Context) ([]RoomStats, error) {
	s.mu.Lock()
	rooms := make([]*room, 0, len(s.rooms))
	for _, r := range s.rooms {
		rooms = append(rooms, r)
	}
	s.mu.Unlock()
	out := make([]RoomStats, 0, len(rooms))
	for _, r := range rooms {
		reply := make(chan RoomStats, 1)
		select {
		case r.inbox <- roomMsg{kind: msgStats, stats: reply}:
		case <-r.done:
			continue
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case st := <-reply:
			out = append(out, st)
		case <-r.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	slices.SortFunc(out, func(a, b RoomStats) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (r *room) statsNow() RoomStats {
	st := r.sim.Stats()
	rs := RoomStats{ID: r.id, Tick: r.sim.Now(), Rewinds: st.Rewinds, Items: st.Items, Buckets: st.Last.Buckets,
		TickTime: r.stats.tickTime, TickTotal: r.stats.tickTotal, Overruns: r.stats.overruns, Recording: r.recording}
	for _, mem := range r.members {
		ps := mem.stats
		tf, _, _, q, _, _, _, _ := r.body.Get(mem.entity)
		ps.Applied, ps.Rooted, ps.Late, ps.LastInput = q.Used, q.Rooted, q.LateRun, q.Applied
		ps.Pos = tf.Pos.Array()
		cs := mem.repl.Stats()
		ps.RTT, ps.QUICRTT, ps.LagBound, ps.RTTCapped = cs.RTT, cs.QUICRTT, cs.LagBound, cs.Capped
		ps.RTTBound, ps.QUICDev = cs.RTTBound, cs.QUICDev
		rs.Players = append(rs.Players, ps)
	}
	return rs
}
