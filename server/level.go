package server

import (
	"fmt"
	"path/filepath"

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
	// Data, given in code, is a glTF file's content (a .glb, or a .gltf
	// with its buffers as data: URIs), read instead of File, which then
	// names it (the demo plays the sample map built into the binary).
	Data []byte `koanf:"-"`
}

// Arena reports whether the config plays the built-in arena.
func (c *LevelConfig) Arena() bool {
	return c.Data == nil && (c.File == "" || c.File == level.ArenaName)
}

// playedLevel is the level a server plays, loaded once: the level in
// canonical order (what recordings carry), its collision mesh, which every
// room shares read-only, its spawns by team and its kill volumes.
type playedLevel struct {
	level  *level.Level
	mesh   *trimesh.Mesh
	spawns [3][]level.Spawn // by team (1, 2)
	kill   []geom.AABB
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
	var l *level.Level
	var warns []level.Warning
	var err error
	if c.Level.Data != nil {
		l, warns, err = level.ReadBytes(filepath.Base(c.Level.File), c.Level.Data, level.Options{Check: check})
	} else {
		l, warns, err = level.ReadFile(c.Level.File, level.Options{Check: check})
	}
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
	p := &playedLevel{level: l, mesh: m}
	for _, s := range l.Spawns {
		if s.Team >= 1 && int(s.Team) < len(p.spawns) {
			p.spawns[s.Team] = append(p.spawns[s.Team], s)
		}
	}
	for _, k := range l.KillVolumes {
		p.kill = append(p.kill, k.Box)
	}
	return p, warns, nil
}

// spawn returns where the n-th player of team appears, and which way it
// faces: the team's spawns in turn.
func (p *playedLevel) spawn(team uint8, n int) level.Spawn {
	s := p.spawns[team]
	return s[n%len(s)]
}
