package server

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/limits"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/ticks"
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
	// A seat is held by playing: a player whose inputs the room had in
	// time for fewer than InputCoverage of the ticks of the last
	// InputCoverageWindow (counted from its first input) loses its seat
	// (close code 5). 0 turns the rule off.
	InputCoverage       float64       `koanf:"input_coverage"`
	InputCoverageWindow time.Duration `koanf:"input_coverage_window"`
	// DrainTimeout is how long a draining server (SIGTERM, an Agones
	// shutdown) lets running matches finish before it closes them.
	DrainTimeout time.Duration `koanf:"drain_timeout"`
	TLS          TLSConfig     `koanf:"tls"`
	LagComp      LagCompConfig `koanf:"lagcomp"`
	Match        MatchConfig   `koanf:"match"`
	Arena        ArenaConfig   `koanf:"arena"`
	Level        LevelConfig   `koanf:"level"`
	// WeaponsFile names the weapons file (docs/weapons.md); empty: the
	// built-in weapons (weapons/default.toml).
	WeaponsFile string `koanf:"weapons_file"`
	// Kinds are the weapon kinds the server knows: the built-ins when nil.
	// A studio's own kinds are registered in code (docs/weapons.md), so this
	// is not a file or flag setting.
	Kinds     *weapons.Registry `koanf:"-"`
	Auth      AuthConfig        `koanf:"auth"`
	Limits    LimitsConfig      `koanf:"limits"`
	Agones    AgonesConfig      `koanf:"agones"`
	Results   ResultsConfig     `koanf:"results"`
	Record    RecordConfig      `koanf:"record"`
	Datagrams DatagramsConfig   `koanf:"datagrams"`
	Admin     AdminConfig       `koanf:"admin"`
	Pprof     PprofConfig       `koanf:"pprof"`
	Log       LogConfig         `koanf:"log"`
}

// AuthConfig decides who may join: holders of connect tokens signed by the
// matchmaker (docs/tokens.md), or, without keys, anybody (open development
// mode).
type AuthConfig struct {
	// PublicKeys are PEM files of the matchmaker's Ed25519 public keys
	// (rewind keygen); several for rotation. None (and no Keys): open
	// development mode.
	PublicKeys []string `koanf:"public_keys"`
	// Keys are public keys given in code (the demo, tests), besides the
	// files.
	Keys []ed25519.PublicKey `koanf:"-"`
	// ClockSkew is the tolerance on a token's times, MaxTokenLifetime the
	// longest validity accepted, ReplayCache how many used nonces are
	// remembered at most.
	ClockSkew        time.Duration `koanf:"clock_skew"`
	MaxTokenLifetime time.Duration `koanf:"max_token_lifetime"`
	ReplayCache      int           `koanf:"replay_cache"`
	// Rooms says who creates rooms: "token" (a valid token naming a room
	// that does not exist creates it) or "operator" (only the admin API or
	// an Agones allocation; tokens join existing rooms).
	Rooms string `koanf:"rooms"`
	// InsecureOpenMode allows open development mode (no keys) on a listen
	// address other than loopback. Without it the server refuses to start
	// open on a public address.
	InsecureOpenMode bool `koanf:"insecure_open_mode"`
}

// Who creates rooms (AuthConfig.Rooms).
const (
	RoomsByToken    = "token"
	RoomsByOperator = "operator"
)

// LimitsConfig caps what one source address may hold and do (package
// limits).
type LimitsConfig struct {
	HandshakesPerSource int     `koanf:"handshakes_per_source"`
	PlayersPerSource    int     `koanf:"players_per_source"`
	RoomsPerSource      int     `koanf:"rooms_per_source"`
	JoinsPerSecond      float64 `koanf:"joins_per_second"`
	JoinBurst           int     `koanf:"join_burst"`
}

// AgonesConfig integrates the server with Agones (docs/deploy.md).
type AgonesConfig struct {
	// Mode: "auto" uses Agones when AGONES_SDK_HTTP_PORT is set, "on"
	// requires it, "off" ignores it.
	Mode string `koanf:"mode"`
	// SDKAddress is the SDK server's REST gateway, host:port; empty:
	// localhost:$AGONES_SDK_HTTP_PORT.
	SDKAddress string `koanf:"sdk_address"`
	// ReadyTimeout is how long the server retries its first calls to the
	// SDK server (its certificate annotation, Ready) at start: the SDK
	// server may come up after the game server.
	ReadyTimeout time.Duration `koanf:"ready_timeout"`
	// FailOpen keeps the server running without Agones when the SDK server
	// cannot be reached at start; otherwise it exits with the error.
	FailOpen bool `koanf:"fail_open"`
	// HealthPeriod is how often Health is sent while every room loop makes
	// progress.
	HealthPeriod time.Duration `koanf:"health_period"`
	// MatchKey is the annotation (or label) of an allocation that names
	// the match: its room is created for the allocated match.
	MatchKey string `koanf:"match_key"`
	// Players tracks players in Agones: "list" (the Lists API, list
	// PlayersList), "alpha" (player tracking), "none".
	Players     string `koanf:"players"`
	PlayersList string `koanf:"players_list"`
	// Matches is how allocations name their matches: "annotation" (the
	// allocation's annotation or label MatchKey names one match; the
	// server hosts one allocation at a time) or "list" (high density:
	// each allocation adds its match's id to the List MatchesList and one
	// to the Counter RoomsCounter; the server hosts up to MaxMatches at
	// once and may be re-allocated while Allocated).
	Matches      string `koanf:"matches"`
	MatchesList  string `koanf:"matches_list"`
	RoomsCounter string `koanf:"rooms_counter"`
	// MaxMatches is how many matches the server hosts at once: the
	// capacity it gives the Counter RoomsCounter. 1 with "annotation".
	MaxMatches int `koanf:"max_matches"`
	// RetireAfterMatches retires the server after it has hosted this many
	// matches (0: never): it takes no more allocations, and once its last
	// match has ended it shuts the GameServer down (Agones' Shutdown), so a
	// Fleet's rolling update replaces it. 1 is one match per process.
	RetireAfterMatches int `koanf:"retire_after_matches"`
	// RetireAfter retires the server, likewise, once it has run this long
	// (0: never).
	RetireAfter time.Duration `koanf:"retire_after"`
}

// DatagramsConfig configures how inputs and snapshots travel, and the
// coarse flow control of snapshots.
type DatagramsConfig struct {
	// Channel is "sealed" (UDP packets beside QUIC, sealed; a client that
	// cannot gets QUIC DATAGRAMs) or "quic" (QUIC DATAGRAMs for everyone).
	Channel string `koanf:"channel"`
	// A client's path is bad while the upstream loss of its inputs reaches
	// BadLoss or its round trip BadRTT: the server then halves its snapshot
	// rate, and restores it after Recover of a good path (Fiedler,
	// "Reliability and Flow Control"). BadLoss 0 turns flow control off.
	BadLoss float64       `koanf:"bad_loss"`
	BadRTT  time.Duration `koanf:"bad_rtt"`
	Recover time.Duration `koanf:"recover"`
}

// Datagram channels (datagrams.channel).
const (
	ChannelSealed = "sealed"
	ChannelQUIC   = "quic"
)

// ResultsConfig says where match results go.
type ResultsConfig struct {
	// File receives one JSON line per match that ends, synced before the
	// process exits; empty: results are only logged.
	File string `koanf:"file"`
}

// RecordConfig configures match recording (docs/replay.md): every room
// writes its match to a file of its own, which `rewind replay`, `rewind
// tune` and `rewind view` read.
type RecordConfig struct {
	// Dir receives one file per match (room-time.rwr); empty: matches are
	// not recorded. It is created if missing.
	Dir string `koanf:"dir"`
	// FlushInterval is how often a room's recording is written out and
	// synced: what a crash loses at most.
	FlushInterval time.Duration `koanf:"flush_interval"`
}

// PprofConfig configures Go's profiler, on a listener of its own.
type PprofConfig struct {
	Listen string `koanf:"listen"` // empty: off
}

// TLSConfig names the certificate and key files; both empty means a
// self-signed certificate is generated at start.
type TLSConfig struct {
	Cert string `koanf:"cert"`
	Key  string `koanf:"key"`
}

// LagCompConfig tunes lag compensation (see lagcomp.Config).
type LagCompConfig struct {
	// Window is the history the room keeps: no shot is resolved further
	// back. The room keeps it in whole ticks, rounded up, so it never holds
	// less than Window (LagCompConfig).
	Window time.Duration `koanf:"window"`
	// WindowTicks gives the window as a number of ticks instead, the key of
	// earlier versions; 0: Window. A window in ticks changes length with
	// the tick rate, so Window is the form to use; the two together are an
	// error.
	WindowTicks    int     `koanf:"window_ticks"`
	ViewResolution int     `koanf:"view_resolution"`
	Bucketing      bool    `koanf:"bucketing"`
	CellSize       float64 `koanf:"cell_size"`
	// MaxUnlag caps the view lag any claim is granted (Source's
	// sv_maxunlag): the favour-the-shooter cap. 0: the window. An honest
	// client's view lag is its round trip, its interpolation delay, a
	// snapshot interval and a tick or two of input lead, plus jitter: the
	// default window (2 s) holds that for round trips up to 1 s, with room
	// for a stall (docs/threat-model.md, "Tuning").
	MaxUnlag time.Duration `koanf:"max_unlag"`
	// ViewLagTolerance is what the server adds to the view lag it measured
	// of a client (round trip, input lead, interpolation delay) before it
	// cuts a claim: room for jitter (Source: 200 ms).
	ViewLagTolerance time.Duration `koanf:"view_lag_tolerance"`
	// MaxInterpDelay bounds the interpolation delay a client declares at
	// join, which counts toward the view lag it is granted.
	MaxInterpDelay time.Duration `koanf:"max_interp_delay"`
	// RTTMargin is how far the round trip the server measures from a
	// client's acknowledgements may exceed QUIC's own estimate (plus a
	// tick) before the view lag it grants follows QUIC's: room for the two
	// estimates' different samples on an honest path (docs/protocol.md,
	// "View lag").
	RTTMargin time.Duration `koanf:"rtt_margin"`
}

// MatchConfig holds the match rules.
type MatchConfig struct {
	FriendlyFire      bool    `koanf:"friendly_fire"`
	Health            float64 `koanf:"health"`
	RespawnTicks      int     `koanf:"respawn_ticks"`
	InvulnerableTicks int     `koanf:"invulnerable_ticks"` // after a respawn
	// Duration ends the match (close code 7) this long after its room
	// opened; 0: the match goes on until everybody has left.
	Duration time.Duration `koanf:"duration"`
	// EmptyTimeout closes a room that has had no player for this long
	// (also one the operator opened that nobody joined).
	EmptyTimeout time.Duration `koanf:"empty_timeout"`
	// UnplayedTimeout closes sooner a room that a join created (open
	// development mode, auth.rooms = "token") and nobody has played in:
	// no player has had its inputs applied for this long. Once one has,
	// the room is a match and waits EmptyTimeout (also the most this
	// waits).
	UnplayedTimeout time.Duration `koanf:"unplayed_timeout"`
	// The capsule every player moves as (movement.Character's) and is hit
	// as (its hitbox), whatever its class: radius, height standing and
	// crouched, the head at its top, and the eyes shots start from,
	// standing and crouched. A class's movement (speeds, jump, gravity)
	// is in the weapons file.
	EyeHeight       float64 `koanf:"eye_height"`
	CrouchEyeHeight float64 `koanf:"crouch_eye_height"`
	Radius          float64 `koanf:"radius"`
	Height          float64 `koanf:"height"`
	CrouchHeight    float64 `koanf:"crouch_height"`
	HeadHeight      float64 `koanf:"head_height"`
}

// ArenaConfig is the built-in map, played when level.file is empty: a
// square floor players cannot leave, and boxes (level.Arena).
type ArenaConfig struct {
	Size  float64 `koanf:"size"` // side of the square, metres, centred on the origin
	Boxes []Box   `koanf:"boxes"`
}

// Box is a static axis-aligned box.
type Box struct {
	Min [3]float64 `koanf:"min"`
	Max [3]float64 `koanf:"max"`
}

// AABB is the box as geometry.
func (b Box) AABB() geom.AABB {
	return geom.AABB{Min: geom.FromArray(b.Min), Max: geom.FromArray(b.Max)}
}

// AdminConfig configures the admin HTTP port: /metrics, /healthz, /readyz
// and the rooms API (docs/running.md).
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
	def := movement.DefaultCharacter()
	return Config{
		Listen:          "127.0.0.1:4433",
		TickRate:        20,
		SnapshotRate:    20,
		MaxRooms:        256,
		MaxPlayers:      12,
		IdleTimeout:     10 * time.Second,
		MaxDatagramRate: 300,
		InputTimeout:    10 * time.Second,
		InputCoverage:   0.5, InputCoverageWindow: 20 * time.Second,
		DrainTimeout: time.Minute,
		LagComp: LagCompConfig{Window: DefaultWindow, Bucketing: true, CellSize: 4,
			ViewLagTolerance: 200 * time.Millisecond, MaxInterpDelay: 250 * time.Millisecond, RTTMargin: 100 * time.Millisecond},
		Match: MatchConfig{Health: 100, RespawnTicks: 60, InvulnerableTicks: 40, EyeHeight: def.EyeHeight, CrouchEyeHeight: def.CrouchEyeHeight,
			Radius: def.Radius, Height: def.Height, CrouchHeight: def.CrouchHeight, HeadHeight: 0.3,
			EmptyTimeout: 30 * time.Second, UnplayedTimeout: 5 * time.Second},
		Arena: ArenaConfig{Size: level.DefaultArenaSize, Boxes: defaultBoxes()},
		Auth: AuthConfig{PublicKeys: []string{}, ClockSkew: 30 * time.Second, MaxTokenLifetime: time.Hour,
			ReplayCache: 65536, Rooms: RoomsByToken},
		Limits: LimitsConfig{HandshakesPerSource: 16, PlayersPerSource: 64, RoomsPerSource: 8, JoinsPerSecond: 5, JoinBurst: 20},
		Agones: AgonesConfig{Mode: "auto", ReadyTimeout: 30 * time.Second, HealthPeriod: 2 * time.Second, MatchKey: "rewind.gg/match",
			Players: "list", PlayersList: "players", Matches: "annotation", MatchesList: "matches", RoomsCounter: "rooms",
			MaxMatches: 1, RetireAfterMatches: 1},
		Datagrams: DatagramsConfig{Channel: ChannelSealed, BadLoss: 0.25, BadRTT: 1500 * time.Millisecond, Recover: 10 * time.Second},
		Record:    RecordConfig{FlushInterval: time.Second},
		Admin:     AdminConfig{Listen: "127.0.0.1:9090"},
		Log:       LogConfig{Level: "info", Format: "auto"},
	}
}

// defaultBoxes are the default arena's boxes (level.DefaultArenaBoxes): the
// arena a client holds when it names "arena".
func defaultBoxes() []Box {
	var out []Box
	for _, b := range level.DefaultArenaBoxes() {
		out = append(out, Box{Min: b.Min.Array(), Max: b.Max.Array()})
	}
	return out
}

// DefaultWindow is the default lag-compensation window, and so the default
// max_unlag: an honest client on a 1 s round trip, with the longest
// interpolation delay a client may declare (max_interp_delay, 250 ms), a
// snapshot interval at 20 Hz, two ticks of input lead and the jitter
// tolerance (200 ms) renders 1.6 s behind the present at 20 Hz; a stall on
// the way (a handover, the queue a thin uplink's handshake leaves at the
// start) adds to it, and the demo's 32 kbit/s uplink started at 1.8 s. 2 s
// leaves it room at every tick rate (TestDefaultWindowHoldsHonestClients).
const DefaultWindow = 2 * time.Second

// maxInputCoverage bounds input_coverage: at 10% loss, with redundancy, the
// Go SDK's inputs cover over 99% of the ticks (TestMobileNetwork), but a
// clock that jumps or a path that stalls for a few seconds misses more.
const maxInputCoverage = 0.9

// FlagKeys maps the command line's flag names to config keys.
var FlagKeys = map[string]string{
	"listen":        "listen",
	"tick-rate":     "tick_rate",
	"snapshot-rate": "snapshot_rate",
	"max-players":   "max_players",
	"window":        "lagcomp.window", // a bare number: lagcomp.window_ticks
	"resolution":    "lagcomp.view_resolution",
	"no-buckets":    "lagcomp.bucketing",
	"friendly-fire": "match.friendly_fire",
	"admin":         "admin.listen",
	"log-level":     "log.level",
	"log-format":    "log.format",
	"tls-cert":      "tls.cert",
	"tls-key":       "tls.key",
	"weapons":       "weapons_file",
	"level":         "level.file",
	"public-key":    "auth.public_keys",
	"insecure-open": "auth.insecure_open_mode",
	"results":       "results.file",
	"record":        "record.dir",
	"pprof":         "pprof.listen",
	"drain-timeout": "drain_timeout",
	"max-unlag":     "lagcomp.max_unlag",
}

// EnvPrefix starts the environment variables that override config keys:
// REWIND_TICK_RATE=30, REWIND_LAGCOMP__WINDOW=1s (a double underscore
// separates sections).
const EnvPrefix = "REWIND_"

// LoadConfig builds the configuration from the defaults, then the file at
// path (TOML or YAML by extension; none if empty), then the REWIND_*
// variables of environ, then the flags of fs that were set (named in
// FlagKeys; --no-buckets negates). A key of the wrong type, an unknown key in
// the file and a bad value are errors naming the key; a REWIND_* variable
// that is not a config key (Kubernetes sets REWIND_PORT for a Service named
// rewind) is a warning. The weapons file is read and checked by New (or
// Validate), after the program has had a chance to set Kinds.
func LoadConfig(path string, environ []string, fs *pflag.FlagSet) (Config, []string, error) {
	defaults := defaultMap()
	k := koanf.New(".")
	if err := k.Load(confmap.Provider(defaults, "."), nil); err != nil {
		return Config{}, nil, fmt.Errorf("config: defaults: %w", err)
	}
	known := map[string]bool{}
	for _, key := range k.Keys() {
		known[key] = true
	}
	typed := maps.Clone(defaults) // the type of each key, for the environment
	for _, sp := range spellings {
		known[sp.ticks], typed[sp.ticks] = true, 0
	}
	if path != "" {
		var parser koanf.Parser
		switch strings.ToLower(filepath.Ext(path)) {
		case ".toml":
			parser = toml.Parser()
		case ".yaml", ".yml":
			parser = yaml.Parser()
		default:
			return Config{}, nil, fmt.Errorf("config: %s: unknown format (use .toml, .yaml or .yml)", path)
		}
		fk := koanf.New(".")
		if err := fk.Load(file.Provider(path), parser); err != nil {
			return Config{}, nil, fmt.Errorf("config: %s: %w", path, err)
		}
		if err := unknownKeys(fk, known, path); err != nil {
			return Config{}, nil, err
		}
		if err := k.Merge(fk); err != nil {
			return Config{}, nil, fmt.Errorf("config: %s: %w", path, err)
		}
		if err := oneSpelling(k, fk.Exists, path); err != nil {
			return Config{}, nil, err
		}
	}
	fromEnv, warnings, err := environment(environ, typed)
	if err != nil {
		return Config{}, nil, err
	}
	if err := k.Load(confmap.Provider(fromEnv, "."), nil); err != nil {
		return Config{}, nil, fmt.Errorf("config: environment: %w", err)
	}
	if err := oneSpelling(k, func(key string) bool { _, ok := fromEnv[key]; return ok }, "environment"); err != nil {
		return Config{}, nil, err
	}
	if fs != nil {
		flagged := map[string]bool{}
		err := k.Load(posflag.ProviderWithFlag(fs, ".", nil, func(f *pflag.Flag) (string, any) {
			key, ok := FlagKeys[f.Name]
			if !ok || !f.Changed {
				return "", nil
			}
			v := posflag.FlagVal(fs, f)
			switch f.Name {
			case "no-buckets":
				b, _ := v.(bool)
				v = !b
			case "window":
				// A duration, or a bare number of ticks as the flag took
				// before (a fraction is reported by the decoder).
				if sp, err := ticks.Parse(f.Value.String()); err == nil && sp.InTicks {
					key, v = "lagcomp.window_ticks", sp.N
				}
			}
			flagged[key] = true
			return key, v
		}), nil)
		if err != nil {
			return Config{}, nil, fmt.Errorf("config: flags: %w", err)
		}
		if err := oneSpelling(k, func(key string) bool { return flagged[key] }, "flags"); err != nil {
			return Config{}, nil, err
		}
	}
	cfg := Config{}
	err = k.UnmarshalWithConf("", &cfg, koanf.UnmarshalConf{DecoderConfig: &mapstructure.DecoderConfig{
		DecodeHook:  strictTypes,
		Result:      &cfg,
		TagName:     "koanf",
		ErrorUnused: true,
	}})
	if err != nil {
		return Config{}, nil, fmt.Errorf("config: %s", oneLine(err))
	}
	// The weapons file waits for New: a program may still register kinds of
	// its own in cfg.Kinds.
	return cfg, warnings, cfg.validate(false)
}

// spellings are the settings that have two keys: a duration, and the
// number of ticks that earlier versions took, converted at tick_rate.
var spellings = []struct{ duration, ticks string }{
	{"lagcomp.window", "lagcomp.window_ticks"},
}

// oneSpelling checks that a layer of the configuration (the file, the
// environment, the flags; set reports the keys it set) gives each setting
// of spellings in one form at most, and makes the form it gives the one in
// effect: a later layer's window replaces an earlier layer's window_ticks.
func oneSpelling(k *koanf.Koanf, set func(string) bool, where string) error {
	for _, sp := range spellings {
		d, t := set(sp.duration), set(sp.ticks)
		switch {
		case d && t:
			return fmt.Errorf("config: %s: %s and %s are both set: give one (%s, a duration such as \"1s\"; %s counts ticks, as earlier versions did)",
				where, sp.duration, sp.ticks, sp.duration, sp.ticks)
		case d:
			if err := k.Set(sp.ticks, 0); err != nil {
				return fmt.Errorf("config: %s: %w", sp.ticks, err)
			}
		case t:
			if err := k.Set(sp.duration, "0s"); err != nil {
				return fmt.Errorf("config: %s: %w", sp.duration, err)
			}
		}
	}
	return nil
}

// environment reads the REWIND_* variables of environ into config keys,
// each parsed as the type of its default (a number for a number, a list
// split at commas for a list). A variable that names no key is a warning,
// not an error: platforms set variables of their own with the prefix.
func environment(environ []string, defaults map[string]any) (map[string]any, []string, error) {
	out := map[string]any{}
	var warnings []string
	for _, kv := range environ {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		key := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, EnvPrefix)), "__", ".")
		def, known := defaults[key]
		if !known {
			if why, removed := removedKeys[key]; removed {
				return nil, nil, fmt.Errorf("config: environment: %s (%s): no longer a key: %s", name, key, why)
			}
			warnings = append(warnings, fmt.Sprintf("config: environment: %s is not a config key (ignored)", name))
			continue
		}
		bad := func(what string) error {
			return fmt.Errorf("config: environment: %s (%s): %q is not %s", name, key, v, what)
		}
		switch def.(type) {
		case int:
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, nil, bad("an integer")
			}
			out[key] = n
		case float64:
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, nil, bad("a number")
			}
			out[key] = f
		case bool:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, nil, bad("true or false")
			}
			out[key] = b
		case []string:
			list := []string{}
			for _, item := range strings.Split(v, ",") {
				if item = strings.TrimSpace(item); item != "" {
					list = append(list, item)
				}
			}
			out[key] = list
		case string:
			out[key] = v
		default:
			return nil, nil, fmt.Errorf("config: environment: %s: %s is set in a file, not the environment", name, key)
		}
	}
	return out, warnings, nil
}

var durationType = reflect.TypeOf(time.Duration(0))

// strictTypes converts what the decoder would otherwise get wrong quietly:
// a duration must be a string like "10s" (a bare number would be
// nanoseconds), and an integer key takes only whole numbers (30.9 must not
// run as 30).
func strictTypes(from, to reflect.Type, data any) (any, error) {
	if to == durationType {
		switch v := data.(type) {
		case string:
			d, err := time.ParseDuration(v)
			if err != nil {
				return nil, fmt.Errorf("%q is not a duration such as \"10s\"", v)
			}
			return d, nil
		case time.Duration:
			return v, nil
		}
		return nil, fmt.Errorf("%v is not a duration such as \"10s\" (a quoted string)", data)
	}
	switch to.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		switch from.Kind() {
		case reflect.Float32, reflect.Float64:
			// Whole, and small enough to be exact: no infinity, no 1e19.
			if f := reflect.ValueOf(data).Float(); f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return nil, fmt.Errorf("%v is not a whole number", f)
			}
		case reflect.String, reflect.Bool:
			return nil, fmt.Errorf("%q is not a whole number", fmt.Sprint(data))
		}
	case reflect.Float32, reflect.Float64:
		if k := from.Kind(); k == reflect.String || k == reflect.Bool {
			return nil, fmt.Errorf("%q is not a number", fmt.Sprint(data))
		}
		if k := from.Kind(); (k == reflect.Float32 || k == reflect.Float64) && math.IsInf(reflect.ValueOf(data).Float(), 0) {
			return nil, fmt.Errorf("%v is not a finite number", data)
		}
	case reflect.Bool:
		if from.Kind() != reflect.Bool {
			return nil, fmt.Errorf("%v is not true or false", data)
		}
	case reflect.String:
		if from.Kind() != reflect.String {
			return nil, fmt.Errorf("%v is not a string (quote it)", data)
		}
	}
	return data, nil
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
		if why, ok := removedKeys[key]; ok {
			return fmt.Errorf("config: %s: %s: no longer a key: %s", where, key, why)
		}
		return fmt.Errorf("config: %s: unknown key %q", where, key)
	}
	return nil
}

// removedKeys are keys of earlier versions, with where their setting went.
var removedKeys = map[string]string{
	"arena.speed":      "each class moves at its own speed, movement.run_speed of its class in the weapons file (docs/weapons.md)",
	"agones.one_match": "agones.retire_after_matches replaced it: 1 is one match per process (one_match = true), 0 never retires (one_match = false)",
}

func topOf(key string) string {
	if i := strings.IndexByte(key, '.'); i >= 0 {
		return key[:i]
	}
	return key
}

// defaultMap is DefaultConfig as a koanf map: the duration form of each
// setting of spellings.
func defaultMap() map[string]any {
	d := DefaultConfig()
	m := configMap(&d)
	for _, sp := range spellings {
		delete(m, sp.ticks)
	}
	return m
}

// configMap is a configuration as a koanf map, by key; lists of tables
// (arena boxes) are whole values that a file replaces.
func configMap(c *Config) map[string]any {
	boxes := make([]any, len(c.Arena.Boxes))
	for i, b := range c.Arena.Boxes {
		boxes[i] = map[string]any{"min": b.Min[:], "max": b.Max[:]}
	}
	return map[string]any{
		"listen": c.Listen, "tick_rate": c.TickRate, "snapshot_rate": c.SnapshotRate, "max_rooms": c.MaxRooms,
		"max_players": c.MaxPlayers, "idle_timeout": c.IdleTimeout.String(), "max_datagram_rate": c.MaxDatagramRate,
		"input_timeout": c.InputTimeout.String(), "drain_timeout": c.DrainTimeout.String(),
		"input_coverage": c.InputCoverage, "input_coverage_window": c.InputCoverageWindow.String(),
		"tls.cert": c.TLS.Cert, "tls.key": c.TLS.Key,
		"lagcomp.window": c.LagComp.Window.String(), "lagcomp.window_ticks": c.LagComp.WindowTicks,
		"lagcomp.view_resolution": c.LagComp.ViewResolution,
		"lagcomp.bucketing":       c.LagComp.Bucketing, "lagcomp.cell_size": c.LagComp.CellSize,
		"lagcomp.max_unlag": c.LagComp.MaxUnlag.String(), "lagcomp.view_lag_tolerance": c.LagComp.ViewLagTolerance.String(),
		"lagcomp.max_interp_delay": c.LagComp.MaxInterpDelay.String(), "lagcomp.rtt_margin": c.LagComp.RTTMargin.String(),
		"match.friendly_fire": c.Match.FriendlyFire, "match.health": c.Match.Health, "match.respawn_ticks": c.Match.RespawnTicks,
		"match.invulnerable_ticks": c.Match.InvulnerableTicks, "match.duration": c.Match.Duration.String(),
		"match.empty_timeout": c.Match.EmptyTimeout.String(), "match.unplayed_timeout": c.Match.UnplayedTimeout.String(),
		"match.eye_height": c.Match.EyeHeight, "match.crouch_eye_height": c.Match.CrouchEyeHeight,
		"match.radius": c.Match.Radius, "match.height": c.Match.Height, "match.crouch_height": c.Match.CrouchHeight,
		"match.head_height": c.Match.HeadHeight,
		"arena.size":        c.Arena.Size, "arena.boxes": boxes,
		"level.file":       c.Level.File,
		"weapons_file":     c.WeaponsFile,
		"auth.public_keys": append([]string{}, c.Auth.PublicKeys...), "auth.clock_skew": c.Auth.ClockSkew.String(),
		"auth.max_token_lifetime": c.Auth.MaxTokenLifetime.String(), "auth.replay_cache": c.Auth.ReplayCache,
		"auth.rooms": c.Auth.Rooms, "auth.insecure_open_mode": c.Auth.InsecureOpenMode,
		"limits.handshakes_per_source": c.Limits.HandshakesPerSource, "limits.players_per_source": c.Limits.PlayersPerSource,
		"limits.rooms_per_source": c.Limits.RoomsPerSource,
		"limits.joins_per_second": c.Limits.JoinsPerSecond, "limits.join_burst": c.Limits.JoinBurst,
		"agones.mode": c.Agones.Mode, "agones.sdk_address": c.Agones.SDKAddress, "agones.fail_open": c.Agones.FailOpen,
		"agones.ready_timeout": c.Agones.ReadyTimeout.String(),
		"agones.health_period": c.Agones.HealthPeriod.String(), "agones.match_key": c.Agones.MatchKey,
		"agones.players": c.Agones.Players, "agones.players_list": c.Agones.PlayersList,
		"agones.matches": c.Agones.Matches, "agones.matches_list": c.Agones.MatchesList, "agones.rooms_counter": c.Agones.RoomsCounter,
		"agones.max_matches": c.Agones.MaxMatches, "agones.retire_after_matches": c.Agones.RetireAfterMatches,
		"agones.retire_after": c.Agones.RetireAfter.String(),
		"results.file":        c.Results.File,
		"record.dir":          c.Record.Dir, "record.flush_interval": c.Record.FlushInterval.String(),
		"datagrams.channel": c.Datagrams.Channel, "datagrams.bad_loss": c.Datagrams.BadLoss,
		"datagrams.bad_rtt": c.Datagrams.BadRTT.String(), "datagrams.recover": c.Datagrams.Recover.String(),
		"admin.listen": c.Admin.Listen, "pprof.listen": c.Pprof.Listen,
		"log.level": c.Log.Level, "log.format": c.Log.Format,
	}
}

// TOML returns the configuration as a TOML file (rewind serve
// --print-config): every key, with its effective value; a setting with two
// spellings (a duration, or ticks as earlier versions took) in the one it
// was given in. Keys and kinds given in code are not part of a file and
// are left out.
func (c *Config) TOML() ([]byte, error) {
	m := configMap(c)
	if c.LagComp.WindowTicks != 0 {
		delete(m, "lagcomp.window")
	} else {
		delete(m, "lagcomp.window_ticks")
	}
	k := koanf.New(".")
	if err := k.Load(confmap.Provider(m, "."), nil); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	b, err := k.Marshal(toml.Parser())
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return b, nil
}

// Validate reports the first invalid field, by its config key, the weapons
// file (checked against Kinds) and the level included.
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
	case !(c.InputCoverage >= 0 && c.InputCoverage <= maxInputCoverage):
		return bad("input_coverage", "%v is outside 0..%v (0 turns it off; more would cost players on lossy paths their seats)", c.InputCoverage, maxInputCoverage)
	case c.InputCoverageWindow < time.Second || c.InputCoverageWindow > 10*time.Minute:
		return bad("input_coverage_window", "%v is outside 1s..10m", c.InputCoverageWindow)
	case c.Datagrams.Channel != ChannelSealed && c.Datagrams.Channel != ChannelQUIC:
		return bad("datagrams.channel", "%q is neither %q nor %q", c.Datagrams.Channel, ChannelSealed, ChannelQUIC)
	case !(c.Datagrams.BadLoss >= 0 && c.Datagrams.BadLoss <= 1):
		return bad("datagrams.bad_loss", "%v is outside [0, 1]", c.Datagrams.BadLoss)
	case c.Datagrams.BadRTT <= 0:
		return bad("datagrams.bad_rtt", "%v is not positive", c.Datagrams.BadRTT)
	case c.Datagrams.Recover < time.Second:
		return bad("datagrams.recover", "%v is below 1s", c.Datagrams.Recover)
	case c.DrainTimeout < 0:
		return bad("drain_timeout", "%v is negative", c.DrainTimeout)
	case c.Record.FlushInterval < 10*time.Millisecond || c.Record.FlushInterval > time.Minute:
		return bad("record.flush_interval", "%v is outside 10ms..1m", c.Record.FlushInterval)
	case c.Match.Duration < 0:
		return bad("match.duration", "%v is negative", c.Match.Duration)
	case c.Match.EmptyTimeout <= 0:
		return bad("match.empty_timeout", "%v must be positive: a room opened for a match would close before its players arrive", c.Match.EmptyTimeout)
	case c.Match.UnplayedTimeout <= 0:
		return bad("match.unplayed_timeout", "%v must be positive", c.Match.UnplayedTimeout)
	}
	if err := c.validateHosting(); err != nil {
		return err
	}
	lc := &c.LagComp
	switch {
	case lc.WindowTicks < 0 || lc.WindowTicks > lagcomp.MaxWindowTicks:
		return bad("lagcomp.window_ticks", "%d is outside 0..%d", lc.WindowTicks, lagcomp.MaxWindowTicks)
	case lc.Window < 0:
		return bad("lagcomp.window", "%v is negative", lc.Window)
	case lc.Window != 0 && lc.WindowTicks != 0:
		return bad("lagcomp.window", "%v and lagcomp.window_ticks %d are both set: give one (window_ticks counts ticks, as earlier versions did)",
			lc.Window, lc.WindowTicks)
	case ticks.Ceil(lc.Window, c.TickRate) > lagcomp.MaxWindowTicks:
		return bad("lagcomp.window", "%v is %d ticks at %d Hz, more than the history's %d",
			lc.Window, ticks.Ceil(lc.Window, c.TickRate), c.TickRate, lagcomp.MaxWindowTicks)
	case lc.MaxUnlag < 0 || ticks.Of(lc.MaxUnlag, c.TickRate) > float64(c.windowTicks()):
		return bad("lagcomp.max_unlag", "%v is outside 0..the window (%s); 0 is the window",
			lc.MaxUnlag, c.DescribeWindow())
	case lc.ViewLagTolerance < 0 || lc.ViewLagTolerance > 10*time.Second:
		return bad("lagcomp.view_lag_tolerance", "%v is outside 0..10s", lc.ViewLagTolerance)
	case lc.MaxInterpDelay < 0 || lc.MaxInterpDelay > 10*time.Second:
		return bad("lagcomp.max_interp_delay", "%v is outside 0..10s", lc.MaxInterpDelay)
	case lc.RTTMargin < 0 || lc.RTTMargin > 10*time.Second:
		return bad("lagcomp.rtt_margin", "%v is outside 0..10s", lc.RTTMargin)
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
	case m.HeadHeight < 0 || m.HeadHeight > m.CrouchHeight:
		return bad("match.head_height", "%v is outside 0..crouch_height (%v): the head tops the crouched capsule too", m.HeadHeight, m.CrouchHeight)
	case !(c.Arena.Size >= 2) || c.Arena.Size > 10000:
		return bad("arena.size", "%v is outside 2..10000 metres", c.Arena.Size)
	}
	// The capsule and the eyes, with the default movement (a weapons file's
	// classes are checked with theirs).
	if _, err := c.Character(movement.DefaultCharacter(), ""); err != nil {
		return err
	}
	for i, b := range c.Arena.Boxes {
		for a := range 3 {
			if !(b.Min[a] <= b.Max[a]) || math.IsInf(b.Min[a], 0) || math.IsInf(b.Max[a], 0) {
				return bad(fmt.Sprintf("arena.boxes[%d]", i), "min %v is not below max %v", b.Min, b.Max)
			}
		}
	}
	if withWeapons {
		file, err := c.LoadWeapons()
		if err != nil {
			return fmt.Errorf("config: weapons_file: %w", err)
		}
		if _, err := c.Catalog(file); err != nil {
			return err
		}
		if _, _, err := c.LoadLevel(); err != nil {
			return err
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

// LagCompConfig returns the lag-compensation part as a lagcomp.Config, in
// ticks of the tick rate: the window rounded up to whole ticks, max_unlag
// exact (and at most the window).
func (c *Config) LagCompConfig() lagcomp.Config {
	w := c.windowTicks()
	return lagcomp.Config{WindowTicks: w, ViewResolution: c.LagComp.ViewResolution,
		Bucketing: c.LagComp.Bucketing, CellSize: c.LagComp.CellSize,
		MaxUnlagTicks: min(c.ticks(c.LagComp.MaxUnlag), float64(w))}
}

// windowTicks is the window in whole ticks: window_ticks when given, else
// window rounded up.
func (c *Config) windowTicks() int {
	if c.LagComp.WindowTicks != 0 {
		return c.LagComp.WindowTicks
	}
	return int(min(ticks.Ceil(c.LagComp.Window, c.TickRate), math.MaxInt32))
}

// DescribeWindow says the window in effect, in the form it was given with
// its other form: "lagcomp.window 2s, 40 ticks at 20 Hz" or
// "lagcomp.window_ticks 30, 1.5s at 20 Hz".
func (c *Config) DescribeWindow() string {
	if n := c.LagComp.WindowTicks; n != 0 {
		return fmt.Sprintf("lagcomp.window_ticks %d, %v at %d Hz", n, ticks.Duration(float64(n), c.TickRate), c.TickRate)
	}
	return fmt.Sprintf("lagcomp.window %v, %d ticks at %d Hz", c.LagComp.Window, c.windowTicks(), c.TickRate)
}

// DescribeMaxUnlag says the cap in effect, in time and ticks: "2s, 40
// ticks at 20 Hz (the window)".
func (c *Config) DescribeMaxUnlag() string {
	n := c.LagCompConfig().MaxUnlag()
	s := fmt.Sprintf("%v, %s ticks at %d Hz", ticks.Duration(n, c.TickRate), strconv.FormatFloat(n, 'f', -1, 64), c.TickRate)
	if c.LagComp.MaxUnlag == 0 {
		s += " (the window)"
	}
	return s
}

// ticks converts a duration into (fractional) ticks at the tick rate.
func (c *Config) ticks(d time.Duration) float64 {
	return ticks.Of(d, c.TickRate)
}

// LoadWeapons reads the weapons file, or returns the built-in weapons.
func (c *Config) LoadWeapons() (*weapons.File, error) {
	if c.WeaponsFile == "" {
		return weapons.Default(), nil
	}
	return weapons.Load(c.WeaponsFile, c.registry())
}

// Character returns a class's movement with the match's capsule and eyes
// (match.radius, height, crouch_height, eye_height, crouch_eye_height): the
// character a player of the class moves as. One capsule for every class,
// because it is also every player's hitbox, which every client must know
// to draw and aim at remote players (and the Welcome says once). An error
// names the key at fault: a match key for the capsule, the class's
// movement key (weapons_file: classes[NAME].movement.KEY) otherwise.
func (c *Config) Character(m movement.Character, class string) (movement.Character, error) {
	m.Radius, m.Height, m.CrouchHeight = c.Match.Radius, c.Match.Height, c.Match.CrouchHeight
	m.EyeHeight, m.CrouchEyeHeight = c.Match.EyeHeight, c.Match.CrouchEyeHeight
	err := m.Validate()
	var fe *movement.FieldError
	switch {
	case err == nil:
		return m, nil
	case !errors.As(err, &fe):
		return m, fmt.Errorf("config: %w", err)
	case movement.IsCapsule(fe.Key) || class == "":
		return m, fmt.Errorf("config: match.%s: %s", fe.Key, fe.Msg)
	}
	return m, fmt.Errorf("config: weapons_file: classes[%s].movement.%s: %s", class, fe.Key, fe.Msg)
}

// Catalog builds the weapons file's catalogue, every class moving as
// Character makes it.
func (c *Config) Catalog(file *weapons.File) (*weapons.Catalog, error) {
	classes := slices.Clone(file.Classes)
	for i := range classes {
		m := classes[i].Movement
		if m == (movement.Character{}) {
			m = movement.DefaultCharacter()
		}
		var err error
		if classes[i].Movement, err = c.Character(m, classes[i].Name); err != nil {
			return nil, err
		}
	}
	cat, err := weapons.NewCatalog(c.registry(), file.Weapons, classes...)
	if err != nil {
		return nil, fmt.Errorf("config: weapons_file: %w", err)
	}
	if len(classes) == 0 { // the catalogue's own default class: the match's capsule too
		m, err := c.Character(cat.Classes()[0].Movement, "")
		if err != nil {
			return nil, err
		}
		cl := cat.Classes()[0]
		cl.Movement = m
		if cat, err = weapons.NewCatalog(c.registry(), file.Weapons, cl); err != nil {
			return nil, fmt.Errorf("config: weapons_file: %w", err)
		}
	}
	return cat, nil
}

func (c *Config) registry() *weapons.Registry {
	if c.Kinds != nil {
		return c.Kinds
	}
	return weapons.NewRegistry()
}

// validateHosting checks the admission, Agones, results and listener keys.
func (c *Config) validateHosting() error {
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("config: %s: %s", key, fmt.Sprintf(format, args...))
	}
	a := c.Auth
	switch {
	case a.ClockSkew < 0 || a.ClockSkew > time.Hour:
		return bad("auth.clock_skew", "%v is outside 0..1h", a.ClockSkew)
	case a.MaxTokenLifetime < time.Second:
		return bad("auth.max_token_lifetime", "%v is below 1s", a.MaxTokenLifetime)
	case a.ReplayCache < 1:
		return bad("auth.replay_cache", "%d is below 1", a.ReplayCache)
	case a.Rooms != RoomsByToken && a.Rooms != RoomsByOperator:
		return bad("auth.rooms", "%q is not %q or %q", a.Rooms, RoomsByToken, RoomsByOperator)
	}
	for i, p := range a.PublicKeys {
		if p == "" {
			return bad(fmt.Sprintf("auth.public_keys[%d]", i), "an empty path")
		}
	}
	if c.Open() && !a.InsecureOpenMode && !loopback(c.Listen) {
		return bad("auth", "no public_keys: open development mode (anyone joins any room) is refused on %s, "+
			"a non-loopback address; configure the matchmaker's keys, or set auth.insecure_open_mode = true", c.Listen)
	}
	if err := c.LimitsConfig().Validate(); err != nil {
		return fmt.Errorf("config: limits.%w", err)
	}
	g := c.Agones
	switch {
	case g.Mode != "auto" && g.Mode != "on" && g.Mode != "off":
		return bad("agones.mode", "%q is not auto, on or off", g.Mode)
	case g.ReadyTimeout < 0:
		return bad("agones.ready_timeout", "%v is negative", g.ReadyTimeout)
	case g.HealthPeriod < 100*time.Millisecond:
		return bad("agones.health_period", "%v is below 100ms", g.HealthPeriod)
	case g.Players != "list" && g.Players != "alpha" && g.Players != "none":
		return bad("agones.players", "%q is not list, alpha or none", g.Players)
	case g.Players == "list" && g.PlayersList == "":
		return bad("agones.players_list", "empty, with agones.players = list")
	case g.MatchKey == "":
		return bad("agones.match_key", "empty")
	case g.Matches != "annotation" && g.Matches != "list":
		return bad("agones.matches", "%q is not annotation or list", g.Matches)
	case g.Matches == "list" && g.MatchesList == "":
		return bad("agones.matches_list", "empty, with agones.matches = list")
	case g.Matches == "list" && g.RoomsCounter == "":
		return bad("agones.rooms_counter", "empty, with agones.matches = list")
	case g.Matches == "list" && g.Players == "list" && g.MatchesList == g.PlayersList:
		return bad("agones.matches_list", "%q is also agones.players_list", g.MatchesList)
	case g.MaxMatches < 1:
		return bad("agones.max_matches", "%d is below 1", g.MaxMatches)
	case g.Matches == "annotation" && g.MaxMatches != 1:
		return bad("agones.max_matches", "%d, but an annotation names one match: set agones.matches = list to host several", g.MaxMatches)
	case g.Matches == "list" && g.MaxMatches > 1000:
		return bad("agones.max_matches", "%d is above 1000, the capacity limit of an Agones List", g.MaxMatches)
	case g.Mode != "off" && g.MaxMatches > c.MaxRooms:
		return bad("agones.max_matches", "%d is above max_rooms %d: Agones would allocate matches the server cannot open", g.MaxMatches, c.MaxRooms)
	case g.RetireAfterMatches < 0:
		return bad("agones.retire_after_matches", "%d is negative", g.RetireAfterMatches)
	case g.RetireAfter < 0:
		return bad("agones.retire_after", "%v is negative", g.RetireAfter)
	}
	if g.SDKAddress != "" {
		if _, _, err := net.SplitHostPort(g.SDKAddress); err != nil {
			return bad("agones.sdk_address", "%q is not host:port", g.SDKAddress)
		}
	}
	for key, addr := range map[string]string{"admin.listen": c.Admin.Listen, "pprof.listen": c.Pprof.Listen} {
		if addr == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return bad(key, "%q is not host:port", addr)
		}
	}
	return nil
}

// Open reports whether the server runs in open development mode: no
// matchmaker keys, so anyone who reaches it joins any room.
func (c *Config) Open() bool { return len(c.Auth.PublicKeys) == 0 && len(c.Auth.Keys) == 0 }

// LimitsConfig returns the per-source caps as a limits.Config.
func (c *Config) LimitsConfig() limits.Config {
	return limits.Config{Handshakes: c.Limits.HandshakesPerSource, Players: c.Limits.PlayersPerSource,
		Rooms: c.Limits.RoomsPerSource, JoinRate: c.Limits.JoinsPerSecond, JoinBurst: c.Limits.JoinBurst}
}

// loopback reports whether a listen address is a loopback one (localhost,
// 127.0.0.0/8, ::1).
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
