package client

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/input"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/protocol"
)

// predicting returns a client on the arena that predicted ticks 5 to 9
// running along +Z from standing.
func predicting(t *testing.T) *Client {
	t.Helper()
	lvl, err := LoadLevel("arena", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{dt: 50 * time.Millisecond, char: movement.DefaultCharacter(), alive: true, level: lvl}
	for i := range c.ring {
		c.ring[i].tick = -1
	}
	c.tick, c.firstTick = 5, 5
	for ; c.tick < 10; c.tick++ {
		f := &c.ring[c.tick%ringSize]
		*f = frame{tick: c.tick, in: forward(c.tick)}
		c.move(&c.state, &f.in)
		f.st = c.state
	}
	return c
}

func forward(tick int64) input.Input { return input.Input{Tick: tick, MoveZ: 1} }

// move is one tick of movement as the server makes it.
func (c *Client) move(st *movement.State, in *input.Input) {
	movement.Move(&c.char, st, in.Movement(), c.dt.Seconds(), c.level.Mesh, level.MovementMask)
}

// own is a snapshot's own state of st.
func own(st movement.State) protocol.OwnState {
	return protocol.OwnState{Flags: protocol.OwnFlags(true, st.Crouched, st.JumpHeld), Pos: st.Pos.Array(), Vel: st.Vel.Array()}
}

// The ticks a clock jump skips get no input, so the server roots the player
// through them (an empty input: it slows down); a snapshot from before the
// jump still corrects the prediction, replaying the inputs before the jump
// and the empty ones of the ticks skipped.
func TestSnapshotFromBeforeAJumpCorrects(t *testing.T) {
	c := predicting(t)
	c.jump(5) // ticks 10..14 skipped; predicting 15 next
	if c.tick != 15 || c.firstTick != 15 {
		t.Fatalf("after the jump: tick %d, first tick %d", c.tick, c.firstTick)
	}
	// What the server does: ticks 5 and 6 forward, 7 rooted (its input
	// lost), 8 and 9 forward, 10 to 14 rooted.
	var server movement.State
	ref := &Client{dt: c.dt, char: c.char, level: c.level}
	var at7 movement.State
	for tick := int64(5); tick < 15; tick++ {
		in := input.Input{Tick: tick}
		if tick < 10 && tick != 7 {
			in = forward(tick)
		}
		ref.move(&server, &in)
		if tick == 7 {
			at7 = server
		}
	}
	if c.state.Pos.Z <= server.Pos.Z {
		t.Fatalf("predicted z %v, the server's %v: the lost input should make the difference", c.state.Pos.Z, server.Pos.Z)
	}
	h := protocol.SnapshotHeader{Tick: 7, InputAck: 6, Own: own(at7)}
	c.reconcile(&h)
	if c.stats.Corrections != 1 {
		t.Errorf("corrections %d, want 1", c.stats.Corrections)
	}
	if c.state != server {
		t.Errorf("corrected to %+v, want %+v", c.state, server)
	}
	if f := &c.ring[14]; f.tick != 14 || f.st != server {
		t.Errorf("skipped tick 14 recorded as %+v, want tick 14 at %+v", f, server)
	}
	// A snapshot that agrees corrects nothing.
	h = protocol.SnapshotHeader{Tick: 9, InputAck: 9, Own: own(c.ring[9].st)}
	c.reconcile(&h)
	if c.stats.Corrections != 1 {
		t.Errorf("a snapshot that agrees: corrections %d, want 1", c.stats.Corrections)
	}
}

// A difference in any part of the movement state corrects: the velocity,
// crouched, jump held (each changes what the next tick does).
func TestEveryPartOfTheStateCorrects(t *testing.T) {
	for name, change := range map[string]func(*movement.State){
		"velocity":  func(s *movement.State) { s.Vel.X += 1e-3 },
		"crouched":  func(s *movement.State) { s.Crouched = !s.Crouched },
		"jump held": func(s *movement.State) { s.JumpHeld = !s.JumpHeld },
		"position":  func(s *movement.State) { s.Pos.Z += 2e-6 },
	} {
		c := predicting(t)
		st := c.ring[8].st
		change(&st)
		h := protocol.SnapshotHeader{Tick: 8, InputAck: 8, Own: own(st)}
		c.reconcile(&h)
		want := st
		in := forward(9)
		c.move(&want, &in)
		if c.stats.Corrections != 1 || c.state != want {
			t.Errorf("%s: corrections %d, state %+v, want 1 and %+v", name, c.stats.Corrections, c.state, want)
		}
	}
	c := predicting(t)
	st := c.ring[8].st
	st.Pos.Z += 5e-7 // within the tolerance
	c.reconcile(&protocol.SnapshotHeader{Tick: 8, InputAck: 8, Own: own(st)})
	if c.stats.Corrections != 0 {
		t.Errorf("5e-7 m off: corrections %d, want none", c.stats.Corrections)
	}
}

// A snapshot older than anything predicted since Run began changes nothing.
func TestSnapshotBeforeTheFirstPredictionIsIgnored(t *testing.T) {
	c := predicting(t)
	before := c.state
	h := protocol.SnapshotHeader{Tick: 3, InputAck: protocol.NoTick, Own: protocol.OwnState{Flags: protocol.OwnAlive, Pos: [3]float64{9, 9, 9}}}
	c.reconcile(&h)
	if c.stats.Corrections != 0 || c.state != before {
		t.Errorf("corrections %d, state %+v: want none, %+v", c.stats.Corrections, c.state, before)
	}
}

// The render time is on the view lag's grid, so the view time an input
// claims (its tick less the lag, in 1/256 tick) is exactly the time shown.
func TestRenderTimeIsTheClaimedViewTime(t *testing.T) {
	c := &Client{haveSnap: true, newestSnap: 100, welcome: protocol.Welcome{TickRate: 20}, epoch: time.Now()}
	c.render.min, c.render.max = 1, 5
	for i := range 10 {
		c.render.arrived(float64(i)+0.37, uint32(91+i), 1)
	}
	for range 50 {
		c.advanceRender()
		if c.renderTime*protocol.LagScale != math.Floor(c.renderTime*protocol.LagScale) {
			t.Fatalf("render time %v is off the 1/256-tick grid", c.renderTime)
		}
		const tick = 110
		claimed := float64(tick) - protocol.LagValue(protocol.QuantizeLag(float64(tick)-c.renderTime))
		if claimed != c.renderTime {
			t.Fatalf("shown at %v, claimed %v", c.renderTime, claimed)
		}
	}
}

// When the next snapshot is late, remote players are held where the
// newest snapshot put them, and that is the view time the inputs claim:
// never a guess past it, which the server could not rewind to.
func TestLateSnapshotHoldsRemotePlayers(t *testing.T) {
	c := &Client{haveSnap: true, newestSnap: 100, snapEvery: 1, interval: 1, welcome: protocol.Welcome{TickRate: 20, Player: 1},
		epoch: time.Now().Add(-time.Hour)}
	c.render.min, c.render.max = 1, 5
	for i := range 10 {
		c.render.arrived(float64(i)+0.37, uint32(91+i), 1)
	}
	at := func(x float64) protocol.Entity {
		return protocol.Entity{ID: 2, State: protocol.EntityState{Kind: protocol.KindPlayer, Team: 2, Flags: protocol.FlagAlive,
			Pos: protocol.QuantizeVec(geom.V(x, 0, 5))}}
	}
	*c.slot(99) = protocol.State{Tick: 99, Players: []protocol.Entity{at(1)}}
	*c.slot(100) = protocol.State{Tick: 100, Players: []protocol.Entity{at(2)}}
	for range 3 {
		c.advanceRender() // the render clock is an hour past the newest snapshot
	}
	if c.renderTime != 100 || c.stats.Held != 3 {
		t.Fatalf("render time %v, held %d ticks; want 100 (the newest snapshot), 3", c.renderTime, c.stats.Held)
	}
	c.buildView()
	if len(c.view.Players) != 1 || c.view.Players[0].Pos != protocol.VecValue(protocol.QuantizeVec(geom.V(2, 0, 5))) || c.view.RenderTime != 100 {
		t.Errorf("view %+v at %v, want the player at x = 2 (the newest snapshot's) at 100", c.view.Players, c.view.RenderTime)
	}
}

// Inputs the server did not have in time run late, and the server moves
// the player again from its last applied tick through them
// (systems.InputLate): a snapshot that shows them rooted is no correction
// while they may still come, and the next, which has them run, agrees with
// the prediction. Once they can no longer run (older than a second), the
// rooted position is the server's for good, and corrects.
func TestLateInputsArePredicted(t *testing.T) {
	c := predicting(t)
	c.welcome.TickRate = 20
	for tick := int64(5); tick < 10; tick++ {
		c.ring[tick%ringSize].sent = float64(tick) // all sent
	}
	predicted := c.state
	// What the server does: 5 and 6 forward, 7 and 8 rooted (their inputs
	// late); then 7, 8 and 9 again with their inputs: the prediction.
	ref := &Client{dt: c.dt, char: c.char, level: c.level}
	var at8 movement.State
	for tick := int64(5); tick < 9; tick++ {
		in := input.Input{Tick: tick}
		if tick < 7 {
			in = forward(tick)
		}
		ref.move(&at8, &in)
	}
	c.reconcile(&protocol.SnapshotHeader{Tick: 8, InputAck: 6, Own: own(at8)})
	if c.stats.Corrections != 0 || c.stats.AwaitingLate != 1 || c.state != predicted {
		t.Errorf("the snapshot with 7 and 8 rooted: corrections %d, awaiting %d, state %+v; want none, 1, the prediction",
			c.stats.Corrections, c.stats.AwaitingLate, c.state)
	}
	c.reconcile(&protocol.SnapshotHeader{Tick: 9, InputAck: 9, Own: own(predicted)})
	if c.stats.Corrections != 0 {
		t.Errorf("the snapshot with them run: corrections %d, want none", c.stats.Corrections)
	}

	// Too old to run late: a second of ticks after input_ack.
	c = predicting(t)
	c.welcome.TickRate = 2 // a second: 2 ticks
	for tick := int64(5); tick < 10; tick++ {
		c.ring[tick%ringSize].sent = float64(tick)
	}
	c.reconcile(&protocol.SnapshotHeader{Tick: 8, InputAck: 6, Own: own(at8)})
	if c.stats.Corrections != 1 || c.stats.AwaitingLate != 0 {
		t.Errorf("past the late limit: corrections %d, awaiting %d; want 1, 0", c.stats.Corrections, c.stats.AwaitingLate)
	}
}

// Shields are never rewound: a shot meets those of the tick it is fired
// in. The view shows them as the newest snapshot has them, whatever the
// render time, until the tick being predicted reaches their Start (the
// first tick they no longer stand); projectiles are shown at the render
// time.
func TestShieldsShownAsTheNewestSnapshotHasThem(t *testing.T) {
	c := &Client{haveSnap: true, newestSnap: 100, snapEvery: 1, interval: 1, welcome: protocol.Welcome{TickRate: 20, Player: 1}}
	shield := func(id uint32, start uint32) protocol.Entity {
		return protocol.Entity{ID: id, State: protocol.EntityState{Kind: protocol.KindShield, Team: 2, Start: start,
			Pos: protocol.QuantizeVec(geom.V(0, 0, 5)), Vel: protocol.QuantizeVec(geom.V(2, 2, 0.25))}}
	}
	rocket := protocol.Entity{ID: 7, State: protocol.EntityState{Kind: protocol.KindProjectile, Start: 95, Vel: protocol.QuantizeVec(geom.V(0, 0, 20))}}
	*c.slot(96) = protocol.State{Tick: 96, Objects: []protocol.Entity{shield(5, 0), rocket}} // shield 5 still stands here
	*c.slot(97) = protocol.State{Tick: 97, Objects: []protocol.Entity{shield(5, 0), rocket}}
	*c.slot(100) = protocol.State{Tick: 100, Objects: []protocol.Entity{shield(6, 0), shield(8, 104)}} // 5 is gone, 6 and 8 are new
	c.renderTime, c.tick = 96.5, 103
	c.buildView()
	ids := func() (out []uint32) {
		for _, o := range c.view.Objects {
			out = append(out, o.ID)
		}
		return out
	}
	if got := ids(); !slices.Equal(got, []uint32{7, 6, 8}) {
		t.Errorf("objects %v at render time 96.5, predicting 103: want the rocket then shields 6 and 8", got)
	}
	c.tick = 104 // shield 8 no longer stands at the tick shots are fired in
	c.buildView()
	if got := ids(); !slices.Equal(got, []uint32{7, 6}) {
		t.Errorf("objects %v predicting 104: want the rocket and shield 6", got)
	}
}
