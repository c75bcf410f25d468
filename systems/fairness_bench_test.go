package systems

import (
	"math"
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
	compareTicks(b, judged.sim, func() time.Duration { return timed(judged) }, func() time.Duration { return timed(old) })
}

// compareTicks runs the judged room's ticks and the old room's tick for
// tick (which goes first alternates) and reports each one's µs per tick,
// their ratio, and the judged room's damaging and disputed hits per tick.
func compareTicks(b *testing.B, sim *Simulation, judged, old func() time.Duration) {
	var tj, to time.Duration
	var damaging, disputed int64
	b.ReportAllocs()
	first := true
	for b.Loop() {
		if first {
			tj += judged()
			to += old()
		} else {
			to += old()
			tj += judged()
		}
		first = !first
		for i := range sim.Events.Shots {
			ev := &sim.Events.Shots[i]
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

// aimedRoom is the mixed room on the sample level (courtyard: walls and
// cover) whose players fire at the enemy next to them on the circle, aimed
// at its chest where their own view lag shows it (its pose that many ticks
// back): most shots land, and hits on victims who have since stepped
// behind cover are disputed.
type aimedRoom struct {
	*benchRoom
}

func newAimedRoom(tb testing.TB) aimedRoom {
	r := aimedRoom{newBenchRoomOn(tb, sampleLevel(tb), true, mixedLoadout, nil)}
	r.mixed = func(player int, tick int64) uint16 { return uint16(1 + (player+int(tick))%3) }
	return r
}

// tick runs one tick of the aimed room and returns how long it took.
func (r aimedRoom) tick() time.Duration {
	s := r.sim
	now := s.Now()
	for i, e := range r.players {
		me, _ := s.PlayerState(e)
		them, ok := s.History.PoseAt(now-1-int64(r.lags[i]), r.players[(i+1)%len(r.players)])
		if !ok {
			them.Pos = me.Transform.Pos
		}
		d := them.Pos.Add(geom.V(0, 1.2, 0)).Sub(s.Eye(me.Transform.Pos, false))
		r.shot++
		in := ecs.Input{Tick: now, MoveX: math.Sin(float64(now)*0.05 + float64(i)), Yaw: math.Atan2(d.X, d.Z), Pitch: math.Atan2(d.Y, math.Hypot(d.X, d.Z)),
			Buttons: ecs.ButtonFire, Weapon: r.mixed(i, now), Shot: r.shot, ViewTime: ecs.ViewTimeOf(float64(now-1) - float64(int64(r.lags[i])))}
		s.QueueInput(e, in)
	}
	t0 := time.Now()
	s.Step()
	return time.Since(t0)
}

// BenchmarkRoomTickFairnessAimed is BenchmarkRoomTickFairness in the
// aimed room, where about 2 shots a tick deal damage and some are disputed.
func BenchmarkRoomTickFairnessAimed(b *testing.B) {
	judged, old := newAimedRoom(b), newAimedRoom(b)
	withoutFairness(old.benchRoom)
	for range 100 {
		judged.tick()
		old.tick()
	}
	compareTicks(b, judged.sim, judged.tick, old.tick)
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
