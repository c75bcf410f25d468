package level

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/geom"
)

// A level canonicalized is, triangle for triangle and vertex for vertex,
// the level Decode makes of its encoding: what a recording replays on.
func TestDecodeIsTheCanonicalizedLevel(t *testing.T) {
	for _, fixture := range []string{"marked.glb", "collision-only.gltf", "sparse.gltf"} {
		l, _, err := ReadFile(filepath.Join("testdata", fixture), Options{})
		if err != nil {
			t.Fatal(err)
		}
		enc := l.Canonical()
		d, err := Decode("copy", enc)
		if err != nil {
			t.Fatalf("%s: %v", fixture, err)
		}
		if d.Digest() != l.Digest() || d.Name != "copy" {
			t.Errorf("%s: decoded digest %v, want %v", fixture, d.Digest(), l.Digest())
		}
		c := *l
		c.Triangles, c.Spawns, c.KillVolumes = slices.Clone(l.Triangles), slices.Clone(l.Spawns), slices.Clone(l.KillVolumes)
		c.Canonicalize()
		if c.Digest() != l.Digest() {
			t.Errorf("%s: canonicalizing changed the digest", fixture)
		}
		if len(c.Triangles) != len(d.Triangles) || len(c.Spawns) != len(d.Spawns) || len(c.KillVolumes) != len(d.KillVolumes) || c.Bounds != d.Bounds {
			t.Fatalf("%s: decoded counts differ", fixture)
		}
		for i := range c.Triangles {
			g, w := d.Triangles[i], c.Triangles[i]
			if !sameBits(g.A, w.A) || !sameBits(g.B, w.B) || !sameBits(g.C, w.C) || g.Blocks != w.Blocks {
				t.Fatalf("%s: triangle %d decoded %+v, canonical %+v", fixture, i, g, w)
			}
		}
		for i := range c.Spawns {
			if g, w := d.Spawns[i], c.Spawns[i]; g.Team != w.Team || g.Pos != w.Pos || g.Yaw != w.Yaw {
				t.Errorf("%s: spawn %d decoded %+v, canonical %+v", fixture, i, g, w)
			}
		}
		if !c.IsCanonical() || (l.IsCanonical() && fixture == "marked.glb") {
			t.Errorf("%s: IsCanonical %v after canonicalizing, %v before", fixture, c.IsCanonical(), l.IsCanonical())
		}
	}
	arena := DefaultArena()
	before := slices.Clone(arena.SpawnsOf(2))
	arena.Canonicalize()
	if !slices.Equal(arena.SpawnsOf(2), before) {
		t.Errorf("the arena's spawns changed order: %v, was %v", arena.SpawnsOf(2), before)
	}
}

func sameBits(a, b geom.Vec3) bool {
	return math.Float64bits(a.X) == math.Float64bits(b.X) && math.Float64bits(a.Y) == math.Float64bits(b.Y) &&
		math.Float64bits(a.Z) == math.Float64bits(b.Z)
}

func TestDecodeRefusals(t *testing.T) {
	good := DefaultArena().Canonical()
	for name, b := range map[string][]byte{
		"empty":     nil,
		"magic":     append([]byte("RWLEVEL\x02"), good[8:]...),
		"truncated": good[:len(good)-3],
		"trailing":  append(slices.Clone(good), 0),
		"count":     append(slices.Clone(good[:8+24]), 0xff, 0xff, 0xff, 0x7f),
		"blocks":    func() []byte { b := slices.Clone(good); b[8+24+4+36] = 4; return b }(),
	} {
		if _, err := Decode("x", b); err == nil || !strings.HasPrefix(err.Error(), "level: encoding: ") {
			t.Errorf("%s: %v, want an encoding error", name, err)
		}
	}
}

// A level read from bytes is the level read from the file.
func TestReadBytes(t *testing.T) {
	data, err := os.ReadFile("testdata/marked.glb")
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := ReadBytes("maps/marked.glb", data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := ReadFile("testdata/marked.glb", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Digest() != f.Digest() || l.Name != "marked" {
		t.Errorf("from bytes: %s %v, from the file %v", l.Name, l.Digest(), f.Digest())
	}
	if _, _, err := ReadBytes("x.gltf", []byte(`{"asset":{"version":"2.0"},"buffers":[{"uri":"x.bin","byteLength":4}]}`), Options{}); err == nil {
		t.Error("a .gltf with an external buffer read from bytes")
	}
}

// The mesh holds the level's triangles by index, masked by what they block.
func TestMesh(t *testing.T) {
	l := DefaultArena()
	m, err := l.Mesh()
	if err != nil {
		t.Fatal(err)
	}
	if m.Len() != len(l.Triangles) {
		t.Fatalf("%d triangles, want %d", m.Len(), len(l.Triangles))
	}
	// The edge walls block movement, not shots: a shot flies out of the
	// arena, a move does not.
	out := geom.V(1, 0, 0)
	if h, ok := m.Raycast(geom.V(29, 1, 0), out, 10, ShotMask); ok {
		t.Errorf("a shot stopped at the arena's edge: %+v", h)
	}
	h, ok := m.Raycast(geom.V(29, 1, 0), out, 10, MovementMask)
	if !ok || h.T != 1 || l.Triangles[h.Tri].Blocks != BlocksMovement {
		t.Errorf("a move through the arena's edge: %+v %v", h, ok)
	}
	// A pillar stops shots.
	h, ok = m.Raycast(geom.V(11, 1, 0), geom.V(0, 0, -1), 20, ShotMask)
	if !ok || h.T != 10 {
		t.Errorf("a shot at a pillar: %+v %v, want a contact at 10 m", h, ok)
	}
}

// Decode never panics on any bytes, refuses what it cannot read, and a
// level it reads encodes back to the same digest.
func FuzzDecode(f *testing.F) {
	f.Add(DefaultArena().Canonical())
	f.Add([]byte("RWLEVEL\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := Decode("f", b)
		if err != nil {
			return
		}
		again, err := Decode("f", l.Canonical())
		if err != nil || again.Digest() != l.Digest() {
			t.Fatalf("re-encoded: %v", err)
		}
	})
}
