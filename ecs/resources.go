package ecs

import (
	arche "github.com/mlange-42/arche/ecs"

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
}

// Commands are the side effects queued for this tick by inputs (or a scenario
// script), drained by the systems that own them.
type Commands struct {
	Fire []FireCommand
}

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
	Shot     uint32
	Weapon   uint16
	Shooter  Entity
	Result   ShotResult
	Target   Entity // the entity hit (ResultHit)
	By       Entity // the blocker (ResultBlocked)
	Tick     int64  // the server tick of the decision
	ViewTime ViewTime
	Point    geom.Vec3 // where it happened (the ray point or sphere centre at contact)
	Head     bool      // the contact was on the target's head
	Damage   float64   // the health the hit took (set by the Damage system)
}

// KillEvent is a player's death.
type KillEvent struct {
	Killer, Victim Entity
	Weapon         uint16
	Tick           int64
}

// RespawnEvent is a player coming back to life.
type RespawnEvent struct {
	Player Entity
	Pos    geom.Vec3
	Tick   int64
}

// Events are what happened during the current tick. The schedule clears them
// at the start of every tick; whoever reports them (the scenario runner, the
// server's snapshot stage) reads them after the tick.
type Events struct {
	Shots    []ShotEvent
	Kills    []KillEvent
	Respawns []RespawnEvent
}

// NewWorld creates a room's World with its resources: the Clock at tick 0 with
// the given tick rate, empty Commands and Events.
func NewWorld(tickRate int) *World {
	world := arche.NewWorld()
	arche.AddResource(&world, &Clock{TickRate: tickRate})
	arche.AddResource(&world, &Commands{})
	arche.AddResource(&world, &Events{})
	return &world
}

// Resource returns the World's resource of type T, or nil.
func Resource[T any](w *World) *T { return arche.GetResource[T](w) }
