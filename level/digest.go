package level

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/protocol"
)

// Digest is the SHA-256 of a level's canonical encoding.
type Digest [32]byte

// String returns the digest in lower-case hex.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// canonicalMagic starts the canonical encoding: its format and version.
const canonicalMagic = "RWLEVEL\x01"

// Digest returns the SHA-256 of the level's canonical encoding.
func (l *Level) Digest() Digest { return sha256.Sum256(l.Canonical()) }

// Canonical returns the level's canonical encoding (docs/levels.md,
// "Digest"): its content, independent of how a file laid it out. Every
// number is little-endian; a coordinate is a signed 32-bit count of
// Quantum (rounded half away from zero), a yaw the wire's unsigned 16-bit
// yaw.
//
//	"RWLEVEL" 0x01
//	bounds: min x y z, max x y z                      6 × int32
//	u32 n, then n triangles, sorted:                   9 × int32, u8 blocks
//	u32 n, then n spawns, sorted:                      u8 team, 3 × int32, u16 yaw
//	u32 n, then n kill volumes, sorted:                6 × int32
//
// A triangle's vertices are rotated (keeping their order round the
// triangle, so its winding) to start with the rotation whose nine numbers
// are smallest; triangles, spawns and volumes are sorted by their encoded
// numbers in order (see [Level.Canonicalize]). Names, sources and
// waypoints are not encoded.
func (l *Level) Canonical() []byte {
	c := Level{Triangles: slices.Clone(l.Triangles), Spawns: slices.Clone(l.Spawns),
		Bounds: l.Bounds, KillVolumes: slices.Clone(l.KillVolumes)}
	c.Canonicalize()
	b := make([]byte, 0, len(canonicalMagic)+24+4+len(c.Triangles)*37+4+len(c.Spawns)*15+4+len(c.KillVolumes)*24)
	b = append(b, canonicalMagic...)
	bounds := gridBox(l.Bounds)
	b = appendInts(b, bounds[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.Triangles)))
	for i := range c.Triangles {
		t := &c.Triangles[i]
		for _, v := range [3]geom.Vec3{t.A, t.B, t.C} {
			g := gridVec(v)
			b = appendInts(b, g[:]...)
		}
		b = append(b, byte(t.Blocks))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.Spawns)))
	for _, s := range c.Spawns {
		b = append(b, s.Team)
		g := gridVec(s.Pos)
		b = appendInts(b, g[:]...)
		b = binary.LittleEndian.AppendUint16(b, protocol.QuantizeYaw(s.Yaw))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.KillVolumes)))
	for _, v := range c.KillVolumes {
		g := gridBox(v.Box)
		b = appendInts(b, g[:]...)
	}
	return b
}

// Canonicalize puts the level's content in the order of its canonical
// encoding: each triangle's vertices rotated (its winding kept) to the
// rotation whose grid numbers are smallest, the triangles sorted by those
// numbers and then what they block, the spawns by team, position and yaw,
// the kill volumes by their corners; ties keep their order. Sources and
// waypoints are untouched.
//
// Coordinates of −0 become +0.
//
// A program that plays a level canonicalizes it first, so that the level
// it simulates is, triangle for triangle and vertex for vertex, the one
// [Decode] makes of its encoding: a recording that carries the encoding
// replays bit for bit (a triangle's index, and the order of its vertices,
// can change the last bits of a query's answer).
func (l *Level) Canonicalize() {
	type keyed struct {
		k [9]int32
		t Triangle
	}
	tris := make([]keyed, len(l.Triangles))
	for i, t := range l.Triangles {
		vs := [3]geom.Vec3{t.A, t.B, t.C}
		gs := [3][3]int32{gridVec(t.A), gridVec(t.B), gridVec(t.C)}
		best, bestR := [9]int32{}, 0
		for r := range 3 {
			var cand [9]int32
			for k := range 3 {
				copy(cand[3*k:], gs[(r+k)%3][:])
			}
			if r == 0 || slices.Compare(cand[:], best[:]) < 0 {
				best, bestR = cand, r
			}
		}
		t.A, t.B, t.C = plusZero(vs[bestR]), plusZero(vs[(bestR+1)%3]), plusZero(vs[(bestR+2)%3])
		tris[i] = keyed{best, t}
	}
	slices.SortStableFunc(tris, func(a, b keyed) int {
		return cmp.Or(slices.Compare(a.k[:], b.k[:]), cmp.Compare(a.t.Blocks, b.t.Blocks))
	})
	for i := range tris {
		l.Triangles[i] = tris[i].t
	}
	slices.SortStableFunc(l.Spawns, func(a, b Spawn) int {
		pa, pb := gridVec(a.Pos), gridVec(b.Pos)
		return cmp.Or(cmp.Compare(a.Team, b.Team), slices.Compare(pa[:], pb[:]),
			cmp.Compare(protocol.QuantizeYaw(a.Yaw), protocol.QuantizeYaw(b.Yaw)))
	})
	slices.SortStableFunc(l.KillVolumes, func(a, b Volume) int {
		ga, gb := gridBox(a.Box), gridBox(b.Box)
		return slices.Compare(ga[:], gb[:])
	})
}

// plusZero turns a coordinate of −0 (a small negative number snapped) into
// +0, the value Decode gives it: the two compare equal, but not every
// product of them has the same sign.
func plusZero(v geom.Vec3) geom.Vec3 {
	for _, c := range []*float64{&v.X, &v.Y, &v.Z} {
		if *c == 0 {
			*c = 0
		}
	}
	return v
}

// Decode returns the level whose canonical encoding is b, named name: its
// content in canonical order, without sources or waypoints (the encoding
// holds neither). Its digest is the SHA-256 of b. Counts are checked
// against the bytes present before anything is allocated for them.
func Decode(name string, b []byte) (*Level, error) {
	d := canonicalReader{b: b}
	if len(b) < len(canonicalMagic) || string(b[:len(canonicalMagic)]) != canonicalMagic {
		return nil, fmt.Errorf("level: encoding: does not start with %q", canonicalMagic)
	}
	d.b = b[len(canonicalMagic):]
	l := &Level{Name: name}
	l.Bounds = d.box()
	n := d.count("triangles", 37)
	if n > 0 {
		l.Triangles = make([]Triangle, n)
	}
	for i := range l.Triangles {
		t := &l.Triangles[i]
		t.A, t.B, t.C = d.vec(), d.vec(), d.vec()
		t.Blocks, t.Source = Blocks(d.u8()), -1
		if d.err == nil && (t.Blocks == 0 || t.Blocks&^BlocksBoth != 0) {
			d.err = fmt.Errorf("triangle %d: blocks %d is not 1, 2 or 3", i, t.Blocks)
		}
	}
	n = d.count("spawns", 15)
	if n > 0 {
		l.Spawns = make([]Spawn, n)
	}
	for i := range l.Spawns {
		s := &l.Spawns[i]
		s.Team = d.u8()
		s.Pos = d.vec()
		s.Yaw, s.Source = protocol.YawValue(d.u16()), -1
	}
	n = d.count("kill volumes", 24)
	if n > 0 {
		l.KillVolumes = make([]Volume, n)
	}
	for i := range l.KillVolumes {
		l.KillVolumes[i] = Volume{Box: d.box(), Source: -1}
	}
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%d bytes after the kill volumes", len(d.b))
	}
	if d.err != nil {
		return nil, fmt.Errorf("level: encoding: %w", d.err)
	}
	return l, nil
}

// canonicalReader reads a canonical encoding; the first error sticks.
type canonicalReader struct {
	b   []byte
	err error
}

func (r *canonicalReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.err = errors.New("truncated")
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *canonicalReader) u8() uint8 {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *canonicalReader) u16() uint16 {
	if p := r.take(2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (r *canonicalReader) coord() float64 {
	if p := r.take(4); p != nil {
		return float64(int32(binary.LittleEndian.Uint32(p))) * Quantum
	}
	return 0
}

func (r *canonicalReader) vec() geom.Vec3 { return geom.V(r.coord(), r.coord(), r.coord()) }

func (r *canonicalReader) box() geom.AABB { return geom.AABB{Min: r.vec(), Max: r.vec()} }

// count reads a count of items of size bytes each, refusing one the bytes
// left cannot hold.
func (r *canonicalReader) count(what string, size int) int {
	p := r.take(4)
	if p == nil {
		return 0
	}
	n := binary.LittleEndian.Uint32(p)
	if uint64(n)*uint64(size) > uint64(len(r.b)) {
		r.err = fmt.Errorf("%d %s announced, %d bytes left", n, what, len(r.b))
		return 0
	}
	return int(n)
}

func gridVec(v geom.Vec3) [3]int32 { return [3]int32{grid(v.X), grid(v.Y), grid(v.Z)} }

func gridBox(b geom.AABB) [6]int32 {
	lo, hi := gridVec(b.Min), gridVec(b.Max)
	return [6]int32{lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]}
}

func appendInts(b []byte, vs ...int32) []byte {
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// IsCanonical reports whether the level's content is in canonical order
// (Canonicalize would move nothing).
func (l *Level) IsCanonical() bool {
	c := Level{Triangles: slices.Clone(l.Triangles), Spawns: slices.Clone(l.Spawns), KillVolumes: slices.Clone(l.KillVolumes)}
	c.Canonicalize()
	return slices.Equal(c.Triangles, l.Triangles) && slices.Equal(c.Spawns, l.Spawns) && slices.Equal(c.KillVolumes, l.KillVolumes)
}
