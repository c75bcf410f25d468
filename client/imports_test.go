package client

import (
	"os/exec"
	"strings"
	"testing"
)

// The SDK is light: it imports what a client needs (the wire, the channel,
// the level and the movement it predicts with, the spread and the arsenal
// rules), and nothing of the server: not the ECS (arche), lag
// compensation, the weapon systems, the server's config (koanf) or its
// logging (zerolog). A game links it, or librewind, without them.
func TestImportsNothingOfTheServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	forbidden := []string{
		"github.com/mlange-42/arche", "github.com/knadh/koanf", "github.com/rs/zerolog",
		"github.com/prometheus", "github.com/spf13/cobra",
		"github.com/rewind-gg/rewind/ecs", "github.com/rewind-gg/rewind/lagcomp", "github.com/rewind-gg/rewind/weapons",
		"github.com/rewind-gg/rewind/systems", "github.com/rewind-gg/rewind/server", "github.com/rewind-gg/rewind/bots",
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, f+"/") {
				t.Errorf("the client imports %s", d)
			}
		}
	}
	for _, want := range []string{"github.com/rewind-gg/rewind/movement", "github.com/rewind-gg/rewind/arsenal", "github.com/quic-go/quic-go"} {
		found := false
		for _, d := range deps {
			found = found || d == want
		}
		if !found {
			t.Errorf("go list -deps does not list %s: the test reads the wrong output", want)
		}
	}
}
