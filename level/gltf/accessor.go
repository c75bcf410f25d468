package gltf

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"path"
	"strings"
)

const (
	compByte   = 5120
	compUByte  = 5121
	compShort  = 5122
	compUShort = 5123
	compUInt   = 5125
	compFloat  = 5126
)

var compNames = map[int]string{compByte: "BYTE", compUByte: "UNSIGNED_BYTE", compShort: "SHORT",
	compUShort: "UNSIGNED_SHORT", compUInt: "UNSIGNED_INT", compFloat: "FLOAT"}

func compSize(ct int) int64 {
	switch ct {
	case compByte, compUByte:
		return 1
	case compShort, compUShort:
		return 2
	case compUInt, compFloat:
		return 4
	}
	return 0
}

var typeComps = map[string]int64{"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}

var modeNames = []string{"POINTS", "LINES", "LINE_LOOP", "LINE_STRIP", "TRIANGLES", "TRIANGLE_STRIP", "TRIANGLE_FAN"}

// mesh reads mesh m's triangle primitives.
func (d *decoder) mesh(m int) ([]Primitive, error) {
	jm := &d.doc.Meshes[m]
	name := label("mesh", m, jm.Name)
	var prims []Primitive
	morphs := false
	for pi := range jm.Primitives {
		jp := &jm.Primitives[pi]
		where := fmt.Sprintf("%s primitive %d", name, pi)
		mode := 4
		if jp.Mode != nil {
			mode = *jp.Mode
		}
		if mode < 0 || mode > 6 {
			return nil, fmt.Errorf("gltf: %s: mode %d is not a glTF primitive mode (0–6)", where, mode)
		}
		if mode < 4 {
			d.warnf("%s: mode %d (%s) is not triangles: skipped", where, mode, modeNames[mode])
			continue
		}
		morphs = morphs || len(jp.Targets) > 0
		pa, ok := jp.Attributes["POSITION"]
		if !ok {
			return nil, fmt.Errorf("gltf: %s: no POSITION attribute", where)
		}
		pos, err := d.cachedPositions(pa)
		if err != nil {
			return nil, fmt.Errorf("gltf: %s: POSITION: %w", where, err)
		}
		var idx []uint32
		if jp.Indices != nil {
			if idx, err = d.cachedIndices(*jp.Indices); err != nil {
				return nil, fmt.Errorf("gltf: %s: indices: %w", where, err)
			}
			for k, v := range idx {
				if int64(v) >= int64(len(pos)) {
					return nil, fmt.Errorf("gltf: %s: index %d (element %d of %s) is out of range: the primitive has %d vertices",
						where, v, k, d.accessorLabel(*jp.Indices), len(pos))
				}
			}
		} else {
			if err := d.charge(4*int64(len(pos)), where); err != nil {
				return nil, fmt.Errorf("gltf: %w", err)
			}
			idx = make([]uint32, len(pos))
			for k := range idx {
				idx[k] = uint32(k)
			}
		}
		if err := d.charge(12*int64(len(idx)), where); err != nil { // at most one triangle per index
			return nil, fmt.Errorf("gltf: %w", err)
		}
		tris, err := assemble(mode, idx)
		if err != nil {
			return nil, fmt.Errorf("gltf: %s: %w", where, err)
		}
		prims = append(prims, Primitive{Positions: pos, Triangles: tris})
	}
	if morphs {
		d.warnf("%s: morph targets ignored: its base shape is read", name)
	}
	return prims, nil
}

// assemble turns a primitive's vertex order into triangles, counter-
// clockwise as the specification defines strips and fans.
func assemble(mode int, idx []uint32) ([][3]uint32, error) {
	n := len(idx)
	switch mode {
	case 4:
		if n%3 != 0 {
			return nil, fmt.Errorf("TRIANGLES with %d indices, not a multiple of 3", n)
		}
		tris := make([][3]uint32, n/3)
		for i := range tris {
			tris[i] = [3]uint32{idx[3*i], idx[3*i+1], idx[3*i+2]}
		}
		return tris, nil
	case 5, 6:
		if n < 3 {
			return nil, nil
		}
		tris := make([][3]uint32, n-2)
		for i := range tris {
			if mode == 5 {
				// p_i = {v_i, v_(i+1+i%2), v_(i+2-i%2)}
				tris[i] = [3]uint32{idx[i], idx[i+1+i%2], idx[i+2-i%2]}
			} else {
				// p_i = {v_(i+1), v_(i+2), v_0}
				tris[i] = [3]uint32{idx[i+1], idx[i+2], idx[0]}
			}
		}
		return tris, nil
	}
	return nil, fmt.Errorf("mode %d is not triangles", mode)
}

func (d *decoder) accessorLabel(i int) string { return label("accessor", i, d.doc.Accessors[i].Name) }

// cachedPositions is positions, decoded (and charged) once per accessor.
func (d *decoder) cachedPositions(ai int) ([][3]float32, error) {
	return cached(&d.positionc, ai, d.positions)
}

// cachedIndices is indices, decoded (and charged) once per accessor.
func (d *decoder) cachedIndices(ai int) ([]uint32, error) { return cached(&d.indexc, ai, d.indices) }

func cached[T any](cache *map[int]T, ai int, read func(int) (T, error)) (T, error) {
	if v, ok := (*cache)[ai]; ok {
		return v, nil
	}
	v, err := read(ai)
	if err != nil {
		return v, err
	}
	if *cache == nil {
		*cache = map[int]T{}
	}
	(*cache)[ai] = v
	return v, nil
}

// positions reads a FLOAT VEC3 accessor of finite numbers.
func (d *decoder) positions(ai int) ([][3]float32, error) {
	if ai < 0 || ai >= len(d.doc.Accessors) {
		return nil, fmt.Errorf("accessor %d is out of range (%d accessors)", ai, len(d.doc.Accessors))
	}
	a := &d.doc.Accessors[ai]
	if a.Type != "VEC3" || a.ComponentType != compFloat || a.Normalized {
		return nil, fmt.Errorf("%s is %s of %s%s: positions must be VEC3 of FLOAT (quantized positions are not read: export with float positions)",
			d.accessorLabel(ai), a.Type, compName(a.ComponentType), map[bool]string{true: " (normalized)"}[a.Normalized])
	}
	data, stride, err := d.accessor(ai)
	if err != nil {
		return nil, err
	}
	if err := d.charge(12*a.Count, d.accessorLabel(ai)); err != nil {
		return nil, err
	}
	out := make([][3]float32, a.Count)
	for i := range out {
		e := data[int64(i)*stride:]
		for k := 0; k < 3; k++ {
			out[i][k] = math.Float32frombits(binary.LittleEndian.Uint32(e[4*k:]))
		}
		if !finite(float64(out[i][0]), float64(out[i][1]), float64(out[i][2])) {
			return nil, fmt.Errorf("%s: vertex %d is not finite %v", d.accessorLabel(ai), i, out[i])
		}
	}
	return out, nil
}

// indices reads an unsigned SCALAR accessor.
func (d *decoder) indices(ai int) ([]uint32, error) {
	if ai < 0 || ai >= len(d.doc.Accessors) {
		return nil, fmt.Errorf("accessor %d is out of range (%d accessors)", ai, len(d.doc.Accessors))
	}
	a := &d.doc.Accessors[ai]
	if a.Type != "SCALAR" || (a.ComponentType != compUByte && a.ComponentType != compUShort && a.ComponentType != compUInt) || a.Normalized {
		return nil, fmt.Errorf("%s is %s of %s: indices must be SCALAR of UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT",
			d.accessorLabel(ai), a.Type, compName(a.ComponentType))
	}
	if a.BufferView != nil && *a.BufferView >= 0 && *a.BufferView < len(d.doc.BufferViews) {
		if s := d.doc.BufferViews[*a.BufferView].ByteStride; s != 0 && s != compSize(a.ComponentType) {
			return nil, fmt.Errorf("%s: its %s has byteStride %d: indices are tightly packed",
				d.accessorLabel(ai), label("buffer view", *a.BufferView, d.doc.BufferViews[*a.BufferView].Name), s)
		}
	}
	data, stride, err := d.accessor(ai)
	if err != nil {
		return nil, err
	}
	if err := d.charge(4*a.Count, d.accessorLabel(ai)); err != nil {
		return nil, err
	}
	out := make([]uint32, a.Count)
	for i := range out {
		out[i] = readUint(data[int64(i)*stride:], a.ComponentType)
	}
	return out, nil
}

func compName(ct int) string {
	if n, ok := compNames[ct]; ok {
		return n
	}
	return fmt.Sprintf("component type %d", ct)
}

func readUint(b []byte, ct int) uint32 {
	switch ct {
	case compUByte:
		return uint32(b[0])
	case compUShort:
		return uint32(binary.LittleEndian.Uint16(b))
	}
	return binary.LittleEndian.Uint32(b)
}

// accessor returns accessor ai's bytes and the stride between its
// elements, every element checked to lie within its buffer view. A sparse
// accessor is returned resolved, tightly packed.
func (d *decoder) accessor(ai int) ([]byte, int64, error) {
	a := &d.doc.Accessors[ai]
	name := d.accessorLabel(ai)
	cs, nc := compSize(a.ComponentType), typeComps[a.Type]
	if cs == 0 {
		return nil, 0, fmt.Errorf("%s: componentType %d is not a glTF component type", name, a.ComponentType)
	}
	if nc == 0 {
		return nil, 0, fmt.Errorf("%s: type %q is not a glTF accessor type", name, a.Type)
	}
	if a.Count < 0 || a.ByteOffset < 0 {
		return nil, 0, fmt.Errorf("%s: negative count (%d) or byteOffset (%d)", name, a.Count, a.ByteOffset)
	}
	elem := cs * nc
	var data []byte
	stride := elem
	switch {
	case a.BufferView != nil:
		view, vs, err := d.bufferView(*a.BufferView, name)
		if err != nil {
			return nil, 0, err
		}
		if vs != 0 {
			if vs < elem {
				return nil, 0, fmt.Errorf("%s: its buffer view's byteStride %d is shorter than an element (%d bytes)", name, vs, elem)
			}
			stride = vs
		}
		// Checked before anything is allocated for it: count elements
		// must fit in the bytes the view actually has.
		if a.Count > 0 {
			if a.Count > int64(len(view)) || a.ByteOffset+(a.Count-1)*stride+elem > int64(len(view)) {
				return nil, 0, fmt.Errorf("%s: %d elements of %d bytes (stride %d) from byte %d read past its %s (%d bytes)",
					name, a.Count, elem, stride, a.ByteOffset, d.viewLabel(*a.BufferView), len(view))
			}
			data = view[a.ByteOffset:]
		}
		if a.Sparse == nil {
			return data, stride, nil
		}
		// Resolved into a packed copy: no larger than the view's bytes.
		packed := make([]byte, a.Count*elem)
		for i := int64(0); i < a.Count; i++ {
			copy(packed[i*elem:(i+1)*elem], data[i*stride:])
		}
		data, stride = packed, elem
	case a.Sparse != nil:
		// Zeros until the sparse values: no bytes back the count, so it
		// is charged to the budget before it is allocated.
		need := a.Count * elem
		if a.Count > d.budget || need > d.budget {
			return nil, 0, fmt.Errorf("%s: %d elements of zeros (sparse, no buffer view): %d bytes, over what the limit leaves (%d)", name, a.Count, need, d.budget)
		}
		d.budget -= need
		data, stride = make([]byte, need), elem
	default:
		return nil, 0, fmt.Errorf("%s: no bufferView and no sparse values (all zeros): not read", name)
	}
	if err := d.sparse(ai, data, elem); err != nil {
		return nil, 0, err
	}
	return data, stride, nil
}

// sparse writes accessor ai's sparse values into data, packed elements of
// elem bytes.
func (d *decoder) sparse(ai int, data []byte, elem int64) error {
	a := &d.doc.Accessors[ai]
	s := a.Sparse
	name := d.accessorLabel(ai) + ": sparse"
	if s.Count < 1 || s.Count > a.Count {
		return fmt.Errorf("%s: count %d is outside 1..%d (the accessor's count)", name, s.Count, a.Count)
	}
	ics := compSize(s.Indices.ComponentType)
	if s.Indices.ComponentType != compUByte && s.Indices.ComponentType != compUShort && s.Indices.ComponentType != compUInt {
		return fmt.Errorf("%s: indices are %s, not UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT", name, compName(s.Indices.ComponentType))
	}
	if s.Indices.BufferView == nil || s.Values.BufferView == nil {
		return fmt.Errorf("%s: indices and values each need a bufferView", name)
	}
	iv, _, err := d.bufferView(*s.Indices.BufferView, name+" indices")
	if err != nil {
		return err
	}
	vv, _, err := d.bufferView(*s.Values.BufferView, name+" values")
	if err != nil {
		return err
	}
	if o := s.Indices.ByteOffset; o < 0 || s.Count > int64(len(iv)) || o+s.Count*ics > int64(len(iv)) {
		return fmt.Errorf("%s: %d indices from byte %d read past %s (%d bytes)", name, s.Count, o, d.viewLabel(*s.Indices.BufferView), len(iv))
	}
	if o := s.Values.ByteOffset; o < 0 || s.Count > int64(len(vv)) || o+s.Count*elem > int64(len(vv)) {
		return fmt.Errorf("%s: %d values from byte %d read past %s (%d bytes)", name, s.Count, o, d.viewLabel(*s.Values.BufferView), len(vv))
	}
	prev := int64(-1)
	for k := int64(0); k < s.Count; k++ {
		i := int64(readUint(iv[s.Indices.ByteOffset+k*ics:], s.Indices.ComponentType))
		if i <= prev || i >= a.Count {
			return fmt.Errorf("%s: index %d (element %d) is out of range or not increasing (count %d, previous %d)", name, i, k, a.Count, prev)
		}
		prev = i
		copy(data[i*elem:(i+1)*elem], vv[s.Values.ByteOffset+k*elem:])
	}
	return nil
}

func (d *decoder) viewLabel(i int) string { return label("buffer view", i, d.doc.BufferViews[i].Name) }

// bufferView returns buffer view vi's bytes and stride (0: packed).
func (d *decoder) bufferView(vi int, user string) ([]byte, int64, error) {
	if vi < 0 || vi >= len(d.doc.BufferViews) {
		return nil, 0, fmt.Errorf("%s: buffer view %d is out of range (%d buffer views)", user, vi, len(d.doc.BufferViews))
	}
	v := &d.doc.BufferViews[vi]
	name := d.viewLabel(vi)
	if v.Buffer == nil {
		return nil, 0, fmt.Errorf("%s: no buffer", name)
	}
	if v.ByteOffset < 0 || v.ByteLength < 0 {
		return nil, 0, fmt.Errorf("%s: negative byteOffset (%d) or byteLength (%d)", name, v.ByteOffset, v.ByteLength)
	}
	if v.ByteStride != 0 && (v.ByteStride < 4 || v.ByteStride > 252 || v.ByteStride%4 != 0) {
		return nil, 0, fmt.Errorf("%s: byteStride %d is not a multiple of 4 in 4..252", name, v.ByteStride)
	}
	buf, err := d.buffer(*v.Buffer, name)
	if err != nil {
		return nil, 0, err
	}
	if v.ByteOffset > int64(len(buf)) || v.ByteLength > int64(len(buf))-v.ByteOffset {
		return nil, 0, fmt.Errorf("%s: bytes %d..%d are past the end of %s (%d bytes)",
			name, v.ByteOffset, v.ByteOffset+v.ByteLength, label("buffer", *v.Buffer, d.doc.Buffers[*v.Buffer].Name), len(buf))
	}
	return buf[v.ByteOffset : v.ByteOffset+v.ByteLength], v.ByteStride, nil
}

// buffer returns buffer bi's bytes, loading them on first use: the .glb's
// BIN chunk, a data: URI, or a file beside the .gltf.
func (d *decoder) buffer(bi int, user string) ([]byte, error) {
	if bi < 0 || bi >= len(d.doc.Buffers) {
		return nil, fmt.Errorf("%s: buffer %d is out of range (%d buffers)", user, bi, len(d.doc.Buffers))
	}
	if d.bufs[bi] != nil {
		return d.bufs[bi], nil
	}
	b := &d.doc.Buffers[bi]
	name := label("buffer", bi, b.Name)
	if b.ByteLength < 0 {
		return nil, fmt.Errorf("%s: negative byteLength %d", name, b.ByteLength)
	}
	var data []byte
	switch {
	case b.URI == "" && d.isGLB && bi == 0:
		if d.bin == nil {
			return nil, fmt.Errorf("%s: no uri, and the .glb has no BIN chunk", name)
		}
		data = d.bin
	case b.URI == "":
		return nil, fmt.Errorf("%s: no uri (only a .glb's first buffer may have none)", name)
	case strings.HasPrefix(b.URI, "data:"):
		comma := strings.IndexByte(b.URI, ',')
		if comma < 0 || !strings.HasSuffix(b.URI[:comma], ";base64") {
			return nil, fmt.Errorf("%s: a data: URI that is not base64", name)
		}
		enc := b.URI[comma+1:]
		var err error
		if data, err = base64.StdEncoding.DecodeString(enc); err != nil {
			if data, err = base64.RawStdEncoding.DecodeString(enc); err != nil {
				return nil, fmt.Errorf("%s: data: URI: %v", name, err)
			}
		}
	default:
		p, err := d.bufferPath(b.URI)
		if err != nil {
			return nil, fmt.Errorf("%s: uri %q: %w", name, b.URI, err)
		}
		if data, err = readLimited(d.fsys, p, d.budget); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		d.budget -= int64(len(data))
	}
	if int64(len(data)) < b.ByteLength {
		return nil, fmt.Errorf("%s: byteLength %d, but only %d bytes are there", name, b.ByteLength, len(data))
	}
	d.bufs[bi] = data[:b.ByteLength]
	return d.bufs[bi], nil
}

// bufferPath resolves a buffer's relative URI against the .gltf's
// directory, refusing anything that would leave it.
func (d *decoder) bufferPath(uri string) (string, error) {
	if d.fsys == nil {
		return "", fmt.Errorf("an external file, but the glTF was read from memory (read it from a directory)")
	}
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	if u.Scheme != "" || u.Host != "" {
		return "", fmt.Errorf("only data: URIs and relative paths are read")
	}
	p := u.Path
	if strings.HasPrefix(p, "/") || strings.Contains(p, `\`) {
		return "", fmt.Errorf("an absolute path or a backslash: only paths relative to the .gltf are read")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", fmt.Errorf("a path with '..': only files beside or below the .gltf are read")
		}
	}
	full := path.Join(path.Dir(d.name), p)
	if !fs.ValidPath(full) {
		return "", fmt.Errorf("not a valid path within the directory")
	}
	return full, nil
}
