// Package leveltest writes small glTF levels for tests: a document of
// nodes over two meshes, a 1 m box (mesh 0, from the origin to (1, 1, 1))
// and a 20 m floor at y = 0 (mesh 1), named and placed by the conventions
// of docs/levels.md.
package leveltest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
)

// Meshes of the document.
const (
	BoxMesh   = 0 // a 1 m box from the origin to (1, 1, 1)
	FloorMesh = 1 // a 20 m square at y = 0, centred on the origin, facing up
)

// GLTF is a .gltf (its buffer a data: URI) with the box and floor meshes
// and the given nodes, all roots of its scene.
func GLTF(nodes ...map[string]any) []byte {
	var bin []byte
	f := func(vs ...float32) {
		for _, v := range vs {
			bin = binary.LittleEndian.AppendUint32(bin, math.Float32bits(v))
		}
	}
	for i := range 8 {
		f(float32(i&1), float32(i>>1&1), float32(i>>2&1))
	}
	f(-10, 0, -10, -10, 0, 10, 10, 0, 10, 10, 0, -10)
	for _, i := range []byte{0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5, 0, 1, 5, 0, 5, 4, 2, 6, 7, 2, 7, 3, 0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6, 0, 1, 2, 0, 2, 3} {
		bin = append(bin, i)
	}
	roots := make([]any, len(nodes))
	ns := make([]any, len(nodes))
	for i, n := range nodes {
		roots[i], ns[i] = i, n
	}
	doc := map[string]any{
		"asset": map[string]any{"version": "2.0"}, "scene": 0, "scenes": []any{map[string]any{"nodes": roots}}, "nodes": ns,
		"meshes": []any{
			map[string]any{"name": "box", "primitives": []any{map[string]any{"attributes": map[string]any{"POSITION": 0}, "indices": 2}}},
			map[string]any{"name": "floor", "primitives": []any{map[string]any{"attributes": map[string]any{"POSITION": 1}, "indices": 3}}},
		},
		"accessors": []any{
			map[string]any{"bufferView": 0, "componentType": 5126, "count": 8, "type": "VEC3"},
			map[string]any{"bufferView": 0, "byteOffset": 96, "componentType": 5126, "count": 4, "type": "VEC3"},
			map[string]any{"bufferView": 1, "componentType": 5121, "count": 36, "type": "SCALAR"},
			map[string]any{"bufferView": 1, "byteOffset": 36, "componentType": 5121, "count": 6, "type": "SCALAR"},
		},
		"bufferViews": []any{map[string]any{"buffer": 0, "byteLength": 144}, map[string]any{"buffer": 0, "byteOffset": 144, "byteLength": 42}},
		"buffers":     []any{map[string]any{"byteLength": len(bin), "uri": "data:application/octet-stream;base64," + base64.StdEncoding.EncodeToString(bin)}},
	}
	out, err := json.Marshal(doc)
	if err != nil {
		panic(err) // maps of numbers and strings always marshal
	}
	return out
}

// Node is a node named name with the given key, value pairs ("mesh", 1,
// "translation", []any{0, 5, 0}).
func Node(name string, kv ...any) map[string]any {
	n := map[string]any{"name": name}
	for i := 0; i+1 < len(kv); i += 2 {
		n[kv[i].(string)] = kv[i+1]
	}
	return n
}

// Box is a node named name of the box mesh, scaled and moved to span min
// to max.
func Box(name string, min, max [3]float64) map[string]any {
	return Node(name, "mesh", BoxMesh, "translation", []any{min[0], min[1], min[2]},
		"scale", []any{max[0] - min[0], max[1] - min[1], max[2] - min[2]})
}
