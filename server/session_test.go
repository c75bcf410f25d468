package server

import (
	"testing"

	"github.com/rewind-gg/rewind/names"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/token"
)

// The wire's bounds are the formats' (package protocol imports neither
// token nor names): a Join carries any token the token format allows and
// nothing longer, and any name the rule for names allows.
func TestWireBoundsAreTheFormats(t *testing.T) {
	if protocol.MaxToken != token.MaxLen {
		t.Errorf("protocol.MaxToken = %d, token.MaxLen = %d: want them equal", protocol.MaxToken, token.MaxLen)
	}
	if protocol.MaxNameLen < names.MaxLen {
		t.Errorf("protocol.MaxNameLen = %d, under names.MaxLen = %d", protocol.MaxNameLen, names.MaxLen)
	}
}
