// Package movement is the character movement the server simulates and the
// client predicts with: the same function on both sides, so a client that
// applies the same inputs reaches the same state.
package movement

import (
	"math"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
)

// Params tune movement.
type Params struct {
	Speed float64   // metres per second at full stick
	Arena geom.AABB // feet stay inside it on X and Z; a zero box means unbounded
}

// DefaultParams returns a 6 m/s run in a 100 m square arena centred on the origin.
func DefaultParams() Params {
	return Params{Speed: 6, Arena: geom.AABB{Min: geom.V(-50, 0, -50), Max: geom.V(50, 0, 50)}}
}

// Step advances a character by one tick of dt seconds under input in: it
// turns to the input's aim and moves along the stick, relative to its yaw.
// Non-finite input values are treated as zero.
func Step(tf *ecs.Transform, vel *ecs.Velocity, in *ecs.Input, dt float64, p Params) {
	tf.Yaw, tf.Pitch = finite(in.Yaw), clampPitch(finite(in.Pitch))
	mx, mz := clamp1(finite(in.MoveX)), clamp1(finite(in.MoveZ))
	sin, cos := math.Sincos(tf.Yaw)
	wish := geom.V(mx*cos+mz*sin, 0, -mx*sin+mz*cos)
	if l := wish.Len(); l > 1 {
		wish = wish.Scale(1 / l)
	}
	vel.V = wish.Scale(p.Speed)
	tf.Pos = tf.Pos.AddScaled(vel.V, dt)
	if p.Arena != (geom.AABB{}) {
		tf.Pos.X = min(max(tf.Pos.X, p.Arena.Min.X), p.Arena.Max.X)
		tf.Pos.Z = min(max(tf.Pos.Z, p.Arena.Min.Z), p.Arena.Max.Z)
	}
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

func clampPitch(f float64) float64 { return min(max(f, -math.Pi/2), math.Pi/2) }
