package movement

import (
	"math"

	"github.com/rewind-gg/rewind/geom"
)

// Input is what a player asks of one tick of movement.
type Input struct {
	MoveX, MoveZ float64 // the stick: strafe right and forward, each in [−1, 1] (clamped; not finite: 0)
	Yaw          float64 // radians: 0 looks along +Z, positive turns toward +X (not finite: 0)
	Pitch        float64 // radians, up positive: the aim's; walking ignores it, as in Quake and Source
	Jump         bool    // held: a jump needs the button down on a tick after a tick with it up
	Crouch       bool    // held: crouched while down (and until there is room to stand)
	Sprint       bool    // held: sprint speed while the stick points forward and not crouched
}

// stick returns the horizontal wish vector of a stick and a yaw: the
// stick's right and forward along the yaw's right (cos yaw, 0, −sin yaw)
// and forward (sin yaw, 0, cos yaw), scaled to length 1 if longer (so that
// diagonals are not faster). Values that are not finite count as 0.
func stick(moveX, moveZ, yaw float64) geom.Vec3 {
	mx, mz := clamp1(finite(moveX)), clamp1(finite(moveZ))
	sin, cos := math.Sincos(finite(yaw))
	wish := geom.V(mx*cos+mz*sin, 0, -mx*sin+mz*cos)
	if l := wish.Len(); l > 1 {
		wish = wish.Scale(1 / l)
	}
	return wish
}

// Aim returns the unit direction of a yaw and pitch: yaw 0 looks along +Z,
// positive yaw turns toward +X, positive pitch looks up.
func Aim(yaw, pitch float64) geom.Vec3 {
	sy, cy := math.Sincos(yaw)
	sp, cp := math.Sincos(pitch)
	return geom.V(sy*cp, sp, cy*cp)
}

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

func clamp1(f float64) float64 { return min(max(f, -1), 1) }

// Look returns the aim a player turns to for an input's yaw and pitch: a
// yaw that is not finite is 0, and the pitch is clamped to [−π/2, π/2] (not
// finite: 0). The server keeps it as the player's aim; Move does not use it.
func Look(yaw, pitch float64) (float64, float64) {
	return finite(yaw), min(max(finite(pitch), -math.Pi/2), math.Pi/2)
}
