package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/fields"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/weapons"
)

// Scenario is a validated scenario.
type Scenario struct {
	Description string
	// Level is the level the scenario plays on, as written: "arena" (the
	// built-in arena, level.DefaultArena), a glTF file's path relative to
	// the scenario file, or "" (no level: only the static boxes). Map is
	// that level once read (ParseFile reads a file; Parse only the arena).
	Level        string
	Map          *level.Level
	TickRate     int
	Ticks        int
	LagComp      LagComp
	FriendlyFire bool
	Weapons      []weapons.Definition // ordered by name
	Entities     []Entity
	Shots        []Shot
}

// LagComp is the scenario's lag-compensation block.
type LagComp struct {
	WindowTicks    int
	ViewResolution int
	Bucketing      bool
}

// Entity kinds.
const (
	KindPlayer = "player"
	KindStatic = "static"
	KindShield = "shield"
)

// Entity is a player, a static box or a shield.
type Entity struct {
	ID   string
	Kind string

	// players
	Team           uint8
	ViewDelayTicks float64
	Radius, Height float64
	Path           []Keyframe // ticks strictly increasing
	DespawnTick    *int       // players and shields: absent from this tick on

	// static and shield
	Box       geom.AABB
	SpawnTick int // shields
}

// Keyframe is a player's position at a tick.
type Keyframe struct {
	Tick int
	Pos  geom.Vec3
}

// Shot is a scripted use of a weapon.
type Shot struct {
	Tick    int
	Shooter string
	Weapon  string
	Origin  geom.Vec3
	Dir     geom.Vec3
}

// Limits of a scenario's numbers.
const (
	MaxTicks    = 1_000_000
	MaxTickRate = 1000
)

// Error is an invalid scenario: Path names the field (shots[3].weapon), Msg
// says what is wrong with it.
type Error = fields.Error

// Parse reads and validates a scenario. An invalid scenario gives an *Error
// naming the field; malformed JSON gives an error with the line and column.
func Parse(data []byte) (*Scenario, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, jsonError(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &fields.Error{Msg: fmt.Sprintf("invalid JSON at %s: data after the scenario object", position(data, dec.InputOffset()))}
	}
	o, err := fields.AsObject(root, "")
	if err != nil {
		return nil, &fields.Error{Msg: "expected a JSON object at the top level"}
	}
	return parseRoot(o, weapons.NewRegistry())
}

// ParseFile reads, validates and parses the scenario file at path, and
// reads the level it names relative to the file. A level that cannot be
// read is an *Error naming the field level.
func ParseFile(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sc, err := Parse(data)
	if err != nil {
		return nil, err
	}
	if sc.Map == nil && sc.Level != "" {
		file := sc.Level
		if !filepath.IsAbs(file) {
			file = filepath.Join(filepath.Dir(path), file)
		}
		l, _, err := level.ReadFile(file, level.Options{})
		if err != nil {
			return nil, fields.Errorf("level", "%v", err)
		}
		sc.Map = l
	}
	return sc, nil
}

func jsonError(data []byte, err error) error {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		// Offset counts the offending byte; report the byte itself.
		return &fields.Error{Msg: fmt.Sprintf("invalid JSON at %s: %v", position(data, syn.Offset-1), syn)}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &fields.Error{Msg: "invalid JSON: unexpected end of input"}
	}
	return &fields.Error{Msg: "invalid JSON: " + err.Error()}
}

// position turns a byte offset into "line L, column C".
func position(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return fmt.Sprintf("line %d, column %d", line, col)
}

func parseRoot(o *fields.Object, reg *weapons.Registry) (*Scenario, error) {
	sc := &Scenario{}
	var err error
	if sc.Description, err = o.Str("description", false, ""); err != nil {
		return nil, err
	}
	if sc.Level, err = o.Str("level", false, ""); err != nil {
		return nil, err
	}
	if sc.Level == level.ArenaName {
		sc.Map = level.DefaultArena()
	}
	if sc.TickRate, err = o.Integer("tick_rate", false, 20, 1, MaxTickRate); err != nil {
		return nil, err
	}
	if sc.Ticks, err = o.Integer("ticks", true, 0, 1, MaxTicks); err != nil {
		return nil, err
	}
	if sc.LagComp, err = parseLagComp(o); err != nil {
		return nil, err
	}
	if sc.FriendlyFire, err = o.Boolean("friendly_fire", false); err != nil {
		return nil, err
	}
	if sc.Weapons, err = parseWeapons(o, reg); err != nil {
		return nil, err
	}
	ids := map[string]int{}
	if sc.Entities, err = parseEntities(o, ids); err != nil {
		return nil, err
	}
	if sc.Shots, err = parseShots(o, sc, ids); err != nil {
		return nil, err
	}
	return sc, o.Done()
}

func parseLagComp(root *fields.Object) (LagComp, error) {
	def := lagcomp.DefaultConfig()
	lc := LagComp{WindowTicks: def.WindowTicks, ViewResolution: def.ViewResolution, Bucketing: def.Bucketing}
	o, err := root.Object("lagcomp", false)
	if err != nil || o == nil {
		return lc, err
	}
	if lc.WindowTicks, err = o.Integer("window_ticks", false, lc.WindowTicks, 0, lagcomp.MaxWindowTicks); err != nil {
		return lc, err
	}
	if lc.ViewResolution, err = o.Integer("view_resolution", false, lc.ViewResolution, 0, lagcomp.MaxViewResolution); err != nil {
		return lc, err
	}
	if lc.Bucketing, err = o.Boolean("bucketing", lc.Bucketing); err != nil {
		return lc, err
	}
	return lc, o.Done()
}

// parseWeapons reads the weapons block: definitions by name, in the weapons
// file's format (docs/weapons.md); the scenario format's fields (range,
// speed, radius, lifetime_ticks, reach) are a subset.
func parseWeapons(root *fields.Object, reg *weapons.Registry) ([]weapons.Definition, error) {
	o, err := root.Object("weapons", false)
	if err != nil || o == nil {
		return nil, err
	}
	var defs []weapons.Definition
	for _, name := range o.Keys() {
		w, err := o.Object(name, true)
		if err != nil {
			return nil, err
		}
		d, err := weapons.DecodeDefinition(w, name, reg)
		if err != nil {
			return nil, err
		}
		defs = append(defs, d)
	}
	return defs, nil
}

func parseEntities(root *fields.Object, ids map[string]int) ([]Entity, error) {
	arr, path, err := root.Array("entities", true)
	if err != nil {
		return nil, err
	}
	ents := make([]Entity, 0, len(arr))
	for i, v := range arr {
		o, err := fields.AsObject(v, fields.Index(path, i))
		if err != nil {
			return nil, err
		}
		e, err := parseEntity(o)
		if err != nil {
			return nil, err
		}
		if _, dup := ids[e.ID]; dup {
			return nil, fields.Errorf(fields.Join(o.Path, "id"), "duplicate id %q", e.ID)
		}
		ids[e.ID] = len(ents)
		ents = append(ents, e)
	}
	return ents, nil
}

func parseEntity(o *fields.Object) (Entity, error) {
	var e Entity
	var err error
	if e.ID, err = o.Str("id", true, ""); err != nil {
		return e, err
	}
	if e.ID == "" {
		return e, fields.Errorf(fields.Join(o.Path, "id"), "must not be empty")
	}
	if e.Kind, err = o.Str("kind", false, KindPlayer); err != nil {
		return e, err
	}
	switch e.Kind {
	case KindPlayer:
		err = parsePlayer(o, &e)
	case KindStatic:
		e.Box, err = parseBox(o)
	case KindShield:
		err = parseShield(o, &e)
	default:
		return e, fields.Errorf(fields.Join(o.Path, "kind"), "unknown kind %q (known: player, static, shield)", e.Kind)
	}
	if err != nil {
		return e, err
	}
	return e, o.Done()
}

func parsePlayer(o *fields.Object, e *Entity) error {
	team, err := o.Integer("team", true, 0, 0, 255)
	if err != nil {
		return err
	}
	e.Team = uint8(team)
	if e.ViewDelayTicks, err = o.Number("view_delay_ticks", false, 0); err != nil {
		return err
	}
	if e.ViewDelayTicks < 0 || e.ViewDelayTicks > MaxTicks {
		return fields.Errorf(fields.Join(o.Path, "view_delay_ticks"), "%v is outside 0..%d", e.ViewDelayTicks, MaxTicks)
	}
	e.Radius, e.Height = 0.4, 1.8
	if c, err := o.Object("capsule", false); err != nil {
		return err
	} else if c != nil {
		if e.Radius, err = c.Number("radius", false, e.Radius); err != nil {
			return err
		}
		if e.Height, err = c.Number("height", false, e.Height); err != nil {
			return err
		}
		if !(e.Radius > 0) || e.Radius > 100 {
			return fields.Errorf(fields.Join(c.Path, "radius"), "%v is outside (0, 100] metres", e.Radius)
		}
		if e.Height < 2*e.Radius || e.Height > 1000 {
			return fields.Errorf(fields.Join(c.Path, "height"), "%v must be at least twice the radius (%v) and at most 1000", e.Height, e.Radius)
		}
		if err := c.Done(); err != nil {
			return err
		}
	}
	arr, path, err := o.Array("path", true)
	if err != nil {
		return err
	}
	if len(arr) == 0 {
		return fields.Errorf(path, "needs at least one keyframe")
	}
	for i, v := range arr {
		k, err := fields.AsObject(v, fields.Index(path, i))
		if err != nil {
			return err
		}
		var kf Keyframe
		if kf.Tick, err = k.Integer("tick", true, 0, 0, MaxTicks); err != nil {
			return err
		}
		if i > 0 && kf.Tick <= e.Path[i-1].Tick {
			return fields.Errorf(fields.Join(k.Path, "tick"), "%d is not after the previous keyframe's tick %d", kf.Tick, e.Path[i-1].Tick)
		}
		if kf.Pos, err = k.Vec3("pos"); err != nil {
			return err
		}
		if err := k.Done(); err != nil {
			return err
		}
		e.Path = append(e.Path, kf)
	}
	e.DespawnTick, err = o.OptInteger("despawn_tick", 0, MaxTicks)
	return err
}

func parseShield(o *fields.Object, e *Entity) error {
	var err error
	if e.Box, err = parseBox(o); err != nil {
		return err
	}
	if e.SpawnTick, err = o.Integer("spawn_tick", false, 0, 0, MaxTicks); err != nil {
		return err
	}
	if e.DespawnTick, err = o.OptInteger("despawn_tick", 0, MaxTicks); err != nil {
		return err
	}
	if e.DespawnTick != nil && *e.DespawnTick <= e.SpawnTick {
		return fields.Errorf(fields.Join(o.Path, "despawn_tick"), "%d is not after spawn_tick %d", *e.DespawnTick, e.SpawnTick)
	}
	return nil
}

func parseBox(o *fields.Object) (geom.AABB, error) {
	b, err := o.Object("box", true)
	if err != nil {
		return geom.AABB{}, err
	}
	var box geom.AABB
	if box.Min, err = b.Vec3("min"); err != nil {
		return box, err
	}
	if box.Max, err = b.Vec3("max"); err != nil {
		return box, err
	}
	if box.Min.X > box.Max.X || box.Min.Y > box.Max.Y || box.Min.Z > box.Max.Z {
		return box, fields.Errorf(fields.Join(b.Path, "max"), "%v is below min %v on some axis", box.Max, box.Min)
	}
	return box, b.Done()
}

func parseShots(root *fields.Object, sc *Scenario, ids map[string]int) ([]Shot, error) {
	arr, path, err := root.Array("shots", false)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, d := range sc.Weapons {
		known[d.Name] = true
	}
	shots := make([]Shot, 0, len(arr))
	for i, v := range arr {
		o, err := fields.AsObject(v, fields.Index(path, i))
		if err != nil {
			return nil, err
		}
		var s Shot
		if s.Tick, err = o.Integer("tick", true, 0, 0, sc.Ticks-1); err != nil {
			return nil, err
		}
		if s.Shooter, err = o.Str("shooter", true, ""); err != nil {
			return nil, err
		}
		if j, ok := ids[s.Shooter]; !ok {
			return nil, fields.Errorf(fields.Join(o.Path, "shooter"), "unknown entity %q", s.Shooter)
		} else if k := sc.Entities[j].Kind; k != KindPlayer {
			return nil, fields.Errorf(fields.Join(o.Path, "shooter"), "%q is a %s, not a player", s.Shooter, k)
		}
		if s.Weapon, err = o.Str("weapon", true, ""); err != nil {
			return nil, err
		}
		if !known[s.Weapon] {
			return nil, fields.Errorf(fields.Join(o.Path, "weapon"), "unknown weapon %q", s.Weapon)
		}
		if s.Origin, err = o.Vec3("origin"); err != nil {
			return nil, err
		}
		if s.Dir, err = o.Vec3("dir"); err != nil {
			return nil, err
		}
		if s.Dir.LenSq() == 0 || math.IsInf(s.Dir.LenSq(), 0) {
			return nil, fields.Errorf(fields.Join(o.Path, "dir"), "must not be [0, 0, 0]")
		}
		if err := o.Done(); err != nil {
			return nil, err
		}
		shots = append(shots, s)
	}
	return shots, nil
}
