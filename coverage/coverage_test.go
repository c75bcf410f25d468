package coverage

import (
	"math/rand/v2"
	"testing"
)

// play runs a player for ticks ticks under the default rule (half of any
// 20 s at 20 Hz): tick t is covered when covers(t). It returns the tick of
// the check that found the rule broken, −1 if none did, and the most
// ticks a check found missed.
func play(rule Rule, ticks int64, covers func(t int64) bool) (brokenAt, mostMissed int64) {
	p := NewPlayer()
	brokenAt = -1
	var covered uint64
	for now := int64(1); now <= ticks; now++ {
		if covers(now - 1) { // the tick just simulated
			covered++
		}
		if now%rule.Step() != 0 {
			continue
		}
		missed, _, broken := rule.Check(&p, now, covered)
		mostMissed = max(mostMissed, missed)
		if broken {
			if brokenAt >= 0 {
				panic("broken reported twice")
			}
			brokenAt = now
		}
	}
	return brokenAt, mostMissed
}

// every covers n ticks every period ticks, from tick 0: one packet of n
// inputs for the ticks ahead every period.
func every(period, n int64) func(int64) bool {
	return func(t int64) bool { return t%period < n }
}

func TestRule(t *testing.T) {
	def := NewRule(0.5, 400) // 20 s at 20 Hz: steps of 25 ticks, 200 may be missed
	if def.Step() != 25 || def.Window() != 400 {
		t.Fatalf("step %d, window %d, want 25 and 400", def.Step(), def.Window())
	}
	lossy := rand.New(rand.NewPCG(1, 2))
	const tenMinutes = 12000
	for _, tt := range []struct {
		name     string
		rule     Rule
		covers   func(int64) bool
		brokenAt int64
	}{
		{"every tick", def, func(int64) bool { return true }, -1},
		// Without any redundancy, one tick in ten lost: 90%.
		{"10% of the ticks lost", def, func(int64) bool { return lossy.Float64() >= 0.1 }, -1},
		// 9 s without an input (180 ticks) is allowed, 10.5 s (210) is not:
		// found at the first check whose window holds more than 200 of them.
		{"a 9 s stall", def, func(t int64) bool { return t < 1000 || t >= 1180 }, -1},
		{"a 10.5 s stall", def, func(t int64) bool { return t < 1000 || t >= 1210 }, 1225},
		// One input every 9 s: judged from the check after the first (tick
		// 25), 224 of the 225 ticks to tick 250 are missed.
		{"one input every 9 s", def, every(180, 1), 250},
		// 32 inputs every 9 s: 39 of the 250 ticks from tick 25 to 275.
		{"32 inputs every 9 s", def, every(180, 32), 275},
		// 32 inputs every 2.4 s cover two thirds of the ticks: the seat is
		// kept, as it would be by a player moving two ticks in three.
		{"32 inputs every 2.4 s", def, every(48, 32), -1},
		{"the rule off", NewRule(0, 400), every(180, 1), -1},
		{"no input ever", def, func(int64) bool { return false }, -1}, // input_timeout's business
	} {
		got, most := play(tt.rule, tenMinutes, tt.covers)
		if got != tt.brokenAt {
			t.Errorf("%s: broken at tick %d (most missed %d), want %d", tt.name, got, most, tt.brokenAt)
		}
	}
}

// A window judged is whole steps, never longer than asked, and never
// less than a tick.
func TestRuleWindow(t *testing.T) {
	for _, tt := range []struct{ window, step, judged int64 }{
		{400, 25, 400}, {40, 3, 39}, {20, 2, 20}, {17, 2, 16}, {1, 1, 1}, {0, 1, 1}, {12000, 750, 12000},
	} {
		r := NewRule(0.5, tt.window)
		if r.Step() != tt.step || r.Window() != tt.judged {
			t.Errorf("window %d: step %d, judged %d; want %d and %d", tt.window, r.Step(), r.Window(), tt.step, tt.judged)
		}
	}
}
