package buildinfo

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/rewind-gg/rewind/protocol"
)

func TestRead(t *testing.T) {
	in := Read()
	if in.GoVersion != runtime.Version() || in.Protocol != fmt.Sprint(protocol.Version) || in.Version == "" {
		t.Errorf("%+v", in)
	}
}

// What the linker sets (-X) replaces what the go command stamped; what it
// leaves empty does not.
func TestLinkedOverrides(t *testing.T) {
	stamped := Info{Version: "(devel)", Revision: "abc+dirty", GoVersion: "go1.26", Protocol: "6"}
	if got := stamped.linked("v1.2.0", "0123abcd"); got != (Info{Version: "v1.2.0", Revision: "0123abcd", GoVersion: "go1.26", Protocol: "6"}) {
		t.Errorf("linked both: %+v", got)
	}
	if got := stamped.linked("", ""); got != stamped {
		t.Errorf("linked none: %+v", got)
	}
	if got := stamped.linked("v1.2.0", ""); got.Version != "v1.2.0" || got.Revision != "abc+dirty" {
		t.Errorf("linked the version only: %+v", got)
	}
}
