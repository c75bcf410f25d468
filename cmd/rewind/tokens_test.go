package main

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A matchmaker's tokens drive rewind bots: minted with rewind token into a
// file, each bot joins as its token says (room, name, team), against a
// server that admits only signed tokens.
func TestBotsTakeMintedTokens(t *testing.T) {
	if testing.Short() {
		t.Skip("plays for seconds")
	}
	t.Parallel()
	dir := t.TempDir()
	if code, out, errs := runCmd(t, "keygen", "--dir", dir, "--name", "mm"); code != 0 {
		t.Fatalf("keygen: %d %s %s", code, out, errs)
	}
	config := writeFile(t, "rewind.toml", fmt.Sprintf(`listen = "127.0.0.1:0"
[auth]
public_keys = [%q]
[admin]
listen = "127.0.0.1:0"
[log]
format = "json"
`, filepath.Join(dir, "mm.pub")))
	s := serve(t, config)
	var tokens strings.Builder
	tokens.WriteString("# minted for match-9\n\n")
	for i, name := range []string{"ana", "ben", "cy", "di"} {
		code, out, errs := runCmd(t, "token", "--key", filepath.Join(dir, "mm.key"), "--room", "match-9", "--user", "u-"+name,
			"--name", name, "--team", fmt.Sprint(1+i%2))
		if code != 0 {
			t.Fatalf("token: %d %s", code, errs)
		}
		tokens.WriteString(out)
	}
	file := writeFile(t, "tokens.txt", tokens.String())
	if code, _, errs := runCmd(t, "bots", "--server", s.addr, "--tokens", file, "-n", "5"); code != 2 || !strings.Contains(errs, "-n 5 bots, but --tokens holds 4 tokens") {
		t.Errorf("-n 5 with 4 tokens: exit %d, %q", code, errs)
	}
	code, out, errs := runCmd(t, "bots", "--server", s.addr, "--cert-sha256", hex.EncodeToString(s.cert), "--tokens", file, "--duration", "3s")
	if code != 0 {
		t.Fatalf("bots: exit %d\n%s\n%s", code, out, errs)
	}
	for _, name := range []string{"ana", "ben", "cy", "di"} {
		if !strings.Contains(out, name) {
			t.Errorf("the report does not show %s:\n%s", name, out)
		}
	}
	if strings.Contains(errs, "rejected") || !strings.Contains(out, "total:") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, errs)
	}
}

func TestBotsTokensErrors(t *testing.T) {
	bad := writeFile(t, "bad.txt", "# a comment\nnot-a-token!\n")
	one := filepath.Join(t.TempDir(), "one.txt")
	// A well-formed token, never checked here: the server checks signatures.
	if err := os.WriteFile(one, []byte(strings.Repeat("\n", 2)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bots", "--server", "127.0.0.1:1", "--tokens", bad}, "bad.txt:2: "},
		{[]string{"bots", "--server", "127.0.0.1:1", "--tokens", one}, "one.txt: no tokens"},
		{[]string{"bots", "--server", "127.0.0.1:1", "--tokens", bad, "--key", "k"}, "--tokens and --key: give one"},
		{[]string{"bots", "--server", "127.0.0.1:1", "--tokens", filepath.Join(t.TempDir(), "missing")}, "bots: --tokens: open"},
	} {
		code, _, stderr := runCmd(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// rewind bots through network shims, as the demo's presets shape them:
// against a server on this machine only.
func TestBotsThroughANetworkPreset(t *testing.T) {
	if testing.Short() {
		t.Skip("plays for seconds")
	}
	t.Parallel()
	s := engineServer(t, "shaped")
	code, out, errs := runCmd(t, "bots", "--server", s.addr, "--cert-sha256", hex.EncodeToString(s.cert), "--room", "shaped", "-n", "2",
		"--network", "handover", "--duration", "3s")
	if code != 0 {
		t.Fatalf("bots: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "rewind bots: 2 bots, network handover: round trips 110ms–130ms") ||
		!strings.Contains(out, "a 2 s spike to a 700 ms round trip every 10 s") || !strings.Contains(out, "host load average") {
		t.Errorf("stdout:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bots", "--server", "127.0.0.1:4433", "--network", "lan"}, `bots: --network: unknown preset "lan"`},
		{[]string{"bots", "--server", "127.0.0.1:4433", "--loss", "1.5"}, "bots: --loss: 1.5 is outside [0, 1)"},
		{[]string{"bots", "--server", "192.0.2.1:4433", "--network", "thin"}, "bots: --network: netshim: target"},
	} {
		code, _, stderr := runCmd(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
