package systems

import (
	"fmt"
	"slices"

	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/trimesh"
	"github.com/rewind-gg/rewind/weapons"
)

// Config configures a Simulation.
type Config struct {
	TickRate     int            // ticks per second (default 20)
	LagComp      lagcomp.Config // window, view resolution, bucketing, broadphase
	FriendlyFire bool           // shots hit teammates
	// EyeHeight is how far above the feet a player's shots start, metres,
	// and CrouchEyeHeight how far while it is crouched. (A player moves as
	// its class's movement.Character, from the catalogue: the server gives
	// every class these eyes, and the capsule its hitbox has.)
	EyeHeight, CrouchEyeHeight float64
	// RespawnTicks is how long a dead player stays dead, InvulnerableTicks
	// how long it cannot be damaged after it respawns.
	RespawnTicks      int
	InvulnerableTicks int
	// Kinds are the weapon kinds the room can use (default: the built-ins);
	// Weapons are its weapons, defined against those kinds, and Classes its
	// loadouts (none: one class carrying the first weapons).
	Kinds   *weapons.Registry
	Weapons []weapons.Definition
	Classes []weapons.Class
	// Catalog, when set, is the room's weapons and classes, already built
	// against Kinds (a server shares one among its rooms: a Catalog is
	// read-only); Weapons and Classes are then ignored.
	Catalog *weapons.Catalog
	// SpreadSeed keys the room's spread sequences (package spread): the
	// server draws it at random per match and tells the room's clients, so
	// that they predict their own pellets but cannot choose them.
	SpreadSeed uint64
	// PoseScale, when positive, rounds the positions recorded for lag
	// compensation to the nearest 1/PoseScale metre. The server sets it to
	// the snapshots' quantum (protocol.PosScale): a rewind then puts each
	// hitbox exactly where the shooter's client drew it, not up to half a
	// quantum away, so a shot that grazes a capsule on the screen grazes it
	// on the server too. 0 records exact positions.
	PoseScale float64
	// Level is the level's collision mesh (level.Level.Mesh: masked by what
	// each triangle blocks), nil for none. Its triangles that block shots
	// stop shots, projectiles and lines of sight at any height; those that
	// block movement are what players walk on and into (movement.Move).
	// Without a level, players walk on an endless floor at y = 0 that
	// stops nothing but movement. A mesh is read-only: a server's rooms
	// share one.
	Level *trimesh.Mesh
	// Bounds and KillVolumes are the level's (level.Level): a player moved
	// by its inputs whose feet leave Bounds (a zero box: no bounds) or
	// enter a kill volume dies, its own killer with ecs.NoWeapon.
	Bounds      geom.AABB
	KillVolumes []geom.AABB
}

// DefaultConfig returns a 20 Hz room with Dino Squad's lag-compensation
// tuning, the default movement and no weapons.
func DefaultConfig() Config {
	return Config{
		TickRate:          20,
		LagComp:           lagcomp.DefaultConfig(),
		EyeHeight:         movement.DefaultCharacter().EyeHeight,
		CrouchEyeHeight:   movement.DefaultCharacter().CrouchEyeHeight,
		RespawnTicks:      60,
		InvulnerableTicks: 40,
	}
}

// Stats accumulate over a simulation's ticks.
type Stats struct {
	Ticks      int64
	Rewinds    int64
	Items      int64 // lag-compensated items resolved
	Disputed   int64 // hits marked disputed (ecs.ShotEvent.Disputed)
	MaxBuckets int   // the most distinct view times in one tick
	Last       lagcomp.TickStats
}

// Simulation is one room's world and schedule.
type Simulation struct {
	World     *ecs.World
	Clock     *ecs.Clock
	Commands  *ecs.Commands
	Events    *ecs.Events
	Collision *lagcomp.CollisionWorld
	History   *lagcomp.History
	Time      *lagcomp.TimeMachine
	Catalog   *weapons.Catalog

	cfg         Config
	stages      []stage
	env         *weapons.Env
	compensator *lagcomp.Compensator
	fire        *weapons.FireSystem
	present     []weapons.PresentJudge // by kind: nil for a kind that cannot repeat a shot in the present
	stats       Stats

	// Queries and component access, built once.
	inputs    *generic.Filter4[ecs.InputQueue, ecs.Input, ecs.ViewLag, ecs.Transform]
	late      *generic.Filter5[ecs.InputQueue, ecs.Transform, ecs.Velocity, ecs.Life, ecs.Motion]
	movers    *generic.Filter6[ecs.Transform, ecs.Velocity, ecs.Input, ecs.Life, ecs.Motion, ecs.InputQueue]
	hitboxes  *generic.Filter5[ecs.Transform, ecs.Hitbox, ecs.Team, ecs.Life, ecs.Motion]
	triggers  *generic.Filter4[ecs.Input, ecs.Transform, ecs.Motion, ecs.Life]
	lives     *generic.Filter6[ecs.Life, ecs.Health, ecs.Transform, ecs.Arsenal, ecs.Velocity, ecs.Motion]
	resolving *generic.Filter3[ecs.LagCompensated, ecs.ViewLag, ecs.ViewTime] // lag-compensated entities (an Owner too)
	finished  *generic.Filter1[ecs.LagCompensated]                            // the same entities in the same order
	shields   *generic.Filter1[ecs.Shield]
	shotOf    generic.Map[ecs.Shot]
	ownerOf   generic.Map[ecs.Owner]
	teamOf    generic.Map[ecs.Team]
	healthOf  generic.Map2[ecs.Health, ecs.Life]
	armsOf    generic.Map2[ecs.Arsenal, ecs.Streak]
	staticMap generic.Map1[ecs.StaticGeometry]
	players   generic.Map10[ecs.Player, ecs.Team, ecs.Transform, ecs.Velocity, ecs.Hitbox, ecs.ViewLag, ecs.Health, ecs.Life, ecs.Arsenal, ecs.Streak]
	motionOf  generic.Map[ecs.Motion]
	inputMap  generic.Map2[ecs.InputQueue, ecs.Input]
	stateOf   generic.Map7[ecs.Transform, ecs.Velocity, ecs.Health, ecs.Life, ecs.Arsenal, ecs.Streak, ecs.Motion]
	// A player's components, and a controlled player's with its input
	// queue: a player is created with all of them at once (adding the
	// queue after would leave every player's components in an archetype
	// of their own as well, for nothing).
	playerIDs, controlledIDs []ecs.ID

	queueID   ecs.ID     // InputQueue: a player moved by its inputs
	lateLimit int64      // LateLimit
	level     ecs.Entity // the level's entity, zero without a level
	// chars are the classes' characters (Catalog.Classes' Movement), by
	// class index; walk is the mesh players move on (Config.Level, or the
	// endless floor without one).
	chars []movement.Character
	walk  *trimesh.Mesh
	nears []*trimesh.Near // per player: see near

	// Per-tick scratch, reused.
	viewTimes lagcomp.ViewTimes
	poses     []lagcomp.Pose
	items     []lagcomp.Item
	dead      []ecs.Entity
}

// New builds a room: its World, collision world, history, time machine and
// systems. The errors name the configuration field at fault.
func New(cfg Config) (*Simulation, error) {
	if cfg.TickRate <= 0 || cfg.TickRate > 1000 {
		return nil, fmt.Errorf("systems: tick_rate: %d is outside 1..1000", cfg.TickRate)
	}
	if cfg.RespawnTicks < 0 {
		return nil, fmt.Errorf("systems: respawn_ticks: %d is negative", cfg.RespawnTicks)
	}
	if cfg.InvulnerableTicks < 0 {
		return nil, fmt.Errorf("systems: invulnerable_ticks: %d is negative", cfg.InvulnerableTicks)
	}
	if err := cfg.LagComp.Validate(); err != nil {
		return nil, fmt.Errorf("systems: lagcomp.%w", err)
	}
	if cfg.Kinds == nil {
		cfg.Kinds = weapons.NewRegistry()
	}
	catalog := cfg.Catalog
	if catalog == nil {
		var err error
		if catalog, err = weapons.NewCatalog(cfg.Kinds, cfg.Weapons, cfg.Classes...); err != nil {
			return nil, fmt.Errorf("systems: %w", err)
		}
	}
	w := ecs.NewWorld(cfg.TickRate)
	s := &Simulation{
		World:     w,
		Clock:     ecs.Resource[ecs.Clock](w),
		Commands:  ecs.Resource[ecs.Commands](w),
		Events:    ecs.Resource[ecs.Events](w),
		Collision: lagcomp.NewCollisionWorld(cfg.LagComp.CellSize),
		History:   lagcomp.NewHistory(cfg.LagComp.WindowTicks),
		Catalog:   catalog,
		cfg:       cfg,

		inputs:    generic.NewFilter4[ecs.InputQueue, ecs.Input, ecs.ViewLag, ecs.Transform](),
		late:      generic.NewFilter5[ecs.InputQueue, ecs.Transform, ecs.Velocity, ecs.Life, ecs.Motion](),
		movers:    generic.NewFilter6[ecs.Transform, ecs.Velocity, ecs.Input, ecs.Life, ecs.Motion, ecs.InputQueue](),
		hitboxes:  generic.NewFilter5[ecs.Transform, ecs.Hitbox, ecs.Team, ecs.Life, ecs.Motion](),
		triggers:  generic.NewFilter4[ecs.Input, ecs.Transform, ecs.Motion, ecs.Life](),
		lives:     generic.NewFilter6[ecs.Life, ecs.Health, ecs.Transform, ecs.Arsenal, ecs.Velocity, ecs.Motion](),
		resolving: generic.NewFilter3[ecs.LagCompensated, ecs.ViewLag, ecs.ViewTime]().With(generic.T[ecs.Owner]()),
		finished:  generic.NewFilter1[ecs.LagCompensated]().With(generic.T3[ecs.Owner, ecs.ViewLag, ecs.ViewTime]()...),
		shields:   generic.NewFilter1[ecs.Shield](),
		shotOf:    generic.NewMap[ecs.Shot](w),
		ownerOf:   generic.NewMap[ecs.Owner](w),
		teamOf:    generic.NewMap[ecs.Team](w),
		healthOf:  generic.NewMap2[ecs.Health, ecs.Life](w),
		armsOf:    generic.NewMap2[ecs.Arsenal, ecs.Streak](w),
		staticMap: generic.NewMap1[ecs.StaticGeometry](w),
		players:   generic.NewMap10[ecs.Player, ecs.Team, ecs.Transform, ecs.Velocity, ecs.Hitbox, ecs.ViewLag, ecs.Health, ecs.Life, ecs.Arsenal, ecs.Streak](w),
		motionOf:  generic.NewMap[ecs.Motion](w),
		inputMap:  generic.NewMap2[ecs.InputQueue, ecs.Input](w),
		stateOf:   generic.NewMap7[ecs.Transform, ecs.Velocity, ecs.Health, ecs.Life, ecs.Arsenal, ecs.Streak, ecs.Motion](w),
	}
	s.playerIDs = []ecs.ID{ecs.ComponentID[ecs.Player](w), ecs.ComponentID[ecs.Team](w), ecs.ComponentID[ecs.Transform](w),
		ecs.ComponentID[ecs.Velocity](w), ecs.ComponentID[ecs.Hitbox](w), ecs.ComponentID[ecs.ViewLag](w), ecs.ComponentID[ecs.Health](w),
		ecs.ComponentID[ecs.Life](w), ecs.ComponentID[ecs.Arsenal](w), ecs.ComponentID[ecs.Streak](w), ecs.ComponentID[ecs.Motion](w)}
	s.controlledIDs = append(slices.Clone(s.playerIDs), ecs.ComponentID[ecs.InputQueue](w), ecs.ComponentID[ecs.Input](w))
	for _, cl := range catalog.Classes() {
		s.chars = append(s.chars, cl.Movement)
	}
	if len(s.chars) == 0 {
		s.chars = append(s.chars, movement.DefaultCharacter())
	}
	for _, f := range []interface{ Register(*ecs.World) }{s.inputs, s.late, s.movers, s.hitboxes, s.triggers, s.lives, s.resolving, s.finished, s.shields} {
		f.Register(w)
	}
	s.queueID = ecs.ComponentID[ecs.InputQueue](w)
	s.lateLimit = min(int64(cfg.TickRate), ecs.MaxLateInputs)
	if cfg.Level != nil {
		// The first entity, before any player: a replay makes the same one.
		s.level = s.staticMap.NewWith(&ecs.StaticGeometry{Triangles: cfg.Level.Len()})
		s.Collision.SetLevel(s.level, cfg.Level, level.ShotMask)
	}
	s.walk = cfg.Level
	if s.walk == nil {
		var err error
		if s.walk, err = floor(); err != nil {
			return nil, fmt.Errorf("systems: %w", err)
		}
	}
	s.Time = lagcomp.NewTimeMachine(s.History, s.Collision)
	s.env = weapons.NewEnv(w, s.Collision, catalog, cfg.FriendlyFire)
	s.env.SpreadSeed = cfg.SpreadSeed
	kinds := cfg.Kinds.Build(s.env)
	resolvers := make([]lagcomp.Resolver, len(kinds))
	s.present = make([]weapons.PresentJudge, len(kinds))
	for i, k := range kinds {
		resolvers[i] = k
		s.present[i], _ = k.(weapons.PresentJudge)
	}
	s.compensator = lagcomp.NewCompensator(s.Time, resolvers, cfg.LagComp.Bucketing)
	s.fire = weapons.NewFireSystem(s.env, kinds)
	s.stages = []stage{
		{"late_inputs", s.runLateInputs},
		{"apply_inputs", s.applyInputs},
		{"movement", s.move},
		{"record_history", s.recordHistory},
		{"weapons", s.weapons},
		{"lag_compensation", s.lagCompensation},
		{"damage", s.damage},
		{"fairness", s.judgeHits},
		{"cleanup", s.cleanup},
	}
	return s, nil
}

// Config returns the simulation's configuration.
func (s *Simulation) Config() Config { return s.cfg }

// Stats returns what the simulation has done so far.
func (s *Simulation) Stats() Stats { return s.stats }

// Now returns the tick the next Step simulates.
func (s *Simulation) Now() int64 { return s.Clock.Tick }

// Step simulates the present tick and advances the clock to the next one. The
// tick's events are in s.Events until the next Step.
func (s *Simulation) Step() {
	s.beginTick()
	for _, st := range s.stages {
		st.run()
	}
	s.endTick()
}

// beginTick empties the last tick's events.
func (s *Simulation) beginTick() {
	s.Events.Shots = s.Events.Shots[:0]
	s.Events.Rejected = s.Events.Rejected[:0]
	s.Events.Kills = s.Events.Kills[:0]
	s.Events.Respawns = s.Events.Respawns[:0]
	s.Events.Clamps = s.Events.Clamps[:0]
}

// endTick counts the tick and moves the clock on.
func (s *Simulation) endTick() {
	s.stats.Ticks++
	s.Clock.Tick++
}

// stage is one system of the schedule.
type stage struct {
	name string
	run  func()
}

// PlayerSpec describes a player to spawn.
type PlayerSpec struct {
	ID     uint32
	Name   string
	Team   uint8
	Pos    geom.Vec3
	Yaw    float64 // which way it faces
	Hitbox ecs.Hitbox
	Health float64 // 0: no health (cannot be damaged)
	// Controlled players get an input queue and move by their inputs;
	// others are placed by whoever drives the simulation (a scenario).
	Controlled bool
	// Class is the player's class: its index in the catalogue's classes
	// (Catalog.Classes; an index out of range is the first). Its Movement
	// is the character the player moves as.
	Class int
	// Loadout is the weapons the player carries (catalogue ids, at most
	// ecs.MaxLoadout): the only ones its inputs can fire.
	Loadout []uint16
}

// SpawnPlayer adds a player. Its hitbox enters the history at the next Step.
func (s *Simulation) SpawnPlayer(p PlayerSpec) ecs.Entity {
	ids := s.playerIDs
	if p.Controlled {
		ids = s.controlledIDs
	}
	e := s.World.NewEntity(ids...)
	player, team, tf, vel, hb, lag, health, life, arsenal, streak := s.players.Get(e)
	*player, *team, *tf, *vel = ecs.Player{ID: p.ID, Name: p.Name}, ecs.Team{ID: p.Team}, ecs.Transform{Pos: p.Pos, Yaw: p.Yaw}, ecs.Velocity{}
	*hb, *lag, *streak = p.Hitbox, ecs.ViewLag{}, ecs.Streak{}
	*health, *life = ecs.Health{Current: p.Health, Max: p.Health}, ecs.Life{Spawn: p.Pos, SpawnYaw: p.Yaw, Moved: -1}
	*arsenal = s.Catalog.Arsenal(p.Loadout)
	class := p.Class
	if class < 0 || class >= len(s.chars) {
		class = 0
	}
	*s.motionOf.Get(e) = ecs.Motion{Class: class, Left: p.Pos}
	if p.Controlled {
		q, in := s.inputMap.Get(e)
		*q, *in = ecs.InputQueue{Applied: -1, BaseTick: -1}, ecs.Input{}
		q.Base = ecs.MovementBase{Transform: *tf, Velocity: *vel, Motion: *s.motionOf.Get(e)}
		for i := range q.Slots {
			q.Slots[i].Tick = -1
		}
	}
	return e
}

// Character returns the character player e moves as (its class's), or
// false if e is not a player.
func (s *Simulation) Character(e ecs.Entity) (*movement.Character, bool) {
	if !s.World.Alive(e) || !s.World.Has(e, s.motionOf.ID()) {
		return nil, false
	}
	return &s.chars[s.motionOf.Get(e).Class], true
}

// Level returns the level's entity (the By of the shots it blocks), or
// the zero entity without a level (Config.Level).
func (s *Simulation) Level() ecs.Entity { return s.level }

// SpawnShield adds a shield placed by owner for team, present from now until
// the tick expires (exclusive; 0: until despawned).
func (s *Simulation) SpawnShield(owner ecs.Entity, team uint8, box geom.AABB, expires int64) (ecs.Entity, error) {
	return s.env.NewShield(ecs.Shield{Box: box, Expires: expires}, owner, owner, team)
}

// Despawn removes an entity and its colliders. A player's hitbox stays in the
// history it was recorded in, so shots that see the past still see it.
func (s *Simulation) Despawn(e ecs.Entity) { s.env.Despawn(e) }

// PlayerState is what the course of a match changes in a player: where it
// is and looks, how fast it moves and the rest of its movement (crouched,
// jump held), its health, its life (dead, respawn, invulnerability,
// teleports), its weapons' state and its streak. Its inputs and the view
// lag they are granted are not part of it.
type PlayerState struct {
	Transform ecs.Transform
	Velocity  ecs.Velocity
	Health    ecs.Health
	Life      ecs.Life
	Arsenal   ecs.Arsenal
	Streak    ecs.Streak
	Motion    ecs.Motion
}

// PlayerState returns player e's state, or false if e is not a player.
func (s *Simulation) PlayerState(e ecs.Entity) (PlayerState, bool) {
	if !s.World.Alive(e) {
		return PlayerState{}, false
	}
	tf, vel, h, life, arsenal, streak, mo := s.stateOf.Get(e)
	if tf == nil || vel == nil || h == nil || life == nil || arsenal == nil || streak == nil || mo == nil {
		return PlayerState{}, false
	}
	return PlayerState{Transform: *tf, Velocity: *vel, Health: *h, Life: *life, Arsenal: *arsenal, Streak: *streak, Motion: *mo}, true
}

// SetPlayerState makes player e's state st, and reports whether e is a
// player. A replay that judges a recorded match's shots under other
// settings sets every player's state from the recorded match before each
// tick, so that the world stays the recorded one whatever the other
// settings would have changed (package replay).
func (s *Simulation) SetPlayerState(e ecs.Entity, st *PlayerState) bool {
	if !s.World.Alive(e) {
		return false
	}
	tf, vel, h, life, arsenal, streak, mo := s.stateOf.Get(e)
	if tf == nil || vel == nil || h == nil || life == nil || arsenal == nil || streak == nil || mo == nil {
		return false
	}
	*tf, *vel, *h, *life, *arsenal, *streak, *mo = st.Transform, st.Velocity, st.Health, st.Life, st.Arsenal, st.Streak, st.Motion
	return true
}

// SpreadAs makes player e's pellets spread as those of the entity whose wire
// id is id (weapons.Env.SpreadAs): for replays whose entities differ from
// the recording's.
func (s *Simulation) SpreadAs(e ecs.Entity, id uint32) { s.env.SpreadAs(e, id) }

// floorSize is the half side of the floor players walk on without a level,
// metres: endless for any match.
const floorSize = 1e5

// floor returns the mesh players walk on without a level: a square at
// y = 0, floorSize from the origin each way, that blocks movement only.
func floor() (*trimesh.Mesh, error) {
	a, b, c, d := geom.V(-floorSize, 0, -floorSize), geom.V(-floorSize, 0, floorSize), geom.V(floorSize, 0, floorSize), geom.V(floorSize, 0, -floorSize)
	return trimesh.New([]trimesh.Triangle{
		{A: a, B: b, C: c, Mask: level.MovementMask},
		{A: a, B: c, C: d, Mask: level.MovementMask},
	})
}
