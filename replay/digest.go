package replay

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cespare/xxhash/v2"

	"github.com/rewind-gg/rewind/ecs"
)

// Digest sums up one tick's events: how many of each kind, and a 64-bit
// hash of all of them, every field in a canonical encoding (docs/replay.md,
// "Event digest"). Two ticks with the same events have the same digest; a
// replay that differs anywhere (a hit point, a damage, a view time, in the
// last bit) almost surely has another.
type Digest struct {
	Shots, Rejected, Kills, Respawns, Clamps uint32
	Hash                                     uint64
}

// Events returns how many events the digest covers.
func (d Digest) Events() int {
	return int(d.Shots) + int(d.Rejected) + int(d.Kills) + int(d.Respawns) + int(d.Clamps)
}

// String formats the digest for errors and logs.
func (d Digest) String() string {
	return fmt.Sprintf("%d shots, %d rejected, %d kills, %d respawns, %d clamps, hash %016x",
		d.Shots, d.Rejected, d.Kills, d.Respawns, d.Clamps, d.Hash)
}

// DigestOf returns the digest of a tick's events. It allocates its
// encoding: a Digester, reused, does not.
func DigestOf(ev *ecs.Events) Digest {
	var d Digester
	return d.Of(ev)
}

// Digester computes digests, reusing its buffer: the recorder digests every
// tick, and a replay every tick of every simulation.
type Digester struct {
	buf []byte
}

// Of returns the digest of a tick's events, in the order the simulation
// lists them: xxHash64 (seed 0) of their canonical encoding.
func (g *Digester) Of(ev *ecs.Events) Digest {
	d := Digest{Shots: uint32(len(ev.Shots)), Rejected: uint32(len(ev.Rejected)), Kills: uint32(len(ev.Kills)),
		Respawns: uint32(len(ev.Respawns)), Clamps: uint32(len(ev.Clamps))}
	b := g.buf[:0]
	le := binary.LittleEndian
	for _, n := range [...]uint32{d.Shots, d.Rejected, d.Kills, d.Respawns, d.Clamps} {
		b = le.AppendUint32(b, n)
	}
	for i := range ev.Shots {
		s := &ev.Shots[i]
		b = le.AppendUint32(b, s.Shot)
		b = le.AppendUint16(b, s.Weapon)
		b = appendEntityBits(b, s.Shooter)
		b = le.AppendUint32(b, s.Seq)
		b = le.AppendUint64(b, uint64(s.Fired))
		b = append(b, uint8(s.Result))
		b = appendEntityBits(b, s.Target)
		b = appendEntityBits(b, s.By)
		b = le.AppendUint32(b, uint32(s.Tri))
		b = le.AppendUint64(b, uint64(s.Tick))
		b = le.AppendUint64(b, uint64(s.ViewTime.Tick))
		b = appendBits(b, s.ViewTime.Frac)
		b = appendBits(appendBits(appendBits(b, s.Point.X), s.Point.Y), s.Point.Z)
		b = append(b, boolByte(s.Head), boolByte(s.Splash), s.Pellets, boolByte(s.Streak))
		b = appendBits(appendBits(b, s.Damage), s.Dealt)
		b = append(b, uint8(s.NoDamage))
	}
	for i := range ev.Rejected {
		r := &ev.Rejected[i]
		b = appendEntityBits(b, r.Shooter)
		b = le.AppendUint32(b, r.Shot)
		b = le.AppendUint16(b, r.Weapon)
		b = append(b, uint8(r.Reason))
		b = le.AppendUint64(b, uint64(r.Tick))
	}
	for i := range ev.Kills {
		k := &ev.Kills[i]
		b = appendEntityBits(appendEntityBits(b, k.Killer), k.Victim)
		b = le.AppendUint16(b, k.Weapon)
		b = le.AppendUint64(b, uint64(k.Tick))
	}
	for i := range ev.Respawns {
		r := &ev.Respawns[i]
		b = appendEntityBits(b, r.Player)
		b = appendBits(appendBits(appendBits(b, r.Pos.X), r.Pos.Y), r.Pos.Z)
		b = le.AppendUint64(b, uint64(r.Tick))
	}
	for i := range ev.Clamps {
		c := &ev.Clamps[i]
		b = appendEntityBits(b, c.Shooter)
		b = le.AppendUint32(b, c.Shot)
		b = le.AppendUint16(b, c.Weapon)
		b = append(b, uint8(c.Reason))
		b = appendBits(appendBits(b, c.Claimed), c.Granted)
		b = le.AppendUint64(b, uint64(c.Tick))
	}
	g.buf = b
	d.Hash = xxhash.Sum64(b)
	return d
}

// appendBits appends a float's IEEE 754 bits, little-endian.
func appendBits(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

// appendEntityBits appends an entity as its index and generation, each a
// little-endian u32.
func appendEntityBits(b []byte, e ecs.Entity) []byte {
	return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(b, e.ID()), e.Generation())
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}
