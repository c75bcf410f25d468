package client

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/protocol"
)

// A closed loop of the input clock against a path whose margins jitter
// (uniform ±0.6 ticks) and lose packets (10%: an input then first arrives a
// tick later, in the next packet): starting 3 ticks too early, the clock
// settles with fewer than 1% of inputs late, steers within maxSkew, and
// keeps no more lead than the path needs.
func TestInputClockSettles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var k inputClock
	const base = -2.5 // the margin an input would have with no offset
	type sent struct{ margin, offset float64 }
	var pipe []sent // margins on their way back: 16 ticks of round trip
	late, total := 0, 0
	for tick := range 4000 {
		m := base + k.offset + 3 + (2*rng.Float64()-1)*0.6
		for rng.Float64() < 0.1 { // lost: the next packet brings it
			m--
		}
		pipe = append(pipe, sent{m, k.offset})
		if len(pipe) > 16 {
			s := pipe[0]
			pipe = pipe[1:]
			k.observe(s.margin, s.offset)
		}
		sc := k.scale()
		if sc < 1-maxSkew-1e-9 || sc > 1+maxSkew+1e-9 {
			t.Fatalf("tick %d: scale %v beyond maxSkew", tick, sc)
		}
		k.tick(sc)
		if tick >= 1000 {
			total++
			if m < 0 {
				late++
			}
		}
	}
	if f := float64(late) / float64(total); f > 0.01 {
		t.Errorf("%.2f%% of inputs late after settling, want < 1%%", 100*f)
	}
	// The lead it keeps: the window's lowest margin sits at marginSafety.
	if l := k.low() + k.offset; math.Abs(l-marginSafety) > 0.3 {
		t.Errorf("the lowest margin now is %.2f ticks, want about %v", l, marginSafety)
	}
}

// The render clock's delay covers the 99th percentile of when snapshots
// were needed: a snapshot lost makes the next one needed a snapshot
// earlier. It stays within its bounds and slews by at most renderSlew.
func TestRenderClockDelay(t *testing.T) {
	r := renderClock{min: 1, max: 5}
	if !math.IsInf(r.at(0), -1) {
		t.Fatal("a render time before any snapshot")
	}
	// Snapshots every tick, 4 ticks away, arriving up to 0.5 tick late.
	for tick := uint32(0); tick < 100; tick++ {
		r.arrived(float64(tick)+4+0.5*float64(tick%2), tick, 1)
	}
	if d := r.delay(); math.Abs(d-1.5) > 1e-9 {
		t.Errorf("delay %v, want 1.5 (one interval and the jitter)", d)
	}
	if f := r.fastest(); f != 4 {
		t.Errorf("fastest %v, want 4", f)
	}
	if got := r.at(200); math.Abs(got-(200-5.5)) > 1e-9 {
		t.Errorf("render time %v, want %v (snapped at the start)", got, 200-5.5)
	}
	// Two snapshots lost in a row, once in the window: still under 1%, so
	// the delay ignores it; a second time and it counts.
	r.arrived(204+3, 200+3, 3)
	if d := r.delay(); math.Abs(d-1.5) > 1e-9 {
		t.Errorf("one gap in 100: delay %v, want 1.5", d)
	}
	r.arrived(210+3, 206+3, 3)
	if d := r.delay(); math.Abs(d-3) > 1e-9 {
		t.Errorf("two gaps in 100: delay %v, want 3 (a gap of three intervals)", d)
	}
	prev := r.at(201)
	if got := r.at(202); got-prev < 1-renderSlew-1e-9 || got-prev > 1+renderSlew+1e-9 {
		t.Errorf("render time moved %v in a tick, want 1 ± %v", got-prev, renderSlew)
	}
	for i := range 3 { // gaps far beyond max
		r.arrived(300+float64(i), 296+uint32(i), 50)
	}
	if d := r.delay(); d != 5 {
		t.Errorf("delay %v, want the bound 5", d)
	}
}

// Until its window has warmed up, the input clock keeps a tick more than
// marginSafety: its first margins may not include a lost packet yet.
func TestInputClockWarmsUpWithATickForALoss(t *testing.T) {
	var k inputClock
	for range warmupSamples - 1 {
		k.observe(marginSafety, 0)
	}
	if e := k.error(); e != 1 {
		t.Errorf("warming up at a margin of marginSafety: error %v, want 1", e)
	}
	k.observe(marginSafety, 0)
	if e := k.error(); e != 0 {
		t.Errorf("warm at a margin of marginSafety: error %v, want 0", e)
	}
}

// On a lossy path the input clock keeps a tick more, warm or not.
func TestInputClockKeepsATickMoreOnALossyPath(t *testing.T) {
	k := inputClock{lossy: true}
	for range marginWindow {
		k.observe(marginSafety, 0)
	}
	if e := k.error(); e != 1 {
		t.Errorf("lossy path, margins at marginSafety: error %v, want 1", e)
	}
}

// The render clock's gaps tell the share of snapshots lost: 100 arrivals a
// tick apart but for 5 that came 2 ticks after the one before (one lost
// each) are 5 lost of 105.
func TestRenderClockLoss(t *testing.T) {
	var r renderClock
	tick := uint32(0)
	for i := range arrivalWindow {
		gap := int64(1)
		if i%20 == 0 {
			gap = 2
		}
		tick += uint32(gap)
		r.arrived(float64(tick)+3, tick, gap)
	}
	if l, want := r.loss(1), 5.0/105; math.Abs(l-want) > 1e-12 {
		t.Errorf("loss %v, want %v", l, want)
	}
}

// A margin far ahead (a start whose round trip a queue inflated) pauses
// the input clock by the whole lead it measures, less two ticks, but never
// longer than half the Welcome's input timeout (the seat's); a second when
// the Welcome gives none.
func TestFarAheadPausesTheWholeLead(t *testing.T) {
	for _, tt := range []struct {
		timeoutMS uint32
		margin    float64
		want      float64 // the next tick's interval, in ticks
	}{
		{10000, 85, 84}, // 83 ticks of pause: within 5 s
		{4000, 85, 41},  // at most 40 ticks (2 s at 20 Hz)
		{0, 85, 21},     // no timeout given: a second
	} {
		c := &Client{welcome: protocol.Welcome{TickRate: 20, InputTimeout: tt.timeoutMS}, marginSeen: true,
			runSnapshots: settleSnapshots, tick: 200, firstTick: 100, scale: 1}
		c.ring[150%ringSize] = frame{tick: 150}
		c.adjustClock(&protocol.SnapshotHeader{Tick: 140, InputLead: 10, Margin: int16(tt.margin * 256), MarginTick: 150}, time.Now())
		if c.scale != tt.want || c.stats.ClockJumps != 1 {
			t.Errorf("timeout %d ms, margin %v: scale %v after %d pauses, want %v after 1", tt.timeoutMS, tt.margin, c.scale, c.stats.ClockJumps, tt.want)
		}
	}
}
