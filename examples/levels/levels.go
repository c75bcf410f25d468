package levels

import (
	_ "embed"
	"slices"
)

// Courtyard is the sample map's name: two floors joined by ramps and
// stairs, cover, a hurdle to jump, a crawlway to crouch through, windows
// that stop players and not shots, spawns for two teams and waypoints for
// bots (courtyard.toml describes it).
const Courtyard = "courtyard"

//go:embed courtyard.glb
var courtyard []byte

// Lookup returns the glTF file (.glb) of the sample map called name, and
// its file name; false for a name that is not one.
func Lookup(name string) (file string, data []byte, ok bool) {
	if name != Courtyard {
		return "", nil, false
	}
	return Courtyard + ".glb", slices.Clone(courtyard), true
}
