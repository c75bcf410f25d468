package view

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/systems"
	"github.com/rewind-gg/rewind/ticks"
	"github.com/rewind-gg/rewind/tune"
	"github.com/rewind-gg/rewind/weapons"
)

// Match is a recorded match as the page draws it. Positions are metres on
// the ground plane (x, z), to the centimetre.
type Match struct {
	Room     string `json:"room"`
	Started  string `json:"started,omitempty"`
	TickRate int    `json:"tick_rate"`
	// Window is the lag-compensation window the shots were judged under,
	// in ticks: the recorded one, or the one the view was asked for
	// (Config.Window), when Recorded says the recording's.
	Window   int  `json:"window_ticks"`
	Recorded *int `json:"recorded_window_ticks,omitempty"`
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

// Player is one player of the match, and its hitbox: a capsule of Radius
// standing on the feet, Height tall (Crouched while crouched), its top
// Head metres the head.
type Player struct {
	Name     string  `json:"name"`
	ID       uint32  `json:"id"` // the wire id clients know it by
	Team     uint8   `json:"team"`
	Radius   float64 `json:"radius"`
	Height   Num     `json:"height"`
	Crouched Num     `json:"crouch_height"`
	Head     Num     `json:"head_height"`
}

// Frame is one tick's world: every living player's hitbox in the present
// ([player, x, z, yaw, y, crouched]: y the feet's height, crouched 1 or
// 0), the projectiles in flight ([x, z]) and the shields ([team, min x,
// min z, max x, max z]); and the view lag of every player whose input the
// tick applied ([player, granted, bound], in milliseconds: the lag the
// server granted, and the bound it measured of the client when the input
// arrived, its round trip and interpolation delay; 0 without one).
type Frame struct {
	Players     [][6]Num `json:"p"`
	Projectiles [][2]Num `json:"o,omitempty"`
	Shields     [][5]Num `json:"s,omitempty"`
	Lags        [][3]Num `json:"l,omitempty"`
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
	// Kill says the hit killed its target; Disputed that it is a disputed
	// hit (docs/tuning.md): it dealt damage to a target that, in its own
	// present at the tick, was out of the shooter's sight or reach, and
	// the replay without rewind did not hit it.
	Kill     bool `json:"kill,omitempty"`
	Disputed bool `json:"disputed,omitempty"`
	// Blast is a projectile's splash radius: its explosion at Point.
	Blast Num `json:"splash_radius,omitempty"`
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

	key hitKey // by the recorded entities: the "present" variant's hit
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

// Builder builds a Match from a replay's ticks (replay.Config.OnTick),
// under the variants its Config names (Builder.Config).
type Builder struct {
	m    Match
	keep int64 // frames kept (the newest), 0: all
	// variant is the simulation the match is drawn from: −1 the recorded
	// one, else its index in the replay's variants (Config.Window).
	variant int
	window  int
	present map[hitKey]int64 // the "present" variant's hits, by the tick seen
	pending map[hitKey]int64 // disputed hits the "present" variant may still hit, by tick
	// players maps a recorded entity to its index in m.Players.
	players map[replay.EntityID]int
	clamps  map[shotLabel]ecs.ClampEvent // by shot, until its decision
	paths   map[shotKey]*flight          // projectiles' flights so far
	decided []shotKey                    // the tick's projectiles that ended
	eye     [2]float64                   // standing, crouched
	poses   []lagcomp.Pose

	names       generic.Map2[ecs.Player, ecs.Team]
	yaw         generic.Map1[ecs.Transform]
	inputs      *generic.Filter3[ecs.InputQueue, ecs.Input, ecs.ViewLag]
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

// hitKey names a hit across variants: its shooter and target as recorded
// and the shot's place in the shooter's spread sequence.
type hitKey struct {
	shooter, target replay.EntityID
	seq             uint32
}

type shotLabel struct {
	shooter ecs.Entity
	shot    uint32
	weapon  uint16
	fired   int64
}

// Config is how a recording is viewed.
type Config struct {
	// Kinds are the weapon kinds the recording's weapons name beyond the
	// built-in ones (nil: those only).
	Kinds *weapons.Registry
	// Window, when set, judges the shots under that lag-compensation
	// window (max_unlag the same) instead of the recorded one: the match as
	// it would have gone. A duration counts whole ticks at the recording's
	// tick rate, rounded up.
	Window *ticks.Span
	// Keep bounds the frames kept to the newest Keep ticks (a live view);
	// 0 keeps them all.
	Keep int64
}

// NewBuilder starts a Match of the recording whose setup is setup.
func NewBuilder(setup replay.Setup, cfg Config) (*Builder, error) {
	b := &Builder{keep: cfg.Keep, variant: -1, players: map[replay.EntityID]int{}, clamps: map[shotLabel]ecs.ClampEvent{},
		paths: map[shotKey]*flight{}, eye: [2]float64{setup.EyeHeight, setup.CrouchEyeHeight},
		present: map[hitKey]int64{}, pending: map[hitKey]int64{}}
	a := setup.Bounds
	b.m = Match{Room: setup.Room, Started: setup.Started, TickRate: setup.TickRate, Window: setup.LagComp.WindowTicks,
		Arena:   [4]Num{Num(a.Min[0]), Num(a.Min[2]), Num(a.Max[0]), Num(a.Max[2])},
		Players: []Player{}, Frames: []Frame{}, Shots: []Shot{}}
	if cfg.Window != nil {
		w, err := cfg.Window.WholeTicks(setup.TickRate)
		if err != nil {
			return nil, fmt.Errorf("view: window: %w", err)
		}
		recorded := b.m.Window
		b.variant, b.window, b.m.Window, b.m.Recorded = variantWindow, w, w, &recorded
	}
	if setup.Level != nil {
		b.m.Level = levelOf(setup.Level)
	}
	return b, nil
}

// The replay's variants (Builder.ReplayConfig).
const (
	variantPresent = 0 // no rewind: what the victims saw
	variantWindow  = 1 // Config.Window's
)

// ReplayConfig is the replay's configuration: the builder's variants and
// its OnTick.
func (b *Builder) ReplayConfig(setup replay.Setup, kinds *weapons.Registry) replay.Config {
	present := setup.LagComp.Config()
	present.WindowTicks, present.MaxUnlagTicks = 0, 0
	cfg := replay.Config{Kinds: kinds, OnTick: func(t *replay.Tick) error { b.Tick(t); return nil },
		Variants: []replay.Variant{{Name: "present", LagComp: present}}}
	if b.variant == variantWindow {
		lc := setup.LagComp.Config()
		lc.WindowTicks, lc.MaxUnlagTicks = b.window, 0
		cfg.Variants = append(cfg.Variants, replay.Variant{Name: fmt.Sprintf("window %d", b.window), LagComp: lc})
	}
	return cfg
}

// sim is the simulation the match is drawn from.
func (b *Builder) sim(t *replay.Tick) *systems.Simulation {
	if b.variant < 0 {
		return t.Sim
	}
	return t.Variants[b.variant]
}

// Match returns the match built so far (shared: not to be changed).
func (b *Builder) Match() *Match { return &b.m }

// Tick adds the tick t's simulation has just simulated.
func (b *Builder) Tick(t *replay.Tick) {
	sim := b.sim(t)
	if !b.registered {
		b.names = generic.NewMap2[ecs.Player, ecs.Team](sim.World)
		b.yaw = generic.NewMap1[ecs.Transform](sim.World)
		b.inputs = generic.NewFilter3[ecs.InputQueue, ecs.Input, ecs.ViewLag]()
		b.inputs.Register(sim.World)
		b.projectiles = generic.NewFilter4[ecs.Projectile, ecs.Transform, ecs.Owner, ecs.Shot]()
		b.projectiles.Register(sim.World)
		b.shields = generic.NewFilter2[ecs.Shield, ecs.Team]()
		b.shields.Register(sim.World)
		b.registered = true
	}
	var f Frame
	frame, _ := sim.History.Frame(t.Tick)
	for _, p := range frame {
		f.Players = append(f.Players, [6]Num{Num(b.player(t, p.Entity, &p.Hitbox)), Num(p.Pos.X), Num(p.Pos.Z),
			Num(b.yaw.Get(p.Entity).Yaw), Num(p.Pos.Y), flag(p.Crouched)})
	}
	perMS := 1000 / float64(b.m.TickRate)
	iq := b.inputs.Query(sim.World)
	for iq.Next() {
		queue, in, lag := iq.Get()
		if queue.Applied != t.Tick {
			continue
		}
		bound := 0.0
		if in.Earliest > 0 {
			bound = max(float64(t.Tick)-in.Earliest, 0) * perMS
		}
		f.Lags = append(f.Lags, [3]Num{Num(b.player(t, iq.Entity(), nil)), Num(math.Round(lag.Ticks * perMS)), Num(math.Round(bound))})
	}
	b.presentHits(t)
	for _, c := range sim.Events.Clamps {
		b.clamps[shotLabel{c.Shooter, c.Shot, c.Weapon, c.Tick}] = c
	}
	b.decided = b.decided[:0]
	first := len(b.m.Shots)
	for i := range sim.Events.Shots {
		b.shot(t, sim, &sim.Events.Shots[i])
	}
	b.kills(sim, b.m.Shots[first:])
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
	if t.Tick%200 == 0 { // clamps of shots long decided, hits long judged
		for k := range b.clamps {
			if k.fired < t.Tick-1000 {
				delete(b.clamps, k)
			}
		}
		for _, m := range []map[hitKey]int64{b.present, b.pending} {
			for k, tick := range m {
				if tick < t.Tick-1000 {
					delete(m, k)
				}
			}
		}
	}
}

// player returns the index of a player, adding it when first seen; hb,
// when known, is its hitbox.
func (b *Builder) player(t *replay.Tick, e ecs.Entity, hb *geom.Hitbox) int {
	id, ok := t.RecordedID(b.variant, e)
	if !ok {
		return -1
	}
	if i, ok := b.players[id]; ok {
		if p := &b.m.Players[i]; p.Radius == 0 && hb != nil {
			p.Radius, p.Height, p.Crouched, p.Head = hb.Radius, Num(hb.Height), Num(hb.Top(true)), Num(hb.HeadHeight)
		}
		return i
	}
	p := Player{ID: id.WireID()}
	if hb != nil {
		p.Radius, p.Height, p.Crouched, p.Head = hb.Radius, Num(hb.Height), Num(hb.Top(true)), Num(hb.HeadHeight)
	}
	if b.sim(t).World.Alive(e) {
		if pl, team := b.names.Get(e); pl != nil && team != nil {
			p.Name, p.Team = pl.Name, team.ID
		}
	}
	b.players[id] = len(b.m.Players)
	b.m.Players = append(b.m.Players, p)
	return len(b.m.Players) - 1
}

// shot adds a shot decision of sim.
func (b *Builder) shot(t *replay.Tick, sim *systems.Simulation, ev *ecs.ShotEvent) {
	def := sim.Catalog.At(ev.Weapon)
	s := Shot{Tick: ev.Tick, Fired: ev.Fired, Shooter: b.player(t, ev.Shooter, nil), Weapon: def.Name, Kind: def.Kind,
		Result: ev.Result.String(), Target: -1, Head: ev.Head, Splash: ev.Splash, Damage: Num(ev.Damage), Dealt: Num(ev.Dealt),
		Point: vec(ev.Point.X, ev.Point.Y, ev.Point.Z), Rewound: [][5]Num{}}
	if ev.NoDamage != 0 {
		s.NoDamage = ev.NoDamage.String()
	}
	if ev.Result == ecs.ResultHit {
		s.Target = b.player(t, ev.Target, nil)
		if k, ok := keyOf(t, b.variant, ev); ok {
			s.key = k
			if _, hit := b.present[k]; !hit && ev.Dealt > 0 && tune.OutOfSight(sim, t.Tick, ev) {
				s.Disputed = true
				b.pending[k] = ev.Tick
			}
		}
	}
	if def.Kind == weapons.KindProjectile {
		s.Blast = Num(def.Splash.Radius)
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
		s.Rewound = append(s.Rewound, [5]Num{Num(b.player(t, p.Entity, &p.Hitbox)), Num(p.Pos.X), Num(p.Pos.Z),
			Num(p.Pos.Y), flag(p.Crouched)})
	}
	b.m.Shots = append(b.m.Shots, s)
}

// keyOf returns a hit's key, by the recorded entities of variant's
// simulation; false for one without them.
func keyOf(t *replay.Tick, variant int, ev *ecs.ShotEvent) (hitKey, bool) {
	shooter, ok := t.RecordedID(variant, ev.Shooter)
	if !ok {
		return hitKey{}, false
	}
	target, ok := t.RecordedID(variant, ev.Target)
	return hitKey{shooter: shooter, target: target, seq: ev.Seq}, ok
}

// presentHits reads the hits of the replay without rewind: a hit it makes
// is no disputed hit, whenever it makes it (a projectile's may land a
// tick apart).
func (b *Builder) presentHits(t *replay.Tick) {
	for i := range t.Variants[variantPresent].Events.Shots {
		ev := &t.Variants[variantPresent].Events.Shots[i]
		if ev.Result != ecs.ResultHit {
			continue
		}
		k, ok := keyOf(t, variantPresent, ev)
		if !ok {
			continue
		}
		b.present[k] = t.Tick
		if tick, ok := b.pending[k]; ok {
			delete(b.pending, k)
			for j := len(b.m.Shots) - 1; j >= 0 && b.m.Shots[j].Tick >= tick; j-- {
				if s := &b.m.Shots[j]; s.Tick == tick && s.key == k {
					s.Disputed = false
				}
			}
		}
	}
}

// kills marks the tick's shots that killed their target: a damaging hit of
// the killer on the victim with the weapon of one of the tick's kills.
func (b *Builder) kills(sim *systems.Simulation, shots []Shot) {
	for _, k := range sim.Events.Kills {
		for i := range sim.Events.Shots {
			ev := &sim.Events.Shots[i]
			if ev.Result == ecs.ResultHit && ev.Dealt > 0 && ev.Shooter == k.Killer && ev.Target == k.Victim && ev.Weapon == k.Weapon {
				// shots holds the tick's events in order (an invalid shot's too)
				if i < len(shots) {
					shots[i].Kill = true
				}
			}
		}
	}
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
