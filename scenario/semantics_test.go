package scenario

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tests below take the sentences of docs/scenario.md (the contract) one
// by one. Scenarios are built as maps so each test states only what matters.

type M = map[string]any

func base(ticks int, ents []any, shots ...any) M {
	return M{
		"tick_rate": 20,
		"ticks":     ticks,
		"weapons": M{
			"rifle":  M{"kind": "hitscan", "range": 100},
			"short":  M{"kind": "hitscan", "range": 9.5},
			"rocket": M{"kind": "projectile", "speed": 20, "radius": 0.1, "lifetime_ticks": 40},
			"slug":   M{"kind": "projectile", "speed": 20, "radius": 0, "lifetime_ticks": 40},
			"bite":   M{"kind": "melee", "reach": 1.5, "radius": 1.0},
		},
		"entities": ents,
		"shots":    shots,
	}
}

func player(id string, team int, delay float64, path ...any) M {
	return M{"id": id, "team": team, "view_delay_ticks": delay, "path": path}
}

func at(tick int, x, y, z float64) M { return M{"tick": tick, "pos": []float64{x, y, z}} }

func shot(tick int, shooter, weapon string, origin, dir []float64) M {
	return M{"tick": tick, "shooter": shooter, "weapon": weapon, "origin": origin, "dir": dir}
}

func v(x, y, z float64) []float64 { return []float64{x, y, z} }

func box(id, kind string, min, max []float64) M {
	return M{"id": id, "kind": kind, "box": M{"min": min, "max": max}}
}

func run(t *testing.T, sc M) *Result {
	t.Helper()
	res, err := Run(parseMap(t, sc))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// ev is an expected event; vt < 0 means no view_time.
func ev(shot int, result, who string, tick int64, vt float64) Event {
	e := Event{Shot: shot, Result: result, Tick: tick}
	switch result {
	case "hit":
		e.Target = who
	case "blocked":
		e.By = who
	}
	if vt >= 0 {
		e.ViewTime = &vt
	}
	return e
}

func expect(t *testing.T, got *Result, want ...Event) {
	t.Helper()
	if want == nil {
		want = []Event{}
	}
	if d := diffEvents(got.Events, want); d != "" {
		t.Error(d)
	}
}

// A shooter standing still at the origin (team 2) and a target (team 1).
var shooterAt0 = player("red", 2, 0, at(0, 0, 0, 0))

// "Server ticks run 0 .. ticks-1."
func TestTicksRunFromZero(t *testing.T) {
	sc := base(10, []any{shooterAt0, player("blue", 1, 0, at(0, 0, 0, 10))},
		shot(0, "red", "rifle", v(0, 1, 0), v(0, 0, 1)),
		shot(9, "red", "rifle", v(0, 1, 0), v(0, 0, 1)))
	res := run(t, sc)
	expect(t, res, ev(0, "hit", "blue", 0, 0), ev(1, "hit", "blue", 9, 9))
	if res.Stats.Ticks != 10 {
		t.Errorf("stats.ticks = %d", res.Stats.Ticks)
	}
	sc["shots"] = []any{shot(10, "red", "rifle", v(0, 1, 0), v(0, 0, 1))}
	assertInvalid(t, sc, "shots[0].tick: 10 is outside 0..9")
}

// "lagcomp: window_ticks (default 30) ... view_resolution (default 0) ...
// bucketing (default true)."
func TestLagcompDefaults(t *testing.T) {
	sc := base(60, []any{player("red", 2, 40, at(0, 0, 0, 0)), player("red2", 2, 3.3, at(0, 1, 0, 0)),
		player("blue", 1, 0, at(0, 0, 0, 10))},
		shot(50, "red", "rifle", v(0, 1, 0), v(0, 0, 1)),
		shot(50, "red2", "rifle", v(0, 1, 0), v(0, 0, 1)))
	res := run(t, sc)
	expect(t, res, ev(0, "hit", "blue", 50, 20), ev(1, "hit", "blue", 50, 46.7))
	if res.Stats.Rewinds != 2 {
		t.Errorf("bucketing is on by default: rewinds = %d, want 2 (two distinct past times)", res.Stats.Rewinds)
	}
}

// "view_resolution ... N > 0 = rounded to the nearest 1/N tick (a half rounds
// up, toward the present)" and "Two lag-compensated items share a bucket
// exactly when their τ are equal."
func TestViewResolution(t *testing.T) {
	mk := func(res int) M {
		sc := base(60, []any{player("a", 2, 3.3, at(0, 0, 0, 0)), player("b", 2, 3.2, at(0, 1, 0, 0)),
			player("c", 2, 3.25, at(0, 2, 0, 0)), player("blue", 1, 0, at(0, 0, 0, 10))},
			shot(50, "a", "rifle", v(0, 1, 0), v(0, 0, 1)),
			shot(50, "b", "rifle", v(1, 1, 0), v(0, 0, 1)),
			shot(50, "c", "rifle", v(2, 1, 0), v(0, 0, 1)))
		sc["lagcomp"] = M{"view_resolution": res}
		return sc
	}
	exact := run(t, mk(0))
	expect(t, exact, ev(0, "hit", "blue", 50, 46.7), ev(1, "miss", "", 50, 46.8), ev(2, "miss", "", 50, 46.75))
	if exact.Stats.MaxBucketsPerTick != 3 || exact.Stats.Rewinds != 3 {
		t.Errorf("exact: %+v", exact.Stats)
	}
	quarter := run(t, mk(4)) // 46.7 and 46.8 round to 46.75, with 46.75 itself
	expect(t, quarter, ev(0, "hit", "blue", 50, 46.75), ev(1, "miss", "", 50, 46.75), ev(2, "miss", "", 50, 46.75))
	if quarter.Stats.MaxBucketsPerTick != 1 || quarter.Stats.Rewinds != 1 {
		t.Errorf("quarter ticks: %+v, want one bucket and one rewind", quarter.Stats)
	}
	half := run(t, mk(2)) // 46.75 is a half of 1/2: rounds up to 47; 46.7 → 46.5; 46.8 → 47
	expect(t, half, ev(0, "hit", "blue", 50, 46.5), ev(1, "miss", "", 50, 47), ev(2, "miss", "", 50, 47))
	if half.Stats.MaxBucketsPerTick != 2 {
		t.Errorf("half ticks: %+v", half.Stats)
	}
}

// "bucketing (default true): false rewinds once per lag-compensated item
// instead of once per bucket ... Results must not depend on it." and
// "stats.rewinds counts rewinds to a past time: per (tick, bucket) with τ < t
// when bucketing, per (tick, item) with τ < t when not."
func TestBucketingChangesRewindsOnly(t *testing.T) {
	sc := base(40, []any{player("a", 2, 3, at(0, 0, 0, 0)), player("b", 2, 3, at(0, 1, 0, 0)),
		player("c", 2, 0, at(0, 2, 0, 0)), player("blue", 1, 0, at(0, 0, 0, 30))},
		shot(10, "a", "rifle", v(0, 1, 0), v(0, 0, 1)),
		shot(10, "b", "rifle", v(1, 1, 0), v(0, 0, 1)),
		shot(10, "a", "rocket", v(0, 1, 0), v(0, 0, 1)), // flies 1 m/tick: 29.4 m to go
		shot(10, "c", "rifle", v(0, 1, 0), v(0, 0, 1)))
	on := run(t, sc)
	sc["lagcomp"] = M{"bucketing": false}
	off := run(t, sc)
	if d := diffEvents(on.Events, off.Events); d != "" {
		t.Fatalf("results depend on bucketing: %s", d)
	}
	// Tick 10: items a-rifle, b-rifle, a-rocket at τ=7 and c-rifle at τ=10.
	// Ticks 11..: the rocket alone at τ=t−3 until it hits.
	hit := on.Events[len(on.Events)-1].Tick
	flights := hit - 10 // ticks 11..hit
	if want := 1 + flights; on.Stats.Rewinds != want {
		t.Errorf("bucketed rewinds %d, want %d", on.Stats.Rewinds, want)
	}
	if want := 3 + flights; off.Stats.Rewinds != want {
		t.Errorf("per-item rewinds %d, want %d", off.Stats.Rewinds, want)
	}
	if on.Stats.MaxBucketsPerTick != 2 || off.Stats.MaxBucketsPerTick != 2 {
		t.Errorf("max buckets %d/%d, want 2", on.Stats.MaxBucketsPerTick, off.Stats.MaxBucketsPerTick)
	}
	if want := int64(4 + flights); on.Stats.LagCompensatedItems != want || off.Stats.LagCompensatedItems != want {
		t.Errorf("items %d/%d, want %d", on.Stats.LagCompensatedItems, off.Stats.LagCompensatedItems, want)
	}
}

// "pos is the feet. The hitbox is a vertical capsule of radius r and total
// height h (defaults 0.4 and 1.8): its axis runs from pos+(0,r,0) to
// pos+(0,h−r,0)."
func TestCapsuleGeometry(t *testing.T) {
	blue := player("blue", 1, 0, at(0, 0, 5, 10)) // standing on a 5 m ledge
	big := player("big", 1, 0, at(0, 30, 0, 10))
	big["capsule"] = M{"radius": 1, "height": 3}
	sc := base(5, []any{shooterAt0, blue, big},
		shot(0, "red", "rifle", v(0, 6.79, 0), v(0, 0, 1)),    // just under blue's head
		shot(0, "red", "rifle", v(0, 6.81, 0), v(0, 0, 1)),    // just over it
		shot(0, "red", "rifle", v(0, 5.01, 0), v(0, 0, 1)),    // at its feet, on the axis
		shot(0, "red", "rifle", v(0, 1.0, 0), v(0, 0, 1)),     // under the ledge: nobody
		shot(0, "red", "rifle", v(0.39, 6, 0), v(0, 0, 1)),    // inside the default radius
		shot(0, "red", "rifle", v(0.41, 6, 0), v(0, 0, 1)),    // outside it
		shot(0, "red", "rifle", v(30.95, 1.5, 0), v(0, 0, 1)), // inside radius 1, outside the default 0.4
		shot(0, "red", "rifle", v(30, 3.01, 0), v(0, 0, 1)))
	expect(t, run(t, sc),
		ev(0, "hit", "blue", 0, 0), ev(1, "miss", "", 0, 0), ev(2, "hit", "blue", 0, 0), ev(3, "miss", "", 0, 0),
		ev(4, "hit", "blue", 0, 0), ev(5, "miss", "", 0, 0), ev(6, "hit", "big", 0, 0), ev(7, "miss", "", 0, 0))
}

// "The position at tick t is the linear interpolation of the path keyframes
// around t; before the first keyframe the player does not exist; after the
// last it stays there, until despawn_tick (absent from that tick on)."
func TestPathsAndExistence(t *testing.T) {
	blue := player("blue", 1, 0, at(10, 0, 0, 10), at(20, 10, 0, 10))
	blue["despawn_tick"] = 30
	ray := func(tick int, x float64) M { return shot(tick, "red", "rifle", v(x, 1, 0), v(0, 0, 1)) }
	sc := base(40, []any{shooterAt0, blue},
		ray(5, 0),   // before the first keyframe: nobody
		ray(10, 0),  // the first keyframe
		ray(15, 5),  // halfway
		ray(15, 4),  // 1 m from where it is
		ray(25, 10), // after the last keyframe it stays
		ray(29, 10), // still there
		ray(30, 10)) // despawned
	expect(t, run(t, sc),
		ev(0, "miss", "", 5, 5), ev(1, "hit", "blue", 10, 10), ev(2, "hit", "blue", 15, 15), ev(3, "miss", "", 15, 15),
		ev(4, "hit", "blue", 25, 25), ev(5, "hit", "blue", 29, 29), ev(6, "miss", "", 30, 30))
}

// "A shot whose shooter does not exist at that tick is invalid." and
// "view_time is the τ used (absent for invalid)."
func TestShooterMustExist(t *testing.T) {
	red := player("red", 2, 0, at(10, 0, 0, 0))
	red["despawn_tick"] = 20
	sc := base(30, []any{red, player("blue", 1, 0, at(0, 0, 0, 10))},
		shot(5, "red", "rifle", v(0, 1, 0), v(0, 0, 1)),
		shot(15, "red", "rifle", v(0, 1, 0), v(0, 0, 1)),
		shot(20, "red", "bite", v(0, 1, 0), v(0, 0, 1)))
	res := run(t, sc)
	expect(t, res, ev(0, "invalid", "", 5, -1), ev(1, "hit", "blue", 15, 15), ev(2, "invalid", "", 20, -1))
	out, _ := res.Marshal()
	if strings.Count(string(out), "view_time") != 1 {
		t.Errorf("invalid events must not carry view_time:\n%s", out)
	}
	if res.Stats.LagCompensatedItems != 1 {
		t.Errorf("invalid shots are not lag-compensated items: %d", res.Stats.LagCompensatedItems)
	}
}

// "static boxes (axis-aligned, min/max) always exist and are never rewound."
func TestStaticBoxesBlock(t *testing.T) {
	sc := base(20, []any{player("red", 2, 5, at(0, 0, 0, 0)), player("blue", 1, 0, at(0, 0, 0, 10)),
		box("wall", "static", v(-1, 0, 5), v(1, 3, 6))},
		shot(10, "red", "rifle", v(0, 1, 0), v(0, 0, 1)),
		shot(10, "red", "rifle", v(0, 3.5, 0), v(0, 0, 1)), // over the wall, over blue
		shot(10, "red", "rocket", v(0, 1, 0), v(0, 0, 1)))
	expect(t, run(t, sc), ev(0, "blocked", "wall", 10, 5), ev(1, "miss", "", 10, 5), ev(2, "blocked", "wall", 14, 9))
}

// "shield boxes are never rewound: a shield blocks exactly when it exists at
// the present server tick t (spawn_tick ≤ t < despawn_tick), whatever time
// the shot is evaluated at."
func TestShieldsBlockInThePresent(t *testing.T) {
	shield := box("shield1", "shield", v(-1, 0, 5), v(1, 3, 6))
	shield["spawn_tick"], shield["despawn_tick"] = 32, 40
	ray := func(tick int) M { return shot(tick, "red", "rifle", v(0, 1, 0), v(0, 0, 1)) }
	sc := base(60, []any{player("red", 2, 5, at(0, 0, 0, 0)), player("blue", 1, 0, at(0, 0, 0, 10)), shield},
		ray(31), ray(32), ray(39), ray(40),
		// A rocket fired before the shield exists, at 1 m/tick: it reaches the
		// shield's face (z=5, minus its radius) in the step of tick 34, while
		// its view time is 29, before the shield existed. Present shields stop
		// past bullets.
		shot(30, "red", "rocket", v(0, 1, 0), v(0, 0, 1)))
	expect(t, run(t, sc),
		ev(0, "hit", "blue", 31, 26), ev(1, "blocked", "shield1", 32, 27), ev(4, "blocked", "shield1", 34, 29),
		ev(2, "blocked", "shield1", 39, 34), ev(3, "hit", "blue", 40, 35))
}

// "hitscan (a ray of range metres)": "the first thing the ray touches within
// range decides: an enemy capsule → hit; a static box or a shield → blocked;
// nothing → miss".
func TestHitscan(t *testing.T) {
	sc := base(5, []any{shooterAt0, player("blue", 1, 0, at(0, 0, 0, 10)), player("blue2", 1, 0, at(0, 0, 0, 20)),
		box("wall", "static", v(4, 0, 0), v(5, 3, 30))},
		shot(0, "red", "rifle", v(0, 1, 0), v(0, 0, 1)),  // blue first, blue2 behind
		shot(0, "red", "short", v(0, 1, 0), v(0, 0, 1)),  // range 9.5: blue's front is at 9.6
		shot(0, "red", "rifle", v(0, 1, 0), v(1, 0, 0)),  // the wall
		shot(0, "red", "rifle", v(0, 1, 0), v(-1, 0, 0))) // nothing
	expect(t, run(t, sc), ev(0, "hit", "blue", 0, 0), ev(1, "miss", "", 0, 0), ev(2, "blocked", "wall", 0, 0), ev(3, "miss", "", 0, 0))
}

// "melee (a sphere of radius centred reach metres along dir from origin)":
// "every enemy capsule that intersects the sphere is hit (one event each);
// walls and shields do not block melee; none → miss"; and events are ordered
// by tick, shot, then target.
func TestMelee(t *testing.T) {
	shield := box("shield1", "shield", v(-3, 0, 0.6), v(3, 3, 0.7))
	sc := base(5, []any{shooterAt0,
		player("zed", 1, 0, at(0, 0, 0.5, 2.3)),   // the sphere (centre z=1.5, r=1) reaches its capsule (r=0.4) up to z=2.9
		player("amy", 1, 0, at(0, 1.2, 0, 1.5)),   // to the side, within 1.4
		player("far", 1, 0, at(0, 0, 0, 3)),       // 1.5 − 0.4 = 1.1 > 1 away
		player("mate", 2, 0, at(0, -0.5, 0, 1.5)), // a teammate in the sphere
		box("wall", "static", v(-3, 0, 1), v(3, 3, 1.1)), shield},
		shot(0, "red", "bite", v(0, 1, 0), v(0, 0, 2)),
		shot(1, "red", "bite", v(0, 1, 0), v(0, 0, -1)))
	expect(t, run(t, sc), ev(0, "hit", "amy", 0, 0), ev(0, "hit", "zed", 0, 0), ev(1, "miss", "", 1, 1))
}

// "projectile (a sphere of radius moving speed m/s in a straight line,
// removed after lifetime_ticks steps)": "a projectile is created at origin and
// takes its first step this tick", "the sphere sweeps from its position along
// speed/tick_rate metres; the first contact decides as for hitscan and removes
// it; otherwise it moves on, and after lifetime_ticks steps without contact it
// is a miss at the tick of its last step."
func TestProjectiles(t *testing.T) {
	sc := base(60, []any{shooterAt0, player("blue", 1, 0, at(0, 0, 0, 10))},
		// 20 m/s at 20 Hz: 1 m per step. From z=9 the contact (z=9.5) is in
		// the first step, the firing tick.
		shot(1, "red", "rocket", v(0, 1, 9), v(0, 0, 1)),
		// From z=0: contact at z=9.5 in step 10 (z 9→10), tick 10+9.
		shot(10, "red", "rocket", v(0, 1, 0), v(0, 0, 1)),
		// Away from everything: 40 steps, the last in tick 20+39.
		shot(20, "red", "rocket", v(0, 1, 0), v(0, 0, -1)),
		// Radius matters: 0.45 m beside blue's axis a 0.1 m rocket touches, a
		// point-sized slug does not.
		shot(2, "red", "rocket", v(0.45, 1, 5), v(0, 0, 1)),
		shot(2, "red", "slug", v(0.45, 1, 5), v(0, 0, 1)))
	expect(t, run(t, sc),
		ev(0, "hit", "blue", 1, 1), ev(3, "hit", "blue", 6, 6), ev(1, "hit", "blue", 19, 19), ev(4, "miss", "", 41, 41),
		ev(2, "miss", "", 59, 59))
}

// "dir (any length; it is normalised)".
func TestDirectionIsNormalised(t *testing.T) {
	sc := base(60, []any{shooterAt0, player("blue", 1, 0, at(0, 0, 0, 10))},
		shot(10, "red", "rocket", v(0, 1, 0), v(0, 0, 1)),
		shot(10, "red", "rocket", v(0, 1, 0), v(0, 0, 250)),
		shot(10, "red", "rifle", v(0, 1, 0), v(0, 0, 0.001)))
	expect(t, run(t, sc), ev(2, "hit", "blue", 10, 10), ev(0, "hit", "blue", 19, 19), ev(1, "hit", "blue", 19, 19))
}

// "A player's view time at server tick t is τ = t − view_delay_ticks, clamped
// to [max(0, t − window_ticks), t]".
func TestViewTimeClamp(t *testing.T) {
	sc := base(60, []any{player("red", 2, 5, at(0, 0, 0, 0)), player("blue", 1, 0, at(0, 0, 0, 10))},
		shot(2, "red", "rifle", v(0, 1, 0), v(0, 0, 1)), // 2−5 < 0: τ = 0
		shot(50, "red", "rifle", v(0, 1, 0), v(0, 0, 1)))
	sc["lagcomp"] = M{"window_ticks": 3}
	expect(t, run(t, sc), ev(0, "hit", "blue", 2, 0), ev(1, "hit", "blue", 50, 47))
}

// "Every player that exists in history at ⌊τ⌋ stands at the linear
// interpolation of its recorded positions at ⌊τ⌋ and ⌊τ⌋+1 by τ−⌊τ⌋ (its ⌊τ⌋
// position if it is not recorded at ⌊τ⌋+1). Players absent at ⌊τ⌋ are absent."
func TestRewoundWorld(t *testing.T) {
	runner := player("run", 1, 0, at(0, 0, 0, 10), at(100, 100, 0, 10)) // 1 m per tick along x
	gone := player("gone", 1, 0, at(0, 0, 0, 20), at(100, 100, 0, 20))
	gone["despawn_tick"] = 18 // recorded up to tick 17
	late := player("late", 1, 0, at(18, 18, 0, 30))
	ray := func(x, z float64) M { return shot(20, "red", "rifle", v(x, 1, z), v(0, 0, 1)) }
	sc := base(30, []any{player("red", 2, 2.5, at(0, -50, 0, 0)), runner, gone, late},
		ray(17.5, 0),  // τ = 17.5: the runner is halfway between x=17 and x=18
		ray(20, 0),    // where the runner is in the present: 2.5 m off
		ray(17, 15),   // gone: recorded at 17, not at 18: stands at its tick-17 x
		ray(17.5, 15), // ... not at 17.5 (0.5 m off)
		ray(18, 25))   // late exists from tick 18: absent at ⌊17.5⌋
	expect(t, run(t, sc), ev(0, "hit", "run", 20, 17.5), ev(1, "miss", "", 20, 17.5),
		ev(2, "hit", "gone", 20, 17.5), ev(3, "miss", "", 20, 17.5), ev(4, "miss", "", 20, 17.5))
}

// "every item to resolve this tick ... takes the view time τ of its shooter at
// tick t (a projectile keeps following its shooter's view delay after the
// shooter despawns)".
func TestProjectileKeepsShooterDelayAfterDespawn(t *testing.T) {
	red := player("red", 2, 3, at(0, 0, 0, 0))
	red["despawn_tick"] = 12
	sc := base(40, []any{red, player("blue", 1, 0, at(0, 0, 0, 10))},
		shot(10, "red", "rocket", v(0, 1, 0), v(0, 0, 1)))
	expect(t, run(t, sc), ev(0, "hit", "blue", 19, 16))
}

// "The world is rewound once per group (travelling to τ = t is not a
// rewind)", "The world returns to the present": a present-time shot in the
// same tick as a past one sees the present.
func TestPresentIsRestored(t *testing.T) {
	runner := player("run", 1, 0, at(0, 0, 0, 10), at(100, 100, 0, 10))
	sc := base(30, []any{player("old", 2, 5, at(0, -50, 0, 0)), player("now", 2, 0, at(0, -60, 0, 0)), runner},
		shot(20, "old", "rifle", v(15, 1, 0), v(0, 0, 1)),
		shot(20, "now", "rifle", v(15, 1, 0), v(0, 0, 1)),
		shot(20, "now", "rifle", v(20, 1, 0), v(0, 0, 1)),
		shot(21, "now", "rifle", v(21, 1, 0), v(0, 0, 1)))
	res := run(t, sc)
	expect(t, res, ev(0, "hit", "run", 20, 15), ev(1, "miss", "", 20, 20), ev(2, "hit", "run", 20, 20), ev(3, "hit", "run", 21, 21))
	if res.Stats.Rewinds != 1 || res.Stats.MaxBucketsPerTick != 2 {
		t.Errorf("stats %+v: the present is not a rewind", res.Stats)
	}
}

// "A shot never hits its own shooter. Teammates (same team) are ignored
// unless friendly_fire is true, when they are hit like enemies."
func TestOwnShooterAndTeammates(t *testing.T) {
	sc := base(5, []any{shooterAt0, player("mate", 2, 0, at(0, 0, 0, 5)), player("blue", 1, 0, at(0, 0, 0, 10))},
		shot(0, "red", "rifle", v(0, 1, -3), v(0, 0, 1)), // through its own body, then the mate
		shot(0, "red", "bite", v(0, 1, -1), v(0, 0, 1)))  // the sphere covers its own capsule
	expect(t, run(t, sc), ev(0, "hit", "blue", 0, 0), ev(1, "miss", "", 0, 0))
	sc["friendly_fire"] = true
	expect(t, run(t, sc), ev(0, "hit", "mate", 0, 0), ev(1, "miss", "", 0, 0))
}

// "events are ordered by tick, then shot (the index in shots), then target."
func TestEventOrder(t *testing.T) {
	sc := base(60, []any{shooterAt0, player("b", 1, 0, at(0, 0, 0, 1.5)), player("a", 1, 0, at(0, 0.5, 0, 1.5)),
		player("far", 1, 0, at(0, 0, 0, 10))},
		shot(20, "red", "rifle", v(0, 1, 3), v(0, 0, 1)),
		shot(0, "red", "rocket", v(0, 1, 3), v(0, 0, 1)),
		shot(10, "red", "bite", v(0, 1, 0), v(0, 0, 1)),
		shot(10, "red", "rifle", v(0, 1, 3), v(0, 0, 1)))
	expect(t, run(t, sc), ev(1, "hit", "far", 6, 6), ev(2, "hit", "a", 10, 10), ev(2, "hit", "b", 10, 10),
		ev(3, "hit", "far", 10, 10), ev(0, "hit", "far", 20, 20))
}

func TestOutputFormat(t *testing.T) {
	sc := base(40, []any{shooterAt0, player("blue", 1, 0, at(0, 0, 0, 10))},
		shot(0, "red", "rifle", v(0, 1, 0), v(0, 0, 1)))
	out, err := run(t, sc).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	if err := json.Unmarshal(out, &generic); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, out)
	}
	want := `{"events": [
   {"shot":0,"result":"hit","target":"blue","tick":0,"view_time":0}],
 "stats": {"ticks":40,"rewinds":0,"max_buckets_per_tick":1,"lag_compensated_items":1}}
`
	if string(out) != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}

// Extensions: the weapons block takes the weapons file's definitions.

// Dino Squad's option 2: the same rocket as the seed's picture, in catch-up
// mode, is decided in the tick it is fired, at the same view time.
func TestCatchUpMode(t *testing.T) {
	for _, tt := range []struct {
		mode    string
		tick    int64
		rewinds int64
	}{{"shooter_time", 33, 4}, {"catch_up", 30, 4}} {
		sc := base(80, []any{player("blue1", 1, 3.5, at(0, 0, 0, 0), at(60, 30, 0, 0)), player("red1", 2, 3.5, at(0, 14.75, 0, 5))},
			shot(30, "red1", "rocket", v(14.75, 1.2, 4), v(0, 0, -1)))
		sc["weapons"] = M{"rocket": M{"kind": "projectile", "speed": 20, "radius": 0.1, "lifetime_ticks": 40, "mode": tt.mode}}
		res := run(t, sc)
		expect(t, res, ev(0, "hit", "blue1", tt.tick, 29.5))
		if res.Stats.Rewinds != tt.rewinds {
			t.Errorf("%s: %d rewinds, want %d", tt.mode, res.Stats.Rewinds, tt.rewinds)
		}
	}
}

// A shot of several pellets reports one hit per target it hit, or blocked
// or miss when none hit anybody.
func TestPellets(t *testing.T) {
	sc := base(5, []any{shooterAt0, player("a", 1, 0, at(0, -0.5, 0, 6)), player("b", 1, 0, at(0, 0.5, 0, 6)),
		box("wall", "static", v(-5, 0, 20), v(5, 5, 21))},
		shot(0, "red", "shotgun", v(0, 1, 0), v(0, 0, 1)),
		shot(1, "red", "shotgun", v(0, 1, 0), v(0, 0, -1)),
		shot(2, "red", "shotgun", v(0, 1, 0), v(1, 0, 0)))
	sc["weapons"] = M{"shotgun": M{"kind": "hitscan", "range": 30, "pellets": 16, "spread": 0.15}}
	sc["entities"] = append(sc["entities"].([]any), box("back", "static", v(-5, 0, -21), v(5, 5, -20)))
	expect(t, run(t, sc), ev(0, "hit", "a", 0, 0), ev(0, "hit", "b", 0, 0), ev(1, "blocked", "back", 1, 1), ev(2, "miss", "", 2, 2))
}

// Team 0 is a team like any other: two team-0 players are teammates.
func TestTeamZero(t *testing.T) {
	sc := base(5, []any{player("red", 0, 0, at(0, 0, 0, 0)), player("mate", 0, 0, at(0, 0, 0, 5)), player("blue", 1, 0, at(0, 0, 0, 10))},
		shot(0, "red", "rifle", v(0, 1, 0), v(0, 0, 1)),
		shot(1, "red", "bite", v(0, 1, 4), v(0, 0, 1)))
	expect(t, run(t, sc), ev(0, "hit", "blue", 0, 0), ev(1, "miss", "", 1, 1))
}

// A static box is the surface of its box, as a level's geometry is: a shot
// that starts inside one is stopped where it comes out, not at once.
func TestShotFromInsideAStaticBox(t *testing.T) {
	sc := base(10, []any{player("a", 1, 0, at(0, 0, 0, 0)), box("crate", "static", v(-1, 0, 4), v(1, 2, 6))},
		shot(0, "a", "rifle", v(0, 1, 5), v(0, 0, 1)), // from inside the crate: out through its far face
		shot(1, "a", "rifle", v(0, 1, 0), v(0, 0, 1))) // from outside: its near face
	expect(t, run(t, sc), ev(0, "blocked", "crate", 0, 0), ev(1, "blocked", "crate", 1, 1))
}

// "level": "arena" plays on the built-in arena: its floor stops a shot
// aimed at the ground, its pillars a shot at them, and its edge walls stop
// nothing (they block movement only); static boxes still stand on it.
func TestArenaLevel(t *testing.T) {
	sc := base(10, []any{player("a", 1, 0, at(0, 0, 0, 0)), box("crate", "static", v(-1, 0, 4), v(1, 2, 6))},
		shot(0, "a", "rifle", v(0, 1.6, 0), v(0, -1, 1)), // the floor, 1.6 m ahead
		shot(1, "a", "rifle", v(11, 1, 0), v(0, 0, -1)),  // the pillar at x 10..12, z −12..−10
		shot(2, "a", "rifle", v(0, 1, 0), v(1, 0, 0)),    // out over the edge at x = 30
		shot(3, "a", "rifle", v(0, 1, 0), v(0, 0, 1)))    // the crate
	sc["level"] = "arena"
	expect(t, run(t, sc), ev(0, "blocked", "level", 0, 0), ev(1, "blocked", "level", 1, 1),
		ev(2, "miss", "", 2, 2), ev(3, "blocked", "crate", 3, 3))
	delete(sc, "level")
	expect(t, run(t, sc), ev(0, "miss", "", 0, 0), ev(1, "miss", "", 1, 1), ev(2, "miss", "", 2, 2), ev(3, "blocked", "crate", 3, 3))
}

// A level named by a path is read relative to the scenario file; a shot it
// stops names the node of the triangle ("level:Floor"). A level that cannot
// be read is an error naming the field.
func TestLevelFile(t *testing.T) {
	dir := t.TempDir()
	glb, err := os.ReadFile("../level/testdata/marked.glb")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "maps"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "maps", "marked.glb"), glb, 0o644); err != nil {
		t.Fatal(err)
	}
	sc := base(5, []any{player("a", 1, 0, at(0, 0, 0, 0))}, shot(0, "a", "rifle", v(0, 3, 0), v(0, -1, 0)))
	sc["level"] = "maps/marked.glb"
	data, _ := json.Marshal(sc)
	path := filepath.Join(dir, "s.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(parseMap(t, sc)); err == nil || !strings.Contains(err.Error(), "ParseFile") {
		t.Errorf("a level file through Parse: %v", err)
	}
	parsed, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(parsed)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, res, ev(0, "blocked", "level:Floor", 0, 0))
	sc["level"] = "maps/missing.glb"
	data, _ = json.Marshal(sc)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var fe *Error
	if _, err := ParseFile(path); !errors.As(err, &fe) || fe.Path != "level" || !strings.Contains(err.Error(), "missing.glb") {
		t.Errorf("a missing level: %v", err)
	}
}
