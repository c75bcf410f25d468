// Package buildinfo says what a binary was built from: the module version,
// the VCS revision, the Go version, and the protocol it speaks. rewind
// version prints it and the server exports it as rewind_build_info.
//
// The version and revision come from the linker when a build sets them,
//
//	go build -ldflags "-X github.com/rewind-gg/rewind/internal/buildinfo.version=v1.2.0 \
//	  -X github.com/rewind-gg/rewind/internal/buildinfo.revision=$(git rev-parse HEAD)" ./cmd/rewind
//
// as the Dockerfile does from its VERSION and REVISION build arguments (its
// build context has no .git, so Go's VCS stamping has nothing to read);
// otherwise from what the go command stamped (debug.ReadBuildInfo): the
// module version, and the VCS revision of a build inside a checkout.
package buildinfo

import (
	"runtime/debug"
	"strconv"

	"github.com/rewind-gg/rewind/protocol"
)

// version and revision are set by the linker (-X), "" when a build does
// not: the only way a build can set them, hence variables.
var version, revision string

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
		return in.linked(version, revision)
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
	return in.linked(version, revision)
}

// linked returns in with the version and revision the linker set, where
// set.
func (in Info) linked(version, revision string) Info {
	if version != "" {
		in.Version = version
	}
	if revision != "" {
		in.Revision = revision
	}
	return in
}
