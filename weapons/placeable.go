package weapons

import (
	"cmp"
	"math"
	"slices"

	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
)

// placeable puts up a shield or a wall: a box standing on the ground
// Distance in front of the placer, turned to the nearest axis of its aim.
// It is never rewound: it blocks lag-compensated shots exactly while it
// stands in the present, whatever time they are resolved at. A shield
// (BlocksEnemies) lets its team's shots through; a wall (BlocksEveryone)
// stops everybody's, its placer's too. Placing more than MaxActive removes
// the placer's oldest.
type placeable struct {
	env   *Env
	query *generic.Filter2[ecs.Shield, ecs.Owner]
	mine  []placed
}

type placed struct {
	e      ecs.Entity
	placed int64
}

func newPlaceable(env *Env) Kind {
	return &placeable{env: env, query: generic.NewFilter2[ecs.Shield, ecs.Owner]()}
}

func (k *placeable) Spawn(s *Shot) {
	def, now := s.Def, k.env.Clock.Tick
	// Make room: keep at most MaxActive−1 of the placer's, the newest.
	k.mine = k.mine[:0]
	q := k.query.Query(k.env.World)
	for q.Next() {
		sh, o := q.Get()
		if o.Entity == s.Shooter && sh.Weapon == s.Weapon {
			k.mine = append(k.mine, placed{q.Entity(), sh.Placed})
		}
	}
	slices.SortFunc(k.mine, func(a, b placed) int {
		return cmp.Or(cmp.Compare(a.placed, b.placed), ecs.CompareEntity(a.e, b.e))
	})
	for i := 0; len(k.mine)-i >= def.MaxActive; i++ {
		k.env.Despawn(k.mine[i].e)
	}
	ahead := geom.V(s.Dir.X, 0, s.Dir.Z).Normalize()
	if ahead == (geom.Vec3{}) {
		ahead = geom.V(0, 0, 1)
	}
	center := s.Feet.AddScaled(ahead, def.Distance)
	half := geom.V(def.Size[0]/2, 0, def.Size[2]/2) // width across the aim, depth along it
	if math.Abs(ahead.X) > math.Abs(ahead.Z) {
		half.X, half.Z = half.Z, half.X
	}
	box := geom.AABB{Min: center.Sub(half), Max: center.Add(half).Add(geom.V(0, def.Size[1], 0))}
	team, blocker := s.Team, s.Shooter
	if def.Blocks == BlocksEveryone {
		team, blocker = 0, ecs.Entity{} // no team, and not transparent to its placer
	}
	expires := int64(0)
	if def.DurationTicks > 0 {
		expires = now + int64(def.DurationTicks)
	}
	// An error means a non-finite box: impossible from a valid shot.
	k.env.NewShield(ecs.Shield{Box: box, Expires: expires, Weapon: s.Weapon, Placed: now}, s.Shooter, blocker, team)
}

// Resolve has nothing to do: placeables are not lag-compensated.
func (k *placeable) Resolve(ecs.ViewTime, []lagcomp.Item) {}
