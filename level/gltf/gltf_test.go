package gltf

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
)

// file is a hand-made glTF: its JSON as a map (edited per test) and its
// binary buffer.
type file struct {
	json map[string]any
	bin  []byte
}

func f32s(vs ...float32) []byte {
	b := make([]byte, 0, 4*len(vs))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// triangleFile is one node with one mesh: a triangle (3 positions, bytes
// 0..36) indexed by 3 UNSIGNED_SHORTs (bytes 36..42).
func triangleFile() *file {
	bin := f32s(0, 0, 0, 0, 0, 1, 1, 0, 0)
	bin = binary.LittleEndian.AppendUint16(bin, 0)
	bin = binary.LittleEndian.AppendUint16(bin, 1)
	bin = binary.LittleEndian.AppendUint16(bin, 2)
	bin = append(bin, 0, 0)
	var j map[string]any
	err := json.Unmarshal([]byte(`{
		"asset": {"version": "2.0"},
		"scene": 0,
		"scenes": [{"nodes": [0]}],
		"nodes": [{"name": "floor", "mesh": 0}],
		"meshes": [{"name": "tri", "primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
		"accessors": [
			{"name": "pos", "bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3"},
			{"name": "idx", "bufferView": 1, "componentType": 5123, "count": 3, "type": "SCALAR"}
		],
		"bufferViews": [
			{"name": "positions", "buffer": 0, "byteOffset": 0, "byteLength": 36},
			{"name": "indices", "buffer": 0, "byteOffset": 36, "byteLength": 6}
		],
		"buffers": [{"name": "bin", "byteLength": 44}]
	}`), &j)
	if err != nil {
		panic(err)
	}
	return &file{json: j, bin: bin}
}

// set changes the JSON at a path of keys and indices: "nodes.0.mesh".
func (f *file) set(path string, v any) *file {
	keys := strings.Split(path, ".")
	var cur any = f.json
	for i, k := range keys {
		last := i == len(keys)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				if v == nil {
					delete(c, k)
				} else {
					c[k] = v
				}
				return f
			}
			cur = c[k]
		case []any:
			n := 0
			for _, ch := range k {
				n = n*10 + int(ch-'0')
			}
			if last {
				c[n] = v
				return f
			}
			cur = c[n]
		}
	}
	return f
}

// glb is the file as a .glb.
func (f *file) glb() []byte {
	js, err := json.Marshal(f.json)
	if err != nil {
		panic(err)
	}
	for len(js)%4 != 0 {
		js = append(js, ' ')
	}
	bin := f.bin
	for len(bin)%4 != 0 {
		bin = append(bin, 0)
	}
	out := binary.LittleEndian.AppendUint32(nil, glbMagic)
	out = binary.LittleEndian.AppendUint32(out, 2)
	out = binary.LittleEndian.AppendUint32(out, uint32(12+8+len(js)+8+len(bin)))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(js)))
	out = binary.LittleEndian.AppendUint32(out, glbChunkJSON)
	out = append(out, js...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(bin)))
	out = binary.LittleEndian.AppendUint32(out, glbChunkBIN)
	return append(out, bin...)
}

// gltf is the file as a .gltf with its buffer as a data: URI.
func (f *file) gltf() []byte {
	f.set("buffers.0.uri", "data:application/octet-stream;base64,"+base64.StdEncoding.EncodeToString(f.bin))
	js, err := json.Marshal(f.json)
	if err != nil {
		panic(err)
	}
	return js
}

func TestReadsTheTriangle(t *testing.T) {
	for name, data := range map[string][]byte{"glb": triangleFile().glb(), "gltf": triangleFile().gltf()} {
		doc, err := Read(data, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m := doc.Meshes[0]
		if len(doc.Nodes) != 1 || doc.Nodes[0].Mesh != 0 || len(m.Primitives) != 1 ||
			m.Primitives[0].Triangles[0] != [3]uint32{0, 1, 2} || m.Primitives[0].Positions[2] != [3]float32{1, 0, 0} {
			t.Errorf("%s: %+v", name, doc)
		}
	}
}

// Every malformed or unsupported file is refused, and the error names what
// is wrong and where.
func TestRefusals(t *testing.T) {
	cases := []struct {
		name string
		data func() []byte
		want []string // every one in the error
	}{
		{"version 1", func() []byte { return triangleFile().set("asset.version", "1.0").glb() }, []string{`asset.version "1.0"`, "glTF 2"}},
		{"no asset", func() []byte { return triangleFile().set("asset", nil).glb() }, []string{"asset.version is missing"}},
		{"draco", func() []byte {
			return triangleFile().set("extensionsRequired", []any{"KHR_draco_mesh_compression", "EXT_meshopt_compression"}).glb()
		}, []string{"KHR_draco_mesh_compression", "EXT_meshopt_compression", "export without"}},
		{"unknown required extension", func() []byte { return triangleFile().set("extensionsRequired", []any{"VENDOR_magic"}).glb() }, []string{"VENDOR_magic"}},
		{"gpu instancing used", func() []byte { return triangleFile().set("extensionsUsed", []any{"EXT_mesh_gpu_instancing"}).glb() }, []string{"EXT_mesh_gpu_instancing", "separate nodes"}},
		{"mesh out of range", func() []byte { return triangleFile().set("nodes.0.mesh", 7).glb() }, []string{`node 0 "floor"`, "mesh 7 is out of range"}},
		{"child out of range", func() []byte { return triangleFile().set("nodes.0.children", []any{3}).glb() }, []string{`node 0 "floor"`, "child 3 is out of range"}},
		{"cycle", func() []byte {
			f := triangleFile()
			f.set("nodes", []any{map[string]any{"name": "a"}, map[string]any{"name": "b", "children": []any{2}}, map[string]any{"name": "c", "children": []any{1}}})
			return f.set("scenes.0.nodes", []any{0}).glb()
		}, []string{"cycle"}},
		{"cycle without root", func() []byte {
			f := triangleFile()
			f.set("nodes", []any{map[string]any{"name": "a", "children": []any{1}}, map[string]any{"name": "b", "children": []any{0}}})
			return f.set("scene", nil).set("scenes", nil).glb()
		}, []string{"cycle in the node hierarchy"}},
		{"self child", func() []byte { return triangleFile().set("nodes.0.children", []any{0}).glb() }, []string{`node 0 "floor"`, "its own child"}},
		{"two parents", func() []byte {
			f := triangleFile()
			f.set("nodes", []any{map[string]any{"name": "a", "children": []any{2}}, map[string]any{"name": "b", "children": []any{2}}, map[string]any{"name": "c"}})
			return f.set("scenes.0.nodes", []any{0, 1}).glb()
		}, []string{`node 2 "c" is a child of both node 0 "a" and node 1 "b"`}},
		{"root is a child", func() []byte {
			f := triangleFile()
			f.set("nodes", []any{map[string]any{"name": "a", "children": []any{1}}, map[string]any{"name": "b"}})
			return f.set("scenes.0.nodes", []any{0, 1}).glb()
		}, []string{`root node 1 "b" is also a child of node 0 "a"`}},
		{"default scene out of range", func() []byte { return triangleFile().set("scene", 4).glb() }, []string{"scene 4"}},
		{"matrix and TRS", func() []byte {
			return triangleFile().set("nodes.0.matrix", []any{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}).set("nodes.0.scale", []any{1, 1, 1}).glb()
		}, []string{`node 0 "floor"`, "both a matrix and"}},
		{"projective matrix", func() []byte {
			return triangleFile().set("nodes.0.matrix", []any{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1}).glb()
		}, []string{`node 0 "floor"`, "last row"}},
		{"short matrix", func() []byte { return triangleFile().set("nodes.0.matrix", []any{1, 0, 0}).glb() }, []string{"3 numbers, not 16"}},
		{"not a unit quaternion", func() []byte { return triangleFile().set("nodes.0.rotation", []any{0, 0, 0, 2}).glb() }, []string{`node 0 "floor"`, "unit quaternion"}},
		{"bad translation", func() []byte { return triangleFile().set("nodes.0.translation", []any{1, 2}).glb() }, []string{`node 0 "floor"`, "translation"}},
		{"index out of range", func() []byte {
			f := triangleFile()
			binary.LittleEndian.PutUint16(f.bin[40:], 9)
			return f.glb()
		}, []string{`mesh 0 "tri" primitive 0`, "index 9", `accessor 1 "idx"`, "3 vertices"}},
		{"accessor past its view", func() []byte { return triangleFile().set("accessors.0.count", 4).glb() }, []string{`accessor 0 "pos"`, `read past its buffer view 0 "positions"`}},
		{"accessor offset past its view", func() []byte { return triangleFile().set("accessors.1.byteOffset", 2).glb() }, []string{`accessor 1 "idx"`, "past"}},
		{"view past its buffer", func() []byte { return triangleFile().set("bufferViews.1.byteLength", 600).glb() }, []string{`buffer view 1 "indices"`, `buffer 0 "bin"`}},
		{"buffer longer than its data", func() []byte { return triangleFile().set("buffers.0.byteLength", 4000).glb() }, []string{`buffer 0 "bin"`, "byteLength 4000"}},
		{"buffer without uri in a .gltf", func() []byte {
			f := triangleFile()
			js, _ := json.Marshal(f.json)
			return js
		}, []string{`buffer 0 "bin"`, "no uri"}},
		{"view out of range", func() []byte { return triangleFile().set("accessors.0.bufferView", 9).glb() }, []string{`accessor 0 "pos"`, "buffer view 9 is out of range"}},
		{"non-finite vertex", func() []byte {
			f := triangleFile()
			copy(f.bin[12:], f32s(float32(math.Inf(1))))
			return f.glb()
		}, []string{`accessor 0 "pos"`, "vertex 1 is not finite"}},
		{"quantized positions", func() []byte { return triangleFile().set("accessors.0.componentType", 5122).glb() }, []string{`accessor 0 "pos"`, "SHORT", "FLOAT"}},
		{"float indices", func() []byte { return triangleFile().set("accessors.1.componentType", 5126).glb() }, []string{`accessor 1 "idx"`, "UNSIGNED"}},
		{"strided indices", func() []byte { return triangleFile().set("bufferViews.1.byteStride", 8).glb() }, []string{`accessor 1 "idx"`, "tightly packed"}},
		{"bad stride", func() []byte { return triangleFile().set("bufferViews.0.byteStride", 6).glb() }, []string{`buffer view 0 "positions"`, "byteStride 6"}},
		{"stride shorter than element", func() []byte { return triangleFile().set("bufferViews.0.byteStride", 8).glb() }, []string{`accessor 0 "pos"`, "shorter than an element"}},
		{"triangles not a multiple of 3", func() []byte { return triangleFile().set("accessors.1.count", 2).glb() }, []string{`mesh 0 "tri" primitive 0`, "not a multiple of 3"}},
		{"unknown mode", func() []byte { return triangleFile().set("meshes.0.primitives.0.mode", 9).glb() }, []string{`mesh 0 "tri" primitive 0`, "mode 9"}},
		{"no POSITION", func() []byte { return triangleFile().set("meshes.0.primitives.0.attributes", map[string]any{}).glb() }, []string{`mesh 0 "tri" primitive 0`, "no POSITION"}},
		{"no buffer view, no sparse", func() []byte { return triangleFile().set("accessors.0.bufferView", nil).glb() }, []string{`accessor 0 "pos"`, "no bufferView"}},
		{"sparse index out of range", func() []byte {
			f := triangleFile()
			f.bin = append(f.bin[:44], 5, 0, 0, 0) // sparse index 5 of 3
			f.bin = append(f.bin, f32s(1, 1, 1)...)
			f.set("buffers.0.byteLength", len(f.bin))
			f.set("bufferViews", append(f.json["bufferViews"].([]any),
				map[string]any{"buffer": 0, "byteOffset": 44, "byteLength": 4}, map[string]any{"buffer": 0, "byteOffset": 48, "byteLength": 12}))
			return f.set("accessors.0.sparse", map[string]any{"count": 1,
				"indices": map[string]any{"bufferView": 2, "componentType": 5121}, "values": map[string]any{"bufferView": 3}}).glb()
		}, []string{`accessor 0 "pos": sparse`, "index 5"}},
		{"glb length", func() []byte { d := triangleFile().glb(); return d[:len(d)-4] }, []string{"glb", "header length"}},
		{"glb chunk past the end", func() []byte {
			d := triangleFile().glb()
			binary.LittleEndian.PutUint32(d[12:], 1<<30)
			return d
		}, []string{"glb", "chunk 0", "past the end"}},
		{"glb version", func() []byte {
			d := triangleFile().glb()
			binary.LittleEndian.PutUint32(d[4:], 1)
			return d
		}, []string{"container version 1"}},
		{"not JSON", func() []byte { return []byte("solid cube\nfacet normal 0 0 1\n") }, []string{"JSON"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, err := Read(c.data(), Limits{})
			if err == nil {
				t.Fatalf("read: %+v", doc)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// A sparse accessor over a buffer view: its base values, then its sparse
// ones in place.
func TestSparseOverABufferView(t *testing.T) {
	f := triangleFile()
	f.bin = append(f.bin[:44], 2, 0, 0, 0)
	f.bin = append(f.bin, f32s(5, 6, 7)...)
	f.set("buffers.0.byteLength", len(f.bin))
	f.set("bufferViews", append(f.json["bufferViews"].([]any),
		map[string]any{"buffer": 0, "byteOffset": 44, "byteLength": 4}, map[string]any{"buffer": 0, "byteOffset": 48, "byteLength": 12}))
	f.set("accessors.0.sparse", map[string]any{"count": 1,
		"indices": map[string]any{"bufferView": 2, "componentType": 5121}, "values": map[string]any{"bufferView": 3}})
	doc, err := Read(f.glb(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if p := doc.Meshes[0].Primitives[0].Positions; p[1] != [3]float32{0, 0, 1} || p[2] != [3]float32{5, 6, 7} {
		t.Errorf("positions %v", p)
	}
}

// Points and lines are skipped with a warning naming the primitive; strips
// and fans become triangles as the specification orders them.
func TestModes(t *testing.T) {
	for mode, want := range map[int][][3]uint32{5: {{0, 1, 2}}, 6: {{1, 2, 0}}} {
		doc, err := Read(triangleFile().set("meshes.0.primitives.0.mode", mode).glb(), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if got := doc.Meshes[0].Primitives[0].Triangles; len(got) != 1 || got[0] != want[0] {
			t.Errorf("mode %d: %v, want %v", mode, got, want)
		}
	}
	if got, _ := assemble(5, []uint32{0, 1, 2, 3, 4}); len(got) != 3 || got[1] != [3]uint32{1, 3, 2} || got[2] != [3]uint32{2, 3, 4} {
		t.Errorf("strip: %v", got)
	}
	doc, err := Read(triangleFile().set("meshes.0.primitives.0.mode", 1).set("accessors.1.count", 2).glb(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Meshes[0].Primitives) != 0 || len(doc.Warnings) != 1 || doc.Warnings[0] != `mesh 0 "tri" primitive 0: mode 1 (LINES) is not triangles: skipped` {
		t.Errorf("lines: %+v, warnings %q", doc.Meshes[0], doc.Warnings)
	}
}

// A .gltf's external buffers are read beside it and never outside its
// directory.
func TestExternalBuffers(t *testing.T) {
	f := triangleFile().set("buffers.0.uri", "data/tri%20angle.bin")
	js, _ := json.Marshal(f.json)
	fsys := fstest.MapFS{"maps/level.gltf": {Data: js}, "maps/data/tri angle.bin": {Data: f.bin}, "secret.bin": {Data: f.bin}}
	if _, err := ReadFile(fsys, "maps/level.gltf", Limits{}); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{"../secret.bin", "data/../../secret.bin", "/secret.bin", "file:///secret.bin", "http://example.com/x.bin", `data\tri.bin`} {
		js, _ := json.Marshal(triangleFile().set("buffers.0.uri", uri).json)
		fsys["maps/level.gltf"] = &fstest.MapFile{Data: js}
		_, err := ReadFile(fsys, "maps/level.gltf", Limits{})
		if err == nil || !strings.Contains(err.Error(), `buffer 0 "bin": uri`) {
			t.Errorf("uri %q: %v", uri, err)
		}
	}
	// Symbolic links out of the directory are refused by the caller's
	// fs.FS: an os.Root's does.
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "maps"), 0o755)
	os.WriteFile(filepath.Join(dir, "secret.bin"), f.bin, 0o644)
	js, _ = json.Marshal(triangleFile().set("buffers.0.uri", "link.bin").json)
	os.WriteFile(filepath.Join(dir, "maps", "level.gltf"), js, 0o644)
	if err := os.Symlink(filepath.Join(dir, "secret.bin"), filepath.Join(dir, "maps", "link.bin")); err != nil {
		t.Skip(err)
	}
	root, err := os.OpenRoot(filepath.Join(dir, "maps"))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := ReadFile(root.FS(), "level.gltf", Limits{}); err == nil {
		t.Error("a symbolic link out of the directory was followed")
	}
}

// A tiny file claiming huge counts is refused before anything is allocated
// for them.
func TestSizeBound(t *testing.T) {
	huge := []*file{
		triangleFile().set("accessors.0.count", 1<<31),
		triangleFile().set("accessors.1.count", 1<<40),
		triangleFile().set("accessors.0.bufferView", nil).set("accessors.0.count", 1<<31).set("accessors.0.sparse",
			map[string]any{"count": 1, "indices": map[string]any{"bufferView": 1, "componentType": 5123}, "values": map[string]any{"bufferView": 0}}),
		triangleFile().set("buffers.0.byteLength", 1<<40),
		triangleFile().set("bufferViews.0.byteLength", 1<<35),
	}
	for i, f := range huge {
		data := f.glb()
		var err error
		grew := allocated(func() { _, err = Read(data, Limits{MaxBytes: 1 << 20}) })
		if err == nil {
			t.Errorf("%d: a %d-byte file claiming a huge count was read", i, len(data))
		}
		if grew > 1<<20 {
			t.Errorf("%d: refusing it allocated %d bytes", i, grew)
		}
	}
	// The file itself is bounded too.
	if _, err := Read(make([]byte, 2048), Limits{MaxBytes: 1024}); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("a file over the limit: %v", err)
	}
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Primitives sharing one accessor cost their triangles each time: the
// total decoded is bounded, not just each accessor.
func TestSharedAccessorBound(t *testing.T) {
	const verts = 3000
	f := triangleFile()
	f.bin = make([]byte, 12*verts)
	f.set("buffers.0.byteLength", len(f.bin)).set("bufferViews.0.byteLength", len(f.bin)).set("accessors.0.count", verts)
	prims := make([]any, 200)
	for i := range prims {
		prims[i] = map[string]any{"attributes": map[string]any{"POSITION": 0}}
	}
	f.set("meshes.0.primitives", prims)
	data := f.glb()
	var err error
	grew := allocated(func() { _, err = Read(data, Limits{MaxBytes: 1 << 20}) })
	if err == nil || !strings.Contains(err.Error(), "decoded geometry") {
		t.Errorf("200 primitives of 3000 vertices each, 4 MiB to decode: %v", err)
	}
	if grew > 6<<20 {
		t.Errorf("allocated %d bytes", grew)
	}
	if _, err := Read(data, Limits{MaxBytes: 1 << 20, MaxDecoded: 64 << 20}); err != nil {
		t.Errorf("with room to decode: %v", err)
	}
}

func TestTransforms(t *testing.T) {
	f := triangleFile()
	f.set("nodes", []any{
		map[string]any{"name": "parent", "translation": []any{10, 0, 0}, "rotation": []any{0, math.Sqrt2 / 2, 0, math.Sqrt2 / 2}, "children": []any{1}},
		map[string]any{"name": "child", "matrix": []any{2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 1, 1}, "mesh": 0},
	})
	doc, err := Read(f.glb(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	child := doc.Nodes[1]
	if child.Parent != 0 || child.Name != "child" {
		t.Fatalf("nodes %+v", doc.Nodes)
	}
	// (1, 0, 0) → scaled to (2, 0, 1) → turned 90° about Y: (1, 0, −2) → moved: (11, 0, −2).
	p := child.World.Point(1, 0, 0)
	if math.Abs(p[0]-11) > 1e-12 || math.Abs(p[1]) > 1e-12 || math.Abs(p[2]+2) > 1e-12 {
		t.Errorf("world point %v", p)
	}
	if d := child.World.Det3(); math.Abs(d-8) > 1e-9 {
		t.Errorf("det %v", d)
	}
}

// FuzzDocument: the reader never panics, and what it accepts holds
// together: every triangle's indices are within its positions. (The level
// package's FuzzRead fuzzes the whole way to a checked level.)
func FuzzDocument(f *testing.F) {
	for _, name := range []string{"marked.glb", "collision-only.gltf", "sparse.gltf"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(triangleFile().glb())
	f.Add(triangleFile().gltf())
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Read(data, Limits{MaxBytes: 1 << 20})
		if err != nil {
			return
		}
		for _, m := range doc.Meshes {
			for _, p := range m.Primitives {
				for _, tri := range p.Triangles {
					for _, i := range tri {
						if int(i) >= len(p.Positions) {
							t.Fatalf("%s: index %d of %d positions", m.Label(), i, len(p.Positions))
						}
					}
				}
			}
		}
	})
}
