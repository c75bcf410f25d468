package replay

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/systems"
	"github.com/rewind-gg/rewind/trimesh"
	"github.com/rewind-gg/rewind/weapons"
)

// Setup is a match's setup as a recording's header holds it: every field
// of systems.Config that the simulation's results depend on, the level the
// match was played on, and labels. Floats go through JSON exactly (Go
// writes the shortest decimal that reads back to the same bits); the spread
// seed is a string, since JSON readers other than Go's lose integers above
// 2^53.
type Setup struct {
	// Labels, free-form: the room's id and name, when the match started.
	Room    string `json:"room,omitempty"`
	Name    string `json:"name,omitempty"`
	Started string `json:"started,omitempty"`

	TickRate          int     `json:"tick_rate"`
	LagComp           LagComp `json:"lag_comp"`
	FriendlyFire      bool    `json:"friendly_fire"`
	EyeHeight         float64 `json:"eye_height"`
	CrouchEyeHeight   float64 `json:"crouch_eye_height"`
	RespawnTicks      int     `json:"respawn_ticks"`
	InvulnerableTicks int     `json:"invulnerable_ticks"`
	SpreadSeed        uint64  `json:"spread_seed,string"`
	PoseScale         float64 `json:"pose_scale"`
	// Bounds and KillVolumes are the simulation's (a zero box: no bounds):
	// those of the level, as the server plays it.
	Bounds      Box   `json:"bounds"`
	KillVolumes []Box `json:"kill_volumes"`

	// Kinds are the weapon kinds' names by their index in the room's
	// registry (the index shots carry in ecs.LagCompensated.Kind), as far as
	// the weapons use them; "" for an index no weapon uses.
	Kinds []string `json:"kinds"`
	// Weapons are the catalogue's definitions in id order, as the catalogue
	// holds them (defaults applied), under weapons.Definition's Go field
	// names; Classes its classes, the first being the default: their
	// loadouts and movement (movement.Character, capsule included, under
	// its Go field names).
	Weapons []weapons.Definition `json:"weapons"`
	Classes []weapons.Class      `json:"classes"`

	// LevelRef names the level in the JSON: its name, digest and triangle
	// count (nil: no level). The level itself follows the JSON in the
	// header, as its canonical encoding (docs/levels.md): a recording
	// replays on its own geometry wherever and whenever it is read.
	LevelRef *LevelRef `json:"level,omitempty"`
	// Level is the level the match was played on, canonicalized (nil:
	// none): what Config builds the simulation's mesh of. A reader decodes
	// it from the header; it has no sources or waypoints.
	Level *level.Level `json:"-"`
}

// LevelRef is what the setup's JSON says of the level.
type LevelRef struct {
	Name      string `json:"name"`
	Digest    string `json:"digest"` // SHA-256 of the canonical encoding, hex
	Triangles int    `json:"triangles"`
}

// decodeLevel sets s.Level from the header's encoding, which must be the
// level LevelRef names.
func (s *Setup) decodeLevel(enc []byte) error {
	switch {
	case s.LevelRef == nil && len(enc) == 0:
		return nil
	case s.LevelRef == nil:
		return fmt.Errorf("%d bytes of level, but the setup names none", len(enc))
	}
	l, err := level.Decode(s.LevelRef.Name, enc)
	if err != nil {
		return err
	}
	if d := l.Digest().String(); d != s.LevelRef.Digest {
		return fmt.Errorf("the level's digest is %s, the setup names %s", d, s.LevelRef.Digest)
	}
	s.Level = l
	return nil
}

// LagComp is lagcomp.Config.
type LagComp struct {
	WindowTicks    int     `json:"window_ticks"`
	ViewResolution int     `json:"view_resolution"`
	Bucketing      bool    `json:"bucketing"`
	CellSize       float64 `json:"cell_size"`
	MaxUnlagTicks  float64 `json:"max_unlag_ticks"`
}

// Config returns the settings as a lagcomp.Config.
func (l LagComp) Config() lagcomp.Config {
	return lagcomp.Config{WindowTicks: l.WindowTicks, ViewResolution: l.ViewResolution, Bucketing: l.Bucketing,
		CellSize: l.CellSize, MaxUnlagTicks: l.MaxUnlagTicks}
}

// Box is an axis-aligned box, its corners as [x, y, z].
type Box struct {
	Min [3]float64 `json:"min"`
	Max [3]float64 `json:"max"`
}

// AABB returns the box as geometry.
func (b Box) AABB() geom.AABB {
	return geom.AABB{Min: geom.FromArray(b.Min), Max: geom.FromArray(b.Max)}
}

func boxOf(a geom.AABB) Box { return Box{Min: a.Min.Array(), Max: a.Max.Array()} }

// NewSetup returns the setup of a simulation built with cfg on lvl (nil:
// none), whose mesh cfg.Level is: lvl must be canonicalized
// (level.Level.Canonicalize) before its mesh is built, so that a replay,
// which builds its mesh from the encoding, meets the same triangles in the
// same order. The weapons are taken from cfg.Catalog, or from the
// catalogue systems.New builds of cfg.Weapons and cfg.Classes. Errors name
// the field.
func NewSetup(cfg systems.Config, lvl *level.Level) (Setup, error) {
	cat := cfg.Catalog
	if cat == nil {
		reg := cfg.Kinds
		if reg == nil {
			reg = weapons.NewRegistry()
		}
		var err error
		if cat, err = weapons.NewCatalog(reg, cfg.Weapons, cfg.Classes...); err != nil {
			return Setup{}, fmt.Errorf("replay: setup: %w", err)
		}
	}
	lc := cfg.LagComp
	s := Setup{
		TickRate:          cfg.TickRate,
		LagComp:           LagComp{lc.WindowTicks, lc.ViewResolution, lc.Bucketing, lc.CellSize, lc.MaxUnlagTicks},
		FriendlyFire:      cfg.FriendlyFire,
		EyeHeight:         cfg.EyeHeight,
		CrouchEyeHeight:   cfg.CrouchEyeHeight,
		Bounds:            boxOf(cfg.Bounds),
		KillVolumes:       []Box{},
		RespawnTicks:      cfg.RespawnTicks,
		InvulnerableTicks: cfg.InvulnerableTicks,
		SpreadSeed:        cfg.SpreadSeed,
		PoseScale:         cfg.PoseScale,
		Kinds:             []string{},
		Weapons:           make([]weapons.Definition, 0, cat.Len()),
		Classes:           []weapons.Class{},
	}
	if lvl != nil {
		if !lvl.IsCanonical() {
			return Setup{}, fmt.Errorf("replay: setup: level %s: not canonicalized (level.Level.Canonicalize) before its mesh was built: a replay would not meet its triangles in the same order", lvl.Name)
		}
		s.Level = lvl
		s.LevelRef = &LevelRef{Name: lvl.Name, Digest: lvl.Digest().String(), Triangles: len(lvl.Triangles)}
	}
	for id := range cat.Len() {
		d := *cat.At(uint16(id))
		d.Params = maps.Clone(d.Params) // the setup must not share the catalogue's
		s.Weapons = append(s.Weapons, d)
		k := int(cat.KindOf(uint16(id)))
		for len(s.Kinds) <= k {
			s.Kinds = append(s.Kinds, "")
		}
		s.Kinds[k] = d.Kind
	}
	for _, c := range cat.Classes() {
		s.Classes = append(s.Classes, weapons.Class{Name: c.Name, Weapons: slices.Clone(c.Weapons), Movement: c.Movement})
	}
	for _, k := range cfg.KillVolumes {
		s.KillVolumes = append(s.KillVolumes, boxOf(k))
	}
	if err := s.checkFinite(); err != nil {
		return Setup{}, err
	}
	return s, nil
}

// checkFinite names the first number JSON cannot hold.
func (s *Setup) checkFinite() error {
	bad := func(field string, fs ...float64) error {
		for _, f := range fs {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("replay: setup: %s: %v cannot be recorded (JSON has no non-finite numbers)", field, f)
			}
		}
		return nil
	}
	b := s.Bounds
	errs := []error{
		bad("lag_comp.cell_size", s.LagComp.CellSize),
		bad("lag_comp.max_unlag_ticks", s.LagComp.MaxUnlagTicks),
		bad("eye_height", s.EyeHeight),
		bad("crouch_eye_height", s.CrouchEyeHeight),
		bad("bounds", b.Min[0], b.Min[1], b.Min[2], b.Max[0], b.Max[1], b.Max[2]),
		bad("pose_scale", s.PoseScale),
	}
	for i, k := range s.KillVolumes {
		errs = append(errs, bad(fmt.Sprintf("kill_volumes[%d]", i), k.Min[0], k.Min[1], k.Min[2], k.Max[0], k.Max[1], k.Max[2]))
	}
	for _, c := range s.Classes {
		for _, p := range c.Movement.Params() {
			errs = append(errs, bad(fmt.Sprintf("classes[%s].movement.%s", c.Name, p.Key), *p.Value))
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Config returns the systems.Config the setup was recorded from, its
// weapons defined against kinds (nil: the built-in kinds) and its mesh
// built of the level (once per call: a replay's variants share it). A kind
// the setup names must be registered in kinds at the index it had when
// recorded; the error names it otherwise. Systems.New checks the rest.
func (s *Setup) Config(kinds *weapons.Registry) (systems.Config, error) {
	if kinds == nil {
		kinds = weapons.NewRegistry()
	}
	for i, name := range s.Kinds {
		if name == "" {
			continue
		}
		k, ok := kinds.Lookup(name)
		switch {
		case !ok:
			return systems.Config{}, fmt.Errorf("replay: setup: kinds[%d]: weapon kind %q is not registered: "+
				"a kind registered in code replays only with a registry that registers it (ReplayConfig.Kinds; registered: %s)",
				i, name, kinds.Names())
		case int(k) != i:
			return systems.Config{}, fmt.Errorf("replay: setup: kinds[%d]: weapon kind %q is kind %d in the registry, "+
				"%d when recorded: register the kinds in the recorded order", i, name, k, i)
		}
	}
	defs := make([]weapons.Definition, len(s.Weapons))
	for i, d := range s.Weapons {
		if !slices.Contains(s.Kinds, d.Kind) {
			return systems.Config{}, fmt.Errorf("replay: setup: weapons[%d] (%s).kind: %q is not among the recorded kinds %q",
				i, d.Name, d.Kind, s.Kinds)
		}
		d.Params = maps.Clone(d.Params) // the catalogue fills in defaults: not into the setup
		defs[i] = d
	}
	classes := make([]weapons.Class, len(s.Classes))
	for i, c := range s.Classes {
		classes[i] = weapons.Class{Name: c.Name, Weapons: slices.Clone(c.Weapons), Movement: c.Movement}
	}
	var kill []geom.AABB
	for _, k := range s.KillVolumes {
		kill = append(kill, k.AABB())
	}
	var mesh *trimesh.Mesh
	if s.Level != nil {
		var err error
		if mesh, err = s.Level.Mesh(); err != nil {
			return systems.Config{}, fmt.Errorf("replay: setup: %w", err)
		}
	}
	return systems.Config{
		Level:             mesh,
		TickRate:          s.TickRate,
		LagComp:           s.LagComp.Config(),
		FriendlyFire:      s.FriendlyFire,
		EyeHeight:         s.EyeHeight,
		CrouchEyeHeight:   s.CrouchEyeHeight,
		Bounds:            s.Bounds.AABB(),
		KillVolumes:       kill,
		RespawnTicks:      s.RespawnTicks,
		InvulnerableTicks: s.InvulnerableTicks,
		Kinds:             kinds,
		Weapons:           defs,
		Classes:           classes,
		SpreadSeed:        s.SpreadSeed,
		PoseScale:         s.PoseScale,
	}, nil
}
