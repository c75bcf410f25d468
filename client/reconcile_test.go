package client

import (
	"math"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/protocol"
)

// predicting returns a client that predicted ticks 5 to 9 running along +Z
// at 0.3 m a tick.
func predicting() *Client {
	c := &Client{dt: 50 * time.Millisecond, params: movement.Params{Speed: 6}, alive: true}
	for i := range c.ring {
		c.ring[i].tick = -1
	}
	c.tick, c.firstTick = 5, 5
	for ; c.tick < 10; c.tick++ {
		f := &c.ring[c.tick%ringSize]
		*f = frame{tick: c.tick, in: ecs.Input{Tick: c.tick, MoveZ: 1}}
		movement.Step(&c.tf, &c.vel, &f.in, c.dt.Seconds(), c.params)
		f.pos = c.tf.Pos
	}
	return c
}

// The ticks a clock jump skips get no input, so the server roots the player
// through them; a snapshot from before the jump still corrects the
// prediction, replaying the inputs before the jump and standing through
// the ticks skipped.
func TestSnapshotFromBeforeAJumpCorrects(t *testing.T) {
	c := predicting()
	c.jump(5) // ticks 10..14 skipped; predicting 15 next
	if c.tick != 15 || c.firstTick != 15 {
		t.Fatalf("after the jump: tick %d, first tick %d", c.tick, c.firstTick)
	}
	if z := c.tf.Pos.Z; math.Abs(z-1.5) > 1e-12 {
		t.Fatalf("predicted z %v, want 1.5", z)
	}
	// The server lost input 7: after tick 7 the player stands at 0.6.
	h := protocol.SnapshotHeader{Tick: 7, InputAck: 6, Own: protocol.OwnState{Alive: true, Pos: [3]float64{0, 0, 0.6}}}
	c.reconcile(&h)
	if c.stats.Corrections != 1 {
		t.Errorf("corrections %d, want 1", c.stats.Corrections)
	}
	// 0.6, then inputs 8 and 9, then five rooted ticks.
	if z := c.tf.Pos.Z; math.Abs(z-1.2) > 1e-12 {
		t.Errorf("corrected z %v, want 1.2", z)
	}
	if f := &c.ring[14]; f.tick != 14 || math.Abs(f.pos.Z-1.2) > 1e-12 {
		t.Errorf("skipped tick 14 recorded as %+v, want tick 14 at z 1.2", f)
	}
}

// A snapshot older than anything predicted since Run began changes nothing.
func TestSnapshotBeforeTheFirstPredictionIsIgnored(t *testing.T) {
	c := predicting()
	h := protocol.SnapshotHeader{Tick: 3, InputAck: protocol.NoTick, Own: protocol.OwnState{Alive: true, Pos: [3]float64{9, 9, 9}}}
	c.reconcile(&h)
	if c.stats.Corrections != 0 || math.Abs(c.tf.Pos.Z-1.5) > 1e-12 {
		t.Errorf("corrections %d, z %v: want none, 1.5", c.stats.Corrections, c.tf.Pos.Z)
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
