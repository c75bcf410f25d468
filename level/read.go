package level

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/level/gltf"
)

// DefaultMaxTriangles bounds a level's triangles when
// Options.MaxTriangles is zero.
const DefaultMaxTriangles = 1 << 20

// Options configure reading a level.
type Options struct {
	// Name is the level's name; empty: the file's name without its
	// extension.
	Name string
	// MaxBytes bounds the file and its external buffers (0:
	// gltf.DefaultMaxBytes).
	MaxBytes int64
	// MaxTriangles bounds the collision triangles after every node's
	// instance of its mesh is counted (0: DefaultMaxTriangles): a mesh
	// used by many nodes costs each time.
	MaxTriangles int
	// Check configures the checks run on the level read.
	Check CheckConfig
}

// ReadFile reads a level from a .glb or .gltf file. A .gltf's external
// buffers are read from its directory and never from outside it (no "..",
// no absolute paths, no symbolic links out).
func ReadFile(file string, o Options) (*Level, []Warning, error) {
	root, err := os.OpenRoot(filepath.Dir(file))
	if err != nil {
		return nil, nil, fmt.Errorf("level: %w", err)
	}
	defer root.Close()
	return Read(root.FS(), filepath.Base(file), o)
}

// Read reads a level from the glTF at name in fsys, checks it, and returns
// it with the warnings of the reading and of the checks. A file that is
// malformed, that uses what the reader does not support, or whose level
// fails its checks is refused whole: the error says what and where.
func Read(fsys fs.FS, name string, o Options) (*Level, []Warning, error) {
	doc, err := gltf.ReadFile(fsys, name, gltf.Limits{MaxBytes: o.MaxBytes})
	if err != nil {
		return nil, nil, fmt.Errorf("level: %s: %w", name, err)
	}
	return fromDocument(doc, name, o)
}

// ReadBytes reads a level from the bytes of a glTF file named name (a .glb,
// or a .gltf whose buffers are data: URIs), as Read does.
func ReadBytes(name string, data []byte, o Options) (*Level, []Warning, error) {
	doc, err := gltf.Read(data, gltf.Limits{MaxBytes: o.MaxBytes})
	if err != nil {
		return nil, nil, fmt.Errorf("level: %s: %w", name, err)
	}
	return fromDocument(doc, name, o)
}

// fromDocument builds and checks the level of a document read from name.
func fromDocument(doc *gltf.Document, name string, o Options) (*Level, []Warning, error) {
	if o.Name == "" {
		o.Name = strings.TrimSuffix(path.Base(name), path.Ext(name))
	}
	l, warns, err := build(doc, o)
	if err != nil {
		return nil, warns, fmt.Errorf("level: %s: %w", name, err)
	}
	cw, err := l.Check(o.Check)
	warns = append(warns, cw...)
	if err != nil {
		return nil, warns, fmt.Errorf("level: %s: %w", name, err)
	}
	return l, warns, nil
}

// build turns a glTF document into a level by the conventions of
// docs/levels.md.
func build(doc *gltf.Document, o Options) (*Level, []Warning, error) {
	maxTris := o.MaxTriangles
	if maxTris <= 0 {
		maxTris = DefaultMaxTriangles
	}
	var warns []Warning
	for _, w := range doc.Warnings {
		subject, msg, ok := strings.Cut(w, ": ")
		if !ok {
			subject, msg = "file", w
		}
		warns = append(warns, Warning{Subject: subject, Message: msg})
	}
	nodes := doc.Nodes
	marks := make([]mark, len(nodes))
	// eff is the collision role a node's mesh has: its own, else its
	// parent's; a marker node's subtree is never collision.
	eff := make([]mark, len(nodes))
	underMarker := make([]bool, len(nodes))
	anyCollision := false
	for i := range nodes {
		n := &nodes[i]
		m, notes, err := markOf(n.Name, n.Extras)
		if err != nil {
			return nil, warns, fmt.Errorf("%s: %w", n.Label(), err)
		}
		if m.role == roleNone && n.Mesh >= 0 {
			// A mesh's own extras may mark it (Blender writes a mesh's
			// custom properties there).
			mesh := &doc.Meshes[n.Mesh]
			mm, mnotes, err := extrasMark(mesh.Extras)
			if err != nil {
				return nil, warns, fmt.Errorf("%s: %w", mesh.Label(), err)
			}
			notes = append(notes, mnotes...)
			if mm.role == roleCollision || mm.role == roleRender {
				m = mm
			}
		}
		for _, note := range notes {
			warns = append(warns, Warning{Subject: n.Label(), Message: note})
		}
		marks[i] = m
		if n.Parent >= 0 {
			eff[i], underMarker[i] = eff[n.Parent], underMarker[n.Parent]
			if isMarker(marks[n.Parent].role) {
				underMarker[i] = true
			}
		}
		if m.role == roleCollision || m.role == roleRender {
			eff[i] = m
		}
		anyCollision = anyCollision || m.role == roleCollision
	}

	l := &Level{Name: o.Name}
	src := make([]int32, len(nodes))
	sourceOf := func(i int) int32 {
		if src[i] == 0 {
			l.Sources = append(l.Sources, Source{Node: nodes[i].Index, Name: nodes[i].Name})
			src[i] = int32(len(l.Sources))
		}
		return src[i] - 1
	}

	// Which meshes are collision, counted before anything is allocated.
	collision := make([]Blocks, len(nodes))
	total, unmarked, special := 0, 0, 0
	for i := range nodes {
		n := &nodes[i]
		if n.Mesh < 0 || underMarker[i] || isMarker(marks[i].role) {
			continue
		}
		switch e := eff[i]; {
		case e.role == roleCollision:
			collision[i] = e.blocks
			if e.blocks != BlocksBoth {
				special++
			}
		case e.role == roleRender:
		case !anyCollision:
			collision[i] = BlocksBoth // a file that is only collision
		default:
			unmarked++
		}
		if collision[i] != 0 {
			for _, p := range doc.Meshes[n.Mesh].Primitives {
				total += len(p.Triangles)
			}
			if total > maxTris {
				return nil, warns, fmt.Errorf("over %d collision triangles (at %s): over the limit", maxTris, n.Label())
			}
		}
	}
	if anyCollision && unmarked > 0 && special > 0 && special == countNonZero(collision) {
		warns = append(warns, Warning{Subject: "level", Message: fmt.Sprintf(
			"only movement-only or shots-only collision is marked, so the %d unmarked meshes are render-only: mark solid collision col_… (or put everything under a col_ node)", unmarked)})
	}

	l.Triangles = make([]Triangle, 0, total)
	var bounds []int
	for i := range nodes {
		n := &nodes[i]
		switch m := marks[i]; m.role {
		case roleSpawn:
			s, err := spawnAt(n, m.team)
			if err != nil {
				return nil, warns, err
			}
			s.Source = sourceOf(i)
			l.Spawns = append(l.Spawns, s)
		case roleBounds, roleKill:
			box, rotated, err := volumeOf(n, doc)
			if err != nil {
				return nil, warns, err
			}
			if rotated {
				warns = append(warns, Warning{Subject: n.Label(), Message: "rotated: the axis-aligned box around it is used"})
			}
			if m.role == roleBounds {
				bounds = append(bounds, i)
				l.Bounds = box
			} else {
				l.KillVolumes = append(l.KillVolumes, Volume{Box: box, Source: sourceOf(i)})
			}
		}
		if collision[i] == 0 {
			continue
		}
		det := n.World.Det3()
		if math.Abs(det) < 1e-12 {
			return nil, warns, fmt.Errorf("%s: its world transform is singular (scale 0 on an axis): its mesh would be flat", n.Label())
		}
		s := sourceOf(i)
		dropped := 0
		for _, p := range doc.Meshes[n.Mesh].Primitives {
			for _, t := range p.Triangles {
				tri := Triangle{Blocks: collision[i], Source: s}
				vs := [3]*geom.Vec3{&tri.A, &tri.B, &tri.C}
				if det < 0 { // mirrored: keep the front facing out
					vs[1], vs[2] = vs[2], vs[1]
				}
				for k := range 3 {
					v := p.Positions[t[k]]
					w := n.World.Point(float64(v[0]), float64(v[1]), float64(v[2]))
					*vs[k] = snapVec(geom.V(w[0], w[1], w[2]))
					if !inRange(*vs[k]) {
						return nil, warns, fmt.Errorf("%s: vertex %v is beyond ±%g m", n.Label(), *vs[k], MaxCoord)
					}
				}
				if degenerate(&tri) {
					dropped++
					continue
				}
				l.Triangles = append(l.Triangles, tri)
			}
		}
		if dropped > 0 {
			warns = append(warns, Warning{Subject: n.Label(), Message: fmt.Sprintf("%d degenerate triangles (no area) dropped", dropped)})
		}
	}
	if len(bounds) > 1 {
		return nil, warns, fmt.Errorf("%s and %s are both marked bounds: a level has one", nodes[bounds[0]].Label(), nodes[bounds[1]].Label())
	}
	if len(bounds) == 0 {
		return nil, warns, errors.New("no bounds: mark the playable space with a node named bounds (or extras rewind: bounds)")
	}
	wp, err := waypoints(nodes, marks, sourceOf)
	if err != nil {
		return nil, warns, err
	}
	l.Waypoints = wp
	l.snap()
	return l, warns, nil
}

func isMarker(r role) bool {
	return r == roleSpawn || r == roleBounds || r == roleKill || r == roleWaypoint
}

func countNonZero(bs []Blocks) int {
	n := 0
	for _, b := range bs {
		if b != 0 {
			n++
		}
	}
	return n
}

func inRange(v geom.Vec3) bool {
	return math.Abs(v.X) <= MaxCoord && math.Abs(v.Y) <= MaxCoord && math.Abs(v.Z) <= MaxCoord
}

// spawnAt is a spawn at a node's origin, facing its +Z axis (glTF's
// forward) turned into the horizontal plane.
func spawnAt(n *gltf.Node, team uint8) (Spawn, error) {
	if math.Abs(n.World.Det3()) < 1e-12 {
		return Spawn{}, fmt.Errorf("%s: its world transform is singular (scale 0 on an axis): no facing", n.Label())
	}
	p, f := n.World.Point(0, 0, 0), n.World.Dir(0, 0, 1)
	pos := geom.V(p[0], p[1], p[2])
	if !inRange(pos) {
		return Spawn{}, fmt.Errorf("%s: position %v is beyond ±%g m", n.Label(), pos, MaxCoord)
	}
	if math.Hypot(f[0], f[2]) < 1e-9*geom.V(f[0], f[1], f[2]).Len() {
		return Spawn{}, fmt.Errorf("%s: its +Z axis points straight up or down: a spawn faces along it, turned level", n.Label())
	}
	return Spawn{Team: team, Pos: pos, Yaw: math.Atan2(f[0], f[2])}, nil
}

// volumeOf is a bounds or kill volume's box: the world-space bounding box
// of its node's mesh, or, for a node without a mesh, of the cube from −1
// to 1 under its transform (an empty whose scale is the box's half size).
func volumeOf(n *gltf.Node, doc *gltf.Document) (geom.AABB, bool, error) {
	first := true
	var box geom.AABB
	add := func(x, y, z float64) {
		w := n.World.Point(x, y, z)
		v := geom.V(w[0], w[1], w[2])
		if first {
			box, first = geom.AABB{Min: v, Max: v}, false
		}
		box = box.Union(geom.AABB{Min: v, Max: v})
	}
	if n.Mesh >= 0 {
		for _, p := range doc.Meshes[n.Mesh].Primitives {
			for _, v := range p.Positions {
				add(float64(v[0]), float64(v[1]), float64(v[2]))
			}
		}
		if first {
			return box, false, fmt.Errorf("%s: its mesh has no triangles to take a box from", n.Label())
		}
	} else {
		for c := range 8 {
			add(float64(c&1*2-1), float64(c>>1&1*2-1), float64(c>>2&1*2-1))
		}
	}
	if !inRange(box.Min) || !inRange(box.Max) {
		return box, false, fmt.Errorf("%s: box %v is beyond ±%g m", n.Label(), box, MaxCoord)
	}
	if box.Min.X >= box.Max.X || box.Min.Y >= box.Max.Y || box.Min.Z >= box.Max.Z {
		return box, false, fmt.Errorf("%s: box from %v to %v has no volume", n.Label(), box.Min, box.Max)
	}
	// Rotated: some axis of the node does not lie along a world axis.
	rotated := false
	for c := range 3 {
		d := n.World.Dir(float64(btoi(c == 0)), float64(btoi(c == 1)), float64(btoi(c == 2)))
		big := 0
		for _, x := range d {
			if math.Abs(x) > 1e-6*geom.V(d[0], d[1], d[2]).Len() {
				big++
			}
		}
		rotated = rotated || big > 1
	}
	return box, rotated, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// waypoints gathers the waypoint nodes and their links into a graph.
func waypoints(nodes []gltf.Node, marks []mark, sourceOf func(int) int32) (*Waypoints, error) {
	byID := map[string]int{}
	var owner []int
	wp := &Waypoints{}
	for i := range nodes {
		m := &marks[i]
		if m.role != roleWaypoint {
			continue
		}
		if m.id == "" { // marked by extras without rewind_id: the name's id
			id, links, err := waypointName(nodes[i].Name)
			if err != nil {
				return nil, fmt.Errorf("%s: a waypoint needs an id: set extras rewind_id, or name it wp_<id>", nodes[i].Label())
			}
			m.id = id
			if m.links == nil {
				m.links = links
			}
		}
		if j, dup := byID[m.id]; dup {
			return nil, fmt.Errorf("%s and %s are both waypoint %q: ids are unique", nodes[owner[j]].Label(), nodes[i].Label(), m.id)
		}
		p := nodes[i].World.Point(0, 0, 0)
		pos := geom.V(p[0], p[1], p[2])
		if !inRange(pos) {
			return nil, fmt.Errorf("%s: position %v is beyond ±%g m", nodes[i].Label(), pos, MaxCoord)
		}
		byID[m.id] = len(wp.Nodes)
		owner = append(owner, i)
		wp.Nodes = append(wp.Nodes, Waypoint{ID: m.id, Pos: pos, Source: sourceOf(i)})
	}
	if len(wp.Nodes) == 0 {
		return nil, nil
	}
	edges := map[[2]int32]*Edge{}
	add := func(from, to int32, l link) {
		e := edges[[2]int32{from, to}]
		if e == nil {
			e = &Edge{From: from, To: to}
			edges[[2]int32{from, to}] = e
		}
		e.Jump, e.Crouch = e.Jump || l.jump, e.Crouch || l.crouch
	}
	for k, i := range owner {
		for _, l := range marks[i].links {
			to, ok := byID[l.to]
			if !ok {
				return nil, fmt.Errorf("%s: link to waypoint %q, which the level does not have", nodes[i].Label(), l.to)
			}
			if to == k {
				return nil, fmt.Errorf("%s: a link to itself", nodes[i].Label())
			}
			add(int32(k), int32(to), l)
			if !l.oneway {
				add(int32(to), int32(k), l)
			}
		}
	}
	for _, e := range edges {
		wp.Edges = append(wp.Edges, *e)
	}
	slices.SortFunc(wp.Edges, func(a, b Edge) int {
		if a.From != b.From {
			return int(a.From - b.From)
		}
		return int(a.To - b.To)
	})
	return wp, nil
}
