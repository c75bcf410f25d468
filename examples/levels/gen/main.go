// Command gen builds the sample maps of examples/levels from their readable
// sources: each NAME.toml there becomes NAME.glb, a glTF 2.0 file that
// follows the conventions of docs/levels.md (node names for collision,
// windows, spawns, bounds and kill volumes; extras for waypoints), as a
// studio's tool would export it.
//
//	go run ./examples/levels/gen            # every examples/levels/*.toml
//	go run ./examples/levels/gen FILE.toml  # one, written beside it
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

func main() {
	files := os.Args[1:]
	if len(files) == 0 {
		var err error
		if files, err = filepath.Glob(filepath.Join("examples", "levels", "*.toml")); err != nil || len(files) == 0 {
			fmt.Fprintln(os.Stderr, "gen: no examples/levels/*.toml here: run it from the repository's root, or name the files")
			os.Exit(2)
		}
	}
	for _, f := range files {
		out := strings.TrimSuffix(f, filepath.Ext(f)) + ".glb"
		if err := generate(f, out); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", out)
	}
}

// generate reads the source at in and writes its .glb to out.
func generate(in, out string) error {
	src, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	m, err := parse(src)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	glb, err := build(m)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	return os.WriteFile(out, glb, 0o644)
}

// source is a map's readable description (examples/levels/courtyard.toml
// explains each kind).
type source struct {
	Name     string     `toml:"name"`
	Bounds   box        `toml:"bounds"`
	Kill     []box      `toml:"kill"`
	Solid    []box      `toml:"solid"`
	Window   []box      `toml:"window"`
	Ramp     []box      `toml:"ramp"`
	Stairs   []box      `toml:"stairs"`
	Spawn    []spawns   `toml:"spawn"`
	Waypoint []waypoint `toml:"waypoint"`
}

type box struct {
	Name   string     `toml:"name"`
	Min    [3]float64 `toml:"min"`
	Max    [3]float64 `toml:"max"`
	High   string     `toml:"high"`  // ramps and stairs: the side that is up, "+x", "-x", "+z" or "-z"
	Steps  int        `toml:"steps"` // stairs
	Mirror bool       `toml:"mirror"`
}

type spawns struct {
	Team      int          `toml:"team"`
	Yaw       float64      `toml:"yaw"` // degrees: 0 faces +Z, 90 faces +X
	Positions [][3]float64 `toml:"positions"`
	Mirror    bool         `toml:"mirror"`
}

type waypoint struct {
	ID     string     `toml:"id"`
	Pos    [3]float64 `toml:"pos"`
	Links  []string   `toml:"links"`
	Mirror bool       `toml:"mirror"`
}

func parse(b []byte) (*source, error) {
	var s source
	d := toml.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		var sm *toml.StrictMissingError
		if errors.As(err, &sm) {
			return nil, fmt.Errorf("unknown key: %s", sm.String())
		}
		return nil, err
	}
	if s.Name == "" {
		return nil, errors.New("name: empty")
	}
	return &s, nil
}

// turned is v turned 180° about the vertical axis through the origin.
func turned(v [3]float64) [3]float64 { return [3]float64{-v[0], v[1], -v[2]} }

// turnedBox is b turned 180°: still a box, its corners swapped.
func turnedBox(b box) box {
	lo, hi := turned(b.Min), turned(b.Max)
	b.Min = [3]float64{hi[0], lo[1], hi[2]}
	b.Max = [3]float64{lo[0], hi[1], lo[2]}
	switch b.High {
	case "+x":
		b.High = "-x"
	case "-x":
		b.High = "+x"
	case "+z":
		b.High = "-z"
	case "-z":
		b.High = "+z"
	}
	b.Name += "_turned"
	return b
}

// turnedID is a waypoint id of the other half: "s-…" becomes "n-…" and back.
func turnedID(id string) string {
	switch {
	case strings.HasPrefix(id, "s-"):
		return "n-" + id[2:]
	case strings.HasPrefix(id, "n-"):
		return "s-" + id[2:]
	}
	return id
}

// withMirrors returns the boxes and their turned copies, in order.
func withMirrors(bs []box) []box {
	var out []box
	for _, b := range bs {
		out = append(out, b)
		if b.Mirror {
			out = append(out, turnedBox(b))
		}
	}
	return out
}

// A doc is the glTF document being built: nodes, meshes, and one buffer.
type doc struct {
	Asset     map[string]string `json:"asset"`
	Scene     int               `json:"scene"`
	Scenes    []scene           `json:"scenes"`
	Nodes     []node            `json:"nodes"`
	Meshes    []mesh            `json:"meshes,omitempty"`
	Accessors []accessor        `json:"accessors,omitempty"`
	Views     []view            `json:"bufferViews,omitempty"`
	Buffers   []buffer          `json:"buffers,omitempty"`
	bin       []byte
}

type scene struct {
	Nodes []int `json:"nodes"`
}

type node struct {
	Name        string         `json:"name"`
	Mesh        *int           `json:"mesh,omitempty"`
	Translation *[3]float64    `json:"translation,omitempty"`
	Rotation    *[4]float64    `json:"rotation,omitempty"`
	Scale       *[3]float64    `json:"scale,omitempty"`
	Extras      map[string]any `json:"extras,omitempty"`
}

type mesh struct {
	Name       string      `json:"name"`
	Primitives []primitive `json:"primitives"`
}

type primitive struct {
	Attributes map[string]int `json:"attributes"`
	Indices    int            `json:"indices"`
	Mode       int            `json:"mode"`
}

type accessor struct {
	View          int       `json:"bufferView"`
	ComponentType int       `json:"componentType"`
	Count         int       `json:"count"`
	Type          string    `json:"type"`
	Min           []float32 `json:"min,omitempty"`
	Max           []float32 `json:"max,omitempty"`
}

type view struct {
	Buffer int `json:"buffer"`
	Offset int `json:"byteOffset"`
	Length int `json:"byteLength"`
	Target int `json:"target"`
}

type buffer struct {
	Length int `json:"byteLength"`
}

// glTF's enumerations that the generator writes.
const (
	floatType     = 5126
	uint16Type    = 5123
	arrayBuffer   = 34962
	elementBuffer = 34963
	triangles     = 4
)

// addMesh adds a node named name with a mesh of the triangles tris (world
// space, counter-clockwise from the front), and returns the node's index.
func (d *doc) addMesh(name string, tris [][3][3]float64) int {
	var pos []byte
	var idx []byte
	lo := [3]float32{math.MaxFloat32, math.MaxFloat32, math.MaxFloat32}
	hi := [3]float32{-math.MaxFloat32, -math.MaxFloat32, -math.MaxFloat32}
	n := 0
	for _, t := range tris {
		for _, v := range t {
			for a := range 3 {
				f := float32(v[a])
				lo[a], hi[a] = min(lo[a], f), max(hi[a], f)
				pos = binary.LittleEndian.AppendUint32(pos, math.Float32bits(f))
			}
			idx = binary.LittleEndian.AppendUint16(idx, uint16(n))
			n++
		}
	}
	posView := d.addView(pos, arrayBuffer)
	idxView := d.addView(idx, elementBuffer)
	d.Accessors = append(d.Accessors,
		accessor{View: posView, ComponentType: floatType, Count: n, Type: "VEC3", Min: lo[:], Max: hi[:]},
		accessor{View: idxView, ComponentType: uint16Type, Count: n, Type: "SCALAR"})
	d.Meshes = append(d.Meshes, mesh{Name: name, Primitives: []primitive{{
		Attributes: map[string]int{"POSITION": len(d.Accessors) - 2}, Indices: len(d.Accessors) - 1, Mode: triangles}}})
	m := len(d.Meshes) - 1
	return d.addNode(node{Name: name, Mesh: &m})
}

// addView appends b to the buffer, aligned to 4 bytes, as a buffer view.
func (d *doc) addView(b []byte, target int) int {
	for len(d.bin)%4 != 0 {
		d.bin = append(d.bin, 0)
	}
	d.Views = append(d.Views, view{Offset: len(d.bin), Length: len(b), Target: target})
	d.bin = append(d.bin, b...)
	return len(d.Views) - 1
}

func (d *doc) addNode(n node) int {
	d.Nodes = append(d.Nodes, n)
	d.Scenes[0].Nodes = append(d.Scenes[0].Nodes, len(d.Nodes)-1)
	return len(d.Nodes) - 1
}

// addEmptyBox adds an empty node whose −1..1 cube under its transform is b
// (docs/levels.md, "Bounds and kill volumes").
func (d *doc) addEmptyBox(name string, b box) {
	c := [3]float64{(b.Min[0] + b.Max[0]) / 2, (b.Min[1] + b.Max[1]) / 2, (b.Min[2] + b.Max[2]) / 2}
	h := [3]float64{(b.Max[0] - b.Min[0]) / 2, (b.Max[1] - b.Min[1]) / 2, (b.Max[2] - b.Min[2]) / 2}
	d.addNode(node{Name: name, Translation: &c, Scale: &h})
}

// build turns a source into a .glb file.
func build(s *source) ([]byte, error) {
	d := &doc{Asset: map[string]string{"version": "2.0", "generator": "rewind examples/levels/gen"}, Scenes: []scene{{}}}
	for _, b := range withMirrors(s.Solid) {
		if err := checkBox(b); err != nil {
			return nil, err
		}
		d.addMesh("col_"+b.Name, cuboid(b.Min, b.Max))
	}
	for _, b := range withMirrors(s.Window) {
		if err := checkBox(b); err != nil {
			return nil, err
		}
		d.addMesh("col_window_"+b.Name, cuboid(b.Min, b.Max))
	}
	for _, b := range withMirrors(s.Ramp) {
		tris, err := wedge(b)
		if err != nil {
			return nil, err
		}
		d.addMesh("col_"+b.Name, tris)
	}
	for _, b := range withMirrors(s.Stairs) {
		tris, err := stairs(b)
		if err != nil {
			return nil, err
		}
		d.addMesh("col_"+b.Name, tris)
	}
	if err := checkBox(s.Bounds); err != nil {
		return nil, fmt.Errorf("bounds: %w", err)
	}
	d.addEmptyBox("bounds", s.Bounds)
	for _, b := range withMirrors(s.Kill) {
		if err := checkBox(b); err != nil {
			return nil, err
		}
		d.addEmptyBox("kill_"+b.Name, b)
	}
	for _, sp := range s.Spawn {
		if err := d.addSpawns(sp.Team, sp.Yaw, sp.Positions, false); err != nil {
			return nil, err
		}
		if sp.Mirror {
			if err := d.addSpawns(3-sp.Team, sp.Yaw+180, sp.Positions, true); err != nil {
				return nil, err
			}
		}
	}
	for _, w := range s.Waypoint {
		d.addWaypoint(w.ID, w.Pos, w.Links)
		if w.Mirror {
			links := make([]string, len(w.Links))
			for i, l := range w.Links {
				links[i] = turnedID(l)
			}
			d.addWaypoint(turnedID(w.ID), turned(w.Pos), links)
		}
	}
	d.Buffers = []buffer{{Length: len(d.bin)}}
	return d.glb()
}

func checkBox(b box) error {
	for a := range 3 {
		if !(b.Min[a] < b.Max[a]) {
			return fmt.Errorf("%s: min %v is not below max %v", b.Name, b.Min, b.Max)
		}
	}
	return nil
}

// addSpawns adds a spawn node per position, facing yaw degrees (turned
// 180°, and its positions, when turn is set).
func (d *doc) addSpawns(team int, yaw float64, positions [][3]float64, turn bool) error {
	if team < 1 || team > 2 {
		return fmt.Errorf("spawn: team %d: a mirrored map has teams 1 and 2", team)
	}
	half := yaw * math.Pi / 360
	q := [4]float64{0, math.Sin(half), 0, math.Cos(half)} // about +Y: +Z turns toward +X
	for i, p := range positions {
		if turn {
			p = turned(p)
		}
		d.addNode(node{Name: fmt.Sprintf("spawn_t%d_%c", team, 'a'+i), Translation: &p, Rotation: &q})
	}
	return nil
}

// addWaypoint adds a waypoint node, its id and links in extras (ids have
// dashes, which a name would read as word breaks).
func (d *doc) addWaypoint(id string, pos [3]float64, links []string) {
	d.addNode(node{Name: "wp_" + id, Translation: &pos,
		Extras: map[string]any{"rewind": "waypoint", "rewind_id": id, "rewind_links": strings.Join(links, ", ")}})
}

// glb lays the document out as a binary glTF: header, JSON chunk, BIN
// chunk, each chunk padded to 4 bytes.
func (d *doc) glb() ([]byte, error) {
	js, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	for len(js)%4 != 0 {
		js = append(js, ' ')
	}
	bin := d.bin
	for len(bin)%4 != 0 {
		bin = append(bin, 0)
	}
	var out []byte
	out = binary.LittleEndian.AppendUint32(out, 0x46546C67) // "glTF"
	out = binary.LittleEndian.AppendUint32(out, 2)
	out = binary.LittleEndian.AppendUint32(out, uint32(12+8+len(js)+8+len(bin)))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(js)))
	out = binary.LittleEndian.AppendUint32(out, 0x4E4F534A) // "JSON"
	out = append(out, js...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(bin)))
	out = binary.LittleEndian.AppendUint32(out, 0x004E4942) // "BIN\0"
	return append(out, bin...), nil
}
