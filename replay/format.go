package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/systems"
)

// Magic starts every recording. Like PNG's signature, its first byte is not
// ASCII and it holds a CR LF and a ^Z, so a transfer in text mode visibly
// breaks it.
const Magic = "\x89RWR\r\n\x1a\n"

// Version is the format version this package writes and reads. Any change
// to the header, to a record's payload or to the digest's canonical
// encoding makes a new version (docs/replay.md, "Versioning"). Version 4
// adds to an input the snapshots its client drew the world between
// (ViewTime.Back and Span); version 3, which this package still reads,
// has none. Version 3
// moves players with the character controller (the classes' movement, the
// level's bounds and kill volumes in the setup; a spawn's class, yaw and
// crouched height); version 2 carried the level (its canonical encoding)
// in the header; version 1's map was boxes.
const Version uint16 = 4

// oldestVersion is the oldest format version this package reads.
const oldestVersion uint16 = 3

// Limits that keep a damaged length from making a reader allocate without
// bound: no record the Recorder writes comes near them.
const (
	MaxSetupLen   = 16 << 20 // bytes of setup JSON
	MaxLevelLen   = 64 << 20 // bytes of the level's canonical encoding (a million triangles take 37 MB)
	MaxPayloadLen = 1 << 20  // bytes of one record's payload
)

// RecordType is a record's first byte. Types below 0x80 are critical: a
// reader that does not know one stops with an error. Types from 0x80 up are
// ancillary: a reader that does not know one skips it.
type RecordType uint8

// Record types.
const (
	RecordSpawnPlayer RecordType = 0x01 // Simulation.SpawnPlayer
	// 0x02 was version 1's spawn static: a box of level geometry. The
	// level is the header's now, whole, and never changes during a match.
	RecordSpawnShield RecordType = 0x03 // Simulation.SpawnShield
	RecordDespawn     RecordType = 0x04 // Simulation.Despawn
	RecordInput       RecordType = 0x05 // Simulation.QueueInput, when queued
	RecordStep        RecordType = 0x06 // Simulation.Step, and the digest of its events
	RecordIncomplete  RecordType = 0x07 // ticks were dropped: nothing follows but this and End
	RecordEnd         RecordType = 0x08 // the match ended
)

// String names the type.
func (t RecordType) String() string {
	switch t {
	case RecordSpawnPlayer:
		return "spawn_player"
	case RecordSpawnShield:
		return "spawn_shield"
	case RecordDespawn:
		return "despawn"
	case RecordInput:
		return "input"
	case RecordStep:
		return "step"
	case RecordIncomplete:
		return "incomplete"
	case RecordEnd:
		return "end"
	}
	return fmt.Sprintf("type 0x%02x", uint8(t))
}

// EntityID is an entity of the recorded simulation: its index and
// generation in the room's World. A replay allocates the same ones.
type EntityID struct {
	ID, Generation uint32
}

// EntityOf returns e's id in a recording.
func EntityOf(e ecs.Entity) EntityID { return EntityID{ID: e.ID(), Generation: e.Generation()} }

// WireID returns the id's wire id (ecs.WireID): what clients and spread
// keys know the entity by.
func (e EntityID) WireID() uint32 { return e.ID&(1<<20-1) | e.Generation<<20 }

// String formats the id as index.generation.
func (e EntityID) String() string { return fmt.Sprintf("%d.%d", e.ID, e.Generation) }

// HeaderError is a header the reader refuses. Field names the part at
// fault: magic, version, setup_length, setup, level_length, level,
// checksum.
type HeaderError struct {
	Field string
	Err   error
}

func (e *HeaderError) Error() string { return "replay: header: " + e.Field + ": " + e.Err.Error() }

func (e *HeaderError) Unwrap() error { return e.Err }

// RecordError is a record the reader cannot use: truncated, damaged
// (checksum), malformed or of an unknown critical type. Offset is the byte
// offset of the record's first byte in the file; every record before it is
// intact.
type RecordError struct {
	Offset int64
	Type   RecordType // as read; may itself be the damaged byte
	Err    error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("replay: record at byte %d (%v): %v", e.Offset, e.Type, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Reasons a record is refused.
var (
	errChecksum  = errors.New("checksum mismatch: the record is damaged")
	errTruncated = errors.New("truncated: the recording ends inside the record")
	errNoEnd     = errors.New("truncated: the recording ends before the match's end record (its server stopped, or is still writing it)")
)

// newCRCTable returns the CRC-32C (Castagnoli) table every record's checksum
// uses. It is built per Recorder and Reader: the package keeps no globals.
func newCRCTable() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// appendRecord frames payload as a record of type t: the type, the
// payload's length (uvarint), the payload, and the CRC-32C of the type and
// the payload (little-endian).
func appendRecord(dst []byte, t RecordType, payload []byte, tab *crc32.Table) []byte {
	start := len(dst)
	dst = append(dst, byte(t))
	dst = binary.AppendUvarint(dst, uint64(len(payload)))
	dst = append(dst, payload...)
	sum := crc32.Update(crc32.Update(0, tab, dst[start:start+1]), tab, payload)
	return binary.LittleEndian.AppendUint32(dst, sum)
}

// Payload encoders. Integers are varints (signed ones zigzag), floats their
// IEEE 754 bits, little-endian: a replay gets exactly the bits recorded.

func appendF64(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

func appendVec(b []byte, v geom.Vec3) []byte {
	return appendF64(appendF64(appendF64(b, v.X), v.Y), v.Z)
}

func appendBox(b []byte, box geom.AABB) []byte { return appendVec(appendVec(b, box.Min), box.Max) }

func appendEntity(b []byte, e EntityID) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(b, uint64(e.ID)), uint64(e.Generation))
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendSpawnPlayer(b []byte, e EntityID, p *systems.PlayerSpec) []byte {
	b = appendEntity(b, e)
	b = binary.AppendUvarint(b, uint64(p.ID))
	b = appendString(b, p.Name)
	b = append(b, p.Team)
	b = appendVec(b, p.Pos)
	b = appendF64(b, p.Yaw)
	b = appendF64(appendF64(appendF64(b, p.Hitbox.Radius), p.Hitbox.Height), p.Hitbox.HeadHeight)
	b = appendF64(b, p.Hitbox.CrouchHeight)
	b = appendF64(b, p.Health)
	b = appendBool(b, p.Controlled)
	b = binary.AppendUvarint(b, uint64(max(p.Class, 0)))
	b = binary.AppendUvarint(b, uint64(len(p.Loadout)))
	for _, w := range p.Loadout {
		b = binary.AppendUvarint(b, uint64(w))
	}
	return b
}

func appendSpawnShield(b []byte, e, owner EntityID, team uint8, box geom.AABB, expires int64) []byte {
	b = appendEntity(appendEntity(b, e), owner)
	b = append(b, team)
	b = appendBox(b, box)
	return binary.AppendVarint(b, expires)
}

// Bits of an input record's float mask: which floats differ from the
// player's previous input, in this order.
const (
	inMoveX = 1 << iota
	inMoveZ
	inYaw
	inPitch
	inViewFrac
	inEarliest
	inAll = 1<<iota - 1
)

// inputFloats are an input's floats in the mask's order.
func inputFloats(in *ecs.Input) [6]*float64 {
	return [6]*float64{&in.MoveX, &in.MoveZ, &in.Yaw, &in.Pitch, &in.ViewTime.Frac, &in.Earliest}
}

// appendInput stores an input as it differs from the same player's
// previous one (prev; the zero Input before its first): consecutive inputs
// keep most of their floats (a stick held, a bound that moves by a tick),
// so a float is stored only when its bits changed, and then as the XOR of
// the two, whose equal sign, exponent and high mantissa bits give zero
// bytes that are left out. The tick and the shot counter are differences,
// the view time's tick relative to the input's: a byte or two each.
func appendInput(b []byte, e EntityID, in, prev *ecs.Input) []byte {
	b = appendEntity(b, e)
	b = binary.AppendVarint(b, in.Tick-prev.Tick)
	cur, old := inputFloats(in), inputFloats(prev)
	var mask byte
	for i := range cur {
		if math.Float64bits(*cur[i]) != math.Float64bits(*old[i]) {
			mask |= 1 << i
		}
	}
	b = append(b, mask)
	for i := range cur {
		if mask&(1<<i) != 0 {
			b = appendXOR(b, math.Float64bits(*cur[i])^math.Float64bits(*old[i]))
		}
	}
	b = append(b, in.Buttons)
	b = binary.AppendUvarint(b, uint64(in.Weapon))
	b = binary.AppendVarint(b, int64(in.Shot)-int64(prev.Shot))
	b = binary.AppendVarint(b, in.ViewTime.Tick-in.Tick)
	if !in.ViewTime.Spanned() {
		return append(b, 0)
	}
	return append(b, in.ViewTime.Span, in.ViewTime.Back)
}

// appendXOR stores a non-zero 64-bit XOR: a byte saying how many of its
// low bytes are zero (high nibble) and how many bytes follow (low nibble,
// 1..8), then those bytes, little-endian.
func appendXOR(b []byte, x uint64) []byte {
	tz := bits.TrailingZeros64(x) / 8
	x >>= 8 * tz
	n := (bits.Len64(x) + 7) / 8
	b = append(b, byte(tz<<4|n))
	for range n {
		b = append(b, byte(x))
		x >>= 8
	}
	return b
}

func appendStep(b []byte, tick int64, d *Digest) []byte {
	b = binary.AppendVarint(b, tick)
	for _, n := range [...]uint32{d.Shots, d.Rejected, d.Kills, d.Respawns, d.Clamps} {
		b = binary.AppendUvarint(b, uint64(n))
	}
	return binary.LittleEndian.AppendUint64(b, d.Hash)
}

func appendIncomplete(b []byte, first, dropped int64) []byte {
	return binary.AppendUvarint(binary.AppendVarint(b, first), uint64(dropped))
}

// decoder reads a payload; the first failure sticks, so a record is decoded
// straight through and checked once.
type decoder struct {
	b       []byte
	err     error
	version uint16 // the recording's format version
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
	d.b = nil
}

func (d *decoder) u8(field string) uint8 {
	if len(d.b) < 1 {
		d.fail("%s: payload too short", field)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint(field string, limit uint64) uint64 {
	v, n := binary.Uvarint(d.b)
	switch {
	case n <= 0:
		d.fail("%s: bad varint", field)
		return 0
	case v > limit:
		d.fail("%s: %d is over %d", field, v, limit)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint(field string) int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("%s: bad varint", field)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) f64(field string) float64 {
	if len(d.b) < 8 {
		d.fail("%s: payload too short", field)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *decoder) vec(field string) geom.Vec3 {
	return geom.Vec3{X: d.f64(field), Y: d.f64(field), Z: d.f64(field)}
}

func (d *decoder) box(field string) geom.AABB {
	return geom.AABB{Min: d.vec(field), Max: d.vec(field)}
}

func (d *decoder) entity(field string) EntityID {
	return EntityID{ID: uint32(d.uvarint(field, math.MaxUint32)), Generation: uint32(d.uvarint(field, math.MaxUint32))}
}

func (d *decoder) str(field string) string {
	n := d.uvarint(field, uint64(len(d.b)))
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) bool(field string) bool {
	switch d.u8(field) {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail("%s: not 0 or 1", field)
	return false
}

// end reports the first failure, or bytes left over.
func (d *decoder) end() error {
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%d bytes after the payload's last field", len(d.b))
	}
	return d.err
}

func (d *decoder) spawnPlayer(rec *Record) {
	rec.Entity = d.entity("entity")
	p := &rec.Player
	p.ID = uint32(d.uvarint("id", math.MaxUint32))
	p.Name = d.str("name")
	p.Team = d.u8("team")
	p.Pos = d.vec("pos")
	p.Yaw = d.f64("yaw")
	p.Hitbox = ecs.Hitbox{Radius: d.f64("hitbox"), Height: d.f64("hitbox"), HeadHeight: d.f64("hitbox"), CrouchHeight: d.f64("hitbox")}
	p.Health = d.f64("health")
	p.Controlled = d.bool("controlled")
	p.Class = int(d.uvarint("class", math.MaxInt32))
	n := d.uvarint("loadout", ecs.MaxLoadout)
	p.Loadout = p.Loadout[:0]
	for range n {
		p.Loadout = append(p.Loadout, uint16(d.uvarint("loadout", math.MaxUint16)))
	}
}

// input decodes an input record against the same player's previous input
// (prev, the zero Input before its first), and makes it the new previous.
func (d *decoder) input(rec *Record, prevs map[EntityID]ecs.Input) {
	rec.Entity = d.entity("entity")
	prev := prevs[rec.Entity]
	in := &rec.Input
	in.Tick = prev.Tick + d.varint("tick")
	mask := d.u8("mask")
	if mask&^inAll != 0 {
		d.fail("mask: unknown bits 0x%02x", mask&^inAll)
	}
	cur, old := inputFloats(in), inputFloats(&prev)
	for i := range cur {
		x := uint64(0)
		if mask&(1<<i) != 0 {
			x = d.xor("input")
		}
		*cur[i] = math.Float64frombits(math.Float64bits(*old[i]) ^ x)
	}
	in.Buttons = d.u8("buttons")
	in.Weapon = uint16(d.uvarint("weapon", math.MaxUint16))
	shot := int64(prev.Shot) + d.varint("shot")
	if shot < 0 || shot > math.MaxUint32 {
		d.fail("shot: %d is outside 0..%d", shot, uint32(math.MaxUint32))
	}
	in.Shot = uint32(shot)
	in.ViewTime.Tick = in.Tick + d.varint("view_tick")
	in.ViewTime.Back, in.ViewTime.Span = 0, 0
	if d.version >= 4 {
		if span := d.u8("view_span"); span > 1 {
			in.ViewTime.Span, in.ViewTime.Back = span, d.u8("view_back")
		} else if span == 1 {
			d.fail("view_span: 1 (one tick is 0)")
		}
	}
	if d.err == nil {
		prevs[rec.Entity] = *in
	}
}

// xor reads a stored XOR (appendXOR).
func (d *decoder) xor(field string) uint64 {
	h := d.u8(field)
	tz, n := int(h>>4), int(h&15)
	switch {
	case d.err != nil:
		return 0
	case n < 1 || n+tz > 8:
		d.fail("%s: bad float delta header 0x%02x", field, h)
		return 0
	case len(d.b) < n:
		d.fail("%s: payload too short", field)
		return 0
	}
	var x uint64
	for i := n - 1; i >= 0; i-- {
		x = x<<8 | uint64(d.b[i])
	}
	d.b = d.b[n:]
	return x << (8 * tz)
}

func (d *decoder) step(rec *Record) {
	rec.Tick = d.varint("tick")
	counts := [...]*uint32{&rec.Digest.Shots, &rec.Digest.Rejected, &rec.Digest.Kills, &rec.Digest.Respawns, &rec.Digest.Clamps}
	for _, c := range counts {
		*c = uint32(d.uvarint("count", math.MaxUint32))
	}
	if len(d.b) < 8 {
		d.fail("hash: payload too short")
		return
	}
	rec.Digest.Hash = binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
}
