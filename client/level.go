package client

import (
	"fmt"
	"path/filepath"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/trimesh"
)

// Level is the level a client plays on: the level, its digest and its
// collision mesh. It is read-only once loaded: the clients of one process
// (a program's bots) may share one.
type Level struct {
	Level  *level.Level
	Digest level.Digest
	Mesh   *trimesh.Mesh
}

// LoadLevel reads the level a client holds: from data, the bytes of a glTF
// file (a .glb, or a .gltf with its buffers as data: URIs) named name; else
// from the file at name; or, for name "arena" (or empty) without data, the
// built-in arena of the default config (level.DefaultArena). The level is
// checked as the server checks it and canonicalized, and its mesh built.
func LoadLevel(name string, data []byte) (*Level, error) {
	var l *level.Level
	var err error
	switch {
	case data != nil:
		l, _, err = level.ReadBytes(filepath.Base(name), data, level.Options{})
	case name == "" || name == level.ArenaName:
		l = level.DefaultArena()
	default:
		l, _, err = level.ReadFile(name, level.Options{})
	}
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	l.Canonicalize()
	m, err := l.Mesh()
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return &Level{Level: l, Digest: l.Digest(), Mesh: m}, nil
}

// Sees reports whether nothing of the level that blocks shots lies on the
// segment from a to b: what a shot from a toward b would not be stopped by.
func (l *Level) Sees(a, b geom.Vec3) bool {
	d := b.Sub(a)
	n := d.Len()
	if n == 0 {
		return true
	}
	_, hit := l.Mesh.Raycast(a, d.Scale(1/n), n, level.ShotMask)
	return !hit
}

// LevelError is a Welcome naming another level than the client holds: the
// client does not play (its line of sight and hit markers would be
// computed against other walls than the server's shots are judged
// against).
type LevelError struct {
	Server, Client             string // the levels' names
	ServerDigest, ClientDigest level.Digest
}

func (e *LevelError) Error() string {
	return fmt.Sprintf("level: the server plays %s (digest %s), this client holds %s (digest %s)",
		e.Server, e.ServerDigest, e.Client, e.ClientDigest)
}
