package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"encoding/pem"
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

// keygen writes the private key as PKCS #8 v1 (RFC 5208; RFC 8410, section
// 7): version 0, the Ed25519 algorithm without parameters, the 32-byte seed
// in a CurvePrivateKey, and nothing after it (no attributes, no public key).
// That is what OpenSSL writes, and what OpenSSL before 3.5, Python's
// cryptography and Node.js read: they refuse a v2 key (RFC 5958) that
// carries the public key. Rust's ring reads v1 with
// from_pkcs8_maybe_unchecked, or takes the seed and the public key apart
// (docs/tokens.md, "Keys, key ids and rotation"): the DER is a fixed
// 16-byte prefix and the seed, the public key's a 12-byte prefix and the key.
func TestKeygenWritesPKCS8v1(t *testing.T) {
	dir := t.TempDir()
	if code, out, errs := runCmd(t, "keygen", "--dir", dir, "--name", "mm"); code != 0 {
		t.Fatalf("keygen: %d %s %s", code, out, errs)
	}
	der := func(name, typ string) []byte {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		block, rest := pem.Decode(data)
		if block == nil || block.Type != typ || len(block.Headers) != 0 || len(rest) != 0 {
			t.Fatalf("%s: want exactly one %q PEM block, got %+v and %d bytes more", name, typ, block, len(rest))
		}
		return block.Bytes
	}
	privDER, pubDER := der("mm.key", "PRIVATE KEY"), der("mm.pub", "PUBLIC KEY")

	// Field by field, as a reader of RFC 5208 sees it.
	var info struct {
		Version    int
		Algo       pkix.AlgorithmIdentifier
		PrivateKey []byte
	}
	rest, err := asn1.Unmarshal(privDER, &info)
	if err != nil || len(rest) != 0 {
		t.Fatalf("the private key's DER: %v, %d bytes after it", err, len(rest))
	}
	// encoding/asn1 skips what follows the fields it knows: look at the raw
	// elements of the SEQUENCE for attributes [0] or a public key [1].
	var seq asn1.RawValue
	if _, err := asn1.Unmarshal(privDER, &seq); err != nil {
		t.Fatal(err)
	}
	var elems int
	for b := seq.Bytes; len(b) > 0; elems++ {
		var e asn1.RawValue
		if b, err = asn1.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
	}
	var seed []byte
	if _, err := asn1.Unmarshal(info.PrivateKey, &seed); err != nil {
		t.Fatalf("the CurvePrivateKey: %v", err)
	}
	ed25519OID := asn1.ObjectIdentifier{1, 3, 101, 112}
	switch {
	case info.Version != 0:
		t.Errorf("version %d, want 0 (PKCS #8 v1)", info.Version)
	case elems != 3:
		t.Errorf("%d elements in the PrivateKeyInfo, want 3 (version, algorithm, key: no attributes, no public key)", elems)
	case !info.Algo.Algorithm.Equal(ed25519OID) || len(info.Algo.Parameters.FullBytes) != 0:
		t.Errorf("algorithm %v with parameters %x, want %v (Ed25519) without", info.Algo.Algorithm, info.Algo.Parameters.FullBytes, ed25519OID)
	case len(seed) != ed25519.SeedSize:
		t.Errorf("a seed of %d bytes, want %d", len(seed), ed25519.SeedSize)
	}

	// Byte for byte, as docs/tokens.md lays the files out.
	privPrefix, _ := hex.DecodeString("302e020100300506032b657004220420")
	pubPrefix, _ := hex.DecodeString("302a300506032b6570032100")
	if len(privDER) != 48 || !bytes.HasPrefix(privDER, privPrefix) || !bytes.Equal(privDER[16:], seed) {
		t.Errorf("the private key's DER is %x, want %x and the seed", privDER, privPrefix)
	}
	if len(pubDER) != 44 || !bytes.HasPrefix(pubDER, pubPrefix) {
		t.Fatalf("the public key's DER is %x, want %x and the key", pubDER, pubPrefix)
	}
	// The two files hold one pair (what ring's from_seed_and_public_key
	// checks), and package token reads it back.
	pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	if !bytes.Equal(pubDER[12:], pub) {
		t.Errorf("mm.pub holds %x, the seed's public key is %x", pubDER[12:], pub)
	}
	priv, err := token.LoadPrivateKey(filepath.Join(dir, "mm.key"))
	if err != nil || !bytes.Equal(priv.Seed(), seed) {
		t.Errorf("token.LoadPrivateKey: %v", err)
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
