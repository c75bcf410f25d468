package weapons

import (
	"fmt"
	"math"
	"strings"

	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/spread"
)

// Names of the built-in kinds.
const (
	KindHitscan    = "hitscan"
	KindProjectile = "projectile"
	KindMelee      = "melee"
	KindPlaceable  = "placeable"
)

// A Kind is a kind of weapon or ability: Go code that the definitions of that
// kind share.
//
// Spawn receives each validated use of a weapon of the kind and creates what
// it needs: usually a lag-compensated entity (Env.NewShot), which the
// room's lag compensation then groups with the others of its view time.
// Resolve (from lagcomp.Resolver) receives, bucket by bucket, this kind's
// entities whose view time is at, while the collision world (Env.Collision)
// is rewound to at: it queries that world, reports hits (Env.Hit, Env.Report)
// and sets ecs.LagCompensated.Done on the entities that are finished.
type Kind interface {
	lagcomp.Resolver
	Spawn(s *Shot)
}

// A PresentJudge is a kind that can resolve one of the tick's finished
// shots again without lag compensation: against the collision world as it
// stands after the tick's rewinds (the present), to say whether that shot
// would have hit ev's target there. It is the second half of a disputed hit
// (package fairness); a kind that cannot repeat a shot in the present (a
// projectile's flight spans ticks) does not implement it. It must be called
// before the systems' cleanup removes the tick's finished shots; a shot no
// longer there is reported as no hit.
type PresentJudge interface {
	HitsInPresent(ev *ecs.ShotEvent) bool
}

// sameShot reports whether a lag-compensated entity's owner and shot are
// those of the event ev.
func sameShot(owner *ecs.Owner, shot *ecs.Shot, ev *ecs.ShotEvent) bool {
	return owner.Entity == ev.Shooter && shot.Seq == ev.Seq && shot.Fired == ev.Fired && shot.Weapon == ev.Weapon
}

// Factory builds a kind for one room.
type Factory func(env *Env) Kind

// Param declares a custom kind's number: definitions of the kind set it in
// their params table, and it is validated as declared.
type Param struct {
	Name     string
	Default  float64
	Min, Max float64
	Required bool
	Integer  bool // a count: only whole numbers
}

// check returns why v is not a value of the param, or "".
func (p *Param) check(v float64) string {
	switch {
	case v < p.Min || v > p.Max:
		return fmt.Sprintf("%v is outside %v..%v", v, p.Min, p.Max)
	case p.Integer && v != math.Trunc(v):
		return fmt.Sprintf("expected a whole number, got %v", v)
	}
	return ""
}

type kindSpec struct {
	name    string
	factory Factory
	params  []Param
}

// Registry is the set of kinds a room can use, by name. Adding a kind is one
// Register call.
type Registry struct {
	kinds []kindSpec
}

// NewRegistry returns a registry of the built-in kinds.
func NewRegistry() *Registry {
	r := &Registry{}
	for _, k := range []struct {
		name string
		f    Factory
	}{{KindHitscan, newHitscan}, {KindProjectile, newProjectile}, {KindMelee, newMelee}, {KindPlaceable, newPlaceable}} {
		if err := r.Register(k.name, k.f); err != nil {
			panic(err) // the built-in names are distinct
		}
	}
	return r
}

// Register adds a kind called name, built for each room by f, whose
// definitions may set the declared params.
func (r *Registry) Register(name string, f Factory, params ...Param) error {
	if name == "" || f == nil {
		return fmt.Errorf("weapons: register: a kind needs a name and a factory")
	}
	if _, ok := r.Lookup(name); ok {
		return fmt.Errorf("weapons: register %s: already registered", name)
	}
	if len(r.kinds) == math.MaxUint8+1 {
		return fmt.Errorf("weapons: register %s: at most 256 kinds", name)
	}
	if _, builtin := kindFields[name]; builtin && len(r.kinds) >= 4 {
		return fmt.Errorf("weapons: register %s: a built-in kind's name", name)
	}
	seen := map[string]bool{}
	for _, p := range params {
		if p.Name == "" || seen[p.Name] || !(p.Min <= p.Default && p.Default <= p.Max) {
			return fmt.Errorf("weapons: register %s: param %q needs a unique name and min ≤ default ≤ max", name, p.Name)
		}
		seen[p.Name] = true
	}
	r.kinds = append(r.kinds, kindSpec{name: name, factory: f, params: params})
	return nil
}

// Lookup returns the index of the kind called name.
func (r *Registry) Lookup(name string) (uint8, bool) {
	for i, k := range r.kinds {
		if k.name == name {
			return uint8(i), true
		}
	}
	return 0, false
}

func (r *Registry) spec(name string) (*kindSpec, bool) {
	i, ok := r.Lookup(name)
	if !ok {
		return nil, false
	}
	return &r.kinds[i], true
}

// checkParams validates a definition built in code against its kind's
// declared params (files are checked while they are decoded).
func (r *Registry) checkParams(d *Definition) error {
	spec, _ := r.spec(d.Kind)
	for name := range d.Params {
		found := false
		for _, p := range spec.params {
			found = found || p.Name == name
		}
		if !found {
			return &FieldError{Field: "params." + name, Msg: fmt.Sprintf("kind %s has no such param", d.Kind)}
		}
	}
	for _, p := range spec.params {
		v, ok := d.Params[p.Name]
		if !ok {
			if p.Required {
				return &FieldError{Field: "params." + p.Name, Msg: "missing field"}
			}
			if d.Params == nil {
				d.Params = map[string]float64{}
			}
			d.Params[p.Name] = p.Default
			continue
		}
		if msg := p.check(v); msg != "" {
			return &FieldError{Field: "params." + p.Name, Msg: msg}
		}
	}
	return nil
}

// Names returns the registered kinds' names, comma-separated.
func (r *Registry) Names() string {
	names := make([]string, len(r.kinds))
	for i, k := range r.kinds {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

// Build creates every registered kind for one room, indexed as registered.
func (r *Registry) Build(env *Env) []Kind {
	kinds := make([]Kind, len(r.kinds))
	for i, k := range r.kinds {
		kinds[i] = k.factory(env)
	}
	return kinds
}

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
	// SpreadSeed keys the room's spread sequences (package spread).
	SpreadSeed uint64

	// spreadAs maps entities whose shots spread as another entity's (by
	// wire id): see SpreadAs. Nil in a room.
	spreadAs map[ecs.Entity]uint32

	common    generic.Map6[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot]
	commonIDs []ecs.ID
	ids       []ecs.ID // scratch for NewShot
	shields   generic.Map3[ecs.Shield, ecs.Owner, ecs.Team]
}

// NewEnv returns the environment of a room.
func NewEnv(w *ecs.World, cw *lagcomp.CollisionWorld, cat *Catalog, friendlyFire bool) *Env {
	return &Env{World: w, Collision: cw, Clock: ecs.Resource[ecs.Clock](w), Events: ecs.Resource[ecs.Events](w),
		Catalog: cat, FriendlyFire: friendlyFire,
		common:  generic.NewMap6[ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot](w),
		shields: generic.NewMap3[ecs.Shield, ecs.Owner, ecs.Team](w),
		commonIDs: []ecs.ID{ecs.ComponentID[ecs.LagCompensated](w), ecs.ComponentID[ecs.Owner](w), ecs.ComponentID[ecs.Team](w),
			ecs.ComponentID[ecs.ViewLag](w), ecs.ComponentID[ecs.ViewTime](w), ecs.ComponentID[ecs.Shot](w)}}
}

// NewShield creates a shield entity of owner for team, with its collider:
// transparent to blocker's shots (zero: to nobody's). The collider needs a
// finite box; on an error nothing is created.
func (env *Env) NewShield(sh ecs.Shield, owner, blocker ecs.Entity, team uint8) (ecs.Entity, error) {
	e := env.shields.NewWith(&sh, &ecs.Owner{Entity: owner}, &ecs.Team{ID: team})
	if err := env.Collision.AddShield(e, blocker, team, sh.Box); err != nil {
		env.World.RemoveEntity(e)
		return ecs.Entity{}, err
	}
	return e, nil
}

// Despawn removes an entity, with its static or shield collider if it has
// one; an entity already gone is ignored.
func (env *Env) Despawn(e ecs.Entity) {
	if !env.World.Alive(e) {
		return
	}
	env.Collision.RemoveBlocker(e)
	env.World.RemoveEntity(e)
}

// Shot is what a kind's Spawn receives: one validated use of a weapon.
type Shot struct {
	Def     *Definition
	Weapon  uint16
	Kind    uint8  // the kind's index, for ecs.LagCompensated
	ID      uint32 // the shot's label: the client's shot counter, or the scenario's index
	Seq     uint32 // the shot's index in its shooter's spread sequence
	Shooter ecs.Entity
	Team    uint8
	Lag     float64 // the view lag the shot is granted, in ticks
	// Back and Span name the snapshots its shooter drew the world between
	// (ecs.ViewLag), when the view lag claimed was granted.
	Back, Span uint8
	Origin     geom.Vec3 // finite
	Dir        geom.Vec3 // unit length
	Feet       geom.Vec3 // the shooter's position (where a placeable is measured from)
}

// Common returns the components every lag-compensated entity of the shot
// carries, for a kind's Spawn to create the entity with.
func (s *Shot) Common(now int64) (ecs.LagCompensated, ecs.Owner, ecs.Team, ecs.ViewLag, ecs.ViewTime, ecs.Shot) {
	return ecs.LagCompensated{Kind: s.Kind, From: now, CatchUp: s.Def.Mode == ModeCatchUp && s.Def.Kind == KindProjectile},
		ecs.Owner{Entity: s.Shooter}, ecs.Team{ID: s.Team}, ecs.ViewLag{Ticks: s.Lag, Back: s.Back, Span: s.Span}, ecs.ViewTime{Tick: now},
		ecs.Shot{ID: s.ID, Weapon: s.Weapon, Fired: now, Seq: s.Seq}
}

// NewShot creates the lag-compensated entity of a shot with the common
// components set and the kind's own components (by id, from
// ecs.ComponentID) zeroed, for the kind to fill in. It is how a custom kind
// spawns; the built-in kinds do the same with typed maps.
func (env *Env) NewShot(s *Shot, extra ...ecs.ID) ecs.Entity {
	env.ids = append(env.ids[:0], env.commonIDs...)
	env.ids = append(env.ids, extra...)
	e := env.World.NewEntity(env.ids...)
	lc, o, t, l, v, sh := env.common.Get(e)
	*lc, *o, *t, *l, *v, *sh = s.Common(env.Clock.Tick)
	return e
}

// ShotOf returns the common components of a lag-compensated entity.
func (env *Env) ShotOf(e ecs.Entity) (*ecs.LagCompensated, *ecs.Owner, *ecs.Team, *ecs.Shot) {
	lc, o, t, _, _, sh := env.common.Get(e)
	return lc, o, t, sh
}

// SpreadKey returns the key of a shot's pellets (package spread): the
// room's seed, the shooter's wire id and the shot's Seq.
func (env *Env) SpreadKey(shooter ecs.Entity, shot *ecs.Shot) uint64 {
	id, ok := env.spreadAs[shooter]
	if !ok {
		id = ecs.WireID(shooter)
	}
	return spread.Key(env.SpreadSeed, id, shot.Seq)
}

// SpreadAs makes shooter's pellets spread as those of the entity whose wire
// id is id. A replay that judges a recorded match under other settings
// allocates its own entities, and a player who joined late may get another
// one than it had in the recording: its shots must still spread as they
// did.
func (env *Env) SpreadAs(shooter ecs.Entity, id uint32) {
	if env.spreadAs == nil {
		env.spreadAs = map[ecs.Entity]uint32{}
	}
	env.spreadAs[shooter] = id
}

// FilterFor returns the query filter for a shot of owner and team under the
// environment's rules: never the owner's own colliders, teammates only with
// friendly fire.
func (env *Env) FilterFor(owner ecs.Entity, team uint8, mask lagcomp.Mask) lagcomp.Filter {
	return lagcomp.Filter{Ignore: owner, Team: team, FriendlyFire: env.FriendlyFire, Mask: mask}
}

// Report appends the event of a query outcome for shot: a hit when a hitbox
// was touched (dealing damage), blocked by the level (naming its triangle)
// or a shield, a miss when nothing was.
func (env *Env) Report(shot *ecs.Shot, owner ecs.Entity, at ecs.ViewTime, hit lagcomp.Hit, touched bool, miss geom.Vec3, damage float64) {
	ev := ecs.ShotEvent{Shot: shot.ID, Weapon: shot.Weapon, Shooter: owner, Seq: shot.Seq, Fired: shot.Fired, Tick: env.Clock.Tick, ViewTime: at}
	switch {
	case !touched:
		ev.Result, ev.Point = ecs.ResultMiss, miss
	case hit.Kind == lagcomp.KindHitbox:
		ev.Result, ev.Target, ev.Point, ev.Head, ev.Damage = ecs.ResultHit, hit.Entity, hit.Point, hit.Head, damage
	default:
		ev.Result, ev.By, ev.Point = ecs.ResultBlocked, hit.Entity, hit.Point
		if hit.Kind == lagcomp.KindStatic {
			ev.Tri = int32(hit.Tri)
		}
	}
	env.Events.Shots = append(env.Events.Shots, ev)
}

// Hit reports that shot hit target for damage.
func (env *Env) Hit(shot *ecs.Shot, owner ecs.Entity, at ecs.ViewTime, target ecs.Entity, point geom.Vec3, damage float64) {
	env.Events.Shots = append(env.Events.Shots, env.HitEvent(shot, owner, at, target, point, damage))
}

// HitEvent is the event of shot hitting target for damage, for a kind to
// complete (Head, Splash, Pellets) before it appends it to Events.Shots.
func (env *Env) HitEvent(shot *ecs.Shot, owner ecs.Entity, at ecs.ViewTime, target ecs.Entity, point geom.Vec3, damage float64) ecs.ShotEvent {
	return ecs.ShotEvent{Shot: shot.ID, Weapon: shot.Weapon, Shooter: owner, Seq: shot.Seq, Fired: shot.Fired,
		Tick: env.Clock.Tick, ViewTime: at, Result: ecs.ResultHit, Target: target, Point: point, Damage: damage}
}

// Miss reports that shot hit nothing.
func (env *Env) Miss(shot *ecs.Shot, owner ecs.Entity, at ecs.ViewTime, point geom.Vec3) {
	env.Events.Shots = append(env.Events.Shots, ecs.ShotEvent{Shot: shot.ID, Weapon: shot.Weapon, Shooter: owner,
		Seq: shot.Seq, Fired: shot.Fired, Tick: env.Clock.Tick, ViewTime: at, Result: ecs.ResultMiss, Point: point})
}
