package session

import (
	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/protocol"
)

// EventKind says what an Event is.
type EventKind uint8

// The events a session reports.
const (
	// EventHitMarker is one of the player's hits, confirmed: once per shot
	// and target, from whichever of a snapshot and the control stream
	// brought it first. Other is the target; Shot the shot counter of the
	// input that fired; Damage the health it took (with a Reason, what it
	// would have taken: the target was invulnerable, dead, or out of the
	// weapon's reach); Flags protocol.HitHead, HitSplash, HitStreak.
	EventHitMarker EventKind = iota + 1
	// EventDamaged is a hit on the player: Player is the shooter, Weapon
	// the weapon, Damage the health taken (Reason as for a hit marker).
	EventDamaged
	// EventKill is a death: Player killed Other with Weapon (Player 0 and
	// Weapon protocol.KillByLevel: the level killed Other).
	EventKill
	// EventRespawn is Player back at Pos, facing Yaw.
	EventRespawn
	// EventJoined is Player joining, in Team, as Name.
	EventJoined
	// EventLeft is Player leaving.
	EventLeft
	// EventClosed is the end of the session, always the last event: Code is
	// the server's close code (docs/protocol.md, Close codes; 0 when Close
	// ended it) or CloseError, and Name the reason.
	EventClosed
)

func (k EventKind) String() string {
	switch k {
	case EventHitMarker:
		return "hit_marker"
	case EventDamaged:
		return "damaged"
	case EventKill:
		return "kill"
	case EventRespawn:
		return "respawn"
	case EventJoined:
		return "joined"
	case EventLeft:
		return "left"
	case EventClosed:
		return "closed"
	}
	return "unknown"
}

// Event is something that happened; which fields mean something depends on
// Kind.
type Event struct {
	Kind          EventKind
	Tick          uint32 // the server tick it happened at
	Player, Other uint32
	Shot          uint16
	Weapon        uint8
	Flags         uint8
	Reason        uint8 // a hit that dealt no damage: protocol.NoDamageInvulnerable, NoDamageDead, NoDamageZero
	Damage        float32
	ViaSnapshot   bool // a hit marker a snapshot brought before the control stream did
	Team          uint8
	Pos           geom.Vec3
	Yaw           float64
	Name          string // joined: the player's name; closed: the reason
	Code          uint64 // closed: the close code
}

// queue is a bounded queue of events, with a place kept for the last one
// (Closed), which is never dropped.
type queue struct {
	ring       []Event
	head, n    int
	dropped    uint64
	closing    Event
	hasClosing bool
}

func (q *queue) init(n int) { q.ring = make([]Event, n) }

// push queues ev, or drops and counts it when the queue is full.
func (q *queue) push(ev Event) {
	if q.n == len(q.ring) {
		q.dropped++
		return
	}
	q.ring[(q.head+q.n)%len(q.ring)] = ev
	q.n++
}

// last queues the final event.
func (q *queue) last(ev Event) { q.closing, q.hasClosing = ev, true }

// drain moves up to len(out) events to out, oldest first, and returns how
// many.
func (q *queue) drain(out []Event) int {
	k := 0
	for k < len(out) && q.n > 0 {
		out[k] = q.ring[q.head]
		q.ring[q.head] = Event{} // let go of the name
		q.head = (q.head + 1) % len(q.ring)
		q.n--
		k++
	}
	if k < len(out) && q.n == 0 && q.hasClosing {
		out[k], q.hasClosing = q.closing, false
		k++
	}
	return k
}

// Events moves up to len(out) of the events since the last call to out,
// oldest first, and returns how many; EventClosed comes last, once.
func (s *Session) Events(out []Event) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.events.drain(out)
}

// onEvent queues the game events (on the tick loop's goroutine). The
// player's own hits come through onHitMarker instead, once each.
func (s *Session) onEvent(ev protocol.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	self := s.views[s.cur].self.ID
	e := Event{Tick: ev.Tick, Player: ev.Player, Other: ev.Other}
	switch ev.Kind {
	case protocol.EventHit, protocol.EventNoDamage:
		if ev.Other != self || self == 0 {
			return
		}
		e.Kind, e.Weapon, e.Shot, e.Flags, e.Damage = EventDamaged, ev.Weapon, ev.Shot, ev.Flags, ev.Damage
		if ev.Kind == protocol.EventNoDamage {
			e.Reason = ev.Reason
		}
	case protocol.EventKill:
		e.Kind, e.Weapon = EventKill, ev.Weapon
	case protocol.EventRespawn:
		e.Kind, e.Pos, e.Yaw = EventRespawn, geom.FromArray(ev.Pos), protocol.YawValue(ev.Yaw)
	case protocol.EventJoined:
		e.Kind, e.Team, e.Name = EventJoined, ev.Team, ev.Name
	case protocol.EventLeft:
		e.Kind = EventLeft
	default:
		return
	}
	s.events.push(e)
}

// onHitMarker queues a hit marker (on the tick loop's goroutine).
func (s *Session) onHitMarker(m client.HitMarker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events.push(Event{Kind: EventHitMarker, Tick: m.Tick, Player: s.views[s.cur].self.ID, Other: m.Target, Shot: m.Shot,
		Flags: m.Flags, Reason: m.Reason, Damage: m.Damage, ViaSnapshot: m.ViaSnapshot})
}
