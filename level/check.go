package level

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/rewind-gg/rewind/geom"
)

// CheckConfig configures Level.Check. Zero values take the defaults.
type CheckConfig struct {
	Teams  int     // teams that must each have a spawn: 1..Teams (default 2)
	Radius float64 // the standing capsule's radius, metres (default 0.4, match.radius)
	Height float64 // the standing capsule's height, feet to top (default 1.8, match.height)
	// FloorDistance is how far below a spawn's feet a floor must be
	// (default 2 m).
	FloorDistance float64
	// MaxSlope is the steepest walkable surface, radians from level
	// (default 45°): open edges are looked for on walkable surfaces.
	MaxSlope float64
}

func (c CheckConfig) withDefaults() CheckConfig {
	if c.Teams <= 0 {
		c.Teams = 2
	}
	if c.Radius <= 0 {
		c.Radius = 0.4
	}
	if c.Height <= 0 {
		c.Height = 1.8
	}
	c.Height = max(c.Height, 2*c.Radius)
	if c.FloorDistance <= 0 {
		c.FloorDistance = 2
	}
	if c.MaxSlope <= 0 {
		c.MaxSlope = math.Pi / 4
	}
	return c
}

// penetration is how deep a spawn's capsule may reach into a surface before
// the spawn counts as inside geometry: feet exactly on a floor touch it.
const penetration = 0.01

// Check says what is wrong with the level. Errors are what makes it
// unplayable: no triangles blocking movement, no bounds, a team without a
// spawn, a spawn outside the bounds or inside a kill volume, a non-finite
// or out-of-range value, a waypoint edge to nowhere. Warnings are what is
// suspicious: degenerate triangles, a spawn whose standing capsule
// overlaps or is enclosed by geometry, a spawn without a floor under it,
// open edges on walkable surfaces (a hole, or an edge to fall off),
// kill volumes and waypoints outside the bounds, spawns of teams beyond
// c.Teams.
func (l *Level) Check(c CheckConfig) ([]Warning, error) {
	c = c.withDefaults()
	var errs []error
	var warns []Warning
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	warn := func(subject, format string, args ...any) {
		warns = append(warns, Warning{Subject: subject, Message: fmt.Sprintf(format, args...)})
	}

	_, movement, _ := l.Counts()
	if movement == 0 {
		bad("no triangles block movement: players would fall forever")
	}
	degen := map[int32]int{}
	for i := range l.Triangles {
		t := &l.Triangles[i]
		if !t.A.IsFinite() || !t.B.IsFinite() || !t.C.IsFinite() || !inRange(t.A) || !inRange(t.B) || !inRange(t.C) {
			bad("%s: triangle %d has a vertex that is not finite or beyond ±%g m", l.SourceOf(t.Source), i, MaxCoord)
			continue
		}
		if t.Blocks == 0 || t.Blocks&^BlocksBoth != 0 {
			bad("%s: triangle %d blocks %v: neither movement nor shots", l.SourceOf(t.Source), i, t.Blocks)
		}
		if degenerate(t) {
			degen[t.Source]++
		}
	}
	for _, s := range sortedKeys(degen) {
		warn(l.SourceOf(s), "%d degenerate triangles (no area)", degen[s])
	}
	b := l.Bounds
	boundsOK := b.Min.IsFinite() && b.Max.IsFinite() && inRange(b.Min) && inRange(b.Max) &&
		b.Min.X < b.Max.X && b.Min.Y < b.Max.Y && b.Min.Z < b.Max.Z
	if !boundsOK {
		bad("bounds %v to %v are not a box with volume", b.Min, b.Max)
	}
	for i, v := range l.KillVolumes {
		k := v.Box
		switch {
		case !k.Min.IsFinite() || !k.Max.IsFinite() || !inRange(k.Min) || !inRange(k.Max) || !(k.Min.X <= k.Max.X && k.Min.Y <= k.Max.Y && k.Min.Z <= k.Max.Z):
			bad("%s: kill volume %d from %v to %v is not a box", l.SourceOf(v.Source), i, k.Min, k.Max)
		case boundsOK && !k.Overlaps(b):
			warn(l.SourceOf(v.Source), "kill volume outside the bounds: no player ever reaches it")
		}
	}
	for team := 1; team <= c.Teams; team++ {
		if len(l.SpawnsOf(uint8(team))) == 0 {
			bad("team %d has no spawn: mark one spawn_t%d_… (or extras rewind: spawn, rewind_team: %d)", team, team, team)
		}
	}
	var movers []*Triangle
	for i := range l.Triangles {
		if t := &l.Triangles[i]; t.Blocks&BlocksMovement != 0 && !degenerate(t) {
			movers = append(movers, t)
		}
	}
	for _, s := range l.Spawns {
		who := fmt.Sprintf("%s (spawn of team %d)", l.SourceOf(s.Source), s.Team)
		if !s.Pos.IsFinite() || !inRange(s.Pos) || math.IsNaN(s.Yaw) || math.IsInf(s.Yaw, 0) {
			bad("%s: position %v or yaw %v is not finite or beyond ±%g m", who, s.Pos, s.Yaw, MaxCoord)
			continue
		}
		if int(s.Team) > c.Teams || s.Team == 0 {
			warn(who, "team %d: the level is checked for teams 1..%d", s.Team, c.Teams)
		}
		if boundsOK && !b.Contains(s.Pos) {
			bad("%s: at %v, outside the bounds %v to %v", who, s.Pos, b.Min, b.Max)
		}
		for _, k := range l.KillVolumes {
			if k.Box.Contains(s.Pos) {
				bad("%s: at %v, inside the kill volume of %s", who, s.Pos, l.SourceOf(k.Source))
			}
		}
		spawnChecks(s, who, movers, c, l, warn)
	}
	if n, at, src := openEdges(l.Triangles, c.MaxSlope); n > 0 {
		warn(l.SourceOf(src), "%d open edges on walkable surfaces (used by one triangle only: a hole, a gap, or an edge to fall off), the first at %v", n, at)
	}
	if wp := l.Waypoints; wp != nil {
		for _, w := range wp.Nodes {
			if !w.Pos.IsFinite() {
				bad("%s: waypoint %q is not finite", l.SourceOf(w.Source), w.ID)
			} else if boundsOK && !b.Contains(w.Pos) {
				warn(l.SourceOf(w.Source), "waypoint %q at %v is outside the bounds", w.ID, w.Pos)
			}
		}
		for _, e := range wp.Edges {
			if e.From < 0 || int(e.From) >= len(wp.Nodes) || e.To < 0 || int(e.To) >= len(wp.Nodes) || e.From == e.To {
				bad("waypoint edge %d→%d: not between two waypoints of the %d", e.From, e.To, len(wp.Nodes))
			}
		}
	}
	return warns, errors.Join(errs...)
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// spawnChecks warns of a spawn whose standing capsule overlaps a surface
// that blocks movement, that is enclosed by such surfaces, or that has no
// floor under it.
func spawnChecks(s Spawn, who string, movers []*Triangle, c CheckConfig, l *Level, warn func(string, string, ...any)) {
	r := c.Radius
	bottom, top := s.Pos.Add(geom.V(0, r, 0)), s.Pos.Add(geom.V(0, c.Height-r, 0))
	reach := geom.SegmentBounds(bottom, top, r-penetration)
	limit := (r - penetration) * (r - penetration)
	for _, t := range movers {
		if !t.Bounds().Overlaps(reach) {
			continue
		}
		if segmentTriangleDistSq(bottom, top, t) < limit {
			warn(who, "its standing capsule (radius %g, height %g) overlaps geometry of %s", r, c.Height, l.SourceOf(t.Source))
			break
		}
	}
	// Enclosed: every direction along an axis but down from the capsule's
	// middle first meets the back of a surface, as from inside a closed
	// mesh. Down is left out: a floor under a crate meets it there.
	mid := s.Pos.Add(geom.V(0, c.Height/2, 0))
	enclosed := true
	for _, d := range []geom.Vec3{{X: 1}, {X: -1}, {Y: 1}, {Z: 1}, {Z: -1}} {
		_, front, hit := firstHit(mid, d, 2*MaxCoord, movers)
		if !hit || front {
			enclosed = false
			break
		}
	}
	if enclosed {
		warn(who, "inside geometry: every direction from it (but down) meets the inside of a surface")
	}
	if _, _, hit := firstHit(bottom, geom.V(0, -1, 0), r+c.FloorDistance, movers); !hit {
		warn(who, "no floor within %g m under its feet", c.FloorDistance)
	}
}

// firstHit returns the nearest triangle the ray meets and whether it meets
// its front.
func firstHit(o, d geom.Vec3, maxT float64, tris []*Triangle) (float64, bool, bool) {
	best, front, any := maxT, false, false
	for _, t := range tris {
		if s, f, ok := rayTriangle(o, d, best, t); ok && (!any || s < best) {
			best, front, any = s, f, true
		}
	}
	return best, front, any
}

// openEdges counts the edges of walkable movement-blocking triangles (up to
// maxSlope from level, facing up) that no other movement-blocking triangle
// shares: vertices are compared on the level's grid. It returns the count,
// the first such edge's midpoint and its triangle's source.
func openEdges(tris []Triangle, maxSlope float64) (int, geom.Vec3, int32) {
	type edge struct {
		a, b     [3]int32
		walkable bool
		tri      int32
	}
	minY := math.Cos(maxSlope)
	var es []edge
	for i := range tris {
		t := &tris[i]
		if t.Blocks&BlocksMovement == 0 || degenerate(t) {
			continue
		}
		walk := t.Normal().Y >= minY
		vs := [3][3]int32{gridVec(t.A), gridVec(t.B), gridVec(t.C)}
		for k := range 3 {
			a, b := vs[k], vs[(k+1)%3]
			if slices.Compare(a[:], b[:]) > 0 {
				a, b = b, a
			}
			es = append(es, edge{a, b, walk, int32(i)})
		}
	}
	key := func(x, y edge) int { return cmp.Or(slices.Compare(x.a[:], y.a[:]), slices.Compare(x.b[:], y.b[:])) }
	slices.SortFunc(es, func(x, y edge) int { return cmp.Or(key(x, y), cmp.Compare(x.tri, y.tri)) })
	n, first := 0, int32(-1)
	var at geom.Vec3
	for i := 0; i < len(es); {
		j := i + 1
		for j < len(es) && key(es[i], es[j]) == 0 {
			j++
		}
		if j-i == 1 && es[i].walkable {
			n++
			if first < 0 || es[i].tri < first {
				first = es[i].tri
				at = geom.V(float64(es[i].a[0]+es[i].b[0])/2, float64(es[i].a[1]+es[i].b[1])/2, float64(es[i].a[2]+es[i].b[2])/2).Scale(Quantum)
			}
		}
		i = j
	}
	if n == 0 {
		return 0, at, -1
	}
	return n, at, tris[first].Source
}
