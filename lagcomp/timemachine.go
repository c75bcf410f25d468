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

// TravelTo places every hitbox as it was at time t (History.PosesAt: the
// interpolation of the two frames around t, never across a teleport). A
// time outside the history is clamped to the oldest or newest frame. It
// returns the time actually travelled to.
func (tm *TimeMachine) TravelTo(t ecs.ViewTime) ecs.ViewTime {
	s, ok := tm.history.between(t)
	switch {
	case ok && tm.world.holds(s.a):
		// The hitboxes of the frame's entities are placed, in its order:
		// each is only moved, from its pose straight to the world.
		epoch := tm.world.beginMove()
		for k := range s.a {
			p := &s.a[k]
			tm.world.moveHitbox(k, epoch, p, tm.history.pos(&s, p))
		}
		tm.world.endMove(epoch)
		t = s.t
	default:
		var poses []Pose
		var framed bool
		poses, t, framed = tm.history.posesAt(t, tm.scratch[:0])
		if !framed {
			tm.scratch = poses
		}
		tm.world.placeHitboxes(poses)
	}
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
