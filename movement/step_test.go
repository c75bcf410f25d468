package movement

import (
	"math"
	"testing"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
)

func TestStep(t *testing.T) {
	p := Params{Speed: 6}
	tests := []struct {
		name string
		yaw  float64
		in   ecs.Input
		want geom.Vec3
	}{
		{"forward is +Z at yaw 0", 0, ecs.Input{MoveZ: 1}, geom.V(0, 0, 0.3)},
		{"right is +X at yaw 0", 0, ecs.Input{MoveX: 1}, geom.V(0.3, 0, 0)},
		{"forward at yaw 90° is +X", math.Pi / 2, ecs.Input{MoveZ: 1, Yaw: math.Pi / 2}, geom.V(0.3, 0, 0)},
		{"diagonals are not faster", 0, ecs.Input{MoveX: 1, MoveZ: 1}, geom.V(0.3/math.Sqrt2, 0, 0.3/math.Sqrt2)},
		{"sticks are clamped", 0, ecs.Input{MoveZ: 50}, geom.V(0, 0, 0.3)},
		{"NaN is no input", 0, ecs.Input{MoveZ: math.NaN(), MoveX: math.Inf(1)}, geom.V(0, 0, 0)},
	}
	for _, tt := range tests {
		tt.in.Yaw = tt.yaw
		var tf ecs.Transform
		var v ecs.Velocity
		Step(&tf, &v, &tt.in, 0.05, p)
		if !near(tf.Pos, tt.want, 1e-12) {
			t.Errorf("%s: %v, want %v", tt.name, tf.Pos, tt.want)
		}
	}
}

func TestArenaAndAim(t *testing.T) {
	p := DefaultParams()
	tf := ecs.Transform{Pos: geom.V(49.9, 0, 0)}
	var v ecs.Velocity
	in := ecs.Input{MoveX: 1, Pitch: 3}
	Step(&tf, &v, &in, 0.05, p)
	if tf.Pos.X != 50 || tf.Pitch != math.Pi/2 {
		t.Errorf("arena clamp %v, pitch %v", tf.Pos, tf.Pitch)
	}
	if a := Aim(math.Pi/2, 0); !near(a, geom.V(1, 0, 0), 1e-12) {
		t.Errorf("aim at yaw 90°: %v", a)
	}
	if a := Aim(0, math.Pi/2); !near(a, geom.V(0, 1, 0), 1e-12) {
		t.Errorf("aim straight up: %v", a)
	}
}
