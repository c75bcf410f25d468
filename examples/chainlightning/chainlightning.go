// Package chainlightning is the worked example of docs/weapons.md: a new
// kind of weapon, added to Rewind without touching it.
//
// A chain-lightning bolt strikes the first enemy along its ray, then jumps to
// the nearest enemy within jump_range of the last one it struck, up to jumps
// times, each jump dealing decay times the damage of the one before. It is
// lag-compensated like every kind: the ray and every jump are resolved in the
// world rewound to what the shooter saw, in one rewind.
package chainlightning

import (
	"math"

	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/weapons"
)

// Kind is the kind's name in weapons files.
const Kind = "chain_lightning"

// Register adds the kind to reg, with its three params.
func Register(reg *weapons.Registry) error {
	return reg.Register(Kind, New,
		weapons.Param{Name: "jumps", Default: 2, Min: 0, Max: 8, Integer: true},
		weapons.Param{Name: "jump_range", Default: 6, Min: 0.5, Max: 30},
		weapons.Param{Name: "decay", Default: 0.7, Min: 0, Max: 1},
	)
}

// bolt is the data of one bolt on its entity: where it was fired from and
// where to (computed before lag compensation, like every weapon's).
type bolt struct {
	Origin, Dir geom.Vec3
}

// chain is the kind for one room. It holds no per-entity state: only the
// room's environment, typed access to its component, and scratch space.
type chain struct {
	env    *weapons.Env
	bolts  generic.Map[bolt]
	near   []lagcomp.Hit
	struck []ecs.Entity
}

// New builds the kind for a room (the weapons.Factory).
func New(env *weapons.Env) weapons.Kind {
	return &chain{env: env, bolts: generic.NewMap[bolt](env.World)}
}

// Spawn creates the bolt's lag-compensated entity: the common components
// (owner, team, view lag and time, shot) and the bolt.
func (k *chain) Spawn(s *weapons.Shot) {
	e := k.env.NewShot(s, ecs.ComponentID[bolt](k.env.World))
	*k.bolts.Get(e) = bolt{Origin: s.Origin, Dir: s.Dir}
}

// Resolve runs in the collision world rewound to at, the view time every
// bolt of items was fired at.
func (k *chain) Resolve(at ecs.ViewTime, items []lagcomp.Item) {
	cw := k.env.Collision
	for _, it := range items {
		lc, owner, team, shot := k.env.ShotOf(it.Entity)
		lc.Done = true // one tick is all a bolt takes
		def := k.env.Catalog.At(shot.Weapon)
		b := k.bolts.Get(it.Entity)
		hit, ok := cw.Raycast(b.Origin, b.Dir, def.Range, k.env.FilterFor(owner.Entity, team.ID, lagcomp.Everything))
		if !ok || hit.Kind != lagcomp.KindHitbox {
			k.env.Report(shot, owner.Entity, at, hit, ok, b.Origin.AddScaled(b.Dir, def.Range), 0)
			continue
		}
		damage := def.Damage
		k.env.Hit(shot, owner.Entity, at, hit.Entity, hit.Point, damage)
		k.struck = append(k.struck[:0], hit.Entity)
		from := hit.Entity
		for range int(def.Params["jumps"]) {
			next, point := k.nextTarget(from, def.Params["jump_range"], owner.Entity, team.ID)
			if next.IsZero() {
				break
			}
			damage *= def.Params["decay"]
			k.env.Hit(shot, owner.Entity, at, next, point, damage)
			k.struck = append(k.struck, next)
			from = next
		}
	}
}

// nextTarget returns the nearest enemy not struck yet within reach of from's
// chest, that the arc can see (walls and enemy shields stop it).
func (k *chain) nextTarget(from ecs.Entity, reach float64, owner ecs.Entity, team uint8) (ecs.Entity, geom.Vec3) {
	cw := k.env.Collision
	c, ok := cw.Hitbox(from)
	if !ok {
		return ecs.Entity{}, geom.Vec3{}
	}
	chest := c.Capsule.A.Lerp(c.Capsule.B, 0.5)
	k.near = cw.OverlapSphere(geom.Sphere{Center: chest, Radius: reach}, k.env.FilterFor(owner, team, lagcomp.Hitboxes), k.near[:0])
	best, bestDist, bestPoint := ecs.Entity{}, math.Inf(1), geom.Vec3{}
	for _, h := range k.near {
		if k.wasStruck(h.Entity) {
			continue
		}
		t, ok := cw.Hitbox(h.Entity)
		if !ok {
			continue
		}
		to := t.Capsule.A.Lerp(t.Capsule.B, 0.5)
		d := to.Sub(chest).Len()
		if d >= bestDist || d == 0 {
			continue
		}
		if _, blocked := cw.Raycast(chest, to.Sub(chest).Scale(1/d), d, lagcomp.Filter{Ignore: owner, Team: team, Mask: lagcomp.Blockers}); blocked {
			continue
		}
		best, bestDist, bestPoint = h.Entity, d, to
	}
	return best, bestPoint
}

func (k *chain) wasStruck(e ecs.Entity) bool {
	for _, s := range k.struck {
		if s == e {
			return true
		}
	}
	return false
}
