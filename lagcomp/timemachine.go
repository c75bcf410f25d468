package lagcomp

import "github.com/rewind-gg/rewind/ecs"

// TimeMachine puts a collision world's hitboxes into the state of a past time
// recorded in a history, and back to the present (Dino Squad's
// TimeMachine.TravelToTime). Static geometry and shields are never touched.
type TimeMachine struct {
	history *History
	world   *CollisionWorld
	scratch []Pose
	at      ecs.ViewTime
}

// NewTimeMachine returns a time machine over history and world.
func NewTimeMachine(history *History, world *CollisionWorld) *TimeMachine {
	return &TimeMachine{history: history, world: world, at: ecs.ViewTime{Tick: -1}}
}

// TravelTo places every hitbox as it was at time t: each entity recorded at
// ⌊t⌋ stands at the interpolation of its poses at ⌊t⌋ and ⌊t⌋+1 by the
// fraction of t (at its ⌊t⌋ pose if it was not recorded at ⌊t⌋+1, or if its
// ⌊t⌋+1 pose is a teleport: nobody ever stood between the two); entities
// not recorded at ⌊t⌋ are absent. A time outside the history is clamped to
// the oldest or newest frame. It returns the time actually travelled to.
func (tm *TimeMachine) TravelTo(t ecs.ViewTime) ecs.ViewTime {
	h := tm.history
	if h.count == 0 {
		tm.world.placeHitboxes(nil)
		tm.at = t
		return t
	}
	switch {
	case t.Tick < h.Oldest():
		t = ecs.ViewTime{Tick: h.Oldest()}
	case t.Tick >= h.Newest():
		t = ecs.ViewTime{Tick: h.Newest()}
	}
	a, _ := h.Frame(t.Tick)
	if t.Frac == 0 {
		tm.world.placeHitboxes(a)
		tm.at = t
		return t
	}
	b, _ := h.Frame(t.Tick + 1)
	tm.scratch = tm.scratch[:0]
	j := 0
	for _, p := range a {
		for j < len(b) && ecs.CompareEntity(b[j].Entity, p.Entity) < 0 {
			j++
		}
		if j < len(b) && b[j].Entity == p.Entity && !b[j].Teleport {
			p.Pos = p.Pos.Lerp(b[j].Pos, t.Frac)
		}
		tm.scratch = append(tm.scratch, p)
	}
	tm.world.placeHitboxes(tm.scratch)
	tm.at = t
	return t
}

// TravelToPresent places every hitbox as recorded at the newest tick.
func (tm *TimeMachine) TravelToPresent() {
	tm.TravelTo(ecs.ViewTime{Tick: tm.history.Newest()})
}

// At returns the time the collision world is in.
func (tm *TimeMachine) At() ecs.ViewTime { return tm.at }

// World returns the collision world the time machine moves.
func (tm *TimeMachine) World() *CollisionWorld { return tm.world }

// History returns the history the time machine reads.
func (tm *TimeMachine) History() *History { return tm.history }
