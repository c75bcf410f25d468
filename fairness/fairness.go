package fairness

import (
	"math"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/weapons"
)

// Shooter is a hit's shooter as the present sees it.
type Shooter struct {
	Entity ecs.Entity
	Team   uint8 // its team: shields of its own team do not block its sight (0: none known)
	// Eye is where its shots start in the present (its pose at the server
	// tick); HasEye is false when it has no pose then (it left, or died
	// before the tick): the contact point stands in.
	Eye    geom.Vec3
	HasEye bool
}

// OutOfSight reports whether a hit's target was, in its own present (the
// collision world cw as it holds the server tick's poses), beyond the reach
// of the shot's weapon def from the shot's origin, or hidden from it by the
// level's geometry that blocks shots or a shield the shooter's team cannot
// shoot through, on every line to its capsule. The origin is the shooter's
// eye in the present for hitscan and melee (and custom kinds), the point of
// contact for projectiles (the explosion's, for splash). A target without a
// hitbox in the present is never out of sight: a hit on it dealt nothing.
//
// The lines run to the nearest point of the capsule's axis, its ends and
// middle, each up to the capsule's surface; and to the contact point itself
// when it lies on the present capsule (a shot that grazed it). OutOfSight
// allocates nothing.
func OutOfSight(cw *lagcomp.CollisionWorld, def *weapons.Definition, shooter Shooter, ev *ecs.ShotEvent) bool {
	c, ok := cw.Hitbox(ev.Target)
	if !ok {
		return false
	}
	origin, reach := ev.Point, math.Inf(1)
	switch def.Kind {
	case weapons.KindProjectile:
		reach = def.Radius + def.Splash.Radius
	case weapons.KindHitscan, weapons.KindMelee:
		reach = def.Range
		if def.Kind == weapons.KindMelee {
			reach = def.Reach + def.Radius
		}
		fallthrough
	default:
		if shooter.HasEye {
			origin = shooter.Eye
		}
	}
	cp := c.Capsule
	near := geom.ClosestOnSegment(origin, cp.A, cp.B)
	if near.Sub(origin).Len()-cp.Radius > reach+1e-9 {
		return true
	}
	f := lagcomp.Filter{Ignore: shooter.Entity, Team: shooter.Team, Mask: lagcomp.Blockers}
	points := [...]geom.Vec3{near, cp.A, cp.B, cp.A.Lerp(cp.B, 0.5), ev.Point}
	for i, p := range points {
		surface := cp.Radius
		if i == len(points)-1 {
			if p.Sub(geom.ClosestOnSegment(p, cp.A, cp.B)).Len() > cp.Radius+1e-6 {
				continue
			}
			surface = 1e-6
		}
		if visible(cw, origin, p, surface, f) {
			return false
		}
	}
	return true
}

// visible reports whether the line from o toward p meets no blocker the
// filter accepts before it comes within surface metres of p. The line
// starts a millimetre out from o: a contact point lies on the surface it
// struck.
func visible(cw *lagcomp.CollisionWorld, o, p geom.Vec3, surface float64, f lagcomp.Filter) bool {
	const start = 1e-3
	d := p.Sub(o)
	l := d.Len()
	if l-surface <= start {
		return true
	}
	dir := d.Scale(1 / l)
	_, blocked := cw.Raycast(o.AddScaled(dir, start), dir, l-surface-start, f)
	return !blocked
}
