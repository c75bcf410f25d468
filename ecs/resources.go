package ecs

import (
	arche "github.com/mlange-42/arche/ecs"

	"github.com/rewind-gg/rewind/arsenal"
	"github.com/rewind-gg/rewind/geom"
)

// Clock is a room's simulation time.
type Clock struct {
	Tick     int64 // the tick being simulated (the present)
	TickRate int   // ticks per second
}

// Dt returns the length of one tick in seconds.
func (c Clock) Dt() float64 { return 1 / float64(c.TickRate) }

// FireCommand asks the weapons system to use a weapon this tick. Origin and
// Dir are computed before lag compensation (the seed's "weapon positions are
// computed before lag compensation").
type FireCommand struct {
	Shooter Entity
	Weapon  uint16
	Shot    uint32
	Origin  geom.Vec3
	Dir     geom.Vec3
	// Scripted commands (scenarios) skip the fire-rate, ammo and loadout
	// rules; players' commands never do.
	Scripted bool
	// Late commands come from an input that arrived after its tick
	// (InputQueue.Late): the weapon rules apply at that Tick, and the shot
	// takes the view lag granted to that input, Lag, rather than its
	// shooter's.
	Late bool
	Tick int64
	Lag  ViewLag
}

// Commands are the side effects queued for this tick by inputs (or a scenario
// script), drained by the systems that own them.
type Commands struct {
	Fire []FireCommand
}

// RejectedShot is a fire command the rules refused (too soon, no ammo,
// reloading, a weapon the player does not carry).
type RejectedShot struct {
	Shooter Entity
	Shot    uint32
	Weapon  uint16
	Reason  RejectReason
	Tick    int64
}

// RejectReason says why a shot was refused (package arsenal's rules).
type RejectReason = arsenal.RejectReason

// Reasons a shot is refused.
const (
	RejectCooldown   = arsenal.RejectCooldown
	RejectEmpty      = arsenal.RejectEmpty
	RejectReloading  = arsenal.RejectReloading
	RejectNotCarried = arsenal.RejectNotCarried
)

// ShotResult is what a shot did.
type ShotResult uint8

// Shot results, as in the scenario format.
const (
	ResultHit ShotResult = iota + 1
	ResultBlocked
	ResultMiss
	ResultInvalid
)

// String returns the scenario format's name of the result.
func (r ShotResult) String() string {
	switch r {
	case ResultHit:
		return "hit"
	case ResultBlocked:
		return "blocked"
	case ResultMiss:
		return "miss"
	case ResultInvalid:
		return "invalid"
	}
	return "unknown"
}

// ShotEvent is one decision about a shot. A melee strike that hits several
// targets produces one event each; a projectile produces one event when it
// hits, is blocked or expires.
type ShotEvent struct {
	Shot    uint32
	Weapon  uint16
	Shooter Entity
	// Seq is the shot's index in its shooter's spread sequence (ecs.Shot.Seq)
	// and Fired the tick it was fired at: with the shooter, Seq names the
	// shot whatever label the client gave it (the key replays and tools
	// compare shots by).
	Seq    uint32
	Fired  int64
	Result ShotResult
	Target Entity // the entity hit (ResultHit)
	By     Entity // the blocker (ResultBlocked)
	// Tri is the level's triangle that blocked it, when By is the level's
	// entity: its index in the level's triangles (0 otherwise).
	Tri      int32
	Tick     int64 // the server tick of the decision
	ViewTime ViewTime
	Point    geom.Vec3 // where it happened (the ray point or sphere centre at contact)
	Head     bool      // the contact was on the target's head
	Splash   bool      // the target was hit by a projectile's explosion, not the projectile
	Pellets  uint8     // how many of a shot's pellets hit this target (hitscan)
	Streak   bool      // the hit completed a streak and carries its bonus
	Damage   float64   // the damage the weapon deals with this hit (falloff, head, splash, streak applied)
	Dealt    float64   // the health it took (set by the Damage system: 0 for the dead and the invulnerable)
	// NoDamage says why a hit took no health (set by the Damage system;
	// 0 when it did).
	NoDamage NoDamageReason
	// Disputed marks a hit that dealt damage to a victim that, in its own
	// present at Tick, was out of the shooter's sight or the weapon's
	// reach, and that the shot would not have hit there without rewinding
	// (package fairness; set by the systems after the Damage system).
	Disputed bool
}

// NoDamageReason says why a hit dealt no damage.
type NoDamageReason uint8

// Reasons a hit deals no damage.
const (
	NoDamageInvulnerable NoDamageReason = iota + 1 // the target had just respawned
	NoDamageDead                                   // the target was already dead (possibly from an earlier hit this tick)
	NoDamageZero                                   // the weapon deals no damage at that range, or the target has no health
)

// String returns the reason's name, as events and metrics label it.
func (r NoDamageReason) String() string {
	switch r {
	case NoDamageInvulnerable:
		return "invulnerable"
	case NoDamageDead:
		return "dead"
	case NoDamageZero:
		return "zero"
	}
	return "none"
}

// ClampEvent is a shot fired with less view lag than its shooter claimed.
type ClampEvent struct {
	Shooter Entity
	Shot    uint32
	Weapon  uint16
	Reason  ClampReason
	Claimed float64 // ticks
	Granted float64 // ticks: what the shot was resolved with
	Tick    int64
}

// KillEvent is a player's death. A player the level killed (its feet in a
// kill volume, or out of the level's bounds) is its own killer, with weapon
// NoWeapon.
type KillEvent struct {
	Killer, Victim Entity
	Weapon         uint16
	Tick           int64
}

// NoWeapon is the weapon of a death no weapon dealt: the level's.
const NoWeapon = ^uint16(0)

// RespawnEvent is a player coming back to life, at Pos facing Yaw.
type RespawnEvent struct {
	Player Entity
	Pos    geom.Vec3
	Yaw    float64
	Tick   int64
}

// Events are what happened during the current tick. The schedule clears them
// at the start of every tick; whoever reports them (the scenario runner, the
// server's snapshot stage) reads them after the tick.
type Events struct {
	Shots    []ShotEvent
	Rejected []RejectedShot
	Kills    []KillEvent
	Respawns []RespawnEvent
	Clamps   []ClampEvent
}

// archetypeCapacity is how many entities an archetype of a room's World has
// room for when it forms; it doubles as more come. Arche's default, 128,
// gave every archetype a room formed the components of 128 entities (an
// input queue is 2.3 KB): about 0.6 MB a room once a player had joined,
// kept after it left. A room's players (12 by default) fit in 16.
const archetypeCapacity = 16

// NewWorld creates a room's World with its resources: the Clock at tick 0 with
// the given tick rate, empty Commands and Events.
func NewWorld(tickRate int) *World {
	world := arche.NewWorld(archetypeCapacity)
	arche.AddResource(&world, &Clock{TickRate: tickRate})
	arche.AddResource(&world, &Commands{})
	arche.AddResource(&world, &Events{})
	return &world
}

// Resource returns the World's resource of type T, or nil.
func Resource[T any](w *World) *T { return arche.GetResource[T](w) }
