package protocol

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/rewind-gg/rewind/geom"
)

// Control message types, the byte after a control frame's length.
const (
	MsgJoin    = 1 // client → server: the first message on the control stream
	MsgWelcome = 2 // server → client: the join is accepted
	MsgReject  = 3 // server → client: the join is refused; the server closes the connection
	MsgEvent   = 4 // server → client: a game event
)

// MaxControl is the largest control frame body (type + payload), in bytes.
const MaxControl = 65535

// Limits of control message strings, in bytes.
const (
	MaxRoomLen   = 64
	MaxNameLen   = 32
	MaxReasonLen = 255
)

// WriteFrame writes one control frame: a big-endian u16 length of what
// follows, the message type, the payload.
func WriteFrame(w io.Writer, buf []byte, typ uint8, payload []byte) ([]byte, error) {
	if 1+len(payload) > MaxControl {
		return buf, fmt.Errorf("protocol: control message of %d bytes is over %d", 1+len(payload), MaxControl)
	}
	buf = appendU16(buf[:0], uint16(1+len(payload)))
	buf = append(buf, typ)
	buf = append(buf, payload...)
	_, err := w.Write(buf)
	return buf, err
}

// ReadFrame reads one control frame into buf (grown as needed) and returns
// its type and payload, which alias buf. A zero-length frame is malformed.
func ReadFrame(r io.Reader, buf []byte) (uint8, []byte, []byte, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, buf, err
	}
	n := int(binary.BigEndian.Uint16(hdr[:]))
	if n == 0 {
		return 0, nil, buf, fail(ReasonShort, "control frame")
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return 0, nil, buf, err
	}
	return buf[0], buf[1:], buf, nil
}

// Join asks to play in a room.
type Join struct {
	Version uint16
	Room    string // created on demand
	Name    string
	Team    uint8 // 1 or 2; 0 lets the server choose
	Class   string
}

// AppendJoin appends the payload of a Join.
func AppendJoin(b []byte, m *Join) []byte {
	b = appendU16(b, m.Version)
	b = appendStr(b, m.Room, MaxRoomLen)
	b = appendStr(b, m.Name, MaxNameLen)
	b = append(b, m.Team)
	return appendStr(b, m.Class, MaxNameLen)
}

// DecodeJoin decodes a Join payload.
func DecodeJoin(p []byte) (Join, error) {
	r := reader{b: p, msg: "join"}
	m := Join{Version: r.u16("version")}
	m.Room = r.str("room", MaxRoomLen)
	m.Name = r.str("name", MaxNameLen)
	m.Team = r.u8("team")
	m.Class = r.str("class", MaxNameLen)
	return m, r.end()
}

// WeaponInfo describes a weapon to clients: what they need to predict its
// use (fire interval, magazine, reload), aim it (speed, gravity) and check a
// hit on their own screen (range, pellets, spread).
type WeaponInfo struct {
	Name          string
	Kind          string
	Damage        float64
	Range         float64
	Speed         float64
	Gravity       float64
	Radius        float64
	Reach         float64
	Spread        float64
	LifetimeTicks uint16
	FireInterval  uint16 // ticks between shots
	Magazine      uint16 // 0: unlimited
	ReloadTicks   uint16
	WindupTicks   uint16
	Pellets       uint8
	CatchUp       bool // a projectile in catch-up mode
}

// Box is an axis-aligned box of the map.
type Box struct{ Min, Max [3]float64 }

// BoxOf is the box of an AABB.
func BoxOf(b geom.AABB) Box { return Box{Min: b.Min.Array(), Max: b.Max.Array()} }

// AABB is the box as geometry.
func (b Box) AABB() geom.AABB {
	return geom.AABB{Min: geom.FromArray(b.Min), Max: geom.FromArray(b.Max)}
}

// Welcome accepts a join and tells the client what it needs to predict its
// player exactly as the server simulates it.
type Welcome struct {
	Version      uint16
	Player       uint32 // the player's entity id in snapshots and events
	Team         uint8
	TickRate     uint16
	SnapshotRate uint16
	ServerTick   uint32 // the tick the server was about to simulate when it sent this
	ConfigDigest uint64 // changes when anything the client must agree on changes
	WindowTicks  uint16
	Speed        float64 // movement speed, m/s
	Arena        Box     // feet stay inside it on X and Z
	EyeHeight    float64
	Radius       float64 // hitbox capsule radius
	Height       float64 // hitbox capsule height
	Spawn        [3]float64
	Weapons      []WeaponInfo // indexed by the weapon ids inputs carry
	Map          []Box        // static geometry
	Class        string       // the player's class
	Loadout      []uint8      // the weapon ids the player carries
}

// AppendWelcome appends the payload of a Welcome.
func AppendWelcome(b []byte, m *Welcome) []byte {
	b = appendU16(b, m.Version)
	b = appendU32(b, m.Player)
	b = append(b, m.Team)
	b = appendU16(b, m.TickRate)
	b = appendU16(b, m.SnapshotRate)
	b = appendU32(b, m.ServerTick)
	b = appendU64(b, m.ConfigDigest)
	b = appendU16(b, m.WindowTicks)
	b = appendF64(b, m.Speed)
	b = appendBox(b, m.Arena)
	b = appendF64(b, m.EyeHeight)
	b = appendF64(b, m.Radius)
	b = appendF64(b, m.Height)
	for _, v := range m.Spawn {
		b = appendF64(b, v)
	}
	b = append(b, uint8(len(m.Weapons)))
	for i := range m.Weapons {
		w := &m.Weapons[i]
		b = appendStr(b, w.Name, MaxNameLen)
		b = appendStr(b, w.Kind, MaxNameLen)
		for _, f := range [7]float64{w.Damage, w.Range, w.Speed, w.Gravity, w.Radius, w.Reach, w.Spread} {
			b = appendF64(b, f)
		}
		for _, v := range [5]uint16{w.LifetimeTicks, w.FireInterval, w.Magazine, w.ReloadTicks, w.WindupTicks} {
			b = appendU16(b, v)
		}
		b = append(b, w.Pellets, boolByte(w.CatchUp))
	}
	b = appendU16(b, uint16(len(m.Map)))
	for _, box := range m.Map {
		b = appendBox(b, box)
	}
	b = appendStr(b, m.Class, MaxNameLen)
	b = append(b, uint8(len(m.Loadout)))
	return append(b, m.Loadout...)
}

func appendBox(b []byte, box Box) []byte {
	for _, v := range box.Min {
		b = appendF64(b, v)
	}
	for _, v := range box.Max {
		b = appendF64(b, v)
	}
	return b
}

func (r *reader) box(field string) Box {
	var box Box
	for i := range box.Min {
		box.Min[i] = r.f64(field)
	}
	for i := range box.Max {
		box.Max[i] = r.f64(field)
	}
	return box
}

// DecodeWelcome decodes a Welcome payload.
func DecodeWelcome(p []byte) (Welcome, error) {
	r := reader{b: p, msg: "welcome"}
	m := Welcome{Version: r.u16("version"), Player: r.u32("player"), Team: r.u8("team"),
		TickRate: r.u16("tick_rate"), SnapshotRate: r.u16("snapshot_rate"), ServerTick: r.u32("server_tick"),
		ConfigDigest: r.u64("config_digest"), WindowTicks: r.u16("window_ticks")}
	m.Speed = r.f64("speed")
	m.Arena = r.box("arena")
	m.EyeHeight = r.f64("eye_height")
	m.Radius = r.f64("radius")
	m.Height = r.f64("height")
	for i := range m.Spawn {
		m.Spawn[i] = r.f64("spawn")
	}
	if m.TickRate == 0 {
		r.fail(ReasonValue, "tick_rate")
	}
	n := int(r.u8("weapons"))
	for range n {
		if r.err != nil {
			break
		}
		w := WeaponInfo{Name: r.str("weapon.name", MaxNameLen), Kind: r.str("weapon.kind", MaxNameLen)}
		w.Damage, w.Range, w.Speed, w.Gravity = r.f64("weapon.damage"), r.f64("weapon.range"), r.f64("weapon.speed"), r.f64("weapon.gravity")
		w.Radius, w.Reach, w.Spread = r.f64("weapon.radius"), r.f64("weapon.reach"), r.f64("weapon.spread")
		w.LifetimeTicks, w.FireInterval, w.Magazine = r.u16("weapon.lifetime_ticks"), r.u16("weapon.fire_interval"), r.u16("weapon.magazine")
		w.ReloadTicks, w.WindupTicks = r.u16("weapon.reload_ticks"), r.u16("weapon.windup_ticks")
		w.Pellets = r.u8("weapon.pellets")
		w.CatchUp = r.bool("weapon.catch_up")
		m.Weapons = append(m.Weapons, w)
	}
	nb := int(r.u16("map"))
	if nb*48 > len(p) { // refuse counts the payload cannot hold before allocating
		r.fail(ReasonShort, "map")
	}
	for range nb {
		if r.err != nil {
			break
		}
		m.Map = append(m.Map, r.box("map"))
	}
	m.Class = r.str("class", MaxNameLen)
	nl := int(r.u8("loadout"))
	for range nl {
		if r.err != nil {
			break
		}
		id := r.u8("loadout")
		if int(id) >= len(m.Weapons) {
			r.fail(ReasonValue, "loadout")
		}
		m.Loadout = append(m.Loadout, id)
	}
	return m, r.end()
}

// Reject codes.
const (
	RejectVersion  = 1 // the client speaks another protocol version
	RejectFull     = 2 // the room or the server is full
	RejectBadJoin  = 3 // the join message is malformed or its fields invalid
	RejectShutdown = 4 // the server is shutting down
)

// Reject refuses a join.
type Reject struct {
	Code   uint8
	Reason string
}

// AppendReject appends the payload of a Reject.
func AppendReject(b []byte, m *Reject) []byte {
	return appendStr(append(b, m.Code), m.Reason, MaxReasonLen)
}

// DecodeReject decodes a Reject payload.
func DecodeReject(p []byte) (Reject, error) {
	r := reader{b: p, msg: "reject"}
	m := Reject{Code: r.u8("code")}
	m.Reason = r.str("reason", MaxReasonLen)
	return m, r.end()
}

// EventKind says what an Event reports.
type EventKind uint8

// Event kinds.
const (
	EventHit     EventKind = 1 // a shot hit: sent to the shooter (hit confirmed) and the target
	EventKill    EventKind = 2 // a player died: sent to everybody
	EventRespawn EventKind = 3 // a player came back: sent to everybody
	EventJoined  EventKind = 4 // a player joined: sent to everybody, and to a newcomer for each player already there
	EventLeft    EventKind = 5 // a player left: sent to everybody
)

// Event is a game event on the reliable stream. Which fields mean something
// depends on Kind (docs/protocol.md).
type Event struct {
	Kind   EventKind
	Tick   uint32 // the server tick it happened at
	Player uint32 // hit: the shooter; kill: the killer (0: none); respawn, joined, left: the player
	Other  uint32 // hit: the target; kill: the victim
	// Hit only.
	Shot     uint16 // the shot counter of the input that fired
	Weapon   uint8
	Head     bool
	Damage   float32
	ViewTick uint32 // the view time the shot was resolved at: tick + frac/65536
	ViewFrac uint16
	// Respawn: where; joined: team and name.
	Pos  [3]float64
	Team uint8
	Name string
}

// AppendEvent appends the payload of an Event.
func AppendEvent(b []byte, e *Event) []byte {
	b = append(b, uint8(e.Kind))
	b = appendU32(b, e.Tick)
	b = appendU32(b, e.Player)
	switch e.Kind {
	case EventHit:
		b = appendU32(b, e.Other)
		b = appendU16(b, e.Shot)
		b = append(b, e.Weapon, boolByte(e.Head))
		b = appendF32(b, e.Damage)
		b = appendU32(b, e.ViewTick)
		b = appendU16(b, e.ViewFrac)
	case EventKill:
		b = appendU32(b, e.Other)
		b = append(b, e.Weapon)
	case EventRespawn:
		for _, v := range e.Pos {
			b = appendF64(b, v)
		}
	case EventJoined:
		b = append(b, e.Team)
		b = appendStr(b, e.Name, MaxNameLen)
	}
	return b
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// DecodeEvent decodes an Event payload.
func DecodeEvent(p []byte) (Event, error) {
	r := reader{b: p, msg: "event"}
	e := Event{Kind: EventKind(r.u8("kind")), Tick: r.u32("tick"), Player: r.u32("player")}
	switch e.Kind {
	case EventHit:
		e.Other, e.Shot, e.Weapon = r.u32("other"), r.u16("shot"), r.u8("weapon")
		e.Head = r.bool("head")
		e.Damage, e.ViewTick, e.ViewFrac = r.f32("damage"), r.u32("view_tick"), r.u16("view_frac")
	case EventKill:
		e.Other, e.Weapon = r.u32("other"), r.u8("weapon")
	case EventRespawn:
		for i := range e.Pos {
			e.Pos[i] = r.f64("pos")
		}
	case EventJoined:
		e.Team = r.u8("team")
		e.Name = r.str("name", MaxNameLen)
	case EventLeft:
	default:
		if r.err == nil {
			r.fail(ReasonType, "kind")
		}
	}
	return e, r.end()
}

// QUIC application error codes a connection is closed with; the reason
// string says more.
const (
	CloseNormal   = 0 // the client left
	CloseShutdown = 1 // the server is shutting down
	CloseProtocol = 2 // the peer broke the protocol
	CloseRejected = 3 // the join was refused (a Reject was sent first)
	CloseSlow     = 4 // the client did not read its control stream
)
