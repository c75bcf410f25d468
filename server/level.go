package server

import (
	"fmt"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/trimesh"
)

// LevelConfig names the level the server plays (docs/levels.md).
type LevelConfig struct {
	// File is a glTF file (.glb or .gltf) read by the conventions of
	// docs/levels.md and checked; empty or "arena": the built-in arena,
	// made of the [arena] keys (level.Arena).
	File string `koanf:"file"`
}

// Arena reports whether the config plays the built-in arena.
func (c *LevelConfig) Arena() bool { return c.File == "" || c.File == level.ArenaName }

// playedLevel is the level a server plays, loaded once: the level in
// canonical order (what recordings carry), its collision mesh, which every
// room shares read-only, and its spawns by team.
type playedLevel struct {
	level  *level.Level
	mesh   *trimesh.Mesh
	spawns [3][]geom.Vec3 // by team (1, 2): the feet
	// bounds keeps the flat movement of today's clients on the level: the
	// level's bounds on X and Z (on the arena, its floor).
	bounds geom.AABB
}

// LoadLevel reads and checks the level the configuration names (the
// built-in arena of the [arena] keys, or level.file), with warnings; an
// error names the key and the level's own error.
func (c *Config) LoadLevel() (*level.Level, []level.Warning, error) {
	check := level.CheckConfig{Teams: 2, Radius: c.Match.Radius, Height: c.Match.Height}
	if c.Level.Arena() {
		boxes := make([]geom.AABB, len(c.Arena.Boxes))
		for i, b := range c.Arena.Boxes {
			boxes[i] = b.AABB()
		}
		l := level.Arena(c.Arena.Size, boxes)
		warns, err := l.Check(check)
		if err != nil {
			return nil, warns, fmt.Errorf("config: arena: %w", err)
		}
		return l, warns, nil
	}
	l, warns, err := level.ReadFile(c.Level.File, level.Options{Check: check})
	if err != nil {
		return nil, warns, fmt.Errorf("config: level.file: %w", err)
	}
	if len(l.Name) > protocol.MaxLevelNameLen {
		return nil, warns, fmt.Errorf("config: level.file: the level's name %q is %d bytes, the Welcome carries at most %d (rename the file)",
			l.Name, len(l.Name), protocol.MaxLevelNameLen)
	}
	return l, warns, nil
}

// loadLevel loads the configured level for play: canonicalized, its mesh
// built, its spawns sorted by team.
func (c *Config) loadLevel() (*playedLevel, []level.Warning, error) {
	l, warns, err := c.LoadLevel()
	if err != nil {
		return nil, warns, err
	}
	l.Canonicalize()
	m, err := l.Mesh()
	if err != nil {
		key := "level.file"
		if c.Level.Arena() {
			key = "arena"
		}
		return nil, warns, fmt.Errorf("config: %s: %w", key, err)
	}
	p := &playedLevel{level: l, mesh: m, bounds: geom.AABB{
		Min: geom.V(l.Bounds.Min.X, 0, l.Bounds.Min.Z), Max: geom.V(l.Bounds.Max.X, 0, l.Bounds.Max.Z)}}
	for _, s := range l.Spawns {
		if s.Team >= 1 && int(s.Team) < len(p.spawns) {
			p.spawns[s.Team] = append(p.spawns[s.Team], s.Pos)
		}
	}
	return p, warns, nil
}

// spawn returns where the n-th player of team appears: the team's spawns
// in turn.
func (p *playedLevel) spawn(team uint8, n int) geom.Vec3 {
	s := p.spawns[team]
	return s[n%len(s)]
}
