package weapons

import (
	"math"
	"slices"

	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
)

// melee is a strike (a bite, a tail strike): an overlap shape in front of the
// attacker, lag-compensated like a bullet. It lands WindupTicks after it
// starts, where its attacker has moved by then (an attacker dead by then
// strikes nothing: the strike is reported invalid). Every enemy hitbox in the
// shape is hit (one event each); walls and shields do not stop it.
type melee struct {
	env     *Env
	m       generic.Map7[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot, ecs.MeleeAttack]
	get     generic.Map5[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.Shot, ecs.MeleeAttack] // what Resolve reads
	body    generic.Map2[ecs.Transform, ecs.Life]
	attacks *generic.Filter1[ecs.MeleeAttack]
	hits    []lagcomp.Hit
	keep    []lagcomp.Hit
}

func newMelee(env *Env) Kind {
	attacks := generic.NewFilter1[ecs.MeleeAttack]()
	attacks.Register(env.World)
	return &melee{env: env, attacks: attacks,
		m:    generic.NewMap7[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot, ecs.MeleeAttack](env.World),
		get:  generic.NewMap5[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.Shot, ecs.MeleeAttack](env.World),
		body: generic.NewMap2[ecs.Transform, ecs.Life](env.World)}
}

func (k *melee) Spawn(s *Shot) {
	lc, o, t, l, v, sh := s.Common(k.env.Clock.Tick)
	if s.Def.WindupTicks > 0 {
		lc.From += int64(s.Def.WindupTicks)
		lc.NeedsOwner = true // an attacker gone, dead or respawned by then strikes nothing
		if _, life := k.body.Get(s.Shooter); life != nil {
			lc.OwnerLife = life.Lives
		}
	}
	k.m.NewWith(&lc, &o, &t, &l, &v, &sh, &ecs.MeleeAttack{Origin: s.Origin, Dir: s.Dir, Anchor: s.Feet})
}

func (k *melee) Resolve(at ecs.ViewTime, items []lagcomp.Item) {
	for _, it := range items {
		lc, owner, team, shot, ma := k.get.Get(it.Entity)
		def := k.env.Catalog.At(shot.Weapon)
		lc.Done = true
		point := k.strike(lc, owner, team, def, ma)
		if len(k.hits) == 0 {
			k.env.Miss(shot, owner.Entity, at, point)
			continue
		}
		for _, h := range k.hits {
			ev := k.env.HitEvent(shot, owner.Entity, at, h.Entity, point, def.OnHead(def.Damage, h.Head))
			ev.Head = h.Head
			k.env.Events.Shots = append(k.env.Events.Shots, ev)
		}
	}
}

// strike puts into k.hits the hitboxes a strike's shape overlaps in the
// collision world as it stands, and returns the point its events name.
func (k *melee) strike(lc *ecs.LagCompensated, owner *ecs.Owner, team *ecs.Team, def *Definition, ma *ecs.MeleeAttack) geom.Vec3 {
	origin := ma.Origin
	if lc.NeedsOwner { // the systems checked it is still there, alive, in the same life
		if tf, _ := k.body.Get(owner.Entity); tf != nil {
			origin = origin.Add(tf.Pos.Sub(ma.Anchor))
		}
	}
	filter := k.env.FilterFor(owner.Entity, team.ID, lagcomp.Hitboxes)
	cw := k.env.Collision
	switch def.Shape {
	case ShapeCapsule:
		point := origin.AddScaled(ma.Dir, def.Reach)
		k.hits = cw.OverlapCapsule(geom.Capsule{A: origin, B: point, Radius: def.Radius}, filter, k.hits[:0])
		return point
	case ShapeArc:
		k.hits = k.arc(origin, ma.Dir, def, filter)
		return origin
	default:
		point := origin.AddScaled(ma.Dir, def.Reach)
		k.hits = cw.OverlapSphere(geom.Sphere{Center: point, Radius: def.Radius}, filter, k.hits[:0])
		return point
	}
}

// HitsInPresent strikes the strike of hit ev again in the collision world
// as it stands, and reports whether its shape overlaps ev's target.
func (k *melee) HitsInPresent(ev *ecs.ShotEvent) bool {
	q := k.attacks.Query(k.env.World)
	for q.Next() {
		lc, owner, team, shot, ma := k.get.Get(q.Entity())
		if !sameShot(owner, shot, ev) {
			continue
		}
		q.Close()
		k.strike(lc, owner, team, k.env.Catalog.At(shot.Weapon), ma)
		return slices.ContainsFunc(k.hits, func(h lagcomp.Hit) bool { return h.Entity == ev.Target })
	}
	return false
}

// arc returns the hitboxes within reach of origin whose nearest point lies
// within the arc's half-angle of the aim, measured horizontally.
func (k *melee) arc(origin, dir geom.Vec3, def *Definition, filter lagcomp.Filter) []lagcomp.Hit {
	cw := k.env.Collision
	k.keep = cw.OverlapSphere(geom.Sphere{Center: origin, Radius: def.Reach}, filter, k.keep[:0])
	aim := math.Atan2(dir.X, dir.Z)
	out := k.hits[:0]
	for _, h := range k.keep {
		c, ok := cw.Hitbox(h.Entity)
		if !ok {
			continue
		}
		near := geom.ClosestOnSegment(origin, c.Capsule.A, c.Capsule.B).Sub(origin)
		if math.Hypot(near.X, near.Z) <= c.Capsule.Radius { // standing in the attacker's face
			out = append(out, h)
			continue
		}
		off := math.Abs(math.Remainder(math.Atan2(near.X, near.Z)-aim, 2*math.Pi))
		if off <= def.Angle {
			out = append(out, h)
		}
	}
	return out
}
