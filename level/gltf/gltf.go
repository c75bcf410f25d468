package gltf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strings"
)

// DefaultMaxBytes bounds a file and its external buffers together when
// Limits.MaxBytes is zero.
const DefaultMaxBytes = 256 << 20

// Limits bound what reading a file may cost.
type Limits struct {
	// MaxBytes bounds the file plus its external buffers, and also what
	// accessors that no bytes back (sparse accessors without a buffer view,
	// zeros until their sparse values) may make the reader allocate:
	// 0 means DefaultMaxBytes.
	MaxBytes int64
	// MaxDecoded bounds what the positions and triangles read from the
	// file take in memory, however many primitives share an accessor: 0
	// means 4 × MaxBytes.
	MaxDecoded int64
}

func (l *Limits) defaults() {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxDecoded <= 0 {
		l.MaxDecoded = 4 * l.MaxBytes
	}
}

// Document is what a file says that a level needs: its default scene's
// nodes and the meshes they use.
type Document struct {
	Scene string // the scene's name; empty when the scene has none or the file has no scene
	// Nodes holds the scene's nodes, each parent before its children.
	Nodes []Node
	// Meshes is indexed by glTF mesh index; only the meshes the scene's
	// nodes use are read (the others have no primitives).
	Meshes   []Mesh
	Warnings []string // what was skipped, each naming what it is in
}

// Node is one node of the scene.
type Node struct {
	Index  int    // the node's index in the file
	Name   string // may be empty
	Parent int    // index in Document.Nodes of its parent; -1 for a root
	Mesh   int    // the glTF mesh index; -1 for none
	// Extras is the node's extras as written (JSON), nil when absent.
	Extras json.RawMessage
	World  Mat4 // parent's world × local
}

// Label names the node in messages: node 4 "door".
func (n *Node) Label() string { return label("node", n.Index, n.Name) }

// Mesh is one mesh's triangles.
type Mesh struct {
	Index      int
	Name       string
	Extras     json.RawMessage
	Primitives []Primitive
}

// Label names the mesh in messages: mesh 2 "rock".
func (m *Mesh) Label() string { return label("mesh", m.Index, m.Name) }

// Primitive is a triangle list: strips and fans are converted, points and
// lines skipped. Triangles are counter-clockwise seen from the front, as
// glTF defines them in the mesh's own space.
type Primitive struct {
	Positions [][3]float32
	Triangles [][3]uint32 // indices into Positions
}

// ReadFile reads the glTF (.gltf or .glb: told apart by content) at name
// in fsys. A .gltf's external buffers are read from fsys relative to it.
func ReadFile(fsys fs.FS, name string, lim Limits) (*Document, error) {
	lim.defaults()
	data, err := readLimited(fsys, name, lim.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("gltf: %w", err)
	}
	d := &decoder{fsys: fsys, name: name, budget: lim.MaxBytes - int64(len(data)), decoded: lim.MaxDecoded}
	return d.decode(data)
}

// Read reads a glTF from memory. A .gltf read this way can hold its
// buffers only as data: URIs.
func Read(data []byte, lim Limits) (*Document, error) {
	lim.defaults()
	if int64(len(data)) > lim.MaxBytes {
		return nil, fmt.Errorf("gltf: %d bytes, over the limit of %d", len(data), lim.MaxBytes)
	}
	d := &decoder{budget: lim.MaxBytes - int64(len(data)), decoded: lim.MaxDecoded}
	return d.decode(data)
}

// readLimited reads a whole file, refusing one over max bytes without
// reading past max.
func readLimited(fsys fs.FS, name string, max int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, over the limit of %d", name, st.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: over the limit of %d bytes", name, max)
	}
	return data, nil
}

// decoder holds one file's state while it is read.
type decoder struct {
	fsys   fs.FS  // nil: no external files
	name   string // the file's name in fsys
	budget int64  // bytes still allowed: external buffers and unbacked accessors
	// decoded is what positions and triangles may still take; each
	// accessor's positions or indices are decoded once, however many
	// primitives use them.
	decoded   int64
	positionc map[int][][3]float32
	indexc    map[int][]uint32
	doc       gltfJSON
	bin       []byte   // a .glb's BIN chunk; nil if none
	isGLB     bool     // read from a .glb: buffer 0 may be its BIN chunk
	bufs      [][]byte // loaded buffers, by index
	warn      []string
}

// charge takes n bytes of decoded data from the budget before they are
// allocated, or refuses them.
func (d *decoder) charge(n int64, what string) error {
	if n > d.decoded {
		return fmt.Errorf("%s: %d more bytes of decoded geometry, over what the limit leaves (%d)", what, n, d.decoded)
	}
	d.decoded -= n
	return nil
}

func (d *decoder) warnf(format string, args ...any) {
	d.warn = append(d.warn, fmt.Sprintf(format, args...))
}

const (
	glbMagic     = 0x46546C67 // "glTF"
	glbChunkJSON = 0x4E4F534A
	glbChunkBIN  = 0x004E4942
)

func (d *decoder) decode(data []byte) (*Document, error) {
	js := data
	if len(data) >= 4 && binary.LittleEndian.Uint32(data) == glbMagic {
		var err error
		if js, d.bin, err = splitGLB(data); err != nil {
			return nil, fmt.Errorf("gltf: glb: %w", err)
		}
		d.isGLB = true
	}
	js = bytes.TrimPrefix(js, []byte("\xEF\xBB\xBF"))
	if err := json.Unmarshal(js, &d.doc); err != nil {
		return nil, fmt.Errorf("gltf: JSON: %w", err)
	}
	if err := d.checkHeader(); err != nil {
		return nil, err
	}
	d.bufs = make([][]byte, len(d.doc.Buffers))
	doc, err := d.scene()
	if err != nil {
		return nil, err
	}
	doc.Warnings = d.warn
	return doc, nil
}

// splitGLB returns a .glb's JSON and BIN chunks.
func splitGLB(data []byte) (js, bin []byte, err error) {
	if len(data) < 20 {
		return nil, nil, fmt.Errorf("%d bytes: shorter than a header and a chunk header (20)", len(data))
	}
	if v := binary.LittleEndian.Uint32(data[4:]); v != 2 {
		return nil, nil, fmt.Errorf("container version %d: only version 2 (glTF 2.0) is read", v)
	}
	if n := binary.LittleEndian.Uint32(data[8:]); uint64(n) != uint64(len(data)) {
		return nil, nil, fmt.Errorf("header length %d, but the file has %d bytes", n, len(data))
	}
	rest := data[12:]
	for i := 0; len(rest) > 0; i++ {
		if len(rest) < 8 {
			return nil, nil, fmt.Errorf("chunk %d: %d bytes left, shorter than a chunk header", i, len(rest))
		}
		n, typ := binary.LittleEndian.Uint32(rest), binary.LittleEndian.Uint32(rest[4:])
		if uint64(n) > uint64(len(rest)-8) {
			return nil, nil, fmt.Errorf("chunk %d: length %d, past the end of the file (%d bytes left)", i, n, len(rest)-8)
		}
		body := rest[8 : 8+n]
		rest = rest[8+n:]
		switch {
		case i == 0 && typ != glbChunkJSON:
			return nil, nil, fmt.Errorf("chunk 0 has type 0x%08X, not JSON", typ)
		case i == 0:
			js = body
		case i == 1 && typ == glbChunkBIN:
			bin = body
		case typ == glbChunkJSON || typ == glbChunkBIN:
			return nil, nil, fmt.Errorf("chunk %d: a second %s chunk", i, map[uint32]string{glbChunkJSON: "JSON", glbChunkBIN: "BIN"}[typ])
		}
		// Chunks of other types are skipped, as the specification asks.
	}
	return js, bin, nil
}

// geometryExtensions change what geometry a file holds: a reader that
// ignored them would load less than the file says.
var geometryExtensions = map[string]string{
	"KHR_draco_mesh_compression": "its meshes are Draco-compressed: export without mesh compression (Blender: Compression off; gltf-transform: no draco)",
	"EXT_meshopt_compression":    "its buffers are meshopt-compressed: export without meshopt compression (gltf-transform: no meshopt)",
	"KHR_meshopt_compression":    "its buffers are meshopt-compressed: export without meshopt compression",
	"KHR_mesh_quantization":      "its positions are quantized integers: export with float positions (gltf-transform: no quantize)",
	"EXT_mesh_gpu_instancing":    "its nodes are GPU instances: export instances as separate nodes (gltf-transform: no instance)",
}

// harmlessPrefixes are extensions that only change how a file renders.
var harmlessPrefixes = []string{"KHR_materials_", "KHR_texture_", "EXT_texture_", "KHR_lights_", "EXT_lights_", "KHR_xmp", "KHR_animation_pointer"}

func (d *decoder) checkHeader() error {
	v := d.doc.Asset.Version
	if v == "" {
		return errors.New("gltf: asset.version is missing: not a glTF 2.0 file")
	}
	if !strings.HasPrefix(v, "2.") {
		return fmt.Errorf("gltf: asset.version %q: only glTF 2.x is read (re-export as glTF 2.0)", v)
	}
	if mv := d.doc.Asset.MinVersion; mv != "" && mv != "2.0" {
		return fmt.Errorf("gltf: asset.minVersion %q: only glTF 2.0 is read", mv)
	}
	var refused []string
	hint := ""
	for _, e := range d.doc.ExtensionsRequired {
		if h, ok := geometryExtensions[e]; ok {
			refused = append(refused, e)
			hint += "; " + e + ": " + h
			continue
		}
		harmless := false
		for _, p := range harmlessPrefixes {
			harmless = harmless || strings.HasPrefix(e, p)
		}
		if !harmless {
			refused = append(refused, e)
			hint += "; " + e + ": unknown here: export without it"
		}
	}
	for _, e := range d.doc.ExtensionsUsed {
		if e == "EXT_mesh_gpu_instancing" && !contains(refused, e) {
			refused = append(refused, e)
			hint += "; " + e + ": " + geometryExtensions[e]
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("gltf: unsupported extensions %s%s", strings.Join(refused, ", "), hint)
	}
	return nil
}

func contains(s []string, x string) bool {
	for _, e := range s {
		if e == x {
			return true
		}
	}
	return false
}

// label names an object in messages: its kind, index and, if it has one,
// its name.
func label(kind string, i int, name string) string {
	if name == "" {
		return fmt.Sprintf("%s %d", kind, i)
	}
	return fmt.Sprintf("%s %d %q", kind, i, name)
}

// finite reports whether every value is a finite number.
func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
