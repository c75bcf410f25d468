package bots

import (
	"math"
	"testing"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/examples/levels"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/protocol"
)

// walker drives a bot alone on a level, with no server: each tick the bot
// sees itself where movement.Move put it, and moves as the server would
// move it.
type walker struct {
	bot     *Bot
	view    client.View
	welcome protocol.Welcome
	char    movement.Character
	state   movement.State
	tick    int64
	log     func(format string, args ...any)
}

func newWalker(t testing.TB, lvl *client.Level, bot *Bot, at geom.Vec3) *walker {
	t.Helper()
	c := movement.DefaultCharacter()
	w := &walker{bot: bot, char: c, state: movement.State{Pos: at},
		welcome: protocol.Welcome{TickRate: 20, EyeHeight: c.EyeHeight, CrouchEyeHeight: c.CrouchEyeHeight, Radius: c.Radius,
			Height: c.Height, CrouchHeight: c.CrouchHeight, Team: 1, Loadout: []uint8{0}}}
	w.view = client.View{Level: lvl, Welcome: &w.welcome, Self: client.Self{Alive: true, Team: 1}}
	return w
}

// step runs one tick.
func (w *walker) step() client.Intent {
	v := &w.view
	v.Tick = w.tick
	v.Self.Pos, v.Self.Predict, v.Self.Motion = w.state.Pos, w.state.Pos, w.state
	in := w.bot.Intent(v)
	q := in.Movement()
	e := q.Value(w.tick)
	v.Self.Yaw, v.Self.Pitch = movement.Look(e.Yaw, e.Pitch)
	movement.Move(&w.char, &w.state, e.Movement(), 0.05, v.Level.Mesh, level.MovementMask)
	w.tick++
	return in
}

func courtyardLevel(t testing.TB) *client.Level {
	t.Helper()
	file, data, _ := levels.Lookup(levels.Courtyard)
	l, err := client.LoadLevel(file, data)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A bot alone on the sample map navigates its waypoints for a minute:
// it reaches the upper floor, takes jump edges (jumping) and crouch edges
// (crouching), moves far, and is never stuck for a second.
func TestBotNavigatesTheSampleMap(t *testing.T) {
	lvl := courtyardLevel(t)
	upper, jumped, crouched := 0, 0, 0
	for seed := range uint64(6) {
		w := newWalker(t, lvl, NewBot(BotConfig{Seed: seed}), lvl.Level.SpawnsOf(1)[seed].Pos)
		travelled, last := 0.0, w.state.Pos
		for range 1200 {
			w.step()
			travelled += w.state.Pos.Sub(last).Len()
			last = w.state.Pos
		}
		st := w.bot.Stats()
		if st.LongestStall >= 20 || travelled < 100 {
			t.Errorf("seed %d: %+v, travelled %.0f m", seed, st, travelled)
		}
		if st.Upper > 0 {
			upper++
		}
		if st.Jumping > 0 {
			jumped++
		}
		if st.Crouching > 0 {
			crouched++
		}
	}
	if upper < 4 || jumped < 1 || crouched < 1 {
		t.Errorf("of 6 bots, %d reached the upper floor, %d jumped, %d crouched", upper, jumped, crouched)
	}
}

// A bot sent through a wall (a waypoint edge a walker cannot take) makes
// no progress; within half a second it recovers (it jumps and backs off)
// and plans again, over and over: never stuck for a second.
func TestBotRecoversFromAWall(t *testing.T) {
	l := &level.Level{Name: "wall"}
	l.AddBox(geom.AABB{Min: geom.V(-20, -1, -20), Max: geom.V(20, 0, 20)}, level.BlocksBoth, -1)
	l.AddBox(geom.AABB{Min: geom.V(-20, 0, 0), Max: geom.V(20, 4, 0.5)}, level.BlocksBoth, -1)
	l.Waypoints = &level.Waypoints{
		Nodes: []level.Waypoint{{ID: "a", Pos: geom.V(0, 0, -2), Source: -1}, {ID: "b", Pos: geom.V(0, 0, 3), Source: -1}},
		Edges: []level.Edge{{From: 0, To: 1}, {From: 1, To: 0}},
	}
	m, err := l.Mesh()
	if err != nil {
		t.Fatal(err)
	}
	w := newWalker(t, &client.Level{Level: l, Mesh: m}, NewBot(BotConfig{Seed: 1}), geom.V(0, 0, -5))
	jumps := 0
	for range 400 {
		if in := w.step(); in.Jump {
			jumps++
		}
		if w.state.Pos.Z > -0.4+1e-9 {
			t.Fatalf("through the wall: %v", w.state.Pos)
		}
	}
	st := w.bot.Stats()
	if st.Recoveries < 5 || st.LongestStall > 11 || jumps == 0 {
		t.Errorf("%+v, %d ticks jumping: want many recoveries, none later than half a second", st, jumps)
	}
}

// On a level without waypoints (the arena), a bot with nobody in sight
// strafes and walks toward the middle, as it always has.
func TestBotWandersWithoutWaypoints(t *testing.T) {
	lvl, err := client.LoadLevel("arena", nil)
	if err != nil {
		t.Fatal(err)
	}
	w := newWalker(t, lvl, NewBot(BotConfig{Seed: 1}), geom.V(-20, 0, -20))
	for range 100 {
		in := w.step()
		if in.MoveZ != 1 || math.Abs(in.MoveX) != 1 || in.Jump || in.Crouch {
			t.Fatalf("intent %+v: want forward, strafing", in)
		}
	}
	if d := w.state.Pos.Len(); d > 20 {
		t.Errorf("after 5 s at %v: %.1f m from the middle", w.state.Pos, d)
	}
}
