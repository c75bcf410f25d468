package weapons

import (
	"fmt"
	"strings"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
)

// Names of the built-in kinds.
const (
	KindHitscan    = "hitscan"
	KindProjectile = "projectile"
	KindMelee      = "melee"
)

// Env is what a kind works with: the room's World and collision world, its
// clock, the events it reports to, the catalogue and the match rules. One Env
// belongs to one room.
type Env struct {
	World        *ecs.World
	Collision    *lagcomp.CollisionWorld
	Clock        *ecs.Clock
	Events       *ecs.Events
	Catalog      *Catalog
	FriendlyFire bool
}

// Shot is what a kind's Spawn receives: one validated use of a weapon.
type Shot struct {
	Def     *Definition
	Weapon  uint16
	Kind    uint8 // the kind's index, to put in ecs.LagCompensated
	ID      uint32
	Shooter ecs.Entity
	Team    uint8
	Lag     float64   // the shooter's view lag, in ticks
	Origin  geom.Vec3 // finite
	Dir     geom.Vec3 // unit length
}

// Common returns the components every lag-compensated entity of the shot
// carries, for a kind's Spawn to create the entity with.
func (s *Shot) Common(now int64) (ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot) {
	return ecs.LagCompensated{Kind: s.Kind}, ecs.Owner{Entity: s.Shooter}, ecs.Team{ID: s.Team},
		ecs.ViewLag{Ticks: s.Lag}, ecs.ViewTime{Tick: now}, ecs.Shot{ID: s.ID, Weapon: s.Weapon, Fired: now}
}

// A Kind is a kind of weapon or ability. Spawn creates the lag-compensated
// entity of a shot; Resolve (from lagcomp.Resolver) resolves this kind's
// entities of one bucket against the collision world rewound to the
// bucket's time, reports the outcomes as events and sets
// ecs.LagCompensated.Done when an entity is finished.
type Kind interface {
	lagcomp.Resolver
	Spawn(s *Shot)
}

// Factory builds a kind for one room.
type Factory func(env *Env) Kind

// Registry is the set of kinds a room can use, by name. A new kind is one
// Register call.
type Registry struct {
	names     []string
	factories []Factory
}

// NewRegistry returns a registry of the built-in kinds.
func NewRegistry() *Registry {
	r := &Registry{}
	for _, k := range []struct {
		name string
		f    Factory
	}{{KindHitscan, newHitscan}, {KindProjectile, newProjectile}, {KindMelee, newMelee}} {
		if err := r.Register(k.name, k.f); err != nil {
			panic(err) // the built-in names are distinct
		}
	}
	return r
}

// Register adds a kind called name.
func (r *Registry) Register(name string, f Factory) error {
	if name == "" || f == nil {
		return fmt.Errorf("weapons: register: a kind needs a name and a factory")
	}
	if _, ok := r.Lookup(name); ok {
		return fmt.Errorf("weapons: register: kind %q already registered", name)
	}
	if len(r.names) == 256 {
		return fmt.Errorf("weapons: register: at most 256 kinds")
	}
	r.names = append(r.names, name)
	r.factories = append(r.factories, f)
	return nil
}

// Lookup returns the index of the kind called name.
func (r *Registry) Lookup(name string) (uint8, bool) {
	for i, n := range r.names {
		if n == name {
			return uint8(i), true
		}
	}
	return 0, false
}

// Names returns the registered kinds' names, comma-separated.
func (r *Registry) Names() string { return strings.Join(r.names, ", ") }

// Build creates every registered kind for one room, indexed as registered.
func (r *Registry) Build(env *Env) []Kind {
	kinds := make([]Kind, len(r.factories))
	for i, f := range r.factories {
		kinds[i] = f(env)
	}
	return kinds
}

// FilterFor returns the query filter for a shot of owner and team under the
// environment's rules: never the owner's own colliders, teammates only with
// friendly fire.
func (env *Env) FilterFor(owner ecs.Entity, team uint8, mask lagcomp.Mask) lagcomp.Filter {
	return lagcomp.Filter{Ignore: owner, Team: team, FriendlyFire: env.FriendlyFire, Mask: mask}
}

// Report appends the event of a query outcome for shot: a hit when a hitbox
// was touched, blocked by static geometry or a shield, a miss when nothing was.
func (env *Env) Report(shot *ecs.Shot, owner ecs.Entity, at ecs.ViewTime, hit lagcomp.Hit, touched bool, miss geom.Vec3) {
	ev := ecs.ShotEvent{Shot: shot.ID, Weapon: shot.Weapon, Shooter: owner, Tick: env.Clock.Tick, ViewTime: at}
	switch {
	case !touched:
		ev.Result, ev.Point = ecs.ResultMiss, miss
	case hit.Kind == lagcomp.KindHitbox:
		ev.Result, ev.Target, ev.Point, ev.Head = ecs.ResultHit, hit.Entity, hit.Point, hit.Head
	default:
		ev.Result, ev.By, ev.Point = ecs.ResultBlocked, hit.Entity, hit.Point
	}
	env.Events.Shots = append(env.Events.Shots, ev)
}
