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
