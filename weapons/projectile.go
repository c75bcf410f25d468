package weapons

import (
	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
)

// projectile is a sphere that flies in its shooter's time: every tick it
// takes one step against the world rewound to its shooter's view time (Dino
// Squad's option 1), so the time it hits at is the time its shooter saw it
// hit. In ModeCatchUp (option 2) its first tick steps it through its
// shooter's view time up to the present (the systems give it one item per
// step, in time order), and it flies in the present after that.
//
// A step first applies gravity to the velocity, then sweeps the sphere along
// velocity·dt. The first contact decides as for hitscan and removes it; its
// splash, if any, hits every other enemy in range and in sight of the contact
// point, in the same rewound world.
type projectile struct {
	env  *Env
	m    generic.Map9[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot, ecs.Transform, ecs.Velocity, ecs.Projectile]
	get  generic.Map7[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.Shot, ecs.Transform, ecs.Velocity, ecs.Projectile] // what Resolve reads
	hits []lagcomp.Hit
}

func newProjectile(env *Env) Kind {
	return &projectile{env: env, m: generic.NewMap9[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot, ecs.Transform, ecs.Velocity, ecs.Projectile](env.World),
		get: generic.NewMap7[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.Shot, ecs.Transform, ecs.Velocity, ecs.Projectile](env.World)}
}

func (k *projectile) Spawn(s *Shot) {
	lc, o, t, l, v, sh := s.Common(k.env.Clock.Tick)
	k.m.NewWith(&lc, &o, &t, &l, &v, &sh,
		&ecs.Transform{Pos: s.Origin},
		&ecs.Velocity{V: s.Dir.Scale(s.Def.Speed)},
		&ecs.Projectile{Origin: s.Origin, Launch: s.Dir.Scale(s.Def.Speed), Radius: s.Def.Radius, Lifetime: s.Def.LifetimeTicks})
}

func (k *projectile) Resolve(at ecs.ViewTime, items []lagcomp.Item) {
	dt := k.env.Clock.Dt()
	for _, it := range items {
		lc, owner, team, shot, tf, vel, p := k.get.Get(it.Entity)
		if lc.Done { // a catch-up projectile that hit in an earlier step of this tick
			continue
		}
		def := k.env.Catalog.At(shot.Weapon)
		vel.V.Y -= def.Gravity * dt
		speed := vel.V.Len()
		var dir geom.Vec3
		if speed > 0 {
			dir = vel.V.Scale(1 / speed)
		}
		hit, ok := k.env.Collision.Sweep(tf.Pos, dir, speed*dt, p.Radius, k.env.FilterFor(owner.Entity, team.ID, lagcomp.Everything))
		p.Steps++
		if ok {
			tf.Pos = hit.Point
			k.env.Report(shot, owner.Entity, at, hit, true, tf.Pos, def.OnHead(def.Damage, hit.Head))
			if def.Splash.Radius > 0 {
				direct := ecs.Entity{}
				if hit.Kind == lagcomp.KindHitbox {
					direct = hit.Entity
				}
				k.splash(def, shot, owner.Entity, team.ID, at, tf.Pos, dir, direct)
			}
			lc.Done = true
			continue
		}
		tf.Pos = tf.Pos.AddScaled(dir, speed*dt)
		if p.Steps >= p.Lifetime {
			k.env.Report(shot, owner.Entity, at, hit, false, tf.Pos, 0)
			lc.Done = true
		}
	}
}

// splash hits every enemy hitbox within the splash radius of center that the
// explosion can see, except the one hit directly: damage scaled by the
// distance to the hitbox's surface. The explosion sees a hitbox when the
// line from it to the hitbox's centre (the middle of its axis) meets no
// blocker: the level's geometry that blocks shots, at any height, or an
// enemy shield. Source traces to a body target too (CGameRules::
// RadiusDamage, Valve's Source SDK), a random point of a player's upper
// body; this one is fixed, for replays to reach the match's verdicts. A
// hitbox the explosion is inside is always hit.
func (k *projectile) splash(def *Definition, shot *ecs.Shot, owner ecs.Entity, team uint8, at ecs.ViewTime, center, dir geom.Vec3, direct ecs.Entity) {
	cw := k.env.Collision
	// Lines of sight start a millimetre back along the flight: a point-sized
	// projectile stops on the surface it struck, which would block them all.
	eye := center.AddScaled(dir, -1e-3)
	k.hits = cw.OverlapSphere(geom.Sphere{Center: center, Radius: def.Splash.Radius}, k.env.FilterFor(owner, team, lagcomp.Hitboxes), k.hits[:0])
	for _, h := range k.hits {
		if h.Entity == direct {
			continue
		}
		c, ok := cw.Hitbox(h.Entity)
		if !ok {
			continue
		}
		near := geom.ClosestOnSegment(center, c.Capsule.A, c.Capsule.B)
		d := near.Sub(center).Len()
		if d > c.Capsule.Radius && !k.sees(eye, c.Capsule.A.Lerp(c.Capsule.B, 0.5), owner, team) {
			continue // behind cover
		}
		ev := k.env.HitEvent(shot, owner, at, h.Entity, center, def.Splash.Damage*def.Splash.Factor(max(0, d-c.Capsule.Radius)))
		ev.Splash = true
		k.env.Events.Shots = append(k.env.Events.Shots, ev)
	}
}

// sees reports whether the line from eye to p meets no blocker the
// shooter's shots stop at.
func (k *projectile) sees(eye, p geom.Vec3, owner ecs.Entity, team uint8) bool {
	to := p.Sub(eye)
	l := to.Len()
	if !(l > 0) {
		return true
	}
	_, blocked := k.env.Collision.Raycast(eye, to.Scale(1/l), l, lagcomp.Filter{Mask: lagcomp.Blockers, Team: team, Ignore: owner})
	return !blocked
}
