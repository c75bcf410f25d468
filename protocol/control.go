package protocol

import (
	"encoding/binary"
	"fmt"
	"io"
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
	MaxRoomLen      = 64
	MaxNameLen      = 32
	MaxLevelNameLen = 64
	MaxReasonLen    = 255
)

// WriteFrame writes one control frame: a big-endian u16 length of what
// follows, the message type, the payload.
func WriteFrame(w io.Writer, buf []byte, typ uint8, payload []byte) ([]byte, error) {
	buf, err := AppendFrame(buf[:0], typ, payload)
	if err != nil {
		return buf, err
	}
	_, err = w.Write(buf)
	return buf, err
}

// AppendFrame appends one control frame to buf: several appended frames
// written at once go out in one QUIC packet where they fit.
func AppendFrame(buf []byte, typ uint8, payload []byte) ([]byte, error) {
	if 1+len(payload) > MaxControl {
		return buf, fmt.Errorf("protocol: control message of %d bytes is over %d", 1+len(payload), MaxControl)
	}
	buf = appendU16(buf, uint16(1+len(payload)))
	buf = append(buf, typ)
	return append(buf, payload...), nil
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

// MaxToken is the largest connect token a Join carries, in bytes: the
// largest token the token format allows (token.MaxLen; this package does
// not import that one, and a test in package server holds them equal).
const MaxToken = 512

// Join asks to play in a room.
type Join struct {
	Version uint16
	// Token is the matchmaker's connect token (docs/tokens.md); empty on a
	// server in open development mode.
	Token []byte
	// Room, Name, Team and Class: with a token, empty (0) takes the token's
	// and anything else must equal it; without, the room is created on
	// demand and team 0 lets the server balance the teams.
	Room  string
	Name  string
	Team  uint8
	Class string
	// InterpDelay is the longest delay, in milliseconds, the client shows
	// remote entities behind its newest snapshot: part of the view lag the
	// server grants it (bounded by the server).
	InterpDelay uint16
	// Channels is the set of datagram channels the client can use for its
	// inputs and snapshots (ChannelQUIC, ChannelSealed bits); the Welcome
	// names the one the server chose.
	Channels uint8
}

// AppendJoin appends the payload of a Join.
func AppendJoin(b []byte, m *Join) []byte {
	b = appendU16(b, m.Version)
	tok := m.Token[:min(len(m.Token), MaxToken)]
	b = appendU16(b, uint16(len(tok)))
	b = append(b, tok...)
	b = appendStr(b, m.Room, MaxRoomLen)
	b = appendStr(b, m.Name, MaxNameLen)
	b = append(b, m.Team)
	b = appendStr(b, m.Class, MaxNameLen)
	b = appendU16(b, m.InterpDelay)
	return append(b, m.Channels)
}

// DecodeJoin decodes a Join payload. Of a Join of another version only the
// version is read (its layout may differ), with a ReasonVersion error: the
// server answers it with a version Reject.
func DecodeJoin(p []byte) (Join, error) {
	r := reader{b: p, msg: "join"}
	m := Join{Version: r.u16("version")}
	if r.err == nil && m.Version != Version {
		return m, fail(ReasonVersion, "join.version")
	}
	if tok := r.bytes16("token", MaxToken); len(tok) > 0 {
		m.Token = append([]byte(nil), tok...)
	}
	m.Room = r.str("room", MaxRoomLen)
	m.Name = r.str("name", MaxNameLen)
	m.Team = r.u8("team")
	m.Class = r.str("class", MaxNameLen)
	m.InterpDelay = r.u16("interp_delay")
	m.Channels = r.u8("channels")
	return m, r.end()
}

// WeaponInfo describes a weapon to clients: what they need to predict its
// use (fire interval, magazine, reload), aim it (speed, gravity), check a hit
// on their own screen (range, pellets, spread) and show what a hit deals
// (damage, head multiplier, falloff, splash, streak) and how far back it is
// resolved (MaxRewind).
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

	HeadMultiplier float64
	Falloff        [3]float64 // start, end (0: none), min
	Splash         [3]float64 // radius (0: none), damage, min
	StreakHits     uint16     // 0: no streak bonus
	StreakWindow   float64    // ticks of view time
	StreakBonus    float64    // 0.5: +50%
	MaxRewind      float64    // ticks: the deepest view lag this weapon's shots are granted
}

// Movement is how the player's class moves: the values of its
// movement.Character (docs/movement.md) but the capsule's, which are the
// Welcome's own (the same for every player). A client predicts with
// exactly these.
type Movement struct {
	RunSpeed, SprintSpeed, CrouchSpeed  float64 // m/s
	GroundAccel, AirAccel, AirWishSpeed float64 // 1/s, 1/s, m/s
	Friction, StopSpeed                 float64 // 1/s, m/s
	Gravity                             float64 // m/s², down
	JumpHeight, StepHeight              float64 // m
	MaxSlope                            float64 // degrees
	Skin                                float64 // m
}

// values are the movement's values in wire order.
func (m *Movement) values() [13]*float64 {
	return [13]*float64{&m.RunSpeed, &m.SprintSpeed, &m.CrouchSpeed, &m.GroundAccel, &m.AirAccel, &m.AirWishSpeed,
		&m.Friction, &m.StopSpeed, &m.Gravity, &m.JumpHeight, &m.StepHeight, &m.MaxSlope, &m.Skin}
}

// Welcome accepts a join and tells the client what it needs to predict its
// player exactly as the server simulates it, and every rule it needs to
// present the match honestly.
type Welcome struct {
	Version      uint16
	Player       uint32 // the player's entity id in snapshots and events
	Team         uint8
	TickRate     uint16
	SnapshotRate uint16
	ServerTick   uint32 // the tick the server was about to simulate when it sent this
	ConfigDigest uint64 // changes when anything the client must agree on changes
	WindowTicks  uint16
	MaxUnlag     float64 // ticks: the deepest view lag any claim is granted
	// Movement is how the player's class moves (with the capsule below:
	// its movement.Character).
	Movement Movement
	// The capsule every player moves as and is hit as (its hitbox), and
	// where shots start: standing and crouched.
	EyeHeight       float64
	CrouchEyeHeight float64
	Radius          float64 // capsule radius
	Height          float64 // capsule height, standing
	CrouchHeight    float64 // capsule height, crouched
	HeadHeight      float64 // the top of the capsule that counts as the head
	Spawn           [3]float64
	SpawnYaw        uint16 // which way the player faces at Spawn, as an input's yaw
	// Match rules.
	Health            float64
	RespawnTicks      uint16
	InvulnerableTicks uint16
	FriendlyFire      bool
	InterpDelay       uint16 // ms: the interpolation delay the server grants (the Join's, bounded)
	InputTimeout      uint32 // ms without an input after which a player loses its seat
	SpreadSeed        uint64 // keys the match's spread sequences (docs/protocol.md)
	// The datagram channel: ChannelQUIC or ChannelSealed, and the session id
	// sealed packets carry (0 with ChannelQUIC).
	Channel uint8
	Session uint32
	// Identity granted.
	Room    string
	Name    string
	Weapons []WeaponInfo // indexed by the weapon ids inputs carry
	// Level names the level the server plays, and LevelDigest is its
	// content digest (docs/levels.md, "Digest"): a client must hold the
	// level whose digest this is.
	Level       string
	LevelDigest [32]byte
	Class       string  // the player's class
	Loadout     []uint8 // the weapon ids the player carries
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
	b = appendF64(b, m.MaxUnlag)
	for _, v := range m.Movement.values() {
		b = appendF64(b, *v)
	}
	b = appendF64(b, m.EyeHeight)
	b = appendF64(b, m.CrouchEyeHeight)
	b = appendF64(b, m.Radius)
	b = appendF64(b, m.Height)
	b = appendF64(b, m.CrouchHeight)
	b = appendF64(b, m.HeadHeight)
	for _, v := range m.Spawn {
		b = appendF64(b, v)
	}
	b = appendU16(b, m.SpawnYaw)
	b = appendF64(b, m.Health)
	b = appendU16(b, m.RespawnTicks)
	b = appendU16(b, m.InvulnerableTicks)
	b = append(b, boolByte(m.FriendlyFire))
	b = appendU16(b, m.InterpDelay)
	b = appendU32(b, m.InputTimeout)
	b = appendU64(b, m.SpreadSeed)
	b = append(b, m.Channel)
	b = appendU32(b, m.Session)
	b = appendStr(b, m.Room, MaxRoomLen)
	b = appendStr(b, m.Name, MaxNameLen)
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
		b = appendF64(b, w.HeadMultiplier)
		for _, f := range w.Falloff {
			b = appendF64(b, f)
		}
		for _, f := range w.Splash {
			b = appendF64(b, f)
		}
		b = appendU16(b, w.StreakHits)
		b = appendF64(b, w.StreakWindow)
		b = appendF64(b, w.StreakBonus)
		b = appendF64(b, w.MaxRewind)
	}
	b = appendStr(b, m.Level, MaxLevelNameLen)
	b = append(b, m.LevelDigest[:]...)
	b = appendStr(b, m.Class, MaxNameLen)
	b = append(b, uint8(len(m.Loadout)))
	return append(b, m.Loadout...)
}

// DecodeWelcome decodes a Welcome payload.
func DecodeWelcome(p []byte) (Welcome, error) {
	r := reader{b: p, msg: "welcome"}
	m := Welcome{Version: r.u16("version"), Player: r.u32("player"), Team: r.u8("team"),
		TickRate: r.u16("tick_rate"), SnapshotRate: r.u16("snapshot_rate"), ServerTick: r.u32("server_tick"),
		ConfigDigest: r.u64("config_digest"), WindowTicks: r.u16("window_ticks")}
	m.MaxUnlag = r.f64("max_unlag")
	for _, v := range m.Movement.values() {
		*v = r.f64("movement")
	}
	m.EyeHeight = r.f64("eye_height")
	m.CrouchEyeHeight = r.f64("crouch_eye_height")
	m.Radius = r.f64("radius")
	m.Height = r.f64("height")
	m.CrouchHeight = r.f64("crouch_height")
	m.HeadHeight = r.f64("head_height")
	for i := range m.Spawn {
		m.Spawn[i] = r.f64("spawn")
	}
	m.SpawnYaw = r.u16("spawn_yaw")
	m.Health = r.f64("health")
	m.RespawnTicks, m.InvulnerableTicks = r.u16("respawn_ticks"), r.u16("invulnerable_ticks")
	m.FriendlyFire = r.bool("friendly_fire")
	m.InterpDelay = r.u16("interp_delay")
	m.InputTimeout = r.u32("input_timeout")
	m.SpreadSeed = r.u64("spread_seed")
	m.Channel = r.u8("channel")
	m.Session = r.u32("session")
	m.Room = r.str("room", MaxRoomLen)
	m.Name = r.str("name", MaxNameLen)
	if r.err == nil && m.TickRate == 0 {
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
		w.HeadMultiplier = r.f64("weapon.head_multiplier")
		for i := range w.Falloff {
			w.Falloff[i] = r.f64("weapon.falloff")
		}
		for i := range w.Splash {
			w.Splash[i] = r.f64("weapon.splash")
		}
		w.StreakHits = r.u16("weapon.streak_hits")
		w.StreakWindow, w.StreakBonus = r.f64("weapon.streak_window"), r.f64("weapon.streak_bonus")
		w.MaxRewind = r.f64("weapon.max_rewind")
		m.Weapons = append(m.Weapons, w)
	}
	m.Level = r.str("level", MaxLevelNameLen)
	copy(m.LevelDigest[:], r.take(len(m.LevelDigest), "level_digest"))
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

// Reject codes: why a join is refused (docs/protocol.md). Each has a metric
// label, RejectLabel.
const (
	RejectVersion        = 1  // the client speaks another protocol version
	RejectFull           = 2  // the room or the server is full
	RejectBadJoin        = 3  // the join message is malformed or its fields invalid
	RejectShutdown       = 4  // the server is shutting down or draining: it admits nobody
	RejectNoToken        = 5  // the server admits only token holders and the join carried none
	RejectTokenInvalid   = 6  // the token is truncated, oversized, malformed, or valid for too long
	RejectTokenKey       = 7  // the token names a key the server does not hold
	RejectTokenSignature = 8  // the token's signature does not verify
	RejectTokenExpired   = 9  // the token has expired
	RejectTokenEarly     = 10 // the token is not valid yet
	RejectTokenReplayed  = 11 // the token was used before (every join needs a fresh one)
	RejectWrongRoom      = 12 // the token is for another room, or the room is not hosted here
	RejectRateLimited    = 13 // too many connections or joins from the client's address
	RejectNotGranted     = 14 // the join asks for a name, team or class its token does not grant
	RejectNameTaken      = 15 // another player in the room has that name (open mode)
	RejectTeamFull       = 16 // the team asked for has no seat left
	RejectBusy           = 17 // the server cannot check the token now (its replay cache is full)
)

// RejectLabel names a reject code as metrics label it.
func RejectLabel(code uint8) string {
	switch code {
	case RejectVersion:
		return "version"
	case RejectFull:
		return "full"
	case RejectBadJoin:
		return "bad_join"
	case RejectShutdown:
		return "shutting_down"
	case RejectNoToken:
		return "no_token"
	case RejectTokenInvalid:
		return "token_invalid"
	case RejectTokenKey:
		return "token_unknown_key"
	case RejectTokenSignature:
		return "token_bad_signature"
	case RejectTokenExpired:
		return "token_expired"
	case RejectTokenEarly:
		return "token_not_yet_valid"
	case RejectTokenReplayed:
		return "token_replayed"
	case RejectWrongRoom:
		return "wrong_room"
	case RejectRateLimited:
		return "rate_limited"
	case RejectNotGranted:
		return "not_granted"
	case RejectNameTaken:
		return "name_taken"
	case RejectTeamFull:
		return "team_full"
	case RejectBusy:
		return "busy"
	}
	return "unknown"
}

// RejectCodes lists every reject code, in order.
var RejectCodes = []uint8{RejectVersion, RejectFull, RejectBadJoin, RejectShutdown, RejectNoToken, RejectTokenInvalid,
	RejectTokenKey, RejectTokenSignature, RejectTokenExpired, RejectTokenEarly, RejectTokenReplayed, RejectWrongRoom,
	RejectRateLimited, RejectNotGranted, RejectNameTaken, RejectTeamFull, RejectBusy}

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
	EventHit      EventKind = 1 // a shot dealt damage: sent to the shooter (hit confirmed) and the target
	EventKill     EventKind = 2 // a player died: sent to everybody
	EventRespawn  EventKind = 3 // a player came back: sent to everybody
	EventJoined   EventKind = 4 // a player joined: sent to everybody, and to a newcomer for each player already there
	EventLeft     EventKind = 5 // a player left: sent to everybody
	EventNoDamage EventKind = 6 // a shot touched a target that took no damage (Reason says why): shooter and target
)

// Hit flags.
const (
	HitHead   = 1 << 0 // on the head: the weapon's head multiplier applied
	HitSplash = 1 << 1 // a projectile's explosion, not the projectile
	HitStreak = 1 << 2 // the hit completed a streak and carries its bonus
)

// Why a hit dealt no damage (EventNoDamage's Reason).
const (
	NoDamageInvulnerable = 1 // the target had just respawned
	NoDamageDead         = 2 // the target was already dead
	NoDamageZero         = 3 // the weapon deals nothing at that range
)

// Event is a game event on the reliable stream. Which fields mean something
// depends on Kind (docs/protocol.md).
type Event struct {
	Kind   EventKind
	Tick   uint32 // the server tick it happened at
	Player uint32 // hit, no damage: the shooter; kill: the killer (0: none); respawn, joined, left: the player
	Other  uint32 // hit, no damage: the target; kill: the victim
	// Hit and no damage.
	Shot  uint16 // the shot counter of the input that fired
	Flags uint8  // HitHead, HitSplash, HitStreak
	// Damage is, for a hit, the health it took: the weapon's damage with
	// falloff, head multiplier, splash falloff and streak bonus applied,
	// capped at the health the target had left (always > 0). For no damage,
	// what it would have taken from a target in full health.
	Damage   float32
	ViewTick uint32 // the view time the shot was resolved at: tick + frac/65536
	ViewFrac uint16
	Reason   uint8 // no damage: NoDamageInvulnerable, NoDamageDead, NoDamageZero
	// Hit, no damage, kill (KillByLevel: the level killed the player).
	Weapon uint8
	// Respawn: where, and which way it faces (Yaw, as an input's); joined:
	// team and name.
	Pos  [3]float64
	Yaw  uint16
	Team uint8
	Name string
}

// KillByLevel is the weapon of a Kill the level dealt (the victim's feet
// entered a kill volume or left the level's bounds); its player is the
// victim itself.
const KillByLevel = 0xFF

// AppendEvent appends the payload of an Event.
func AppendEvent(b []byte, e *Event) []byte {
	b = append(b, uint8(e.Kind))
	b = appendU32(b, e.Tick)
	b = appendU32(b, e.Player)
	switch e.Kind {
	case EventHit, EventNoDamage:
		b = appendU32(b, e.Other)
		b = appendU16(b, e.Shot)
		b = append(b, e.Weapon, e.Flags)
		b = appendF32(b, e.Damage)
		b = appendU32(b, e.ViewTick)
		b = appendU16(b, e.ViewFrac)
		if e.Kind == EventNoDamage {
			b = append(b, e.Reason)
		}
	case EventKill:
		b = appendU32(b, e.Other)
		b = append(b, e.Weapon)
	case EventRespawn:
		for _, v := range e.Pos {
			b = appendF64(b, v)
		}
		b = appendU16(b, e.Yaw)
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
	case EventHit, EventNoDamage:
		e.Other, e.Shot, e.Weapon = r.u32("other"), r.u16("shot"), r.u8("weapon")
		e.Flags = r.u8("flags")
		e.Damage, e.ViewTick, e.ViewFrac = r.f32("damage"), r.u32("view_tick"), r.u16("view_frac")
		if e.Flags&^(HitHead|HitSplash|HitStreak) != 0 {
			r.fail(ReasonValue, "flags")
		}
		if e.Kind == EventNoDamage {
			if e.Reason = r.u8("reason"); r.err == nil && (e.Reason < NoDamageInvulnerable || e.Reason > NoDamageZero) {
				r.fail(ReasonValue, "reason")
			}
		}
	case EventKill:
		e.Other, e.Weapon = r.u32("other"), r.u8("weapon")
	case EventRespawn:
		for i := range e.Pos {
			e.Pos[i] = r.f64("pos")
		}
		e.Yaw = r.u16("yaw")
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
	CloseNormal    = 0 // the client left
	CloseShutdown  = 1 // the server is shutting down (or its drain timed out)
	CloseProtocol  = 2 // the peer broke the protocol
	CloseRejected  = 3 // the join was refused (a Reject was sent first)
	CloseSlow      = 4 // the client did not read its control stream
	CloseIdle      = 5 // the player did not play: no input for the room's input timeout, or inputs for too few of its ticks
	CloseReplaced  = 6 // the same user joined the room again, on another connection
	CloseMatchOver = 7 // the match ended
)
