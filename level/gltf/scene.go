package gltf

import (
	"fmt"
	"math"
)

// scene walks the default scene (else scene 0, else every root node) and
// reads the meshes its nodes use.
func (d *decoder) scene() (*Document, error) {
	nodes := d.doc.Nodes
	parent, err := d.hierarchy()
	if err != nil {
		return nil, err
	}
	var roots []int
	doc := &Document{Meshes: make([]Mesh, len(d.doc.Meshes))}
	switch si := d.doc.Scene; {
	case si != nil && (*si < 0 || *si >= len(d.doc.Scenes)):
		return nil, fmt.Errorf("gltf: scene %d is the default scene, but the file has %d scenes", *si, len(d.doc.Scenes))
	case si != nil || len(d.doc.Scenes) > 0:
		i := 0
		if si != nil {
			i = *si
		}
		sc := d.doc.Scenes[i]
		doc.Scene = sc.Name
		seen := make(map[int]bool, len(sc.Nodes))
		for _, r := range sc.Nodes {
			switch {
			case r < 0 || r >= len(nodes):
				return nil, fmt.Errorf("gltf: %s: root node %d is out of range (%d nodes)", label("scene", i, sc.Name), r, len(nodes))
			case parent[r] >= 0:
				return nil, fmt.Errorf("gltf: %s: root %s is also a child of %s", label("scene", i, sc.Name), nodeLabel(nodes, r), nodeLabel(nodes, parent[r]))
			case seen[r]:
				return nil, fmt.Errorf("gltf: %s: root %s is listed twice", label("scene", i, sc.Name), nodeLabel(nodes, r))
			}
			seen[r] = true
		}
		roots = sc.Nodes
	default:
		for i := range nodes {
			if parent[i] < 0 {
				roots = append(roots, i)
			}
		}
	}
	for m := range doc.Meshes {
		doc.Meshes[m] = Mesh{Index: m, Name: d.doc.Meshes[m].Name, Extras: d.doc.Meshes[m].Extras}
	}
	loaded := make([]bool, len(d.doc.Meshes))
	// Depth-first, parents before children, in the file's order.
	type item struct{ node, parent int }
	stack := make([]item, 0, len(roots))
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, item{roots[i], -1})
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		jn := &nodes[it.node]
		local, err := localTransform(jn)
		if err != nil {
			return nil, fmt.Errorf("gltf: %s: %w", nodeLabel(nodes, it.node), err)
		}
		n := Node{Index: it.node, Name: jn.Name, Parent: it.parent, Mesh: -1, Extras: jn.Extras, World: local}
		if it.parent >= 0 {
			n.World = doc.Nodes[it.parent].World.Mul(local)
		}
		if !finite(n.World[:]...) {
			return nil, fmt.Errorf("gltf: %s: its world transform overflows", nodeLabel(nodes, it.node))
		}
		if jn.Mesh != nil {
			m := *jn.Mesh
			if m < 0 || m >= len(d.doc.Meshes) {
				return nil, fmt.Errorf("gltf: %s: mesh %d is out of range (%d meshes)", nodeLabel(nodes, it.node), m, len(d.doc.Meshes))
			}
			n.Mesh = m
			if !loaded[m] {
				loaded[m] = true
				if doc.Meshes[m].Primitives, err = d.mesh(m); err != nil {
					return nil, err
				}
			}
			if jn.Skin != nil {
				d.warnf("%s: skinned: its mesh is read in its bind pose", nodeLabel(nodes, it.node))
			}
		}
		self := len(doc.Nodes)
		doc.Nodes = append(doc.Nodes, n)
		for c := len(jn.Children) - 1; c >= 0; c-- {
			stack = append(stack, item{jn.Children[c], self})
		}
	}
	return doc, nil
}

// hierarchy returns every node's parent (-1 for none), refusing children
// out of range, nodes with two parents and cycles.
func (d *decoder) hierarchy() ([]int, error) {
	nodes := d.doc.Nodes
	parent := make([]int, len(nodes))
	for i := range parent {
		parent[i] = -1
	}
	for i := range nodes {
		for _, c := range nodes[i].Children {
			switch {
			case c < 0 || c >= len(nodes):
				return nil, fmt.Errorf("gltf: %s: child %d is out of range (%d nodes)", nodeLabel(nodes, i), c, len(nodes))
			case c == i:
				return nil, fmt.Errorf("gltf: %s: a cycle in the node hierarchy: it is its own child", nodeLabel(nodes, i))
			case parent[c] >= 0:
				return nil, fmt.Errorf("gltf: %s is a child of both %s and %s: a node has at most one parent", nodeLabel(nodes, c), nodeLabel(nodes, parent[c]), nodeLabel(nodes, i))
			}
			parent[c] = i
		}
	}
	// Each node has at most one parent, so following parents from any node
	// either reaches a root or goes round a cycle. walk[i] is the walk that
	// first reached i; a walk that meets itself has found a cycle.
	walk := make([]int, len(nodes))
	for i := range nodes {
		if walk[i] != 0 {
			continue
		}
		id := i + 1
		for n := i; n >= 0; n = parent[n] {
			if walk[n] == id {
				return nil, fmt.Errorf("gltf: %s: a cycle in the node hierarchy (it is its own ancestor)", nodeLabel(nodes, n))
			}
			if walk[n] != 0 {
				break
			}
			walk[n] = id
		}
	}
	return parent, nil
}

func nodeLabel(nodes []jsonNode, i int) string { return label("node", i, nodes[i].Name) }

// localTransform returns a node's matrix, or its translation × rotation ×
// scale.
func localTransform(n *jsonNode) (Mat4, error) {
	if n.Matrix != nil {
		if n.Translation != nil || n.Rotation != nil || n.Scale != nil {
			return Mat4{}, fmt.Errorf("has both a matrix and translation, rotation or scale")
		}
		if len(n.Matrix) != 16 {
			return Mat4{}, fmt.Errorf("matrix has %d numbers, not 16", len(n.Matrix))
		}
		if !finite(n.Matrix...) {
			return Mat4{}, fmt.Errorf("matrix has a non-finite number")
		}
		var m Mat4
		copy(m[:], n.Matrix)
		if m[3] != 0 || m[7] != 0 || m[11] != 0 || m[15] != 1 {
			return Mat4{}, fmt.Errorf("matrix's last row is (%g, %g, %g, %g), not (0, 0, 0, 1): not a translation, rotation and scale", m[3], m[7], m[11], m[15])
		}
		return m, nil
	}
	t, s := [3]float64{}, [3]float64{1, 1, 1}
	q, qw := [3]float64{}, 1.0
	if n.Translation != nil {
		if len(n.Translation) != 3 || !finite(n.Translation...) {
			return Mat4{}, fmt.Errorf("translation %v is not 3 finite numbers", n.Translation)
		}
		copy(t[:], n.Translation)
	}
	if n.Scale != nil {
		if len(n.Scale) != 3 || !finite(n.Scale...) {
			return Mat4{}, fmt.Errorf("scale %v is not 3 finite numbers", n.Scale)
		}
		copy(s[:], n.Scale)
	}
	if n.Rotation != nil {
		r := n.Rotation
		if len(r) != 4 || !finite(r...) {
			return Mat4{}, fmt.Errorf("rotation %v is not 4 finite numbers", r)
		}
		if l := math.Sqrt(r[0]*r[0] + r[1]*r[1] + r[2]*r[2] + r[3]*r[3]); math.Abs(l-1) > 0.01 {
			return Mat4{}, fmt.Errorf("rotation %v is not a unit quaternion (length %g)", r, l)
		}
		q, qw = [3]float64{r[0], r[1], r[2]}, r[3]
	}
	return trs(t, q, s, qw), nil
}
