package gltf

import "encoding/json"

// The JSON of a glTF file, as far as a level reads it. Indices that may be
// absent are pointers; unknown properties (materials, extensions) are
// ignored.
type gltfJSON struct {
	Asset struct {
		Version    string `json:"version"`
		MinVersion string `json:"minVersion"`
	} `json:"asset"`
	ExtensionsUsed     []string         `json:"extensionsUsed"`
	ExtensionsRequired []string         `json:"extensionsRequired"`
	Scene              *int             `json:"scene"`
	Scenes             []jsonScene      `json:"scenes"`
	Nodes              []jsonNode       `json:"nodes"`
	Meshes             []jsonMesh       `json:"meshes"`
	Accessors          []jsonAccessor   `json:"accessors"`
	BufferViews        []jsonBufferView `json:"bufferViews"`
	Buffers            []jsonBuffer     `json:"buffers"`
}

type jsonScene struct {
	Name  string `json:"name"`
	Nodes []int  `json:"nodes"`
}

type jsonNode struct {
	Name        string          `json:"name"`
	Children    []int           `json:"children"`
	Mesh        *int            `json:"mesh"`
	Skin        *int            `json:"skin"`
	Matrix      []float64       `json:"matrix"`
	Translation []float64       `json:"translation"`
	Rotation    []float64       `json:"rotation"`
	Scale       []float64       `json:"scale"`
	Extras      json.RawMessage `json:"extras"`
}

type jsonMesh struct {
	Name       string          `json:"name"`
	Primitives []jsonPrimitive `json:"primitives"`
	Extras     json.RawMessage `json:"extras"`
}

type jsonPrimitive struct {
	Attributes map[string]int   `json:"attributes"`
	Indices    *int             `json:"indices"`
	Mode       *int             `json:"mode"`
	Targets    []map[string]int `json:"targets"`
}

type jsonAccessor struct {
	Name          string      `json:"name"`
	BufferView    *int        `json:"bufferView"`
	ByteOffset    int64       `json:"byteOffset"`
	ComponentType int         `json:"componentType"`
	Normalized    bool        `json:"normalized"`
	Count         int64       `json:"count"`
	Type          string      `json:"type"`
	Sparse        *jsonSparse `json:"sparse"`
}

type jsonSparse struct {
	Count   int64 `json:"count"`
	Indices struct {
		BufferView    *int  `json:"bufferView"`
		ByteOffset    int64 `json:"byteOffset"`
		ComponentType int   `json:"componentType"`
	} `json:"indices"`
	Values struct {
		BufferView *int  `json:"bufferView"`
		ByteOffset int64 `json:"byteOffset"`
	} `json:"values"`
}

type jsonBufferView struct {
	Name       string `json:"name"`
	Buffer     *int   `json:"buffer"`
	ByteOffset int64  `json:"byteOffset"`
	ByteLength int64  `json:"byteLength"`
	ByteStride int64  `json:"byteStride"`
}

type jsonBuffer struct {
	Name       string `json:"name"`
	URI        string `json:"uri"`
	ByteLength int64  `json:"byteLength"`
}
