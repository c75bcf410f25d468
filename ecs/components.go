package ecs

import (
	"cmp"

	arche "github.com/mlange-42/arche/ecs"

	"github.com/rewind-gg/rewind/arsenal"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/input"
)

// Entity identifies an entity of a room's World (index and generation).
type Entity = arche.Entity

// CompareEntity orders entities by id, then generation: an order that does
// not depend on where arche stores them, for deterministic iteration.
func CompareEntity(a, b Entity) int {
	return cmp.Or(cmp.Compare(a.ID(), b.ID()), cmp.Compare(a.Generation(), b.Generation()))
}

// WireID is an entity's id outside the World (on the wire, in spread
// seeds): its index and generation packed, unique within a room while the
// entity exists and for 4096 reuses of its index after; never 0.
func WireID(e Entity) uint32 { return e.ID()&(1<<20-1) | e.Generation()<<20 }

// World is a room's arche World.
type World = arche.World

// ID is a component type's id in a World.
type ID = arche.ID

// ComponentID returns the id of component type T in w, registering it.
func ComponentID[T any](w *World) ID { return arche.ComponentID[T](w) }

// Transform is where an entity is and where it looks. For players Pos is the
// feet; Yaw turns about +Y from +Z toward +X, Pitch looks up when positive.
type Transform struct {
	Pos        geom.Vec3
	Yaw, Pitch float64
}

// Velocity is an entity's velocity in metres per second.
type Velocity struct{ V geom.Vec3 }

// Player marks a player-controlled character.
type Player struct {
	ID   uint32 // room-wide player id, stable for the player's session
	Name string
}

// Team is the team an entity fights for; 0 means no team.
type Team struct{ ID uint8 }

// Hitbox is a player's rewindable collider (geom.Hitbox): a vertical
// capsule standing on Transform.Pos.
type Hitbox = geom.Hitbox

// Motion is the part of a player's movement state (package movement's
// State) that its Transform and Velocity do not hold, and which character
// it moves as. The Movement system reads and writes it every tick.
type Motion struct {
	// Class is the index of the player's class in the room's catalogue
	// (weapons.Catalog.Classes): its Movement is the player's character.
	Class int
	// Crouched and JumpHeld carry over from tick to tick (movement.State);
	// OnGround and Ground (the ground's normal) are what the last tick
	// ended on.
	Crouched, JumpHeld, OnGround bool
	Ground                       geom.Vec3
	// Left is where the Movement system left the feet at the end of its
	// last tick (as the player spawned, before the first): a player found
	// anywhere else was put there (a respawn, a teleport), not moved.
	Left geom.Vec3
}

// Health is what a damageable entity has left. Max 0 means the entity cannot
// be damaged (scripted scenario players).
type Health struct {
	Current, Max float64
}

// Life is a player's life cycle. A dead player has no hitbox in the history
// (it can neither be hit nor block), does not move and does not fire; at
// RespawnAt it comes back at Spawn with full health.
type Life struct {
	Dead      bool
	RespawnAt int64     // the tick it respawns at
	Spawn     geom.Vec3 // where it (re)spawns
	SpawnYaw  float64   // which way it faces there
	// InvulnerableUntil is the first tick it can be damaged again after a
	// respawn.
	InvulnerableUntil int64
	// Lives counts its respawns: something started in one life (a melee
	// wind-up) does not land in the next.
	Lives uint32
	// Moved is the tick from which its position was set rather than reached
	// by movement (a respawn): the history marks that tick's pose as a
	// teleport, and lag compensation never interpolates across it.
	Moved int64
	// Teleports counts the teleports the history marked (respawns, and any
	// move longer than physics allows in a tick): clients compare it
	// between two snapshots so that they do not interpolate across one
	// either.
	Teleports uint32
}

// MaxLoadout is the most weapons a player carries (package arsenal).
const MaxLoadout = arsenal.MaxLoadout

// Arsenal is what a player carries and the state of each weapon, under the
// rules of package arsenal, which the client predicts with too.
type Arsenal = arsenal.Arsenal

// WeaponState is one carried weapon.
type WeaponState = arsenal.WeaponState

// Streak remembers a player's recent hits, by the view time they were
// resolved at (the true hit times, as the shooter saw them), for mechanics
// like "hit N times within T" (weapons.Streak).
type Streak struct {
	Times   [StreakMemory]float64 // view times, a ring
	Weapons [StreakMemory]uint16  // the weapon of each
	Next    int
	Count   int // entries in use
}

// StreakMemory is how many recent hits a Streak remembers.
const StreakMemory = 16

// Owner is the player an entity belongs to (the shooter of a shot, the
// placer of a shield). Lag compensation never lets an entity hit its owner.
type Owner struct{ Entity Entity }

// ViewLag is how many ticks behind the present an entity's owner sees the
// world. Players get it from their inputs: present − reported view time,
// bounded by what the server measured of the client and by the room's cap
// (Clamp says why a claim was cut, Claimed what it was). A lag-compensated
// entity takes its shooter's when it is fired and keeps it: its view time
// advances one tick per server tick, whatever its owner does next.
type ViewLag struct {
	Ticks   float64
	Claimed float64     // the lag the input claimed, when Clamp is set
	Clamp   ClampReason // why the claim was cut to Ticks; 0: it was not
	// Back and Span are the input's view time's (ViewTime.Span: the
	// snapshots the client drew the world between), when the claim stood:
	// the view time of the entity's first tick, the shot's own, is drawn
	// between them too.
	Back, Span uint8
}

// ClampReason says why the server granted less view lag than a client
// claimed.
type ClampReason uint8

// Reasons a claimed view lag is cut.
const (
	// ClampMeasured: deeper than the server's own measurement of the client
	// allows (round trip, input lead, interpolation delay, tolerance).
	ClampMeasured ClampReason = iota + 1
	// ClampMaxUnlag: deeper than the room's favour-the-shooter cap.
	ClampMaxUnlag
	// ClampWeapon: deeper than the weapon's own max_rewind.
	ClampWeapon
	// ClampFuture: a view time after the present.
	ClampFuture
)

// String returns the reason's metric label.
func (r ClampReason) String() string {
	switch r {
	case ClampMeasured:
		return "measured"
	case ClampMaxUnlag:
		return "max_unlag"
	case ClampWeapon:
		return "weapon"
	case ClampFuture:
		return "future"
	}
	return "none"
}

// ViewTime is a server time, a tick plus a fraction of the next tick, at
// which an entity is resolved (input.ViewTime).
type ViewTime = input.ViewTime

// ViewTimeOf splits a time in ticks into tick and fraction (input.ViewTimeOf).
func ViewTimeOf(ticks float64) ViewTime { return input.ViewTimeOf(ticks) }

// LagCompensated marks an entity that is resolved in its owner's view time
// (a hitscan shot, a projectile, a melee strike). Kind selects the resolver
// (the weapon kind's index in the room's kind registry); the resolver sets
// Done when the entity has nothing left to do, and Cleanup removes it.
type LagCompensated struct {
	Kind uint8
	Done bool
	// From is the first tick the entity is resolved at (a melee strike's
	// wind-up delays it); before that it waits.
	From int64
	// CatchUp makes a projectile catch up with the present in its first tick
	// (Dino Squad's option 2): it steps at its shooter's view time τ, τ+1, …
	// up to the present within that tick, then once a tick in the present.
	CatchUp bool
	// NeedsOwner cancels the entity (an invalid shot, not resolved) when, by
	// its From tick, its owner is gone, dead, or in another life than
	// OwnerLife (its Life.Lives when it started): a melee wind-up.
	NeedsOwner bool
	OwnerLife  uint32
}

// Shot identifies the use of a weapon that produced a lag-compensated entity,
// for the events it causes.
type Shot struct {
	ID     uint32 // shot id: the scenario's index, or the client's shot counter (a label echoed in events)
	Weapon uint16 // index in the room's weapon catalogue
	Fired  int64  // server tick the shot was fired at
	// Seq is the shot's index in its shooter's spread sequence: the
	// server's count of the shooter's earlier shots (the scenario's index
	// for scripted shots). The client never chooses it.
	Seq uint32
}

// HitscanShot is an instantaneous ray (or several: a shotgun's pellets),
// resolved in the tick it is fired, every pellet against the same rewound
// world.
type HitscanShot struct {
	Origin, Dir geom.Vec3 // Dir is the aim, a unit vector
}

// Projectile is a sphere flying one step per tick in its shooter's time; its
// position is the entity's Transform and its velocity the entity's Velocity.
type Projectile struct {
	Origin   geom.Vec3 // where it was fired from
	Launch   geom.Vec3 // its velocity when fired (Velocity changes under gravity)
	Radius   float64
	Steps    int // steps taken so far
	Lifetime int // steps it may take before it expires as a miss
}

// MeleeAttack is a strike (a bite, a tail strike) resolved in the tick it
// lands, From of its LagCompensated. Origin and Dir are taken when it starts;
// it lands where its owner has moved by then (Anchor is the owner's position
// at the start).
type MeleeAttack struct {
	Origin, Dir geom.Vec3
	Anchor      geom.Vec3
}

// Shield is a placed barrier. Shields are never rewound: a shield blocks
// lag-compensated shots exactly while it exists in the present. A shield
// with a Team lets its own team's shots through.
type Shield struct {
	Box     geom.AABB
	Expires int64  // the first tick it no longer exists; 0: until removed
	Weapon  uint16 // the placeable that made it (players' shields)
	Placed  int64  // the tick it was placed
}

// StaticGeometry marks the level's entity: the level's triangles are the
// collision world's mesh (lagcomp.CollisionWorld.SetLevel), which always
// exists and is never rewound; Triangles counts them. A shot the level
// blocks names this entity (ShotEvent.By) and the triangle (ShotEvent.Tri).
type StaticGeometry struct{ Triangles int }

// Input buttons (package input).
const (
	ButtonFire   = input.ButtonFire
	ButtonReload = input.ButtonReload
	ButtonJump   = input.ButtonJump
	ButtonCrouch = input.ButtonCrouch
	ButtonSprint = input.ButtonSprint
)

// Input is a player's input for one tick (input.Input): what the wire
// carries, the client predicts with and the server applies.
type Input = input.Input

// InputQueueLen is how many ticks of inputs a player can have waiting: at
// 20 Hz, 1.6 s of inputs ahead of the server.
const InputQueueLen = 32

// InputQueue holds a player's received inputs until their tick comes, indexed
// by tick modulo InputQueueLen. A slot is valid when its input's Tick is the
// tick asked for.
type InputQueue struct {
	Slots [InputQueueLen]Input
	// Applied is the newest tick whose input was applied (−1: none yet);
	// Used counts the ticks whose input was applied, Rooted those with no
	// input, when the player stood still.
	Applied int64
	Used    uint64
	Rooted  uint64
	// Recent has bit i set when the input of tick now−1−i was applied (in
	// time, or late): a later copy of it is a duplicate.
	Recent uint64
	// Late holds, oldest first, the NLate inputs that came after their
	// tick was simulated without them (rooted), waiting for the next tick
	// to run them before its own (package systems, late fire commands);
	// LateRun counts the late inputs run.
	Late    [MaxLateInputs]Input
	NLate   int
	LateRun uint64
	// Base is the player's movement as it was at the end of tick BaseTick:
	// when that is Applied, the ticks since were rooted, and late inputs
	// simulate them again from it (package systems).
	Base     MovementBase
	BaseTick int64
}

// MovementBase is a player's movement state at the end of a tick: what late
// inputs simulate the ticks after it again from.
type MovementBase struct {
	Transform Transform
	Velocity  Velocity
	Motion    Motion
}

// MaxLateInputs is the most late inputs a player can have waiting for one
// tick, and the oldest a late input may be, in ticks (systems.LateLimit
// bounds it to a second's): the 64 ticks InputQueue.Recent remembers.
const MaxLateInputs = 64
