package token

import (
	"bytes"
	"crypto/ed25519"
	"testing"
	"time"
)

// FuzzParse checks that no input makes Parse or Verify panic, that both
// agree on what is malformed, and that whatever parses is canonical:
// re-encoding its claims gives back its bytes.
func FuzzParse(f *testing.F) {
	priv, claims := vectorClaims()
	tok := mustSign(f, priv, claims)
	f.Add(tok)
	f.Add(tok[:len(tok)-1])
	f.Add(append(bytes.Clone(tok), 0))
	f.Add(mustSign(f, testKey(1), testClaims(1)))
	f.Add([]byte{})
	f.Add([]byte{Version})
	v, err := NewVerifier(VerifierConfig{Keys: []ed25519.PublicKey{publicKey(priv)}})
	if err != nil {
		f.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC)

	f.Fuzz(func(t *testing.T, tok []byte) {
		c, parseErr := Parse(tok)
		_, verifyErr := v.Verify(tok, now)
		if parseErr != nil {
			if r := reasonOf(t, parseErr); r != Malformed {
				t.Fatalf("Parse: %v, want Malformed", parseErr)
			}
			if r := reasonOf(t, verifyErr); r != Malformed {
				t.Fatalf("Parse: %v, but Verify: %v", parseErr, verifyErr)
			}
			return
		}
		if r := reasonOf(t, verifyErr); r == Malformed {
			t.Fatalf("Parse accepted what Verify finds malformed: %v", verifyErr)
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse returned claims that do not Validate: %v", err)
		}
		body := tok[:len(tok)-ed25519.SignatureSize]
		if re := appendBody(nil, &c); !bytes.Equal(re, body) {
			t.Fatalf("claims re-encode to\n%x\nnot\n%x", re, body)
		}
	})
}
