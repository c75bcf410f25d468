package client

import (
	"os"
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/level"
)

// A client's level from a path, from bytes, or the built-in arena: the
// same file gives the same digest either way, and a level that cannot be
// read is an error before anything is dialled.
func TestLoadLevel(t *testing.T) {
	arena := level.DefaultArena().Digest()
	for _, name := range []string{"", "arena"} {
		l, err := LoadLevel(name, nil)
		if err != nil || l.Digest != arena || l.Level.Name != "arena" || l.Mesh.Len() != 58 {
			t.Fatalf("LoadLevel(%q): %+v %v", name, l, err)
		}
	}
	const file = "../level/testdata/marked.glb"
	fromFile, err := LoadLevel(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fromBytes, err := LoadLevel("maps/marked.glb", data)
	if err != nil {
		t.Fatal(err)
	}
	if fromFile.Digest != fromBytes.Digest || fromBytes.Level.Name != "marked" || !fromBytes.Level.IsCanonical() {
		t.Errorf("from the file %v, from bytes %v (%q)", fromFile.Digest, fromBytes.Digest, fromBytes.Level.Name)
	}
	if _, err := LoadLevel("maps/missing.glb", nil); err == nil || !strings.HasPrefix(err.Error(), "client: level: ") {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := LoadLevel("x.glb", []byte("garbage")); err == nil {
		t.Error("garbage bytes were a level")
	}
	// The arena's pillars block a line of sight; its edge walls (movement
	// only) do not.
	a, _ := LoadLevel("arena", nil)
	if a.Sees(geom.V(11, 1, 0), geom.V(11, 1, -20)) || !a.Sees(geom.V(0, 1, 0), geom.V(40, 1, 0)) || !a.Sees(geom.V(1, 1, 1), geom.V(1, 1, 1)) {
		t.Error("Sees: the pillar does not block, or the edge does")
	}
}

func TestLevelErrorSaysBoth(t *testing.T) {
	e := &LevelError{Server: "courtyard", Client: "arena", ServerDigest: level.Digest{0x9c, 0x0e}, ClientDigest: level.DefaultArena().Digest()}
	want := "level: the server plays courtyard (digest 9c0e" + strings.Repeat("0", 60) + "), this client holds arena (digest 04311dce3736fe3efa9b1a16bef99dea1fb292c22e9640823020f017e404fdb0)"
	if e.Error() != want {
		t.Errorf("%s\nwant %s", e, want)
	}
}
