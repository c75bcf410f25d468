package systems

import (
	"slices"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
)

// withoutFairness takes the Fairness stage out of r's schedule: the tick as
// it was before disputed hits were judged.
func withoutFairness(r *benchRoom) *benchRoom {
	r.sim.stages = slices.DeleteFunc(r.sim.stages, func(st stage) bool { return st.name == "fairness" })
	return r
}

// BenchmarkRoomTickFairness is what judging disputed hits costs the mixed
// room's tick (BenchmarkRoomTickMixed: hitscan, pellets, melee and splash
// hits every tick): the room with the Fairness stage and the same room
// without it, tick for tick in the same loop (which goes first alternates),
// and the ratio.
func BenchmarkRoomTickFairness(b *testing.B) {
	judged := newMixedRoom(b)
	old := withoutFairness(newMixedRoom(b))
	judged.warm(200)
	old.warm(200)
	var tj, to time.Duration
	var damaging, disputed int64
	b.ReportAllocs()
	first := true
	for b.Loop() {
		if first {
			tj += timed(judged)
			to += timed(old)
		} else {
			to += timed(old)
			tj += timed(judged)
		}
		first = !first
		for i := range judged.sim.Events.Shots {
			ev := &judged.sim.Events.Shots[i]
			if ev.Dealt > 0 {
				damaging++
			}
			if ev.Disputed {
				disputed++
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(tj.Nanoseconds())/n/1e3, "judged-µs/tick")
	b.ReportMetric(float64(to.Nanoseconds())/n/1e3, "old-µs/tick")
	b.ReportMetric(float64(tj)/float64(to), "ratio")
	b.ReportMetric(float64(damaging)/n, "damaging/tick")
	b.ReportMetric(float64(disputed)/n, "disputed/tick")
}

// timed runs a tick of r and returns how long it took.
func timed(r *benchRoom) time.Duration {
	t0 := time.Now()
	r.tick()
	return time.Since(t0)
}

// everyHit returns the mixed room, warm, with its clock back on the tick
// of the history's newest frame, and a tick's worth of hits to judge: each
// of its 12 players hits each of its 6 enemies with the rifle at its chest
// (72 hits), dealing damage.
func everyHit(tb testing.TB) (*Simulation, []ecs.ShotEvent) {
	r := newMixedRoom(tb)
	r.warm(200)
	s := r.sim
	rifle, _ := s.Catalog.Lookup("rifle")
	var hits []ecs.ShotEvent
	for _, shooter := range r.players {
		for _, target := range r.players {
			if s.teamOf.Get(shooter).ID == s.teamOf.Get(target).ID {
				continue
			}
			st, _ := s.PlayerState(target)
			hits = append(hits, ecs.ShotEvent{Shooter: shooter, Target: target, Weapon: rifle, Result: ecs.ResultHit,
				Dealt: 1, Tick: s.Now() - 1, Point: st.Transform.Pos.Add(geom.V(0, 1.2, 0))})
		}
	}
	s.Clock.Tick--
	s.Events.Shots = slices.Grow(s.Events.Shots[:0], len(hits))
	return s, hits
}

// BenchmarkJudgeHit is the Fairness stage's cost per damaging hit, every
// hit judged in full (everyHit): the lines of sight cast and, for those
// out of sight, the shot sought to resolve again in the present.
func BenchmarkJudgeHit(b *testing.B) {
	s, hits := everyHit(b)
	var disputed int64
	b.ReportAllocs()
	for b.Loop() {
		s.Events.Shots = append(s.Events.Shots[:0], hits...)
		s.judgeHits()
		for i := range s.Events.Shots {
			if s.Events.Shots[i].Disputed {
				disputed++
			}
		}
	}
	n := float64(b.N) * float64(len(hits))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/hit")
	b.ReportMetric(float64(disputed)/n, "disputed/hit")
}

// Judging hits allocates nothing, those out of sight included.
func TestJudgeHitsAllocatesNothing(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("coverage and race instrumentation allocate")
	}
	s, hits := everyHit(t)
	disputed := 0
	if allocs := testing.AllocsPerRun(10, func() {
		s.Events.Shots = append(s.Events.Shots[:0], hits...)
		s.judgeHits()
	}); allocs != 0 {
		t.Errorf("judging %d hits allocates %v times", len(hits), allocs)
	}
	for i := range s.Events.Shots {
		if s.Events.Shots[i].Disputed {
			disputed++
		}
	}
	if disputed == 0 || disputed == len(hits) {
		t.Errorf("%d of %d hits disputed: the test wants both kinds judged", disputed, len(hits))
	}
}
