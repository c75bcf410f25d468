package token

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"
)

// docsVector is where the test vector is published, for implementations in
// other languages.
const docsVector = "../docs/tokens.md"

// fencedBlocks returns the contents of the fenced code blocks of a Markdown
// file whose info string is "vectors NAME", by NAME.
func fencedBlocks(t *testing.T, path string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks := make(map[string][]string)
	var name string // of the block being read; "" outside of one
	var inBlock bool
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \r")
		switch {
		case !inBlock && strings.HasPrefix(line, "```"):
			inBlock = true
			if label, ok := strings.CutPrefix(line, "```vectors "); ok {
				name = strings.TrimSpace(label)
				if _, dup := blocks[name]; dup {
					t.Fatalf("%s: two blocks named %q", path, name)
				}
				blocks[name] = []string{}
			}
		case inBlock && line == "```":
			inBlock, name = false, ""
		case name != "":
			blocks[name] = append(blocks[name], line)
		}
	}
	if inBlock {
		t.Fatalf("%s: unterminated code block", path)
	}
	return blocks
}

// hexBlock returns the bytes of a block of hex, white space ignored.
func hexBlock(t *testing.T, blocks map[string][]string, name string) []byte {
	t.Helper()
	lines, ok := blocks[name]
	if !ok {
		t.Fatalf("%s: no block ```vectors %s", docsVector, name)
	}
	b, err := hex.DecodeString(strings.Join(strings.Fields(strings.Join(lines, " ")), ""))
	if err != nil {
		t.Fatalf("%s: block %s: %v", docsVector, name, err)
	}
	return b
}

// vectorClaims are the claims of the test vector.
func vectorClaims() (ed25519.PrivateKey, Claims) {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	var nonce [16]byte
	for i := range nonce {
		nonce[i] = 0xa0 + byte(i)
	}
	return ed25519.NewKeyFromSeed(seed), Claims{
		NotBefore: time.Unix(1767225600, 0), // 2026-01-01T00:00:00Z
		Expires:   time.Unix(1767229200, 0),
		Nonce:     nonce,
		User:      "user-42",
		Name:      "Alice",
		Room:      "match-7",
		Team:      1,
		Class:     "assault",
	}
}

// TestDocsVector checks the test vector published in docs/tokens.md.
func TestDocsVector(t *testing.T) {
	blocks := fencedBlocks(t, docsVector)
	priv, claims := vectorClaims()
	pub := publicKey(priv)

	if got := string(hexBlock(t, blocks, "signing-context")); got != signingContext {
		t.Errorf("signing-context = %q, want %q", got, signingContext)
	}
	if got := hexBlock(t, blocks, "seed"); !bytes.Equal(got, priv.Seed()) {
		t.Errorf("seed = %x, want %x", got, priv.Seed())
	}
	if got := hexBlock(t, blocks, "public-key"); !bytes.Equal(got, pub) {
		t.Errorf("public-key = %x, want %x", got, []byte(pub))
	}
	id := KeyID(pub)
	if got := hexBlock(t, blocks, "key-id"); !bytes.Equal(got, id[:]) {
		t.Errorf("key-id = %x, want %x", got, id)
	}

	tok := mustSign(t, priv, claims)
	if got := hexBlock(t, blocks, "token-hex"); !bytes.Equal(got, tok) {
		t.Errorf("token-hex =\n%x\nwant\n%x", got, tok)
	}
	// token-fields is the token again, a field a line: the name, then hex.
	var fields []byte
	for _, line := range blocks["token-fields"] {
		words := strings.Fields(line)
		if len(words) < 2 {
			t.Fatalf("token-fields: line %q is not a name then hex", line)
		}
		b, err := hex.DecodeString(strings.Join(words[1:], ""))
		if err != nil {
			t.Fatalf("token-fields: line %q: %v", line, err)
		}
		fields = append(fields, b...)
	}
	if !bytes.Equal(fields, tok) {
		t.Errorf("token-fields =\n%x\nwant\n%x", fields, tok)
	}
	text := blocks["token-base64url"]
	if len(text) != 1 || text[0] != Encode(tok) {
		t.Errorf("token-base64url = %q, want %q", text, Encode(tok))
	}

	v, err := NewVerifier(VerifierConfig{Keys: []ed25519.PublicKey{pub}})
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := Decode(strings.Join(text, ""))
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Verify(decoded, time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC))
	if err != nil {
		t.Fatalf("Verify of the documented token: %v", err)
	}
	claims.KeyID = id
	if !sameClaims(got, claims) {
		t.Errorf("Verify = %+v, want %+v", got, claims)
	}
}
