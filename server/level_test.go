package server

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/leveltest"
	"github.com/rewind-gg/rewind/weapons"
)

// mustLevel loads cfg's level, as New does.
func mustLevel(tb testing.TB, cfg *Config) *playedLevel {
	tb.Helper()
	l, _, err := cfg.loadLevel()
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// The level comes from level.file (a file, the --level flag), or is the
// built-in arena of the [arena] keys; its spawns are taken in turn by each
// team's players, and on the arena they are where players always stood.
func TestLevelConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "two.gltf")
	data := leveltest.GLTF(leveltest.Node("col_floor", "mesh", leveltest.FloorMesh),
		leveltest.Node("spawn_t1_b", "translation", []any{3, 0, -5}), leveltest.Node("spawn_t1_a", "translation", []any{-3, 0, -5}),
		leveltest.Node("spawn_t2_a", "translation", []any{0, 0, 5}), leveltest.Node("bounds", "scale", []any{10, 10, 10}))
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := LoadConfig(writeConfig(t, "c.toml", "[level]\nfile = \"elsewhere.glb\"\n"), nil, flags(t, "--level", file))
	if err != nil || cfg.Level.File != file {
		t.Fatalf("--level over the file: %q %v", cfg.Level.File, err)
	}
	lvl := mustLevel(t, &cfg)
	if lvl.level.Name != "two" || !lvl.level.IsCanonical() || lvl.mesh.Len() != 2 {
		t.Errorf("level %q, canonical %v, %d triangles", lvl.level.Name, lvl.level.IsCanonical(), lvl.mesh.Len())
	}
	// Team 1's two spawns in turn (canonical order: by x), team 2's one.
	for n, want := range []geom.Vec3{geom.V(-3, 0, -5), geom.V(3, 0, -5), geom.V(-3, 0, -5)} {
		if got := lvl.spawn(1, n); got.Pos != want || got.Yaw != 0 {
			t.Errorf("team 1, player %d: %v, want %v", n, got, want)
		}
	}
	if got := lvl.spawn(2, 3); got.Pos != geom.V(0, 0, 5) {
		t.Errorf("team 2: %v", got)
	}
	w := welcomeTemplate(&cfg, mustCatalog(t, &cfg), lvl)
	if w.Level != "two" || w.LevelDigest != lvl.level.Digest() {
		t.Errorf("Welcome: level %q, digest %x", w.Level, w.LevelDigest)
	}
	// The arena: spawnPoint's old spread, x = (n − 2.5)·4 at z = ∓18, and
	// "arena" names it as the empty key does.
	for _, name := range []string{"", "arena"} {
		d := DefaultConfig()
		d.Level.File = name
		a := mustLevel(t, &d)
		for n := range 7 {
			x := (float64(n%6) - 2.5) * 4
			if a.spawn(1, n).Pos != geom.V(x, 0, -18) || a.spawn(2, n).Pos != geom.V(x, 0, 18) || a.spawn(2, n).Yaw != math.Pi {
				t.Errorf("%q: player %d of the teams at %v and %v", name, n, a.spawn(1, n), a.spawn(2, n))
			}
		}
		if a.level.Digest().String() != "04311dce3736fe3efa9b1a16bef99dea1fb292c22e9640823020f017e404fdb0" {
			t.Errorf("%q: the default arena's digest is %v", name, a.level.Digest())
		}
	}
	// A box over an arena's spawn is a warning; a level file that is not
	// there fails Validate, naming the key.
	d := DefaultConfig()
	d.Arena.Boxes = []Box{{Min: [3]float64{-11, 0, -19}, Max: [3]float64{-9, 3, -17}}}
	if _, warns, err := d.LoadLevel(); err != nil || len(warns) == 0 {
		t.Errorf("a box over a spawn: %v, warnings %v", err, warns)
	}
	d.Level.File = filepath.Join(t.TempDir(), "missing.glb")
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "config: level.file: level:") {
		t.Errorf("Validate with a missing level file: %v", err)
	}
}

func mustCatalog(tb testing.TB, cfg *Config) *weapons.Catalog {
	tb.Helper()
	f, err := cfg.LoadWeapons()
	if err != nil {
		tb.Fatal(err)
	}
	cat, err := cfg.Catalog(f)
	if err != nil {
		tb.Fatal(err)
	}
	return cat
}
