package movement

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/stresslevel"
	"github.com/rewind-gg/rewind/trimesh"
)

// BenchmarkMove is the cost of a player-tick: players walking around with
// inputs like a player's (turning, crouching, sprinting, a jump every 2.5
// s) at 20 Hz
// on a flat floor, on a small level and on the 20,040-triangle stress
// level, each walled in, with the flat movement the server ran before the
// controller (flatStep: a fixed speed on a square, no walls) as the
// baseline, timed in the same loop on the same inputs; and MoveNear, each
// player with its own trimesh.Near, as the server moves them (the same
// states, bit for bit). (A player that got out anyway would start again
// where it spawned.)
func BenchmarkMove(b *testing.B) {
	const players, dt = 64, 0.05
	for _, lv := range []struct {
		name   string
		cells  int
		blocks int
	}{{"flat", 0, 0}, {"small", 12, 12}, {"large", 90, 320}} {
		half := 20.0
		tris := stresslevel.Box(geom.V(-half, -1, -half), geom.V(half, 0, half), 1)
		if lv.cells > 0 {
			half = float64(lv.cells) / 2
			tris = stresslevel.Level(7, lv.cells, lv.blocks)
		}
		for _, w := range [][2]geom.Vec3{ // walls around: nobody walks off
			{geom.V(-half-1, -1, -half-1), geom.V(-half, 12, half+1)},
			{geom.V(half, -1, -half-1), geom.V(half+1, 12, half+1)},
			{geom.V(-half, -1, -half-1), geom.V(half, 12, -half)},
			{geom.V(-half, -1, half), geom.V(half, 12, half+1)},
		} {
			tris = append(tris, stresslevel.Box(w[0], w[1], 1)...)
		}
		m := world(b, tris)
		bounds := geom.AABB{Min: geom.V(-half, -1, -half), Max: geom.V(half, 12, half)}
		rng := rand.New(rand.NewPCG(3, 4))
		spawns := make([]State, players)
		for i := range spawns {
			x, z := (rng.Float64()*2-1)*(half-1), (rng.Float64()*2-1)*(half-1)
			spawns[i] = player(spawnOn(m, x, z))
		}
		const script = 1024
		ins := make([][]Input, players)
		old := make([][]Input, players)
		for p := range ins {
			g := newInputs(uint64(p))
			ins[p], old[p] = make([]Input, script), make([]Input, script)
			for i := range script {
				in := g.next()
				in.Jump = i%50 < 2 // a jump every 2.5 s
				ins[p][i] = in
				old[p][i] = Input{MoveX: in.MoveX, MoveZ: in.MoveZ, Yaw: in.Yaw, Pitch: in.Pitch}
			}
		}
		b.Run(fmt.Sprintf("%s-%dtris", lv.name, m.Len()), func(b *testing.B) {
			c := DefaultCharacter()
			states := append([]State(nil), spawns...)
			nearStates := append([]State(nil), spawns...)
			nears := make([]*trimesh.Near, players)
			for p := range nears {
				nears[p] = trimesh.NewNear(m, 1, NearMargin)
			}
			flats := make([]geom.Vec3, players)
			var tMove, tNear, tStep time.Duration
			ticks, airborne := 0, 0
			b.ReportAllocs()
			for b.Loop() {
				k := ticks % script
				start := time.Now()
				for p := range states {
					Move(&c, &states[p], ins[p][k], dt, m, 1)
				}
				mid := time.Now()
				for p := range nearStates {
					MoveNear(&c, &nearStates[p], ins[p][k], dt, nears[p])
				}
				flat := time.Now()
				for p := range flats {
					flatStep(&flats[p], &old[p][k], dt, c.RunSpeed, bounds)
				}
				tMove, tNear, tStep = tMove+mid.Sub(start), tNear+flat.Sub(mid), tStep+time.Since(flat)
				for p := range states {
					s := &states[p]
					if !s.OnGround {
						airborne++
					}
					if !bounds.Contains(geom.V(s.Pos.X, bounds.Min.Y, s.Pos.Z)) || s.Pos.Y < bounds.Min.Y-5 {
						*s = spawns[p]
						nearStates[p] = spawns[p]
					}
				}
				ticks++
			}
			n := float64(ticks * players)
			move, step := float64(tMove.Nanoseconds())/n, float64(tStep.Nanoseconds())/n
			b.ReportMetric(move, "ns/player-tick")
			b.ReportMetric(float64(tNear.Nanoseconds())/n, "near-ns/player-tick")
			b.ReportMetric(step, "step-ns/player-tick")
			b.ReportMetric(move/step, "x-step")
			b.ReportMetric(float64(airborne)/n, "airborne")
		})
	}
}

// flatStep is the flat movement the server ran before the controller: the
// stick at a fixed speed, the feet kept inside bounds on X and Z.
func flatStep(pos *geom.Vec3, in *Input, dt, speed float64, bounds geom.AABB) {
	*pos = pos.AddScaled(stick(in.MoveX, in.MoveZ, in.Yaw), speed*dt)
	pos.X = min(max(pos.X, bounds.Min.X), bounds.Max.X)
	pos.Z = min(max(pos.Z, bounds.Min.Z), bounds.Max.Z)
}
