package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/token"
)

// keygen writes a secret private key and a public key, never over existing
// files; token mints what inspect reads back and verifies.
func TestKeygenTokenInspect(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys") // created by keygen
	code, out, errs := runCmd(t, "keygen", "--dir", dir, "--name", "mm")
	if code != 0 {
		t.Fatalf("keygen: %d %s %s", code, out, errs)
	}
	id := regexp.MustCompile(`key id\s+([0-9a-f]{16})`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("keygen printed no key id:\n%s", out)
	}
	st, err := os.Stat(filepath.Join(dir, "mm.key"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the private key: %v, mode %v; want 0600", err, st.Mode().Perm())
	}
	pub, err := token.LoadPublicKey(filepath.Join(dir, "mm.pub"))
	if err != nil || token.KeyIDString(token.KeyID(pub)) != id[1] {
		t.Errorf("the public key %v, id %s", err, id[1])
	}
	if code, _, errs := runCmd(t, "keygen", "--dir", dir, "--name", "mm"); code == 0 || !strings.Contains(errs, "mm.key") {
		t.Errorf("keygen over existing files: exit %d %q", code, errs)
	}
	code, tok, errs := runCmd(t, "token", "--key", filepath.Join(dir, "mm.key"), "--room", "match-7", "--user", "u-42", "--name", "Alice", "--team", "2", "--class", "breacher")
	if code != 0 {
		t.Fatalf("token: %d %s", code, errs)
	}
	tok = strings.TrimSpace(tok)
	code, out, errs = runCmd(t, "token", "inspect", tok, "--public-key", filepath.Join(dir, "mm.pub"))
	if code != 0 {
		t.Fatalf("inspect: %d %s %s", code, out, errs)
	}
	for _, want := range []string{"key id      " + id[1], "user        u-42", "name        Alice", "room        match-7", "team        2", `class       "breacher"`, "verdict     valid now"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
	// Checked against another key: refused, with the reason.
	other := t.TempDir()
	runCmd(t, "keygen", "--dir", other, "--name", "x")
	if code, _, errs := runCmd(t, "token", "inspect", tok, "--public-key", filepath.Join(other, "x.pub")); code != 1 || !strings.Contains(errs, "refused (unknown_key)") {
		t.Errorf("inspect with another key: exit %d %q", code, errs)
	}
	if code, _, errs := runCmd(t, "token", "--key", filepath.Join(dir, "mm.key"), "--room", "bad room", "--user", "u"); code != 2 || !strings.Contains(errs, "room") {
		t.Errorf("a bad room: exit %d %q", code, errs)
	}
	// A name the rule for names refuses is not minted.
	for _, name := range []string{"Al\nice", "\x1b[2JAlice", "Al\u202Eice", "Al\u200Bice"} {
		code, out, errs := runCmd(t, "token", "--key", filepath.Join(dir, "mm.key"), "--room", "match-7", "--user", "u", "--name", name)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "token: name: character ") {
			t.Errorf("a token named %q: exit %d, out %q, err %q", name, code, out, errs)
		}
	}
	if code, _, errs := runCmd(t, "token", "inspect", "not*base64"); code != 2 || !strings.Contains(errs, "token inspect:") {
		t.Errorf("inspect of garbage: exit %d %q", code, errs)
	}
}

func TestVersionAndPrintConfig(t *testing.T) {
	code, out, _ := runCmd(t, "version")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("protocol %d (ALPN %s)", protocol.Version, protocol.ALPN)) || !strings.Contains(out, "go1.") {
		t.Errorf("version: %d\n%s", code, out)
	}
	code, out, errs := runCmd(t, "serve", "--print-config", "--window", "12", "--max-unlag", "400ms")
	if code != 0 || !strings.Contains(out, "window_ticks = 12") || !strings.Contains(out, "max_unlag = '400ms'") || !strings.Contains(out, "[agones]") {
		t.Errorf("serve --print-config: %d %s\n%s", code, errs, out)
	}
	if code, _, errs := runCmd(t, "serve", "--listen", "0.0.0.0:4433", "--print-config"); code != 2 || !strings.Contains(errs, "insecure_open_mode") {
		t.Errorf("open mode on a public address: exit %d %q", code, errs)
	}
}
