// Package spread makes a shot's spread deterministic: the direction of every
// pellet follows from the shooter's id, the shot counter and the pellet's
// index, so a client can reproduce exactly the pellets the server fires
// (docs/protocol.md gives the formula for other languages).
package spread

import (
	"math"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/splitmix"
)

// Dir returns the direction of pellet number pellet of a shot: uniformly
// distributed over the cone of half-angle halfAngle (radians) around the
// unit vector aim. A half-angle of 0 returns aim.
func Dir(aim geom.Vec3, halfAngle float64, shooter uint32, shot uint16, pellet int) geom.Vec3 {
	if !(halfAngle > 0) {
		return aim
	}
	u1, u2 := Uniforms(shooter, shot, pellet)
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

// Uniforms returns the two numbers in [0, 1) a pellet's direction is drawn
// from: the top 53 bits of splitmix64 of the key (shooter << 32 | shot << 8 |
// pellet) and of the key + 1, each divided by 2^53.
func Uniforms(shooter uint32, shot uint16, pellet int) (float64, float64) {
	key := uint64(shooter)<<32 | uint64(shot)<<8 | uint64(pellet&0xFF)
	return float64(splitmix.Mix(key)>>11) / (1 << 53), float64(splitmix.Mix(key+1)>>11) / (1 << 53)
}
