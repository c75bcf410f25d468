package level

import (
	"math"

	"github.com/rewind-gg/rewind/geom"
)

// ArenaName is the built-in arena's name: the level name a program gives
// ("--level arena") for it.
const ArenaName = "arena"

// DefaultArenaSize is the side of the default config's arena, metres.
const DefaultArenaSize = 60

// DefaultArenaBoxes returns the default config's arena boxes: four pillars
// 2 m square and 3 m high, 10 m from the axes.
func DefaultArenaBoxes() []geom.AABB {
	return []geom.AABB{
		{Min: geom.V(-12, 0, -12), Max: geom.V(-10, 3, -10)},
		{Min: geom.V(10, 0, -12), Max: geom.V(12, 3, -10)},
		{Min: geom.V(-12, 0, 10), Max: geom.V(-10, 3, 12)},
		{Min: geom.V(10, 0, 10), Max: geom.V(12, 3, 12)},
	}
}

// DefaultArena returns the arena of the default config, the level a client
// holds when it names "arena": Arena(DefaultArenaSize, DefaultArenaBoxes()).
func DefaultArena() *Level { return Arena(DefaultArenaSize, DefaultArenaBoxes()) }

// ArenaWallHeight is how high the built-in arena's edge walls reach, in
// metres, and ArenaDepth how far below its floor its bounds reach.
const (
	ArenaWallHeight = 10
	ArenaDepth      = 10
)

// Arena returns the built-in map as a level: a floor size metres square
// centred on the origin at y = 0, each box as a solid (12 triangles), walls
// at the floor's edge that block movement but not shots (as the server's
// clamp to the square does today: shots fly out of it), bounds from the
// floor's edge and ArenaDepth below it to the walls' top, and six spawns
// for each of two teams where the server places them today (team 1 at
// z = −0.3·size facing +Z, team 2 at z = +0.3·size facing −Z, in a row
// along x). It has no kill volumes and no waypoints.
func Arena(size float64, boxes []geom.AABB) *Level {
	h := size / 2
	l := &Level{Name: ArenaName}
	quad := func(a, b, c, d geom.Vec3, blocks Blocks) {
		l.Triangles = append(l.Triangles,
			Triangle{A: a, B: b, C: c, Blocks: blocks, Source: -1},
			Triangle{A: a, B: c, C: d, Blocks: blocks, Source: -1})
	}
	// The floor, facing up.
	quad(geom.V(-h, 0, -h), geom.V(-h, 0, h), geom.V(h, 0, h), geom.V(h, 0, -h), BlocksBoth)
	// Walls facing in: each shares its bottom edge with the floor, so the
	// floor has no open edge.
	corners := []geom.Vec3{geom.V(-h, 0, -h), geom.V(h, 0, -h), geom.V(h, 0, h), geom.V(-h, 0, h)}
	up := geom.V(0, ArenaWallHeight, 0)
	for i, a := range corners {
		b := corners[(i+1)%4]
		quad(b, b.Add(up), a.Add(up), a, BlocksMovement)
	}
	for _, bx := range boxes {
		l.AddBox(bx, BlocksBoth, -1)
	}
	step := min(4, h/4)
	for team := uint8(1); team <= 2; team++ {
		z, yaw := -h*0.6, 0.0
		if team == 2 {
			z, yaw = -z, math.Pi
		}
		for n := range 6 {
			l.Spawns = append(l.Spawns, Spawn{Team: team, Pos: geom.V((float64(n)-2.5)*step, 0, z), Yaw: yaw, Source: -1})
		}
	}
	l.Bounds = geom.AABB{Min: geom.V(-h, -ArenaDepth, -h), Max: geom.V(h, ArenaWallHeight, h)}
	l.snap()
	return l
}

// AddBox adds a solid box's 12 triangles, each facing out, blocking what
// blocks, from source (an index in l.Sources, or -1). The corners are not
// snapped: a caller adding boxes off the grid of Quantum makes a level its
// digest does not describe exactly.
func (l *Level) AddBox(b geom.AABB, blocks Blocks, source int32) {
	c := b.Corner
	// Each face's corners counter-clockwise seen from outside.
	faces := [6][4]int{
		{0, 4, 6, 2}, // −x
		{1, 3, 7, 5}, // +x
		{0, 1, 5, 4}, // −y
		{2, 6, 7, 3}, // +y
		{0, 2, 3, 1}, // −z
		{4, 5, 7, 6}, // +z
	}
	for _, f := range faces {
		l.Triangles = append(l.Triangles,
			Triangle{A: c(f[0]), B: c(f[1]), C: c(f[2]), Blocks: blocks, Source: source},
			Triangle{A: c(f[0]), B: c(f[2]), C: c(f[3]), Blocks: blocks, Source: source})
	}
}
