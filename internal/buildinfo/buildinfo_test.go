package buildinfo

import (
	"runtime"
	"testing"
)

func TestRead(t *testing.T) {
	in := Read()
	if in.GoVersion != runtime.Version() || in.Protocol != "2" || in.Version == "" {
		t.Errorf("%+v", in)
	}
}
