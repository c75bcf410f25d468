package lagcomp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
)

// history of three players over ticks 0..10:
//
//	e0 runs along +X at 1 m/tick (x = tick), ticks 0..10
//	e1 stands at z=5 and exists only from tick 4 on
//	e2 stands at z=-5 and exists only up to tick 6
//
// It returns five entities: the three players and two spare ones.
func threePlayers(t *testing.T) (*TimeMachine, *CollisionWorld, []ecs.Entity) {
	e := entities(5)
	h := NewHistory(30)
	for tick := int64(0); tick <= 10; tick++ {
		poses := []Pose{pose(e[0], 1, float64(tick), 0)}
		if tick >= 4 {
			poses = append(poses, pose(e[1], 2, 0, 5))
		}
		if tick <= 6 {
			poses = append(poses, pose(e[2], 2, 0, -5))
		}
		mustRecord(t, h, tick, poses...)
	}
	w := NewCollisionWorld(4)
	tm := NewTimeMachine(h, w)
	tm.TravelToPresent()
	return tm, w, e
}

func TestTravelInterpolatesBetweenRecordedTicks(t *testing.T) {
	tm, w, e := threePlayers(t)
	tm.TravelTo(ecs.ViewTime{Tick: 3, Frac: 0.25})
	if p, ok := feetOf(t, w, e[0]); !ok || p != geom.V(3.25, 0, 0) {
		t.Errorf("e0 at 3.25: got %v %v, want (3.25,0,0)", p, ok)
	}
	// e1 is absent at ⌊τ⌋ = 3 even though it exists at 4: absent.
	if _, ok := feetOf(t, w, e[1]); ok {
		t.Error("e1 did not exist at tick 3 and must be absent at 3.25")
	}
	// e2 exists at 6 but not at 7: at 6.5 it stands at its tick-6 pose.
	tm.TravelTo(ecs.ViewTime{Tick: 6, Frac: 0.5})
	if p, ok := feetOf(t, w, e[2]); !ok || p != geom.V(0, 0, -5) {
		t.Errorf("e2 at 6.5: got %v %v, want its tick-6 pose", p, ok)
	}
	if p, _ := feetOf(t, w, e[0]); p != geom.V(6.5, 0, 0) {
		t.Errorf("e0 at 6.5: got %v", p)
	}
}

func TestTravelCreatesMovesAndRemoves(t *testing.T) {
	tm, w, e := threePlayers(t)
	// Present (tick 10): e0 and e1.
	if n := w.NumHitboxes(); n != 2 {
		t.Fatalf("present has %d hitboxes, want 2", n)
	}
	tm.TravelTo(ecs.ViewTime{Tick: 5})
	if st := w.LastTravel(); st != (TravelStats{Moved: 2, Created: 1}) {
		t.Errorf("to tick 5: %+v, want e0 and e1 moved, e2 created", st)
	}
	tm.TravelTo(ecs.ViewTime{Tick: 2})
	if st := w.LastTravel(); st != (TravelStats{Moved: 2, Removed: 1}) {
		t.Errorf("to tick 2: %+v, want e0 and e2 moved, e1 removed", st)
	}
	if _, ok := feetOf(t, w, e[1]); ok {
		t.Error("e1 should be gone at tick 2")
	}
	tm.TravelToPresent()
	if st := w.LastTravel(); st != (TravelStats{Moved: 1, Created: 1, Removed: 1}) {
		t.Errorf("back to the present: %+v", st)
	}
	if p, _ := feetOf(t, w, e[0]); p != geom.V(10, 0, 0) {
		t.Errorf("present e0 at %v, want x=10", p)
	}
	if tm.At() != (ecs.ViewTime{Tick: 10}) {
		t.Errorf("At() = %+v after returning to the present", tm.At())
	}
}

func TestTravelClampsToTheHistory(t *testing.T) {
	tm, w, e := threePlayers(t)
	if got := tm.TravelTo(ecs.ViewTime{Tick: -5, Frac: 0.5}); got != (ecs.ViewTime{Tick: 0}) {
		t.Errorf("before the history: travelled to %+v, want tick 0", got)
	}
	if p, _ := feetOf(t, w, e[0]); p.X != 0 {
		t.Errorf("e0 at %v", p)
	}
	if got := tm.TravelTo(ecs.ViewTime{Tick: 12, Frac: 0.5}); got != (ecs.ViewTime{Tick: 10}) {
		t.Errorf("after the present: travelled to %+v, want tick 10", got)
	}
}

func TestTravelNeverMovesStaticGeometryOrShields(t *testing.T) {
	tm, w, e := threePlayers(t)
	wallE, shieldE := e[3], e[4]
	wall := geom.AABB{Min: geom.V(-1, 0, 20), Max: geom.V(1, 3, 21)}
	shield := geom.AABB{Min: geom.V(-1, 0, 30), Max: geom.V(1, 3, 31)}
	setLevel(t, w, wallE, []geom.AABB{wall})
	if err := w.AddShield(shieldE, e[1], 2, shield); err != nil {
		t.Fatal(err)
	}
	for _, to := range []ecs.ViewTime{{Tick: 0}, {Tick: 3, Frac: 0.5}, {Tick: 10}} {
		tm.TravelTo(to)
		for _, probe := range []struct {
			from float64
			want ecs.Entity
		}{{15, wallE}, {25, shieldE}} {
			hit, ok := w.Raycast(geom.V(0, 1, probe.from), geom.V(0, 0, 1), 100, Filter{Mask: Blockers})
			if !ok || hit.Entity != probe.want || hit.T != 5 {
				t.Errorf("at %+v: ray from z=%v: got %+v %v, want %v at 5 m", to, probe.from, hit, ok, probe.want)
			}
		}
	}
}

func TestTravelWithEmptyHistory(t *testing.T) {
	w := NewCollisionWorld(4)
	tm := NewTimeMachine(NewHistory(5), w)
	tm.TravelTo(ecs.ViewTime{Tick: 3})
	if w.NumHitboxes() != 0 {
		t.Error("an empty history places nothing")
	}
}

func TestEntityIndexRecycledWithNewGeneration(t *testing.T) {
	// arche recycles entity indices with a new generation; the collision
	// world must treat the new generation as a different hitbox.
	w := NewCollisionWorld(4)
	tm := NewTimeMachine(NewHistory(5), w)
	h := tm.History()
	e := entities(1)[0]
	mustRecord(t, h, 0, pose(e, 1, 0, 0))
	tm.TravelToPresent()
	// Forge the same index with another generation via a fresh world that
	// recycles: create, remove, create.
	other := recycled(e)
	mustRecord(t, h, 1, pose(other, 1, 5, 0))
	tm.TravelToPresent()
	if st := w.LastTravel(); st.Created != 1 || st.Removed != 1 {
		t.Errorf("recycled index: %+v, want one created and one removed", st)
	}
	if _, ok := w.Hitbox(e); ok {
		t.Error("the old generation must be gone")
	}
	if p, ok := feetOf(t, w, other); !ok || p.X != 5 {
		t.Errorf("new generation at %v %v", p, ok)
	}
}

// A pose marked as a teleport is never interpolated into: between a death
// spot and a spawn point the entity stands at the pose before the jump, and
// a ray through the midpoint, where nobody ever stood, hits nothing.
func TestTravelNeverInterpolatesAcrossATeleport(t *testing.T) {
	e := entities(2)
	h := NewHistory(30)
	mustRecord(t, h, 0, pose(e[0], 1, 0, 0), pose(e[1], 2, 0, 10))
	mustRecord(t, h, 1, pose(e[0], 1, 1, 0), pose(e[1], 2, 0, 10))
	jump := pose(e[0], 1, 21, 0) // 20 m in a tick
	jump.Teleport = true
	mustRecord(t, h, 2, jump, pose(e[1], 2, 0, 10))
	mustRecord(t, h, 3, pose(e[0], 1, 22, 0), pose(e[1], 2, 0, 10))
	w := NewCollisionWorld(4)
	tm := NewTimeMachine(h, w)
	for _, tt := range []struct {
		at   ecs.ViewTime
		want geom.Vec3
	}{
		{ecs.ViewTime{Tick: 0, Frac: 0.5}, geom.V(0.5, 0, 0)}, // an ordinary step: interpolated
		{ecs.ViewTime{Tick: 1, Frac: 0.5}, geom.V(1, 0, 0)},   // across the teleport: the pose before it
		{ecs.ViewTime{Tick: 1, Frac: 0.99}, geom.V(1, 0, 0)},
		{ecs.ViewTime{Tick: 2}, geom.V(21, 0, 0)},              // the teleport's own tick: where it landed
		{ecs.ViewTime{Tick: 2, Frac: 0.5}, geom.V(21.5, 0, 0)}, // after it: interpolated again
	} {
		tm.TravelTo(tt.at)
		if p, ok := feetOf(t, w, e[0]); !ok || p.Sub(tt.want).Len() > 1e-12 {
			t.Errorf("at %v: %v %v, want %v", tt.at, p, ok, tt.want)
		}
		if p, _ := feetOf(t, w, e[1]); p != geom.V(0, 0, 10) {
			t.Errorf("at %v the other entity moved to %v", tt.at, p)
		}
	}
	tm.TravelTo(ecs.ViewTime{Tick: 1, Frac: 0.5})
	if hit, ok := w.Raycast(geom.V(11, 1, -5), geom.V(0, 0, 1), 10, Filter{Mask: Everything}); ok {
		t.Errorf("a ray through the midpoint of the jump hit %v", hit)
	}
}

// TestTravelPlacesAsPosesAt records players that run, crouch, change
// teams, teleport, die and come back (entities absent from some ticks, one
// index recycled), and travels through the history, to integral, fractional
// and spanned times, in and out of it: after each travel the collision
// world holds what placing History.PosesAt's poses holds, collider for
// collider, the sort-and-sweep list and bounds included, bit for bit.
func TestTravelPlacesAsPosesAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 80))
	es := entities(10)
	es = append(es, recycled(es[3]))
	h := NewHistory(30)
	for tick := int64(0); tick < 60; tick++ {
		var poses []Pose
		for i, e := range es {
			if i == 3 && tick >= 30 || i == len(es)-1 && tick < 30 || (i+int(tick/7))%9 == 0 {
				continue // gone, not yet there, or dead for a while
			}
			a := float64(tick)*0.1 + float64(i)
			p := Pose{Entity: e, Team: uint8(1 + (i+int(tick/20))%2), Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8, HeadHeight: float64(i%2) * 0.3, CrouchHeight: 1.2},
				Pos: geom.V(10*math.Cos(a), float64(i%3)*0.5, 10*math.Sin(a)), Crouched: (i+int(tick))%5 == 0, Teleport: rng.IntN(15) == 0}
			poses = append(poses, p)
		}
		mustRecord(t, h, tick, poses...)
		if tick < 5 {
			continue
		}
		w, ref := NewCollisionWorld(4), NewCollisionWorld(4)
		tm := NewTimeMachine(h, w)
		var scratch []Pose
		for k := range 20 {
			vt := ecs.ViewTimeOf(float64(tick) - rng.Float64()*40 + 3)
			if k%3 == 0 {
				vt = ecs.ViewTime{Tick: tick - int64(rng.IntN(35))}
			}
			if rng.IntN(4) == 0 {
				vt.Back, vt.Span = uint8(rng.IntN(3)), uint8(2+rng.IntN(3))
			}
			got := tm.TravelTo(vt)
			var want ecs.ViewTime
			scratch, want = h.PosesAt(vt, scratch[:0])
			ref.placeHitboxes(scratch)
			if got != want {
				t.Fatalf("tick %d, travel %d to %+v: at %+v, PosesAt's %+v", tick, k, vt, got, want)
			}
			if msg := samePlacement(w, ref); msg != "" {
				t.Fatalf("tick %d, travel %d to %+v: %s", tick, k, vt, msg)
			}
		}
	}
}

// samePlacement says how w's hitboxes differ from ref's, "" when they do
// not: the colliders placed, in order, the sort-and-sweep list, the bounds
// and the last travel's counts.
func samePlacement(w, ref *CollisionWorld) string {
	if len(w.hitboxes) != len(ref.hitboxes) {
		return fmt.Sprintf("%d hitboxes, want %d", len(w.hitboxes), len(ref.hitboxes))
	}
	for k := range w.hitboxes {
		c, r := w.cols[w.hitboxes[k]], ref.cols[ref.hitboxes[k]]
		if c.Entity != r.Entity || c.Owner != r.Owner || c.Team != r.Team || c.Kind != r.Kind || c.Capsule != r.Capsule ||
			math.Float64bits(c.HeadY) != math.Float64bits(r.HeadY) || c.bounds != r.bounds {
			return fmt.Sprintf("hitbox %d is %+v, want %+v", k, c, r)
		}
	}
	if len(w.moving.col) != len(ref.moving.col) || !slices.Equal(w.moving.bounds, ref.moving.bounds) ||
		w.moving.widest != ref.moving.widest || w.moving.union != ref.moving.union {
		return fmt.Sprintf("sort-and-sweep list %+v, want %+v", w.moving, ref.moving)
	}
	for k := range w.moving.col {
		if w.cols[w.moving.col[k]].Entity != ref.cols[ref.moving.col[k]].Entity {
			return fmt.Sprintf("sort-and-sweep list's entry %d differs", k)
		}
	}
	if w.bounds != ref.bounds || w.hasBounds != ref.hasBounds || w.LastTravel() != ref.LastTravel() {
		return fmt.Sprintf("bounds %v %v, last travel %+v; want %v %v, %+v", w.bounds, w.hasBounds, w.LastTravel(), ref.bounds, ref.hasBounds, ref.LastTravel())
	}
	return ""
}
