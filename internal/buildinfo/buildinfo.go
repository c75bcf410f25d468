// Package buildinfo says what a binary was built from: the module version,
// the VCS revision, the Go version, and the protocol it speaks. rewind
// version prints it and the server exports it as rewind_build_info.
package buildinfo

import (
	"runtime/debug"
	"strconv"

	"github.com/rewind-gg/rewind/protocol"
)

// Info is what a binary was built from.
type Info struct {
	Version   string // the module version, "(devel)" for a build from a checkout
	Revision  string // the VCS revision, "" when unknown; "+dirty" when the tree had changes
	GoVersion string
	Protocol  string // the wire protocol version
}

// Read returns the running binary's build information.
func Read() Info {
	in := Info{Version: "(devel)", Protocol: strconv.Itoa(protocol.Version)}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return in
	}
	in.GoVersion = bi.GoVersion
	if v := bi.Main.Version; v != "" {
		in.Version = v
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && in.Revision != "" {
		in.Revision += "+dirty"
	}
	return in
}
