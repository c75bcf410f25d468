package level

import (
	"fmt"
	"math"
	"slices"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/protocol"
)

// Quantum is the grid a level's positions lie on, in metres: 1/1024 m,
// finer than anything a player can feel and coarse enough that two
// programs computing a position from the same file in float64, with
// rounding errors of their own, land on the same grid point.
const Quantum = 1.0 / 1024

// MaxCoord bounds every coordinate of a level, in metres (±1,000 km): the
// canonical encoding holds a coordinate in 32 bits.
const MaxCoord = 1e6

// Blocks says what a surface stops.
type Blocks uint8

const (
	// BlocksMovement stops players: a floor, a wall, a window, an
	// invisible "player clip".
	BlocksMovement Blocks = 1 << iota
	// BlocksShots stops shots and projectiles: a wall, a "shot clip" a
	// player walks through but cannot shoot through.
	BlocksShots
	// BlocksBoth is solid geometry.
	BlocksBoth = BlocksMovement | BlocksShots
)

func (b Blocks) String() string {
	switch b {
	case BlocksMovement:
		return "movement"
	case BlocksShots:
		return "shots"
	case BlocksBoth:
		return "movement+shots"
	}
	return fmt.Sprintf("Blocks(%d)", uint8(b))
}

// Triangle is one collision triangle in world space, counter-clockwise seen
// from its front (glTF's convention: its normal is (B−A)×(C−A)).
type Triangle struct {
	A, B, C geom.Vec3
	Blocks  Blocks
	Source  int32 // index in Level.Sources of the node it came from; -1 for none
}

// Normal returns the triangle's unit normal, or zero for a degenerate one.
func (t *Triangle) Normal() geom.Vec3 { return t.B.Sub(t.A).Cross(t.C.Sub(t.A)).Normalize() }

// Bounds returns the triangle's bounding box.
func (t *Triangle) Bounds() geom.AABB {
	return geom.AABB{Min: t.A.Min(t.B).Min(t.C), Max: t.A.Max(t.B).Max(t.C)}
}

// Spawn is where a player of a team appears: feet at Pos, facing Yaw.
type Spawn struct {
	Team   uint8
	Pos    geom.Vec3 // feet
	Yaw    float64   // radians: 0 looks along +Z, positive turns toward +X (movement.Aim)
	Source int32     // index in Level.Sources; -1 for none
}

// Volume is a box in world space: a kill volume.
type Volume struct {
	Box    geom.AABB
	Source int32 // index in Level.Sources; -1 for none
}

// Waypoints is a graph bots can plan paths on.
type Waypoints struct {
	Nodes []Waypoint
	Edges []Edge // sorted by From, then To; at most one per ordered pair
}

// Waypoint is a node of the bots' graph: a point on a floor.
type Waypoint struct {
	ID     string // as the level names it: unique, lower case
	Pos    geom.Vec3
	Source int32 // index in Level.Sources; -1 for none
}

// Edge is a move a bot can make from one waypoint to another. It is one
// way: a link both ways is two edges.
type Edge struct {
	From, To int32 // indices in Waypoints.Nodes
	Jump     bool  // the move needs a jump
	Crouch   bool  // the move needs a crouch
}

// Source names what part of a file something came from: a glTF node.
type Source struct {
	Node int    // the node's index in the file
	Name string // the node's name; may be empty
}

func (s Source) String() string {
	if s.Name == "" {
		return fmt.Sprintf("node %d", s.Node)
	}
	return fmt.Sprintf("node %d %q", s.Node, s.Name)
}

// Level is a map as plain data. Its content (triangles, spawns, bounds,
// kill volumes) is what its Digest covers; its name, waypoints and sources
// are not (docs/levels.md, "Digest").
type Level struct {
	Name        string
	Triangles   []Triangle
	Spawns      []Spawn
	Bounds      geom.AABB // outside it a player is out of the map
	KillVolumes []Volume  // a player whose feet enter one dies
	Waypoints   *Waypoints
	Sources     []Source
}

// SourceOf names source index i: "node 4 "wall"", or "level" for -1.
func (l *Level) SourceOf(i int32) string {
	if i < 0 || int(i) >= len(l.Sources) {
		return "level"
	}
	return l.Sources[i].String()
}

// Counts returns how many triangles the level has, how many of them
// block movement and how many block shots.
func (l *Level) Counts() (total, movement, shots int) {
	for i := range l.Triangles {
		b := l.Triangles[i].Blocks
		if b&BlocksMovement != 0 {
			movement++
		}
		if b&BlocksShots != 0 {
			shots++
		}
	}
	return len(l.Triangles), movement, shots
}

// Teams returns the teams that have spawns, in order.
func (l *Level) Teams() []uint8 {
	var ts []uint8
	for _, s := range l.Spawns {
		if !slices.Contains(ts, s.Team) {
			ts = append(ts, s.Team)
		}
	}
	slices.Sort(ts)
	return ts
}

// SpawnsOf returns team's spawns, in the level's order.
func (l *Level) SpawnsOf(team uint8) []Spawn {
	var out []Spawn
	for _, s := range l.Spawns {
		if s.Team == team {
			out = append(out, s)
		}
	}
	return out
}

// Warning is something suspicious in a level that does not stop it from
// loading: the subject names where (a node, a mesh, the level).
type Warning struct {
	Subject string
	Message string
}

func (w Warning) String() string { return w.Subject + ": " + w.Message }

// snap puts every position of l on the grid of Quantum and every spawn's
// yaw on the wire's yaw step, the values the digest encodes.
func (l *Level) snap() {
	for i := range l.Triangles {
		t := &l.Triangles[i]
		t.A, t.B, t.C = snapVec(t.A), snapVec(t.B), snapVec(t.C)
	}
	for i := range l.Spawns {
		s := &l.Spawns[i]
		s.Pos, s.Yaw = snapVec(s.Pos), protocol.YawValue(protocol.QuantizeYaw(s.Yaw))
	}
	l.Bounds = geom.AABB{Min: snapVec(l.Bounds.Min), Max: snapVec(l.Bounds.Max)}
	for i := range l.KillVolumes {
		b := &l.KillVolumes[i].Box
		b.Min, b.Max = snapVec(b.Min), snapVec(b.Max)
	}
	if l.Waypoints != nil {
		for i := range l.Waypoints.Nodes {
			l.Waypoints.Nodes[i].Pos = snapVec(l.Waypoints.Nodes[i].Pos)
		}
	}
}

func snapVec(v geom.Vec3) geom.Vec3 { return v.Round(1 / Quantum) }

// grid returns v in units of Quantum, as the canonical encoding holds it.
// Values beyond MaxCoord (which Check refuses) saturate.
func grid(v float64) int32 {
	g := math.Round(v / Quantum)
	return int32(min(max(g, math.MinInt32), math.MaxInt32))
}
