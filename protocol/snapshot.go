package protocol

import "math"

// Entity kinds in snapshots.
const (
	KindPlayer     = 1
	KindProjectile = 2
	KindShield     = 3
)

// Player flags.
const (
	// FlagAlive marks a player that is alive (has a hitbox).
	FlagAlive = 1
	// FlagTeleports holds a 3-bit counter of the player's teleports
	// (respawns, moves movement did not make): a client never interpolates
	// between two states whose counters differ.
	FlagTeleports = 7 << 1
	// FlagCrouched marks a crouched player: its capsule is crouch_height
	// tall (the Welcome's), and lag compensation rewinds it so.
	FlagCrouched = 1 << 4
)

// TeleportFlags returns the flag bits of a teleport count.
func TeleportFlags(teleports uint32) uint8 { return uint8(teleports&7) << 1 }

// EntityState is what a client knows of an entity, quantised. Which fields
// mean something depends on Kind:
//
//   - player: Team, Flags, Health, Yaw, Pitch, Pos (feet)
//   - projectile: Team, Owner, Weapon, Pos (where it was fired), Vel (its
//     velocity) and Start (the tick it was fired): after the server's tick t
//     it is at Pos + Vel·(t − Start + 1)/tick_rate, one step per tick;
//   - shield: Team, Owner, Pos (the box's min corner), Vel (the box's size)
//     and Start (the first tick it no longer exists, 0: until removed).
type EntityState struct {
	Kind   uint8
	Team   uint8
	Flags  uint8
	Health uint8 // hit points, capped at 255
	Weapon uint8
	Yaw    uint16
	Pitch  int16
	Pos    [3]int32 // 1/256 m
	Vel    [3]int32 // 1/256 m/s, or 1/256 m for a shield's size
	Start  uint32
	Owner  uint32
}

// Entity is an entity id and its state. IDs are unique within a room while
// the entity exists; 0 is never an id.
type Entity struct {
	ID    uint32
	State EntityState
}

// State is what a client knows of the world after a snapshot: its players
// and its other entities, each sorted by ID.
type State struct {
	Tick    uint32
	Players []Entity
	Objects []Entity
}

// OwnState is the receiving player's authoritative state, sent exactly (the
// client rewinds its prediction to it): Pos, Vel and the crouched and jump
// held bits of Flags are the movement state the next tick depends on
// (movement.State).
type OwnState struct {
	Flags  uint8      // OwnAlive, OwnCrouched, OwnJumpHeld
	Pos    [3]float64 // the feet
	Vel    [3]float64 // m/s
	Health float32
	// Shots is how many shots the server has fired for the player through
	// the snapshot's tick: the index of its next shot in its spread
	// sequence.
	Shots uint32
	// Slots are the player's weapons as the server's rules left them after
	// the tick, in loadout order: the client replays its later inputs on
	// them, so it never fires a shot the server will refuse.
	Slots  [MaxSlots]WeaponSlot
	NSlots int
}

// MaxSlots is the most weapons a player carries.
const MaxSlots = 8

// WeaponSlot is a carried weapon's state under the rules.
type WeaponSlot struct {
	Ready     uint32 // the first tick it may fire again
	Ammo      uint16 // rounds in the magazine
	Reloading bool
	Reloaded  uint32 // while reloading, the tick the magazine is full again
}

// SnapshotHeader is the fixed part of a snapshot.
type SnapshotHeader struct {
	Tick     uint32 // the server tick whose end state this is
	Baseline uint32 // the snapshot the records are relative to, NoTick for none
	InputAck uint32 // the newest of the client's input ticks the server has processed, NoTick for none
	// InputLead is how many ticks the client's newest input received was
	// ahead of Tick, clamped to ±127: a coarse check of the client's clock.
	InputLead int8
	// Margin is the smallest margin, in 1/256 ticks, by which an input
	// arrived (first, in any packet) before the server simulated its tick,
	// among the inputs first received since the previous snapshot to this
	// client; negative: that late. MarginTick is that input's tick. NoMargin
	// when no new input arrived. The client's clock steers by it.
	Margin     int16
	MarginTick uint32
	// Interval is how many ticks the server's snapshots to this client
	// are apart at the rate in effect: tick_rate/snapshot_rate, twice that
	// while flow control halves the rate. A longer gap between two
	// snapshots is a loss; this one is not. Never 0.
	Interval uint8
	Own      OwnState
	// Confirms are the player's recent hits the client has not acknowledged
	// (snapshot_ack older than their tick), oldest first: a hit marker
	// survives a lost packet without waiting for the control stream.
	Confirms  [MaxConfirms]HitConfirm
	NConfirms int

	sections int // where the players section starts, once decoded
}

// NoMargin is SnapshotHeader.Margin when no new input arrived.
const NoMargin = math.MinInt16

// MaxConfirms is the most hit confirmations one snapshot carries.
const MaxConfirms = 8

// HitConfirm confirms one hit of the receiving player's, as its Hit or
// NoDamage event does on the control stream (which stays the record).
type HitConfirm struct {
	Tick   uint32 // the server tick of the hit
	Target uint32
	Shot   uint16
	Flags  uint8   // HitHead, HitSplash, HitStreak
	Reason uint8   // 0: a Hit (it dealt damage); else the NoDamage reason
	Damage float32 // health taken, or with a Reason, the damage it would have dealt
}

// hitConfirmSize is the wire size of a HitConfirm.
const hitConfirmSize = 4 + 4 + 2 + 1 + 1 + 4

// Record operations: the low two bits of a record's op byte.
const (
	opUpdate = 0
	opCreate = 1
	opRemove = 2
)

// Update field groups: the high six bits of an update record's op byte.
const (
	maskPos    = 1 << 0 // Pos, as deltas
	maskAim    = 1 << 1 // Yaw, Pitch
	maskHealth = 1 << 2
	maskFlags  = 1 << 3
	maskTeam   = 1 << 4
	maskMotion = 1 << 5 // Vel (deltas), Start, Owner, Weapon
)

// Baselines is how many of its last snapshots to a client the server deltas
// against, and so how many decoded states a client keeps: 1.6 s at 20 Hz, so
// an acknowledgement can be that late and still save a full snapshot.
const Baselines = 32

// BaselineSlot is where the state of the snapshot of tick is kept in a ring
// of Baselines, with a snapshot every snapEvery ticks (tick rate / snapshot
// rate): snapshots, not ticks, are counted.
func BaselineSlot(tick uint32, snapEvery int64) int {
	return int(int64(tick)/snapEvery) % Baselines
}

// SnapshotBufferSize is the capacity a snapshot buffer needs for AppendSnapshot
// never to allocate: MaxDatagram, plus room for the one record it tries and
// drops when the datagram is full.
const SnapshotBufferSize = MaxDatagram + 64

// snapshotFixed is the size of a snapshot's header up to the
// confirmations.
const snapshotFixed = 2 + 4 + 4 + 4 + 1 + 2 + 4 + 1 + 24 + 24 + 4 + 4

// Bits of the own state's flags (OwnState.Flags); the others must be 0.
const (
	OwnAlive    = 1 << 0 // the player is alive
	OwnCrouched = 1 << 1 // crouched (movement.State.Crouched)
	OwnJumpHeld = 1 << 2 // the jump button was down on the tick (movement.State.JumpHeld)
)

// OwnFlags returns the flags of an own state.
func OwnFlags(alive, crouched, jumpHeld bool) uint8 {
	var f uint8
	if alive {
		f |= OwnAlive
	}
	if crouched {
		f |= OwnCrouched
	}
	if jumpHeld {
		f |= OwnJumpHeld
	}
	return f
}

// Alive, Crouched and JumpHeld read the flags.
func (o *OwnState) Alive() bool    { return o.Flags&OwnAlive != 0 }
func (o *OwnState) Crouched() bool { return o.Flags&OwnCrouched != 0 }
func (o *OwnState) JumpHeld() bool { return o.Flags&OwnJumpHeld != 0 }

// AppendSnapshot appends a snapshot datagram that brings a client from base
// (nil: nothing known) to target, within MaxDatagram bytes in all. Records go
// in ID order, players first; those that do not fit are left for a later
// snapshot. known receives what the client knows if it receives this
// snapshot: target where records were written, base elsewhere. It reuses
// known's slices and allocates nothing once they have grown.
func AppendSnapshot(b []byte, h *SnapshotHeader, base, target, known *State) []byte {
	start := len(b)
	b = append(b, Version, DatagramSnapshot)
	b = appendU32(b, h.Tick)
	b = appendU32(b, h.Baseline)
	b = appendU32(b, h.InputAck)
	b = append(b, byte(h.InputLead))
	b = appendU16(b, uint16(h.Margin))
	b = appendU32(b, h.MarginTick)
	b = append(b, h.Interval)
	b = append(b, h.Own.Flags)
	for _, v := range h.Own.Pos {
		b = appendF64(b, v)
	}
	for _, v := range h.Own.Vel {
		b = appendF64(b, v)
	}
	b = appendF32(b, h.Own.Health)
	b = appendU32(b, h.Own.Shots)
	ns := min(max(h.Own.NSlots, 0), MaxSlots)
	b = append(b, uint8(ns))
	for i := range ns {
		w := &h.Own.Slots[i]
		b = appendU32(b, w.Ready)
		b = appendU16(b, w.Ammo)
		b = append(b, boolByte(w.Reloading))
		b = appendU32(b, w.Reloaded)
	}
	n := min(max(h.NConfirms, 0), MaxConfirms)
	b = append(b, uint8(n))
	for i := range n {
		c := &h.Confirms[i]
		b = appendU32(b, c.Tick)
		b = appendU32(b, c.Target)
		b = appendU16(b, c.Shot)
		b = append(b, c.Flags, c.Reason)
		b = appendF32(b, c.Damage)
	}
	limit := start + MaxDatagram
	var bp, bo []Entity
	if base != nil {
		bp, bo = base.Players, base.Objects
	}
	known.Tick = h.Tick
	b, known.Players = appendSection(b, limit-2, bp, target.Players, known.Players[:0], h.Tick)
	b, known.Objects = appendSection(b, limit, bo, target.Objects, known.Objects[:0], h.Tick)
	return b
}

// appendSection appends a u16 record count and the records that bring base
// to target while b stays within limit, and the resulting known entities.
func appendSection(b []byte, limit int, base, target, known []Entity, tick uint32) ([]byte, []Entity) {
	countAt := len(b)
	b = append(b, 0, 0)
	count, prev := 0, uint32(0)
	full := len(b) > limit
	i, j := 0, 0
	for i < len(base) || j < len(target) {
		var rec []byte
		var keep Entity // what the client keeps if the record is not sent
		var want Entity // what it has if it is
		var drop bool   // the record removes the entity
		switch {
		case j == len(target) || (i < len(base) && base[i].ID < target[j].ID):
			keep, drop = base[i], true
			rec = appendRemove(b, keep.ID-prev)
			i++
		case i == len(base) || target[j].ID < base[i].ID:
			want = target[j]
			rec = appendCreate(b, want.ID-prev, &want.State, tick)
			j++
		default:
			keep, want = base[i], target[j]
			i, j = i+1, j+1
			if keep.State.Kind != want.State.Kind {
				rec = appendCreate(b, want.ID-prev, &want.State, tick)
			} else if mask := diff(&keep.State, &want.State); mask != 0 {
				rec = appendUpdate(b, want.ID-prev, mask, &keep.State, &want.State, tick)
			} else {
				known = append(known, want)
				continue
			}
		}
		if full || len(rec) > limit {
			full = true
			if keep.ID != 0 {
				known = append(known, keep)
			}
			continue
		}
		b = rec
		count++
		if drop {
			prev = keep.ID
			continue
		}
		prev = want.ID
		known = append(known, want)
	}
	b[countAt], b[countAt+1] = byte(count>>8), byte(count)
	return b, known
}

func appendRemove(b []byte, idDelta uint32) []byte {
	b = appendUvarint(b, idDelta)
	return append(b, opRemove)
}

func appendCreate(b []byte, idDelta uint32, s *EntityState, tick uint32) []byte {
	b = appendUvarint(b, idDelta)
	b = append(b, opCreate, s.Kind, s.Team)
	switch s.Kind {
	case KindPlayer:
		b = append(b, s.Flags, s.Health)
		b = appendU16(b, s.Yaw)
		b = appendU16(b, uint16(s.Pitch))
		b = appendPos(b, &s.Pos)
	case KindProjectile, KindShield:
		b = appendUvarint(b, s.Owner)
		b = append(b, s.Weapon)
		b = appendVarint(b, int64(s.Start)-int64(tick))
		b = appendPos(b, &s.Pos)
		b = appendPos(b, &s.Vel)
	}
	return b
}

func diff(a, b *EntityState) uint8 {
	var m uint8
	if a.Pos != b.Pos {
		m |= maskPos
	}
	if a.Yaw != b.Yaw || a.Pitch != b.Pitch {
		m |= maskAim
	}
	if a.Health != b.Health {
		m |= maskHealth
	}
	if a.Flags != b.Flags {
		m |= maskFlags
	}
	if a.Team != b.Team {
		m |= maskTeam
	}
	if a.Vel != b.Vel || a.Start != b.Start || a.Owner != b.Owner || a.Weapon != b.Weapon {
		m |= maskMotion
	}
	return m
}

func appendUpdate(b []byte, idDelta uint32, mask uint8, from, to *EntityState, tick uint32) []byte {
	b = appendUvarint(b, idDelta)
	b = append(b, opUpdate|mask<<2)
	if mask&maskPos != 0 {
		for k := range to.Pos {
			b = appendVarint(b, int64(to.Pos[k])-int64(from.Pos[k]))
		}
	}
	if mask&maskAim != 0 {
		b = appendU16(b, to.Yaw)
		b = appendU16(b, uint16(to.Pitch))
	}
	if mask&maskHealth != 0 {
		b = append(b, to.Health)
	}
	if mask&maskFlags != 0 {
		b = append(b, to.Flags)
	}
	if mask&maskTeam != 0 {
		b = append(b, to.Team)
	}
	if mask&maskMotion != 0 {
		for k := range to.Vel {
			b = appendVarint(b, int64(to.Vel[k])-int64(from.Vel[k]))
		}
		b = appendVarint(b, int64(to.Start)-int64(tick))
		b = appendUvarint(b, to.Owner)
		b = append(b, to.Weapon)
	}
	return b
}

func appendPos(b []byte, p *[3]int32) []byte {
	for _, v := range p {
		b = appendVarint(b, int64(v))
	}
	return b
}

func appendUvarint(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// DecodeSnapshotHeader decodes the fixed part of a snapshot datagram, which
// says which baseline its records need.
func DecodeSnapshotHeader(d []byte, h *SnapshotHeader) error {
	typ, err := DatagramType(d)
	if err != nil {
		return err
	}
	if typ != DatagramSnapshot {
		return fail(ReasonType, "snapshot")
	}
	r := reader{b: d[2:], msg: "snapshot"}
	h.Tick, h.Baseline, h.InputAck = r.u32("tick"), r.u32("baseline"), r.u32("input_ack")
	h.InputLead = int8(r.u8("input_lead"))
	h.Margin = int16(r.u16("input_margin"))
	h.MarginTick = r.u32("margin_tick")
	h.Interval = r.u8("interval")
	if r.err == nil && h.Interval == 0 {
		r.fail(ReasonValue, "interval")
	}
	h.Own.Flags = r.u8("own.flags")
	if r.err == nil && h.Own.Flags&^(OwnAlive|OwnCrouched|OwnJumpHeld) != 0 {
		r.fail(ReasonValue, "own.flags")
	}
	for k := range h.Own.Pos {
		h.Own.Pos[k] = r.f64("own.pos")
	}
	for k := range h.Own.Vel {
		h.Own.Vel[k] = r.f64("own.vel")
	}
	h.Own.Health = r.f32("own.health")
	h.Own.Shots = r.u32("own.shots")
	h.Own.NSlots = int(r.u8("own.slots"))
	if r.err == nil && h.Own.NSlots > MaxSlots {
		r.fail(ReasonValue, "own.slots")
		h.Own.NSlots = 0
	}
	for i := range h.Own.NSlots {
		w := &h.Own.Slots[i]
		w.Ready, w.Ammo = r.u32("slot.ready"), r.u16("slot.ammo")
		w.Reloading, w.Reloaded = r.bool("slot.reloading"), r.u32("slot.reloaded")
	}
	h.NConfirms = int(r.u8("confirms"))
	if r.err == nil && h.NConfirms > MaxConfirms {
		r.fail(ReasonValue, "confirms")
		h.NConfirms = 0
	}
	for i := range h.NConfirms {
		c := &h.Confirms[i]
		c.Tick, c.Target, c.Shot = r.u32("confirm.tick"), r.u32("confirm.target"), r.u16("confirm.shot")
		c.Flags, c.Reason = r.u8("confirm.flags"), r.u8("confirm.reason")
		c.Damage = r.f32("confirm.damage")
	}
	if r.err == nil && h.Baseline != NoTick && h.Baseline >= h.Tick {
		r.fail(ReasonValue, "baseline")
	}
	if r.err != nil {
		h.NConfirms, h.Own.NSlots = 0, 0
	}
	h.sections = 2 + r.off
	return r.err
}

// DecodeSnapshot decodes a snapshot datagram: its header into h, and into out
// the state the client knows after it: base (the state at h.Baseline; nil when
// h.Baseline is NoTick) with the records applied. out's slices are reused.
func DecodeSnapshot(d []byte, base *State, h *SnapshotHeader, out *State) error {
	if err := DecodeSnapshotHeader(d, h); err != nil {
		return err
	}
	if (h.Baseline == NoTick) != (base == nil) || (base != nil && base.Tick != h.Baseline) {
		return fail(ReasonBaseline, "snapshot")
	}
	var bp, bo []Entity
	if base != nil {
		bp, bo = base.Players, base.Objects
	}
	r := reader{b: d[h.sections:], msg: "snapshot"}
	out.Tick = h.Tick
	out.Players = decodeSection(&r, bp, out.Players[:0], true, h.Tick)
	out.Objects = decodeSection(&r, bo, out.Objects[:0], false, h.Tick)
	return r.end()
}

func decodeSection(r *reader, base, out []Entity, players bool, tick uint32) []Entity {
	n := int(r.u16("count"))
	i, prev := 0, uint32(0)
	for range n {
		if r.err != nil {
			return out
		}
		delta := r.uvarint("id")
		if delta == 0 || delta > math.MaxUint32-uint64(prev) {
			r.fail(ReasonValue, "id")
			return out
		}
		id := prev + uint32(delta)
		prev = id
		for i < len(base) && base[i].ID < id {
			out = append(out, base[i])
			i++
		}
		var have *EntityState
		if i < len(base) && base[i].ID == id {
			have = &base[i].State
			i++
		}
		op := r.u8("op")
		switch op & 3 {
		case opRemove:
			if have == nil || op != opRemove {
				r.fail(ReasonValue, "remove")
			}
		case opCreate:
			if op != opCreate {
				r.fail(ReasonValue, "create")
			}
			var s EntityState
			decodeCreate(r, &s, players, tick)
			out = append(out, Entity{ID: id, State: s})
		case opUpdate:
			if have == nil {
				r.fail(ReasonValue, "update")
				return out
			}
			s := *have
			decodeUpdate(r, op>>2, &s, tick)
			out = append(out, Entity{ID: id, State: s})
		default:
			r.fail(ReasonValue, "op")
		}
	}
	return append(out, base[i:]...)
}

func decodeCreate(r *reader, s *EntityState, players bool, tick uint32) {
	s.Kind, s.Team = r.u8("kind"), r.u8("team")
	switch {
	case s.Kind == KindPlayer && players:
		s.Flags, s.Health = r.u8("flags"), r.u8("health")
		s.Yaw, s.Pitch = r.u16("yaw"), int16(r.u16("pitch"))
		decodePos(r, &s.Pos)
	case (s.Kind == KindProjectile || s.Kind == KindShield) && !players:
		s.Owner = r.u32var("owner")
		s.Weapon = r.u8("weapon")
		s.Start = r.tickDelta("start", tick)
		decodePos(r, &s.Pos)
		decodePos(r, &s.Vel)
	default:
		r.fail(ReasonValue, "kind")
	}
}

func decodeUpdate(r *reader, mask uint8, s *EntityState, tick uint32) {
	if mask&maskPos != 0 {
		for k := range s.Pos {
			s.Pos[k] = addDelta(r, s.Pos[k], "pos")
		}
	}
	if mask&maskAim != 0 {
		s.Yaw, s.Pitch = r.u16("yaw"), int16(r.u16("pitch"))
	}
	if mask&maskHealth != 0 {
		s.Health = r.u8("health")
	}
	if mask&maskFlags != 0 {
		s.Flags = r.u8("flags")
	}
	if mask&maskTeam != 0 {
		s.Team = r.u8("team")
	}
	if mask&maskMotion != 0 {
		for k := range s.Vel {
			s.Vel[k] = addDelta(r, s.Vel[k], "vel")
		}
		s.Start = r.tickDelta("start", tick)
		s.Owner = r.u32var("owner")
		s.Weapon = r.u8("weapon")
	}
}

// tickDelta reads a tick written as a signed varint relative to tick.
func (r *reader) tickDelta(field string, tick uint32) uint32 {
	v := int64(tick) + r.varint(field)
	if v < 0 || v > math.MaxUint32 {
		r.fail(ReasonValue, field)
		return 0
	}
	return uint32(v)
}

func addDelta(r *reader, v int32, field string) int32 {
	d := r.varint(field)
	sum := int64(v) + d
	if sum < math.MinInt32 || sum > math.MaxInt32 {
		r.fail(ReasonValue, field)
		return v
	}
	return int32(sum)
}

func decodePos(r *reader, p *[3]int32) {
	for k := range p {
		p[k] = r.i32("pos")
	}
}

func (r *reader) u32var(field string) uint32 {
	v := r.uvarint(field)
	if v > math.MaxUint32 {
		r.fail(ReasonValue, field)
		return 0
	}
	return uint32(v)
}
