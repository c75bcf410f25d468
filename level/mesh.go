package level

import (
	"fmt"

	"github.com/rewind-gg/rewind/trimesh"
)

// The masks of a level's mesh: a triangle's trimesh.Mask is the bits of
// what it blocks, so a query for shots considers the triangles that block
// shots, and one for movement those that block movement.
const (
	MovementMask = trimesh.Mask(BlocksMovement)
	ShotMask     = trimesh.Mask(BlocksShots)
)

// Mesh returns the level's collision mesh: its triangle i is l.Triangles[i],
// masked by what it blocks (MovementMask, ShotMask). The mesh is read-only:
// every room of a server, and every client of a process, may share one.
func (l *Level) Mesh() (*trimesh.Mesh, error) {
	tris := make([]trimesh.Triangle, len(l.Triangles))
	for i, t := range l.Triangles {
		tris[i] = trimesh.Triangle{A: t.A, B: t.B, C: t.C, Mask: trimesh.Mask(t.Blocks)}
	}
	m, err := trimesh.New(tris)
	if err != nil {
		return nil, fmt.Errorf("level: %s: %w", l.Name, err)
	}
	return m, nil
}
