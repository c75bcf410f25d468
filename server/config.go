package server

import (
	"fmt"
	"math"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/weapons"
)

// Config configures a Server. Field tags are the keys of the config file;
// docs/running.md is the reference.
type Config struct {
	Listen       string        `koanf:"listen"`
	TickRate     int           `koanf:"tick_rate"`
	SnapshotRate int           `koanf:"snapshot_rate"`
	MaxRooms     int           `koanf:"max_rooms"`
	MaxPlayers   int           `koanf:"max_players"`
	IdleTimeout  time.Duration `koanf:"idle_timeout"`
	// MaxDatagramRate is how many datagrams per second a client may send
	// before the excess is dropped (a flood guard; a client sends one per
	// tick, so at least twice tick_rate).
	MaxDatagramRate int `koanf:"max_datagram_rate"`
	// InputTimeout is how long a joined player may send no input before it
	// loses its seat: a connection that keeps QUIC alive but does not play
	// frees its seat after this (close code 5).
	InputTimeout time.Duration `koanf:"input_timeout"`
	TLS          TLSConfig     `koanf:"tls"`
	LagComp      LagCompConfig `koanf:"lagcomp"`
	Match        MatchConfig   `koanf:"match"`
	Arena        ArenaConfig   `koanf:"arena"`
	// WeaponsFile names the weapons file (docs/weapons.md); empty: the
	// built-in weapons (weapons/default.toml).
	WeaponsFile string `koanf:"weapons_file"`
	// Kinds are the weapon kinds the server knows: the built-ins when nil.
	// A studio's own kinds are registered in code (docs/weapons.md), so this
	// is not a file or flag setting.
	Kinds *weapons.Registry `koanf:"-"`
	Admin AdminConfig       `koanf:"admin"`
	Log   LogConfig         `koanf:"log"`
}

// TLSConfig names the certificate and key files; both empty means a
// self-signed certificate is generated at start.
type TLSConfig struct {
	Cert string `koanf:"cert"`
	Key  string `koanf:"key"`
}

// LagCompConfig tunes lag compensation (see lagcomp.Config).
type LagCompConfig struct {
	WindowTicks    int     `koanf:"window_ticks"`
	ViewResolution int     `koanf:"view_resolution"`
	Bucketing      bool    `koanf:"bucketing"`
	CellSize       float64 `koanf:"cell_size"`
	// MaxUnlag caps the view lag any claim is granted (Source's
	// sv_maxunlag): the favour-the-shooter cap. 0: the window.
	MaxUnlag time.Duration `koanf:"max_unlag"`
	// ViewLagTolerance is what the server adds to the view lag it measured
	// of a client (round trip, input lead, interpolation delay) before it
	// cuts a claim: room for jitter (Source: 200 ms).
	ViewLagTolerance time.Duration `koanf:"view_lag_tolerance"`
	// MaxInterpDelay bounds the interpolation delay a client declares at
	// join, which counts toward the view lag it is granted.
	MaxInterpDelay time.Duration `koanf:"max_interp_delay"`
}

// MatchConfig holds the match rules.
type MatchConfig struct {
	FriendlyFire      bool    `koanf:"friendly_fire"`
	Health            float64 `koanf:"health"`
	RespawnTicks      int     `koanf:"respawn_ticks"`
	InvulnerableTicks int     `koanf:"invulnerable_ticks"` // after a respawn
	EyeHeight         float64 `koanf:"eye_height"`
	Radius            float64 `koanf:"radius"` // player hitbox capsule
	Height            float64 `koanf:"height"`
	HeadHeight        float64 `koanf:"head_height"`
}

// ArenaConfig is the map: a square floor players cannot leave, their speed,
// and static boxes.
type ArenaConfig struct {
	Size  float64 `koanf:"size"`  // side of the square, metres, centred on the origin
	Speed float64 `koanf:"speed"` // movement speed, m/s
	Boxes []Box   `koanf:"boxes"`
}

// Box is a static axis-aligned box.
type Box struct {
	Min [3]float64 `koanf:"min"`
	Max [3]float64 `koanf:"max"`
}

// Bounds is the arena's floor: players are kept within it.
func (a *ArenaConfig) Bounds() geom.AABB {
	half := a.Size / 2
	return geom.AABB{Min: geom.V(-half, 0, -half), Max: geom.V(half, 0, half)}
}

// AABB is the box as geometry.
func (b Box) AABB() geom.AABB {
	return geom.AABB{Min: geom.FromArray(b.Min), Max: geom.FromArray(b.Max)}
}

// AdminConfig configures the admin HTTP port (metrics and pprof).
type AdminConfig struct {
	Listen string `koanf:"listen"` // empty: no admin port
}

// LogConfig configures logging.
type LogConfig struct {
	Level  string `koanf:"level"`  // trace, debug, info, warn, error
	Format string `koanf:"format"` // auto (console on a terminal, else JSON), json, console
}

// DefaultConfig returns a 20 Hz server on 127.0.0.1:4433 with Dino Squad's
// lag-compensation tuning, 6v6 rooms, the built-in weapons and a 60 m arena
// with four pillars.
func DefaultConfig() Config {
	return Config{
		Listen:          "127.0.0.1:4433",
		TickRate:        20,
		SnapshotRate:    20,
		MaxRooms:        256,
		MaxPlayers:      12,
		IdleTimeout:     10 * time.Second,
		MaxDatagramRate: 300,
		InputTimeout:    10 * time.Second,
		LagComp: LagCompConfig{WindowTicks: 30, Bucketing: true, CellSize: 4,
			ViewLagTolerance: 200 * time.Millisecond, MaxInterpDelay: 250 * time.Millisecond},
		Match: MatchConfig{Health: 100, RespawnTicks: 60, InvulnerableTicks: 40, EyeHeight: 1.6,
			Radius: 0.4, Height: 1.8, HeadHeight: 0.3},
		Arena: ArenaConfig{Size: 60, Speed: 6, Boxes: []Box{
			{Min: [3]float64{-12, 0, -12}, Max: [3]float64{-10, 3, -10}},
			{Min: [3]float64{10, 0, -12}, Max: [3]float64{12, 3, -10}},
			{Min: [3]float64{-12, 0, 10}, Max: [3]float64{-10, 3, 12}},
			{Min: [3]float64{10, 0, 10}, Max: [3]float64{12, 3, 12}},
		}},
		Admin: AdminConfig{Listen: "127.0.0.1:9090"},
		Log:   LogConfig{Level: "info", Format: "auto"},
	}
}

// FlagKeys maps the command line's flag names to config keys.
var FlagKeys = map[string]string{
	"listen":        "listen",
	"tick-rate":     "tick_rate",
	"snapshot-rate": "snapshot_rate",
	"max-players":   "max_players",
	"window":        "lagcomp.window_ticks",
	"resolution":    "lagcomp.view_resolution",
	"no-buckets":    "lagcomp.bucketing",
	"friendly-fire": "match.friendly_fire",
	"admin":         "admin.listen",
	"log-level":     "log.level",
	"log-format":    "log.format",
	"tls-cert":      "tls.cert",
	"tls-key":       "tls.key",
	"weapons":       "weapons_file",
}

// EnvPrefix starts the environment variables that override config keys:
// REWIND_TICK_RATE=30, REWIND_LAGCOMP__WINDOW_TICKS=10 (a double underscore
// separates sections).
const EnvPrefix = "REWIND_"

// LoadConfig builds the configuration from the defaults, then the file at
// path (TOML or YAML by extension; none if empty), then the REWIND_*
// variables of environ, then the flags of fs that were set (named in
// FlagKeys; --no-buckets negates). Unknown keys are errors, and every error
// names the key. The weapons file is read and checked by New (or Validate),
// after the program has had a chance to set Kinds.
func LoadConfig(path string, environ []string, fs *pflag.FlagSet) (Config, error) {
	k := koanf.New(".")
	if err := k.Load(confmap.Provider(defaultMap(), "."), nil); err != nil {
		return Config{}, fmt.Errorf("config: defaults: %w", err)
	}
	known := map[string]bool{}
	for _, key := range k.Keys() {
		known[key] = true
	}
	if path != "" {
		var parser koanf.Parser
		switch strings.ToLower(filepath.Ext(path)) {
		case ".toml":
			parser = toml.Parser()
		case ".yaml", ".yml":
			parser = yaml.Parser()
		default:
			return Config{}, fmt.Errorf("config: %s: unknown format (use .toml, .yaml or .yml)", path)
		}
		fk := koanf.New(".")
		if err := fk.Load(file.Provider(path), parser); err != nil {
			return Config{}, fmt.Errorf("config: %s: %w", path, err)
		}
		if err := unknownKeys(fk, known, path); err != nil {
			return Config{}, err
		}
		if err := k.Merge(fk); err != nil {
			return Config{}, fmt.Errorf("config: %s: %w", path, err)
		}
	}
	ek := koanf.New(".")
	err := ek.Load(env.Provider(".", env.Opt{
		Prefix:      EnvPrefix,
		EnvironFunc: func() []string { return environ },
		TransformFunc: func(key, v string) (string, any) {
			key = strings.ToLower(strings.TrimPrefix(key, EnvPrefix))
			return strings.ReplaceAll(key, "__", "."), v
		},
	}), nil)
	if err != nil {
		return Config{}, fmt.Errorf("config: environment: %w", err)
	}
	if err := unknownKeys(ek, known, "environment"); err != nil {
		return Config{}, err
	}
	if err := k.Merge(ek); err != nil {
		return Config{}, fmt.Errorf("config: environment: %w", err)
	}
	if fs != nil {
		err := k.Load(posflag.ProviderWithFlag(fs, ".", nil, func(f *pflag.Flag) (string, any) {
			key, ok := FlagKeys[f.Name]
			if !ok || !f.Changed {
				return "", nil
			}
			v := posflag.FlagVal(fs, f)
			if f.Name == "no-buckets" {
				b, _ := v.(bool)
				v = !b
			}
			return key, v
		}), nil)
		if err != nil {
			return Config{}, fmt.Errorf("config: flags: %w", err)
		}
	}
	cfg := Config{}
	err = k.UnmarshalWithConf("", &cfg, koanf.UnmarshalConf{DecoderConfig: &mapstructure.DecoderConfig{
		DecodeHook:       mapstructure.ComposeDecodeHookFunc(mapstructure.StringToTimeDurationHookFunc()),
		WeaklyTypedInput: true, // environment variables are strings
		Result:           &cfg,
		TagName:          "koanf",
		ErrorUnused:      true,
	}})
	if err != nil {
		return Config{}, fmt.Errorf("config: %s", oneLine(err))
	}
	// The weapons file waits for New: a program may still register kinds of
	// its own in cfg.Kinds.
	return cfg, cfg.validate(false)
}

// oneLine flattens the decoder's multi-line report into one line that still
// names every key at fault.
func oneLine(err error) string {
	var parts []string
	for _, l := range strings.Split(strings.TrimPrefix(err.Error(), "decoding failed due to the following error(s):"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

func unknownKeys(k *koanf.Koanf, known map[string]bool, where string) error {
	for _, key := range k.Keys() {
		if known[key] || known[topOf(key)+".*"] {
			continue
		}
		return fmt.Errorf("config: %s: unknown key %q", where, key)
	}
	return nil
}

func topOf(key string) string {
	if i := strings.IndexByte(key, '.'); i >= 0 {
		return key[:i]
	}
	return key
}

// defaultMap is DefaultConfig as a koanf map; lists of tables (weapons,
// arena boxes) are whole values that a file replaces.
func defaultMap() map[string]any {
	d := DefaultConfig()
	boxes := make([]any, len(d.Arena.Boxes))
	for i, b := range d.Arena.Boxes {
		boxes[i] = map[string]any{"min": b.Min[:], "max": b.Max[:]}
	}
	return map[string]any{
		"listen": d.Listen, "tick_rate": d.TickRate, "snapshot_rate": d.SnapshotRate, "max_rooms": d.MaxRooms,
		"max_players": d.MaxPlayers, "idle_timeout": d.IdleTimeout.String(), "max_datagram_rate": d.MaxDatagramRate,
		"input_timeout": d.InputTimeout.String(),
		"tls.cert":      d.TLS.Cert, "tls.key": d.TLS.Key,
		"lagcomp.window_ticks": d.LagComp.WindowTicks, "lagcomp.view_resolution": d.LagComp.ViewResolution,
		"lagcomp.bucketing": d.LagComp.Bucketing, "lagcomp.cell_size": d.LagComp.CellSize,
		"lagcomp.max_unlag": d.LagComp.MaxUnlag.String(), "lagcomp.view_lag_tolerance": d.LagComp.ViewLagTolerance.String(),
		"lagcomp.max_interp_delay": d.LagComp.MaxInterpDelay.String(),
		"match.friendly_fire":      d.Match.FriendlyFire, "match.health": d.Match.Health, "match.respawn_ticks": d.Match.RespawnTicks,
		"match.invulnerable_ticks": d.Match.InvulnerableTicks,
		"match.eye_height":         d.Match.EyeHeight, "match.radius": d.Match.Radius, "match.height": d.Match.Height,
		"match.head_height": d.Match.HeadHeight,
		"arena.size":        d.Arena.Size, "arena.speed": d.Arena.Speed, "arena.boxes": boxes,
		"weapons_file": d.WeaponsFile,
		"admin.listen": d.Admin.Listen, "log.level": d.Log.Level, "log.format": d.Log.Format,
	}
}

// Validate reports the first invalid field, by its config key, the weapons
// file included (checked against Kinds).
func (c *Config) Validate() error { return c.validate(true) }

func (c *Config) validate(withWeapons bool) error {
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("config: %s: %s", key, fmt.Sprintf(format, args...))
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return bad("listen", "%q is not host:port", c.Listen)
	}
	switch {
	case c.TickRate < 1 || c.TickRate > 1000:
		return bad("tick_rate", "%d is outside 1..1000", c.TickRate)
	case c.SnapshotRate < 1 || c.SnapshotRate > c.TickRate || c.TickRate%c.SnapshotRate != 0:
		return bad("snapshot_rate", "%d must divide tick_rate %d", c.SnapshotRate, c.TickRate)
	case c.MaxRooms < 1:
		return bad("max_rooms", "%d is below 1", c.MaxRooms)
	case c.MaxPlayers < 1 || c.MaxPlayers > 255:
		return bad("max_players", "%d is outside 1..255", c.MaxPlayers)
	case c.IdleTimeout < time.Second:
		return bad("idle_timeout", "%v is below 1s", c.IdleTimeout)
	case c.MaxDatagramRate < 2*c.TickRate:
		// A client sends one input per tick, but runs up to 11% fast while
		// it catches up, and jitter delivers packets in bunches.
		return bad("max_datagram_rate", "%d is below twice tick_rate %d: clients send one input per tick, in bursts", c.MaxDatagramRate, c.TickRate)
	case (c.TLS.Cert == "") != (c.TLS.Key == ""):
		return bad("tls", "cert and key go together")
	case c.InputTimeout < time.Second:
		return bad("input_timeout", "%v is below 1s", c.InputTimeout)
	}
	lc := &c.LagComp
	window := time.Duration(lc.WindowTicks) * time.Second / time.Duration(c.TickRate)
	switch {
	case lc.WindowTicks < 0 || lc.WindowTicks > lagcomp.MaxWindowTicks:
		// reported by lagcomp's Validate, below
	case lc.MaxUnlag < 0 || lc.MaxUnlag > window:
		return bad("lagcomp.max_unlag", "%v is outside 0..the window (%d ticks = %v at %d Hz); 0 is the window",
			lc.MaxUnlag, lc.WindowTicks, window, c.TickRate)
	case lc.ViewLagTolerance < 0 || lc.ViewLagTolerance > 10*time.Second:
		return bad("lagcomp.view_lag_tolerance", "%v is outside 0..10s", lc.ViewLagTolerance)
	case lc.MaxInterpDelay < 0 || lc.MaxInterpDelay > 10*time.Second:
		return bad("lagcomp.max_interp_delay", "%v is outside 0..10s", lc.MaxInterpDelay)
	}
	if err := c.LagCompConfig().Validate(); err != nil {
		return fmt.Errorf("config: lagcomp.%w", err)
	}
	m := c.Match
	switch {
	case !(m.Health > 0) || math.IsInf(m.Health, 0):
		return bad("match.health", "%v must be positive", m.Health)
	case m.RespawnTicks < 0:
		return bad("match.respawn_ticks", "%d is negative", m.RespawnTicks)
	case m.InvulnerableTicks < 0:
		return bad("match.invulnerable_ticks", "%d is negative", m.InvulnerableTicks)
	case !(m.Radius > 0) || m.Height < 2*m.Radius:
		return bad("match.height", "%v must be at least twice match.radius %v", m.Height, m.Radius)
	case m.HeadHeight < 0 || m.HeadHeight > m.Height:
		return bad("match.head_height", "%v is outside 0..height", m.HeadHeight)
	case !(m.EyeHeight >= 0 && m.EyeHeight <= m.Height):
		return bad("match.eye_height", "%v is outside 0..height", m.EyeHeight)
	case !(c.Arena.Size >= 2) || c.Arena.Size > 10000:
		return bad("arena.size", "%v is outside 2..10000 metres", c.Arena.Size)
	case !(c.Arena.Speed > 0) || c.Arena.Speed > 100:
		return bad("arena.speed", "%v is outside (0, 100] m/s", c.Arena.Speed)
	}
	for i, b := range c.Arena.Boxes {
		for a := range 3 {
			if !(b.Min[a] <= b.Max[a]) || math.IsInf(b.Min[a], 0) || math.IsInf(b.Max[a], 0) {
				return bad(fmt.Sprintf("arena.boxes[%d]", i), "min %v is not below max %v", b.Min, b.Max)
			}
		}
	}
	if withWeapons {
		if _, err := c.LoadWeapons(); err != nil {
			return fmt.Errorf("config: weapons_file: %w", err)
		}
	}
	if _, err := logLevel(c.Log.Level); err != nil {
		return bad("log.level", "%v", err)
	}
	switch c.Log.Format {
	case "auto", "json", "console":
	default:
		return bad("log.format", "%q is not auto, json or console", c.Log.Format)
	}
	return nil
}

// LagCompConfig returns the lag-compensation part as a lagcomp.Config.
func (c *Config) LagCompConfig() lagcomp.Config {
	return lagcomp.Config{WindowTicks: c.LagComp.WindowTicks, ViewResolution: c.LagComp.ViewResolution,
		Bucketing: c.LagComp.Bucketing, CellSize: c.LagComp.CellSize,
		MaxUnlagTicks: min(c.ticks(c.LagComp.MaxUnlag), float64(c.LagComp.WindowTicks))}
}

// ticks converts a duration into (fractional) ticks at the tick rate.
func (c *Config) ticks(d time.Duration) float64 {
	return d.Seconds() * float64(c.TickRate)
}

// LoadWeapons reads the weapons file, or returns the built-in weapons.
func (c *Config) LoadWeapons() (*weapons.File, error) {
	if c.WeaponsFile == "" {
		return weapons.Default(), nil
	}
	return weapons.Load(c.WeaponsFile, c.registry())
}

func (c *Config) registry() *weapons.Registry {
	if c.Kinds != nil {
		return c.Kinds
	}
	return weapons.NewRegistry()
}
