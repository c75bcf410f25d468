package view

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/replay"
)

// Match is a recorded match as the page draws it. Positions are metres on
// the ground plane (x, z), to the centimetre.
type Match struct {
	Room     string `json:"room"`
	Started  string `json:"started,omitempty"`
	TickRate int    `json:"tick_rate"`
	Window   int    `json:"window_ticks"`
	// Arena is the bounds players are kept in: min x, min z, max x, max z
	// (all 0: unbounded).
	Arena [4]Num `json:"arena"`
	// Level is the level the match was played on (nil: none).
	Level *Level `json:"level,omitempty"`
	// Players are everyone who played, in the order first seen: frames and
	// shots name them by index.
	Players []Player `json:"players"`
	// First is the tick of Frames[0]; Ticks the ticks the replay has
	// simulated (a live view keeps the last ones only).
	First  int64   `json:"first"`
	Ticks  int64   `json:"ticks"`
	Frames []Frame `json:"frames"`
	Shots  []Shot  `json:"shots"`
	// End is why the match ended, once the recording says; Error where the
	// replay stopped, if it did (a damaged or truncated file).
	End   string `json:"end,omitempty"`
	Error string `json:"error,omitempty"`
	Live  bool   `json:"live"`
}

// Level is a level as the page draws it: from above, each triangle shaded
// by its height, so that floors, ramps and the tops of walls show, and
// walls (seen edge on) as lines.
type Level struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
	// Bounds is the level's bounds: min x, min z, max x, max z.
	Bounds [4]Num `json:"bounds"`
	// Low and High are the lowest and highest points of its triangles: the
	// range of the shading.
	Low  Num `json:"low"`
	High Num `json:"high"`
	// Tris are its triangles, [x1, z1, x2, z2, x3, z3, top, blocks], top
	// the triangle's highest point and blocks what it stops (1 movement, 2
	// shots, 3 both), ordered by top, lowest first: drawn in order, what is
	// higher covers what is below.
	Tris [][8]Num `json:"tris"`
}

// levelOf is the drawing of l.
func levelOf(l *level.Level) *Level {
	out := &Level{Name: l.Name, Digest: l.Digest().String(),
		Bounds: [4]Num{Num(l.Bounds.Min.X), Num(l.Bounds.Min.Z), Num(l.Bounds.Max.X), Num(l.Bounds.Max.Z)},
		Tris:   make([][8]Num, 0, len(l.Triangles))}
	low, high := math.Inf(1), math.Inf(-1)
	for _, t := range l.Triangles {
		b := t.Bounds()
		low, high = min(low, b.Min.Y), max(high, b.Max.Y)
		out.Tris = append(out.Tris, [8]Num{Num(t.A.X), Num(t.A.Z), Num(t.B.X), Num(t.B.Z), Num(t.C.X), Num(t.C.Z),
			Num(b.Max.Y), Num(t.Blocks)})
	}
	if len(l.Triangles) > 0 {
		out.Low, out.High = Num(low), Num(high)
	}
	slices.SortStableFunc(out.Tris, func(a, b [8]Num) int { return cmp.Compare(a[6], b[6]) })
	return out
}

// Player is one player of the match.
type Player struct {
	Name   string  `json:"name"`
	ID     uint32  `json:"id"` // the wire id clients know it by
	Team   uint8   `json:"team"`
	Radius float64 `json:"radius"`
}

// Frame is one tick's world: every living player's hitbox in the present
// ([player, x, z, yaw, y, crouched]: y the feet's height, crouched 1 or
// 0), the projectiles in flight ([x, z]) and the shields ([team, min x,
// min z, max x, max z]).
type Frame struct {
	Players     [][6]Num `json:"p"`
	Projectiles [][2]Num `json:"o,omitempty"`
	Shields     [][5]Num `json:"s,omitempty"`
}

// Shot is one decision about a shot: a hit, a block, a miss, or an invalid
// shot.
type Shot struct {
	Tick    int64  `json:"tick"`  // the server tick of the decision
	Fired   int64  `json:"fired"` // the tick it was fired at
	Shooter int    `json:"shooter"`
	Weapon  string `json:"weapon"`
	Kind    string `json:"kind"`
	Result  string `json:"result"`
	Target  int    `json:"target"` // a hit's player, −1 otherwise
	Head    bool   `json:"head,omitempty"`
	Splash  bool   `json:"splash,omitempty"`
	Damage  Num    `json:"damage"`
	Dealt   Num    `json:"dealt"`
	// NoDamage says why a hit dealt none (invulnerable, dead, zero).
	NoDamage string `json:"no_damage,omitempty"`
	// View is the time the shot was resolved at, in ticks, and Lag how far
	// behind the decision's tick that is (the rewind). Clamp and Claimed
	// say which bound cut the lag its client claimed, and the claim.
	View    Num    `json:"view"`
	Lag     Num    `json:"lag"`
	Clamp   string `json:"clamp,omitempty"`
	Claimed Num    `json:"claimed,omitempty"`
	// Origin is where the ray or the last step started (x, y, z), Point
	// where it ended: the contact, or the end of its range.
	Origin [3]Num `json:"origin"`
	Point  [3]Num `json:"point"`
	// Path is a projectile's flight, tick by tick ([x, z]).
	Path [][2]Num `json:"path,omitempty"`
	// Rewound is every hitbox as the server placed it for the shot
	// ([player, x, z, y, crouched]): what the shooter's screen showed.
	Rewound [][5]Num `json:"rewound"`
}

// Num is a number the page gets to the centimetre (and hundredth of a
// tick, or radian): the JSON of a 5-minute match stays a few megabytes.
type Num float64

// MarshalJSON writes n with at most two decimals.
func (n Num) MarshalJSON() ([]byte, error) {
	f := math.Round(float64(n)*100) / 100
	if math.IsNaN(f) || math.IsInf(f, 0) {
		f = 0
	}
	return strconv.AppendFloat(nil, f, 'f', -1, 64), nil
}

// since returns the part of m from tick from on: the frames and the shots
// decided at from or later (all of them for from ≤ First). A part from a
// tick after 0 (a live view's poll) leaves the level out: the page has it
// from its first load.
func (m *Match) since(from int64) *Match {
	out := *m
	if from > 0 {
		out.Level = nil
	}
	if i := from - m.First; i > 0 {
		out.Frames = m.Frames[min(int(i), len(m.Frames)):]
		out.First = m.First + int64(len(m.Frames)-len(out.Frames))
	}
	j := len(m.Shots)
	for j > 0 && m.Shots[j-1].Tick >= out.First {
		j--
	}
	out.Shots = m.Shots[j:]
	return &out
}

// Builder builds a Match from a replay's ticks (replay.Config.OnTick).
type Builder struct {
	m    Match
	keep int64 // frames kept (the newest), 0: all
	// players maps a recorded entity to its index in m.Players.
	players map[replay.EntityID]int
	clamps  map[shotLabel]ecs.ClampEvent // by shot, until its decision
	paths   map[shotKey]*flight          // projectiles' flights so far
	decided []shotKey                    // the tick's projectiles that ended
	eye     [2]float64                   // standing, crouched
	poses   []lagcomp.Pose

	names       generic.Map2[ecs.Player, ecs.Team]
	yaw         generic.Map1[ecs.Transform]
	projectiles *generic.Filter4[ecs.Projectile, ecs.Transform, ecs.Owner, ecs.Shot]
	shields     *generic.Filter2[ecs.Shield, ecs.Team]
	registered  bool
}

// flight is a projectile's path: where it was fired from, and where it was
// after each tick.
type flight struct {
	origin [3]Num
	path   [][2]Num
}

// shotKey names a shot by its shooter and its place in the shooter's
// spread sequence; shotLabel by what a clamp event knows of it.
type shotKey struct {
	shooter ecs.Entity
	seq     uint32
}

type shotLabel struct {
	shooter ecs.Entity
	shot    uint32
	weapon  uint16
	fired   int64
}

// NewBuilder starts a Match of the recording whose setup is setup. keep
// bounds the frames kept to the newest keep ticks (a live view), 0 keeps
// them all.
func NewBuilder(setup replay.Setup, keep int64) *Builder {
	b := &Builder{keep: keep, players: map[replay.EntityID]int{}, clamps: map[shotLabel]ecs.ClampEvent{},
		paths: map[shotKey]*flight{}, eye: [2]float64{setup.EyeHeight, setup.CrouchEyeHeight}}
	a := setup.Bounds
	b.m = Match{Room: setup.Room, Started: setup.Started, TickRate: setup.TickRate, Window: setup.LagComp.WindowTicks,
		Arena:   [4]Num{Num(a.Min[0]), Num(a.Min[2]), Num(a.Max[0]), Num(a.Max[2])},
		Players: []Player{}, Frames: []Frame{}, Shots: []Shot{}}
	if setup.Level != nil {
		b.m.Level = levelOf(setup.Level)
	}
	return b
}

// Match returns the match built so far (shared: not to be changed).
func (b *Builder) Match() *Match { return &b.m }

// Tick adds the tick t's simulation has just simulated.
func (b *Builder) Tick(t *replay.Tick) {
	sim := t.Sim
	if !b.registered {
		b.names = generic.NewMap2[ecs.Player, ecs.Team](sim.World)
		b.yaw = generic.NewMap1[ecs.Transform](sim.World)
		b.projectiles = generic.NewFilter4[ecs.Projectile, ecs.Transform, ecs.Owner, ecs.Shot]()
		b.projectiles.Register(sim.World)
		b.shields = generic.NewFilter2[ecs.Shield, ecs.Team]()
		b.shields.Register(sim.World)
		b.registered = true
	}
	var f Frame
	frame, _ := sim.History.Frame(t.Tick)
	for _, p := range frame {
		f.Players = append(f.Players, [6]Num{Num(b.player(t, p.Entity, p.Hitbox.Radius)), Num(p.Pos.X), Num(p.Pos.Z),
			Num(b.yaw.Get(p.Entity).Yaw), Num(p.Pos.Y), flag(p.Crouched)})
	}
	for _, c := range sim.Events.Clamps {
		b.clamps[shotLabel{c.Shooter, c.Shot, c.Weapon, c.Tick}] = c
	}
	b.decided = b.decided[:0]
	for i := range sim.Events.Shots {
		b.shot(t, &sim.Events.Shots[i])
	}
	for _, k := range b.decided {
		delete(b.paths, k)
	}
	q := b.projectiles.Query(sim.World)
	for q.Next() {
		p, tf, owner, shot := q.Get()
		k := shotKey{owner.Entity, shot.Seq}
		fl := b.paths[k]
		if fl == nil {
			fl = &flight{origin: vec(p.Origin.X, p.Origin.Y, p.Origin.Z), path: [][2]Num{{Num(p.Origin.X), Num(p.Origin.Z)}}}
			b.paths[k] = fl
		}
		fl.path = append(fl.path, [2]Num{Num(tf.Pos.X), Num(tf.Pos.Z)})
		f.Projectiles = append(f.Projectiles, [2]Num{Num(tf.Pos.X), Num(tf.Pos.Z)})
	}
	sq := b.shields.Query(sim.World)
	for sq.Next() {
		sh, team := sq.Get()
		f.Shields = append(f.Shields, [5]Num{Num(team.ID), Num(sh.Box.Min.X), Num(sh.Box.Min.Z), Num(sh.Box.Max.X), Num(sh.Box.Max.Z)})
	}
	if len(b.m.Frames) == 0 {
		b.m.First = t.Tick
	}
	b.m.Frames = append(b.m.Frames, f)
	b.m.Ticks = t.Tick + 1
	if b.keep > 0 && int64(len(b.m.Frames)) > b.keep {
		drop := int64(len(b.m.Frames)) - b.keep
		b.m.Frames = append(b.m.Frames[:0:0], b.m.Frames[drop:]...)
		b.m.First += drop
		i := 0
		for i < len(b.m.Shots) && b.m.Shots[i].Tick < b.m.First {
			i++
		}
		b.m.Shots = append(b.m.Shots[:0:0], b.m.Shots[i:]...)
	}
	if t.Tick%200 == 0 { // clamps of shots long decided
		for k := range b.clamps {
			if k.fired < t.Tick-1000 {
				delete(b.clamps, k)
			}
		}
	}
}

// player returns the index of a player, adding it when first seen.
func (b *Builder) player(t *replay.Tick, e ecs.Entity, radius float64) int {
	id, ok := t.RecordedID(-1, e)
	if !ok {
		return -1
	}
	if i, ok := b.players[id]; ok {
		return i
	}
	p := Player{ID: id.WireID(), Radius: radius}
	if t.Sim.World.Alive(e) {
		if pl, team := b.names.Get(e); pl != nil && team != nil {
			p.Name, p.Team = pl.Name, team.ID
		}
	}
	b.players[id] = len(b.m.Players)
	b.m.Players = append(b.m.Players, p)
	return len(b.m.Players) - 1
}

// shot adds a shot decision.
func (b *Builder) shot(t *replay.Tick, ev *ecs.ShotEvent) {
	sim := t.Sim
	def := sim.Catalog.At(ev.Weapon)
	s := Shot{Tick: ev.Tick, Fired: ev.Fired, Shooter: b.player(t, ev.Shooter, 0), Weapon: def.Name, Kind: def.Kind,
		Result: ev.Result.String(), Target: -1, Head: ev.Head, Splash: ev.Splash, Damage: Num(ev.Damage), Dealt: Num(ev.Dealt),
		Point: vec(ev.Point.X, ev.Point.Y, ev.Point.Z), Rewound: [][5]Num{}}
	if ev.NoDamage != 0 {
		s.NoDamage = ev.NoDamage.String()
	}
	if ev.Result == ecs.ResultHit {
		s.Target = b.player(t, ev.Target, 0)
	}
	if c, ok := b.clamps[shotLabel{ev.Shooter, ev.Shot, ev.Weapon, ev.Fired}]; ok {
		s.Clamp, s.Claimed = c.Reason.String(), Num(c.Claimed)
	}
	if ev.Result == ecs.ResultInvalid {
		b.m.Shots = append(b.m.Shots, s)
		return
	}
	s.View, s.Lag = Num(ev.ViewTime.Ticks()), Num(float64(ev.Tick)-ev.ViewTime.Ticks())
	// Where the ray started: the shooter's eye as the tick recorded it; a
	// projectile's flight starts where the shooter's was when it fired.
	if pose, ok := sim.History.PoseAt(t.Tick, ev.Shooter); ok {
		s.Origin = vec(pose.Pos.X, pose.Pos.Y+b.eyeOf(pose), pose.Pos.Z)
	} else {
		s.Origin = s.Point
	}
	if def.Kind == "projectile" {
		k := shotKey{ev.Shooter, ev.Seq}
		if fl := b.paths[k]; fl != nil { // none: it ended in the tick it was fired
			s.Origin = fl.origin
			s.Path = append(s.Path, fl.path...)
		} else {
			s.Path = append(s.Path, [2]Num{s.Origin[0], s.Origin[2]})
		}
		s.Path = append(s.Path, [2]Num{s.Point[0], s.Point[2]})
		b.decided = append(b.decided, k)
	}
	b.poses, _ = sim.History.PosesAt(ev.ViewTime, b.poses[:0])
	for _, p := range b.poses {
		s.Rewound = append(s.Rewound, [5]Num{Num(b.player(t, p.Entity, p.Hitbox.Radius)), Num(p.Pos.X), Num(p.Pos.Z),
			Num(p.Pos.Y), flag(p.Crouched)})
	}
	b.m.Shots = append(b.m.Shots, s)
}

func vec(x, y, z float64) [3]Num { return [3]Num{Num(x), Num(y), Num(z)} }

// flag is a bool as the page gets it.
func flag(b bool) Num {
	if b {
		return 1
	}
	return 0
}

// eyeOf is how far above a pose's feet its shots start.
func (b *Builder) eyeOf(p lagcomp.Pose) float64 {
	if p.Crouched {
		return b.eye[1]
	}
	return b.eye[0]
}
