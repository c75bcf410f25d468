package tune

import (
	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/systems"
)

// OutOfSight reports whether the target of the hit ev was, in its own
// present (sim's newest history frame, at tick), beyond the reach of the
// shot's weapon or hidden from the shot's origin by static geometry or a
// shield on every line to its capsule: the first half of a disputed hit
// (docs/tuning.md); the second is that the replay without rewind (the
// "present" variant) did not hit it. sim is the simulation that decided ev,
// right after the tick.
func OutOfSight(sim *systems.Simulation, tick int64, ev *ecs.ShotEvent) bool {
	var m *matchJudge // the rule reads nothing of a judge
	return m.outOfSight(sim, generic.NewMap1[ecs.Team](sim.World), tick, ev)
}
