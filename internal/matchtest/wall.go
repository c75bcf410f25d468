package matchtest

import (
	"math"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/systems"
)

// The behind-the-wall script: a hit its victim disputes. Bob runs along +x
// from WallBob, behind Wall, as alice, 20 m away at WallAlice, sees him
// WallLag ticks late. At WallShotTick she fires at where he was WallLag
// ticks before, in the open; in his own present he is behind the wall.
// With a window of WallLag ticks or more the server grants her view and
// bob takes the hit behind the wall (the one disputed hit); with half of
// it, the shot misses him.
var (
	Wall      = geom.AABB{Min: geom.V(-1, 0, -1), Max: geom.V(1, 3, 1)}
	WallAlice = geom.V(0, 0, -15)
	WallBob   = geom.V(-4.5, 0, 5)
)

// The script's shot tick, view lag and length, in ticks.
const (
	WallShotTick = 15
	WallLag      = 8
	WallTicks    = 30
)

// WallInputs returns alice's and bob's inputs for tick in sim, where alice
// carries weapon: hers claim the view WallLag ticks back and fire at tick
// WallShotTick, aimed from her eyes at bob's chest as the history has him
// then; bob's run along +x.
func WallInputs(sim *systems.Simulation, alice, bob ecs.Entity, weapon uint16, tick int64) (a, b ecs.Input) {
	a = ecs.Input{Tick: tick, Weapon: weapon, ViewTime: ecs.ViewTime{Tick: max(tick-WallLag, 0)}}
	if tick == WallShotTick {
		then, _ := sim.History.PoseAt(tick-WallLag, bob)
		st, _ := sim.PlayerState(alice)
		d := then.Pos.Add(geom.V(0, 1.1, 0)).Sub(sim.Eye(st.Transform.Pos, false))
		a.Yaw, a.Pitch = math.Atan2(d.X, d.Z), math.Atan2(d.Y, math.Hypot(d.X, d.Z))
		a.Buttons, a.Shot = ecs.ButtonFire, 1
	}
	return a, ecs.Input{Tick: tick, MoveX: 1, ViewTime: ecs.ViewTime{Tick: tick}}
}
