package movement

import (
	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
)

// Params tune Step.
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
	vel.V = stick(in.MoveX, in.MoveZ, tf.Yaw).Scale(p.Speed)
	tf.Pos = tf.Pos.AddScaled(vel.V, dt)
	if p.Arena != (geom.AABB{}) {
		tf.Pos.X = min(max(tf.Pos.X, p.Arena.Min.X), p.Arena.Max.X)
		tf.Pos.Z = min(max(tf.Pos.Z, p.Arena.Min.Z), p.Arena.Max.Z)
	}
}
