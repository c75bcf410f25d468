// Package spread makes a shot's spread deterministic and the server's: the
// direction of every pellet follows from the match's spread seed, the
// shooter's id, the shot's index in the shooter's sequence (the server's
// count of its earlier shots, which the client cannot choose or skip in) and
// the pellet's index. The server sends the seed in the Welcome and each
// client's count in its snapshots, so a client predicts its own pellets
// exactly (docs/protocol.md gives the formula and test vectors for other
// languages).
package spread

import (
	"math"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/splitmix"
)

// Key is the key of a shot's pellets: splitmix64(seed XOR
// splitmix64(shooter·2³² + seq)), where seq is the shot's index in its
// shooter's sequence.
func Key(seed uint64, shooter, seq uint32) uint64 {
	return splitmix.Mix(seed ^ splitmix.Mix(uint64(shooter)<<32|uint64(seq)))
}

// Dir returns the direction of pellet number pellet of the shot with key
// key: uniformly distributed over the cone of half-angle halfAngle (radians)
// around the unit vector aim. A half-angle of 0 returns aim.
func Dir(aim geom.Vec3, halfAngle float64, key uint64, pellet int) geom.Vec3 {
	if !(halfAngle > 0) {
		return aim
	}
	u1, u2 := Uniforms(key, pellet)
	cosT := 1 - u1*(1-math.Cos(halfAngle))
	sinT := math.Sqrt(max(0, 1-cosT*cosT))
	phi := 2 * math.Pi * u2
	// An orthonormal basis around aim.
	up := geom.V(0, 1, 0)
	if math.Abs(aim.Y) > 0.99 {
		up = geom.V(1, 0, 0)
	}
	a := aim.Cross(up).Normalize()
	b := a.Cross(aim)
	sp, cp := math.Sincos(phi)
	return aim.Scale(cosT).Add(a.Scale(sinT * cp)).Add(b.Scale(sinT * sp)).Normalize()
}

// Uniforms returns the two numbers in [0, 1) pellet p's direction is drawn
// from: the top 53 bits of splitmix64(key + 2p) and of splitmix64(key + 2p +
// 1), each divided by 2⁵³ (additions modulo 2⁶⁴).
func Uniforms(key uint64, pellet int) (float64, float64) {
	k := key + 2*uint64(pellet)
	return float64(splitmix.Mix(k)>>11) / (1 << 53), float64(splitmix.Mix(k+1)>>11) / (1 << 53)
}
