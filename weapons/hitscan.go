package weapons

import (
	"slices"

	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/spread"
)

// hitscan is a ray of the weapon's range, or Pellets of them spread over a
// cone, resolved in the tick it is fired: all pellets against the same
// rewound world, one rewind for the shot. For each ray the first collider it
// touches decides; damage falls off with distance and multiplies on the head.
// A single ray reports one event (hit, blocked or miss); pellets report one
// hit per target (with the pellets and damage summed), or blocked or miss
// when none hit anybody.
type hitscan struct {
	env   *Env
	m     generic.Map7[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot, ecs.HitscanShot]
	get   generic.Map5[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.Shot, ecs.HitscanShot] // what Resolve reads
	shots *generic.Filter1[ecs.HitscanShot]
	hits  []ecs.ShotEvent // a pellet shot's hits, one per target
}

func newHitscan(env *Env) Kind {
	shots := generic.NewFilter1[ecs.HitscanShot]()
	shots.Register(env.World)
	return &hitscan{env: env, m: generic.NewMap7[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot, ecs.HitscanShot](env.World),
		get:   generic.NewMap5[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.Shot, ecs.HitscanShot](env.World),
		shots: shots}
}

func (k *hitscan) Spawn(s *Shot) {
	lc, o, t, l, v, sh := s.Common(k.env.Clock.Tick)
	k.m.NewWith(&lc, &o, &t, &l, &v, &sh, &ecs.HitscanShot{Origin: s.Origin, Dir: s.Dir})
}

func (k *hitscan) Resolve(at ecs.ViewTime, items []lagcomp.Item) {
	for _, it := range items {
		lc, owner, team, shot, hs := k.get.Get(it.Entity)
		def := k.env.Catalog.At(shot.Weapon)
		filter := k.env.FilterFor(owner.Entity, team.ID, lagcomp.Everything)
		lc.Done = true
		key := k.env.SpreadKey(owner.Entity, shot)
		if def.Pellets <= 1 {
			hit, ok, dir := k.ray(hs, def, key, 0, filter)
			k.env.Report(shot, owner.Entity, at, hit, ok, hs.Origin.AddScaled(dir, def.Range), k.damage(def, hit))
			continue
		}
		k.hits = k.hits[:0]
		var blocked lagcomp.Hit
		for p := range def.Pellets {
			hit, ok, _ := k.ray(hs, def, key, p, filter)
			switch {
			case !ok:
			case hit.Kind != lagcomp.KindHitbox:
				if blocked.Entity.IsZero() {
					blocked = hit
				}
			default:
				i := slices.IndexFunc(k.hits, func(h ecs.ShotEvent) bool { return h.Target == hit.Entity })
				if i < 0 {
					k.hits = append(k.hits, k.env.HitEvent(shot, owner.Entity, at, hit.Entity, hit.Point, 0))
					i = len(k.hits) - 1
				}
				h := &k.hits[i]
				h.Pellets++
				h.Head = h.Head || hit.Head
				h.Damage += k.damage(def, hit)
			}
		}
		if len(k.hits) == 0 {
			k.env.Report(shot, owner.Entity, at, blocked, !blocked.Entity.IsZero(), hs.Origin.AddScaled(hs.Dir, def.Range), 0)
			continue
		}
		slices.SortFunc(k.hits, func(a, b ecs.ShotEvent) int { return ecs.CompareEntity(a.Target, b.Target) })
		k.env.Events.Shots = append(k.env.Events.Shots, k.hits...)
	}
}

// ray casts pellet p of a shot (the shot's one ray for p 0 of a single-ray
// weapon) in the collision world as it stands, and returns what it touched
// first and its direction.
func (k *hitscan) ray(hs *ecs.HitscanShot, def *Definition, key uint64, p int, filter lagcomp.Filter) (lagcomp.Hit, bool, geom.Vec3) {
	dir := spread.Dir(hs.Dir, def.Spread, key, p)
	hit, ok := k.env.Collision.Raycast(hs.Origin, dir, def.Range, filter)
	return hit, ok, dir
}

// HitsInPresent casts the shot of hit ev again, every pellet, in the
// collision world as it stands, and reports whether one touched ev's
// target first.
func (k *hitscan) HitsInPresent(ev *ecs.ShotEvent) bool {
	q := k.shots.Query(k.env.World)
	for q.Next() {
		e := q.Entity()
		_, owner, team, shot, hs := k.get.Get(e)
		if !sameShot(owner, shot, ev) {
			continue
		}
		q.Close()
		def := k.env.Catalog.At(shot.Weapon)
		filter := k.env.FilterFor(owner.Entity, team.ID, lagcomp.Everything)
		key := k.env.SpreadKey(owner.Entity, shot)
		for p := range max(def.Pellets, 1) {
			if hit, ok, _ := k.ray(hs, def, key, p, filter); ok && hit.Kind == lagcomp.KindHitbox && hit.Entity == ev.Target {
				return true
			}
		}
		return false
	}
	return false
}

// damage is what a ray that touched hit deals: falloff by distance, the head
// multiplier on the head.
func (k *hitscan) damage(def *Definition, hit lagcomp.Hit) float64 {
	return def.OnHead(def.Damage*def.Falloff.Factor(hit.T), hit.Head)
}
