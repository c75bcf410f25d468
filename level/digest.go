package level

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
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
// numbers in order. Names, sources and waypoints are not encoded.
func (l *Level) Canonical() []byte {
	type tri struct {
		v [9]int32
		b Blocks
	}
	tris := make([]tri, len(l.Triangles))
	for i := range l.Triangles {
		t := &l.Triangles[i]
		vs := [3][3]int32{gridVec(t.A), gridVec(t.B), gridVec(t.C)}
		var best [9]int32
		for r := 0; r < 3; r++ {
			var cand [9]int32
			for k := 0; k < 3; k++ {
				copy(cand[3*k:], vs[(r+k)%3][:])
			}
			if r == 0 || slices.Compare(cand[:], best[:]) < 0 {
				best = cand
			}
		}
		tris[i] = tri{best, t.Blocks}
	}
	slices.SortFunc(tris, func(a, b tri) int {
		return cmp.Or(slices.Compare(a.v[:], b.v[:]), cmp.Compare(a.b, b.b))
	})
	type spawn struct {
		team uint8
		pos  [3]int32
		yaw  uint16
	}
	spawns := make([]spawn, len(l.Spawns))
	for i, s := range l.Spawns {
		spawns[i] = spawn{s.Team, gridVec(s.Pos), protocol.QuantizeYaw(s.Yaw)}
	}
	slices.SortFunc(spawns, func(a, b spawn) int {
		return cmp.Or(cmp.Compare(a.team, b.team), slices.Compare(a.pos[:], b.pos[:]), cmp.Compare(a.yaw, b.yaw))
	})
	vols := make([][6]int32, len(l.KillVolumes))
	for i, v := range l.KillVolumes {
		vols[i] = gridBox(v.Box)
	}
	slices.SortFunc(vols, func(a, b [6]int32) int { return slices.Compare(a[:], b[:]) })

	b := make([]byte, 0, len(canonicalMagic)+24+4+len(tris)*37+4+len(spawns)*15+4+len(vols)*24)
	b = append(b, canonicalMagic...)
	bounds := gridBox(l.Bounds)
	b = appendInts(b, bounds[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(tris)))
	for _, t := range tris {
		b = appendInts(b, t.v[:]...)
		b = append(b, byte(t.b))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(spawns)))
	for _, s := range spawns {
		b = append(b, s.team)
		b = appendInts(b, s.pos[:]...)
		b = binary.LittleEndian.AppendUint16(b, s.yaw)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vols)))
	for _, v := range vols {
		b = appendInts(b, v[:]...)
	}
	return b
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
