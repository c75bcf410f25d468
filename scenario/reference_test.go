package scenario

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rewind-gg/rewind/geom"
)

// reference is the scenario format's semantics written as directly as
// possible: positions straight from the keyframes, the rewound world
// assembled from scratch for every item, every collider tested, no history
// ring, time machine, broadphase or buckets. The engine must agree with it
// event for event.
// refStats are the counters the reference derives from the items it resolves.
type refStats struct {
	bucketedRewinds, perItemRewinds, items int64
	maxBuckets                             int
}

func reference(sc *Scenario) ([]Event, refStats) {
	var st refStats
	exists := func(e *Entity, t int) bool {
		return t >= e.Path[0].Tick && (e.DespawnTick == nil || t < *e.DespawnTick)
	}
	posAt := func(e *Entity, t int) geom.Vec3 {
		p := e.Path
		if t <= p[0].Tick {
			return p[0].Pos
		}
		for k := 1; k < len(p); k++ {
			if t <= p[k].Tick {
				return p[k-1].Pos.Lerp(p[k].Pos, float64(t-p[k-1].Tick)/float64(p[k].Tick-p[k-1].Tick))
			}
		}
		return p[len(p)-1].Pos
	}
	viewTime := func(delay float64, t int) float64 {
		tau := float64(t) - delay
		tau = math.Min(math.Max(tau, math.Max(0, float64(t-sc.LagComp.WindowTicks))), float64(t))
		if n := float64(sc.LagComp.ViewResolution); n > 0 {
			tau = math.Floor(tau*n+0.5) / n
		}
		return tau
	}
	weapon := map[string]int{}
	for i, w := range sc.Weapons {
		weapon[w.Name] = i
	}
	type item struct {
		shot    int
		shooter *Entity
		kind    string
		pos     geom.Vec3
		vel     geom.Vec3
		dir     geom.Vec3
		steps   int
	}
	var live []*item
	var events []Event
	for t := 0; t < sc.Ticks; t++ {
		var now []*item
		for i := range sc.Shots {
			s := &sc.Shots[i]
			if s.Tick != t {
				continue
			}
			shooter := &sc.Entities[slices.IndexFunc(sc.Entities, func(e Entity) bool { return e.ID == s.Shooter })]
			if !exists(shooter, t) {
				events = append(events, Event{Shot: i, Result: "invalid", Tick: int64(t)})
				continue
			}
			w := sc.Weapons[weapon[s.Weapon]]
			it := &item{shot: i, shooter: shooter, kind: w.Kind, pos: s.Origin, dir: s.Dir.Normalize()}
			it.vel = it.dir.Scale(w.Speed)
			if w.Kind == "projectile" {
				live = append(live, it)
			} else {
				now = append(now, it)
			}
		}
		now = append(now, live...)
		var still []*item
		distinct := map[float64]bool{}
		for _, it := range now {
			tau := viewTime(it.shooter.ViewDelayTicks, t)
			st.items++
			if tau < float64(t) {
				st.perItemRewinds++
				if !distinct[tau] {
					st.bucketedRewinds++
				}
			}
			distinct[tau] = true
			vt := tau
			w := sc.Weapons[weapon[sc.Shots[it.shot].Weapon]]
			// The world at tau.
			floor := int(math.Floor(tau))
			frac := tau - float64(floor)
			type body struct {
				id   string
				team uint8
				cap  geom.Capsule
			}
			var bodies []body
			var boxes []struct {
				id  string
				box geom.AABB
			}
			for j := range sc.Entities {
				e := &sc.Entities[j]
				switch e.Kind {
				case KindPlayer:
					if !exists(e, floor) {
						continue
					}
					p := posAt(e, floor)
					if frac > 0 && exists(e, floor+1) {
						p = p.Lerp(posAt(e, floor+1), frac)
					}
					c := geom.Capsule{A: p.Add(geom.V(0, e.Radius, 0)), B: p.Add(geom.V(0, e.Height-e.Radius, 0)), Radius: e.Radius}
					bodies = append(bodies, body{e.ID, e.Team, c})
				case KindStatic:
					boxes = append(boxes, struct {
						id  string
						box geom.AABB
					}{e.ID, e.Box})
				case KindShield:
					if t >= e.SpawnTick && (e.DespawnTick == nil || t < *e.DespawnTick) {
						boxes = append(boxes, struct {
							id  string
							box geom.AABB
						}{e.ID, e.Box})
					}
				}
			}
			enemy := func(b body) bool {
				return b.id != it.shooter.ID && (sc.FriendlyFire || b.team != it.shooter.Team)
			}
			first := func(o, d geom.Vec3, dist, r float64) (string, string, bool) {
				best, res, id := math.Inf(1), "", ""
				for _, b := range boxes {
					if tt, ok := geom.SweepSphereAABB(o, d, dist, r, b.box); ok && tt < best {
						best, res, id = tt, "blocked", b.id
					}
				}
				for _, b := range bodies {
					if !enemy(b) {
						continue
					}
					if tt, ok := geom.SweepSphereCapsule(o, d, dist, r, b.cap); ok && tt < best {
						best, res, id = tt, "hit", b.id
					}
				}
				return res, id, res != ""
			}
			ev := func(result, target, by string) Event {
				v := vt
				return Event{Shot: it.shot, Result: result, Target: target, By: by, Tick: int64(t), ViewTime: &v}
			}
			switch it.kind {
			case "hitscan":
				if res, id, ok := first(it.pos, it.dir, w.Range, 0); !ok {
					events = append(events, ev("miss", "", ""))
				} else if res == "hit" {
					events = append(events, ev("hit", id, ""))
				} else {
					events = append(events, ev("blocked", "", id))
				}
			case "melee":
				s := geom.Sphere{Center: it.pos.AddScaled(it.dir, w.Reach), Radius: w.Radius}
				n := 0
				for _, b := range bodies {
					if enemy(b) && geom.SphereOverlapsCapsule(s, b.cap) {
						events = append(events, ev("hit", b.id, ""))
						n++
					}
				}
				if n == 0 {
					events = append(events, ev("miss", "", ""))
				}
			case "projectile":
				speed := it.vel.Len()
				var d geom.Vec3
				if speed > 0 {
					d = it.vel.Scale(1 / speed)
				}
				dt := 1 / float64(sc.TickRate)
				res, id, ok := first(it.pos, d, speed*dt, w.Radius)
				it.steps++
				switch {
				case ok && res == "hit":
					events = append(events, ev("hit", id, ""))
				case ok:
					events = append(events, ev("blocked", "", id))
				default:
					it.pos = it.pos.AddScaled(d, speed*dt)
					if it.steps >= w.LifetimeTicks {
						events = append(events, ev("miss", "", ""))
					} else {
						still = append(still, it)
					}
				}
			}
		}
		live = still
		st.maxBuckets = max(st.maxBuckets, len(distinct))
	}
	slices.SortStableFunc(events, func(a, b Event) int {
		return cmp.Or(cmp.Compare(a.Tick, b.Tick), cmp.Compare(a.Shot, b.Shot), cmp.Compare(a.Target, b.Target))
	})
	return events, st
}

// randomScenario builds a busy random scenario: players running between
// keyframes with assorted view delays (some beyond the window, some sharing
// a delay), spawning and despawning; walls; shields that come and go; and
// shots of every kind, mostly aimed near somebody. No shot starts inside a
// wall: a wall is the surface of its box, and such a shot is stopped where
// it comes out, where the reference's solid boxes stop it at once
// (TestShotFromInsideAStaticBox).
func randomScenario(rng *rand.Rand) map[string]any {
	f := func(lo, hi float64) float64 { return lo + rng.Float64()*(hi-lo) }
	ticks := 60 + rng.IntN(60)
	sc := map[string]any{
		"tick_rate": []int{10, 20, 30, 60}[rng.IntN(4)],
		"ticks":     ticks,
		"lagcomp": map[string]any{
			"window_ticks":    []int{0, 3, 10, 30}[rng.IntN(4)],
			"view_resolution": []int{0, 0, 2, 4}[rng.IntN(4)],
		},
		"friendly_fire": rng.IntN(3) == 0,
		"weapons": map[string]any{
			"rifle":  map[string]any{"kind": "hitscan", "range": f(20, 80)},
			"rocket": map[string]any{"kind": "projectile", "speed": f(10, 60), "radius": f(0, 0.5), "lifetime_ticks": 5 + rng.IntN(40)},
			"bite":   map[string]any{"kind": "melee", "reach": f(0.5, 2), "radius": f(0.5, 1.5)},
		},
	}
	var ents []any
	var players []map[string]any
	delays := []float64{0, 1.5, 2, 3.25, 3.5, 3.5, 7, 12.75, 40}
	for i := range 2 + rng.IntN(7) {
		var path []any
		tick := rng.IntN(20)
		for range 1 + rng.IntN(4) {
			path = append(path, map[string]any{"tick": tick, "pos": []float64{f(-15, 15), f(0, 0.5), f(-15, 15)}})
			tick += 5 + rng.IntN(30)
		}
		p := map[string]any{"id": fmt.Sprintf("p%d", i), "team": i % 3, "view_delay_ticks": delays[rng.IntN(len(delays))], "path": path}
		if rng.IntN(4) == 0 {
			p["despawn_tick"] = 20 + rng.IntN(ticks)
		}
		if rng.IntN(3) == 0 {
			r := f(0.3, 0.8)
			p["capsule"] = map[string]any{"radius": r, "height": f(2*r, 2.5)}
		}
		ents = append(ents, p)
		players = append(players, p)
	}
	var walls []geom.AABB
	for i := range rng.IntN(5) {
		x, z := f(-15, 15), f(-15, 15)
		lo, hi := []float64{x, 0, z}, []float64{x + f(0.2, 4), f(1, 3), z + f(0.2, 4)}
		ents = append(ents, map[string]any{"id": fmt.Sprintf("wall%d", i), "kind": "static",
			"box": map[string]any{"min": lo, "max": hi}})
		walls = append(walls, geom.AABB{Min: geom.FromArray([3]float64(lo)), Max: geom.FromArray([3]float64(hi))}.Expand(0.5))
	}
	for i := range rng.IntN(4) {
		x, z := f(-15, 15), f(-15, 15)
		s := map[string]any{"id": fmt.Sprintf("shield%d", i), "kind": "shield", "spawn_tick": rng.IntN(ticks),
			"box": map[string]any{"min": []float64{x, 0, z}, "max": []float64{x + f(0.2, 3), 2.5, z + f(0.2, 3)}}}
		if rng.IntN(2) == 0 {
			s["despawn_tick"] = s["spawn_tick"].(int) + 1 + rng.IntN(30)
		}
		ents = append(ents, s)
	}
	sc["entities"] = ents
	var shots []any
	for range 10 + rng.IntN(40) {
		shooter := players[rng.IntN(len(players))]
		target := players[rng.IntN(len(players))]
		tick := rng.IntN(ticks)
		tp := genPos(target["path"].([]any), tick)
		o := []float64{tp[0] + f(-8, 8), f(0.5, 2), tp[2] + f(-8, 8)}
		for slices.ContainsFunc(walls, func(w geom.AABB) bool { return w.Contains(geom.FromArray([3]float64(o))) }) {
			o = []float64{tp[0] + f(-8, 8), f(0.5, 2), tp[2] + f(-8, 8)}
		}
		d := []float64{tp[0] + f(-1, 1) - o[0], f(-0.3, 0.3), tp[2] + f(-1, 1) - o[2]}
		if d[0] == 0 && d[2] == 0 {
			d[0] = 1
		}
		shots = append(shots, map[string]any{"tick": tick, "shooter": shooter["id"],
			"weapon": []string{"rifle", "rocket", "rocket", "bite"}[rng.IntN(4)], "origin": o, "dir": d})
	}
	sc["shots"] = shots
	return sc
}

// genPos is where a generated path puts a player at tick.
func genPos(path []any, tick int) []float64 {
	kf := func(i int) (int, []float64) {
		m := path[i].(map[string]any)
		return m["tick"].(int), m["pos"].([]float64)
	}
	t0, p0 := kf(0)
	if tick <= t0 {
		return p0
	}
	for i := 1; i < len(path); i++ {
		t1, p1 := kf(i)
		if tick <= t1 {
			a := float64(tick-t0) / float64(t1-t0)
			return []float64{p0[0] + (p1[0]-p0[0])*a, p0[1], p0[2] + (p1[2]-p0[2])*a}
		}
		t0, p0 = t1, p1
	}
	return p0
}

func parseMap(t *testing.T, m map[string]any) *Scenario {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Parse(data)
	if err != nil {
		t.Fatalf("generated scenario is invalid: %v\n%s", err, data)
	}
	return sc
}

// TestEngineMatchesReferenceModel runs hundreds of random scenarios with
// bucketing on and off: both must give the reference's events exactly, and
// the stats the reference counts.
func TestEngineMatchesReferenceModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 11))
	var events, hits, blocked, rewinds, saved int64
	for i := range 400 {
		sc := parseMap(t, randomScenario(rng))
		want, st := reference(sc)
		if len(want) == 0 {
			want = []Event{}
		}
		for _, bucketing := range []bool{true, false} {
			sc.LagComp.Bucketing = bucketing
			got, err := Run(sc)
			if err != nil {
				t.Fatal(err)
			}
			if d := diffEvents(got.Events, want); d != "" {
				t.Fatalf("scenario %d (bucketing %v): engine and reference differ: %s", i, bucketing, d)
			}
			wantRewinds := st.bucketedRewinds
			if !bucketing {
				wantRewinds = st.perItemRewinds
			}
			wantStats := Stats{Ticks: sc.Ticks, Rewinds: wantRewinds, MaxBucketsPerTick: st.maxBuckets, LagCompensatedItems: st.items}
			if got.Stats != wantStats {
				t.Fatalf("scenario %d (bucketing %v): stats %+v, want %+v", i, bucketing, got.Stats, wantStats)
			}
		}
		events += int64(len(want))
		rewinds += st.bucketedRewinds
		saved += st.perItemRewinds - st.bucketedRewinds
		for _, ev := range want {
			switch ev.Result {
			case "hit":
				hits++
			case "blocked":
				blocked++
			}
		}
	}
	t.Logf("%d events (%d hits, %d blocked), %d rewinds bucketed, %d more per item", events, hits, blocked, rewinds, saved)
	if hits < events/10 || blocked < events/50 || rewinds == 0 || saved == 0 {
		t.Errorf("too few hits, blocks or rewinds for the comparison to mean much")
	}
}

func diffEvents(got, want []Event) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d events, reference has %d\nengine:    %s\nreference: %s", len(got), len(want), render(got), render(want))
	}
	for i := range got {
		if !sameEvent(got[i], want[i]) {
			return fmt.Sprintf("event %d: engine %s, reference %s", i, render(got[i:i+1]), render(want[i:i+1]))
		}
	}
	return ""
}

func sameEvent(a, b Event) bool {
	if (a.ViewTime == nil) != (b.ViewTime == nil) || (a.ViewTime != nil && *a.ViewTime != *b.ViewTime) {
		return false
	}
	a.ViewTime, b.ViewTime = nil, nil
	return a == b
}

func render(evs []Event) string {
	b, _ := json.Marshal(evs)
	return string(b)
}
