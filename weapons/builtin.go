package weapons

import (
	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
)

// hitscan is a ray of the weapon's range, resolved in the tick it is fired:
// the first collider it touches decides.
type hitscan struct {
	env *Env
	m   generic.Map7[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot, ecs.HitscanShot]
}

func newHitscan(env *Env) Kind {
	return &hitscan{env: env, m: generic.NewMap7[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot, ecs.HitscanShot](env.World)}
}

func (k *hitscan) Spawn(s *Shot) {
	lc, o, t, l, v, sh := s.Common(k.env.Clock.Tick)
	k.m.NewWith(&lc, &o, &t, &l, &v, &sh, &ecs.HitscanShot{Origin: s.Origin, Dir: s.Dir, Range: s.Def.Range})
}

func (k *hitscan) Resolve(at ecs.ViewTime, items []lagcomp.Item) {
	for _, it := range items {
		lc, owner, team, _, _, shot, hs := k.m.Get(it.Entity)
		hit, ok := k.env.Collision.Raycast(hs.Origin, hs.Dir, hs.Range, k.env.FilterFor(owner.Entity, team.ID, lagcomp.Everything))
		k.env.Report(shot, owner.Entity, at, hit, ok, hs.Origin.AddScaled(hs.Dir, hs.Range))
		lc.Done = true
	}
}

// projectile is a sphere that flies in its shooter's time: every tick it takes
// one step against the world rewound to its shooter's view time (Dino Squad's
// option 1), so the time it hits at is the time its shooter saw it hit.
type projectile struct {
	env *Env
	m   generic.Map9[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot, ecs.Transform, ecs.Velocity, ecs.Projectile]
}

func newProjectile(env *Env) Kind {
	return &projectile{env: env, m: generic.NewMap9[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot, ecs.Transform, ecs.Velocity, ecs.Projectile](env.World)}
}

func (k *projectile) Spawn(s *Shot) {
	lc, o, t, l, v, sh := s.Common(k.env.Clock.Tick)
	k.m.NewWith(&lc, &o, &t, &l, &v, &sh,
		&ecs.Transform{Pos: s.Origin},
		&ecs.Velocity{V: s.Dir.Scale(s.Def.Speed)},
		&ecs.Projectile{Origin: s.Origin, Radius: s.Def.Radius, Lifetime: s.Def.LifetimeTicks})
}

func (k *projectile) Resolve(at ecs.ViewTime, items []lagcomp.Item) {
	dt := k.env.Clock.Dt()
	for _, it := range items {
		lc, owner, team, _, _, shot, tf, vel, p := k.m.Get(it.Entity)
		speed := vel.V.Len()
		var dir geom.Vec3
		if speed > 0 {
			dir = vel.V.Scale(1 / speed)
		}
		hit, ok := k.env.Collision.Sweep(tf.Pos, dir, speed*dt, p.Radius, k.env.FilterFor(owner.Entity, team.ID, lagcomp.Everything))
		p.Steps++
		if ok {
			tf.Pos = hit.Point
			k.env.Report(shot, owner.Entity, at, hit, true, tf.Pos)
			lc.Done = true
			continue
		}
		tf.Pos = tf.Pos.AddScaled(dir, speed*dt)
		if p.Steps >= p.Lifetime {
			k.env.Report(shot, owner.Entity, at, hit, false, tf.Pos)
			lc.Done = true
		}
	}
}

// melee is an overlap sphere reach metres in front of the attacker (a bite, a
// tail strike): every enemy hitbox it intersects is hit. Walls and shields do
// not block it.
type melee struct {
	env  *Env
	m    generic.Map7[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot, ecs.MeleeAttack]
	hits []lagcomp.Hit
}

func newMelee(env *Env) Kind {
	return &melee{env: env, m: generic.NewMap7[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot, ecs.MeleeAttack](env.World)}
}

func (k *melee) Spawn(s *Shot) {
	lc, o, t, l, v, sh := s.Common(k.env.Clock.Tick)
	k.m.NewWith(&lc, &o, &t, &l, &v, &sh, &ecs.MeleeAttack{Center: s.Origin.AddScaled(s.Dir, s.Def.Reach), Radius: s.Def.Radius})
}

func (k *melee) Resolve(at ecs.ViewTime, items []lagcomp.Item) {
	for _, it := range items {
		lc, owner, team, _, _, shot, ma := k.m.Get(it.Entity)
		k.hits = k.env.Collision.OverlapSphere(geom.Sphere{Center: ma.Center, Radius: ma.Radius},
			k.env.FilterFor(owner.Entity, team.ID, lagcomp.Hitboxes), k.hits[:0])
		if len(k.hits) == 0 {
			k.env.Report(shot, owner.Entity, at, lagcomp.Hit{}, false, ma.Center)
		}
		for _, h := range k.hits {
			k.env.Report(shot, owner.Entity, at, h, true, ma.Center)
		}
		lc.Done = true
	}
}
