package levels

import (
	"bytes"
	"os"
	"testing"

	"github.com/rewind-gg/rewind/level"
)

// The map built in is the committed file, and it reads as a level with its
// waypoints.
func TestCourtyardIsBuiltIn(t *testing.T) {
	file, data, ok := Lookup(Courtyard)
	if !ok || file != "courtyard.glb" {
		t.Fatalf("Lookup: %q %v", file, ok)
	}
	onDisk, err := os.ReadFile("courtyard.glb")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, onDisk) {
		t.Error("the built-in courtyard is not courtyard.glb")
	}
	l, _, err := level.ReadBytes(file, data, level.Options{})
	if err != nil || l.Name != Courtyard || l.Waypoints == nil {
		t.Fatalf("read: %v %+v", err, l)
	}
	if _, _, ok := Lookup("arena"); ok {
		t.Error("arena is not a sample map")
	}
}
