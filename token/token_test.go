package token

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

// t0 is when the test tokens become valid.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testKey returns a deterministic private key, a different one for each b.
func testKey(b byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize))
}

func publicKey(priv ed25519.PrivateKey) ed25519.PublicKey {
	return priv.Public().(ed25519.PublicKey)
}

// testClaims returns valid claims from t0 to t0+10m, with a nonce of n.
func testClaims(n byte) Claims {
	return Claims{
		NotBefore: t0,
		Expires:   t0.Add(10 * time.Minute),
		Nonce:     [16]byte{n, n, n, n, n, n, n, n, n, n, n, n, n, n, n, n},
		User:      "user-42",
		Name:      "Alice",
		Room:      "match-7",
		Team:      1,
		Class:     "assault",
	}
}

func mustSign(t testing.TB, priv ed25519.PrivateKey, c Claims) []byte {
	t.Helper()
	tok, err := Sign(priv, c)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	return tok
}

// signUnchecked signs c as Sign does but without validating it, to make
// tokens with bad fields and good signatures.
func signUnchecked(priv ed25519.PrivateKey, c Claims) []byte {
	c.KeyID = KeyID(publicKey(priv))
	body := appendBody(nil, &c)
	return append(body, ed25519.Sign(priv, signedMessage(body))...)
}

// reasonOf returns the Reason of err, or 0 if err is nil; it fails the test
// if err is not an *Error.
func reasonOf(t testing.TB, err error) Reason {
	t.Helper()
	if err == nil {
		return 0
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %q (%T) is not an *Error", err, err)
	}
	return e.Reason
}

func sameClaims(a, b Claims) bool {
	return a.KeyID == b.KeyID && a.NotBefore.Equal(b.NotBefore) && a.Expires.Equal(b.Expires) &&
		a.Nonce == b.Nonce && a.User == b.User && a.Name == b.Name && a.Room == b.Room &&
		a.Team == b.Team && a.Class == b.Class
}

func TestRoundTrip(t *testing.T) {
	priv := testKey(1)
	v, err := NewVerifier(VerifierConfig{Keys: []ed25519.PublicKey{publicKey(priv)}})
	if err != nil {
		t.Fatal(err)
	}
	want := testClaims(1)
	text := Encode(mustSign(t, priv, want))
	tok, err := Decode(text)
	if err != nil {
		t.Fatalf("Decode(%q): %v", text, err)
	}
	got, err := v.Verify(tok, t0.Add(time.Minute))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	want.KeyID = KeyID(publicKey(priv))
	if !sameClaims(got, want) {
		t.Errorf("Verify = %+v, want %+v", got, want)
	}
	if got.NotBefore.Location() != time.UTC || got.Expires.Location() != time.UTC {
		t.Errorf("times not in UTC: %v, %v", got.NotBefore, got.Expires)
	}
	parsed, err := Parse(tok)
	if err != nil || !sameClaims(parsed, want) {
		t.Errorf("Parse = %+v, %v; want %+v", parsed, err, want)
	}
}

func TestSignTruncatesTimes(t *testing.T) {
	c := testClaims(1)
	c.NotBefore = t0.Add(900 * time.Millisecond)
	c.Expires = c.Expires.Add(100 * time.Millisecond)
	got, err := Parse(mustSign(t, testKey(1), c))
	if err != nil {
		t.Fatal(err)
	}
	if !got.NotBefore.Equal(t0) || !got.Expires.Equal(t0.Add(10*time.Minute)) {
		t.Errorf("times = %v, %v; want %v, %v", got.NotBefore, got.Expires, t0, t0.Add(10*time.Minute))
	}
}

func TestSignIgnoresKeyID(t *testing.T) {
	c := testClaims(1)
	c.KeyID = [8]byte{1, 2, 3}
	got, err := Parse(mustSign(t, testKey(1), c))
	if err != nil {
		t.Fatal(err)
	}
	if want := KeyID(publicKey(testKey(1))); got.KeyID != want {
		t.Errorf("key id = %x, want %x", got.KeyID, want)
	}
}

func TestSignBadKey(t *testing.T) {
	if _, err := Sign(testKey(1)[:32], testClaims(1)); err == nil {
		t.Error("Sign with a 32-byte private key succeeded")
	}
}

// invalidFields are claims with one bad field each, and the field.
var invalidFields = []struct {
	name  string
	field string
	edit  func(*Claims)
}{
	{"empty user", "user", func(c *Claims) { c.User = "" }},
	{"65-byte user", "user", func(c *Claims) { c.User = strings.Repeat("u", 65) }},
	{"user with a tab", "user", func(c *Claims) { c.User = "user\t42" }},
	{"empty name", "name", func(c *Claims) { c.Name = "" }},
	{"33-byte name", "name", func(c *Claims) { c.Name = strings.Repeat("n", 33) }},
	{"name with a control char", "name", func(c *Claims) { c.Name = "Al\x07ice" }},
	{"name with a C1 control char", "name", func(c *Claims) { c.Name = "Al\u0085ice" }},
	{"name of invalid UTF-8", "name", func(c *Claims) { c.Name = "Al\xffice" }},
	{"name with a new line", "name", func(c *Claims) { c.Name = "Al\nice" }},
	{"name with an ESC", "name", func(c *Claims) { c.Name = "\x1b[2JAlice" }},
	{"name with a NUL", "name", func(c *Claims) { c.Name = "Al\x00ice" }},
	{"name with a bidi override", "name", func(c *Claims) { c.Name = "Al\u202Eice" }},
	{"name with a zero-width space", "name", func(c *Claims) { c.Name = "Al\u200Bice" }},
	{"name of a Hangul filler", "name", func(c *Claims) { c.Name = "\u3164" }},
	{"name with a leading space", "name", func(c *Claims) { c.Name = " Alice" }},
	{"name not in NFC", "name", func(c *Claims) { c.Name = "Jose\u0301" }},
	{"empty room", "room", func(c *Claims) { c.Room = "" }},
	{"room with a space", "room", func(c *Claims) { c.Room = "match 7" }},
	{"room with a slash", "room", func(c *Claims) { c.Room = "match/7" }},
	{"65-byte room", "room", func(c *Claims) { c.Room = strings.Repeat("r", 65) }},
	{"team 3", "team", func(c *Claims) { c.Team = 3 }},
	{"33-byte class", "class", func(c *Claims) { c.Class = strings.Repeat("c", 33) }},
	{"class of invalid UTF-8", "class", func(c *Claims) { c.Class = "\xc3" }},
	{"expires at not_before", "expires", func(c *Claims) { c.Expires = c.NotBefore }},
	{"expires before not_before", "expires", func(c *Claims) { c.Expires = c.NotBefore.Add(-time.Second) }},
	{"expires in the same second", "expires", func(c *Claims) { c.Expires = c.NotBefore.Add(999 * time.Millisecond) }},
	{"not_before before 1970", "not_before", func(c *Claims) { c.NotBefore = time.Unix(-1, 0) }},
	{"not_before zero", "not_before", func(c *Claims) { c.NotBefore = time.Time{} }},
	{"expires after 9999", "expires", func(c *Claims) { c.Expires = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }},
}

func TestInvalidFields(t *testing.T) {
	priv := testKey(1)
	v, err := NewVerifier(VerifierConfig{Keys: []ed25519.PublicKey{publicKey(priv)}, MaxLifetime: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range invalidFields {
		t.Run(tt.name, func(t *testing.T) {
			c := testClaims(1)
			tt.edit(&c)
			prefix := "token: " + tt.field + ": "

			err := c.Validate()
			if reasonOf(t, err) != Malformed || !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("Validate: %v, want Malformed %q...", err, prefix)
			}
			if _, err := Sign(priv, c); err == nil || !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("Sign: %v, want %q...", err, prefix)
			}

			if c.NotBefore.Unix() < 0 || c.Expires.Unix() < 0 {
				return // not representable on the wire
			}
			tok := signUnchecked(priv, c)
			if _, err := Parse(tok); reasonOf(t, err) != Malformed || !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("Parse: %v, want Malformed %q...", err, prefix)
			}
			if _, err := v.Verify(tok, t0); reasonOf(t, err) != Malformed || !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("Verify: %v, want Malformed %q...", err, prefix)
			}
		})
	}
}

// A name the rule of package names refuses is refused by Sign, Parse and
// Verify with that rule's reason, under the field's name.
func TestNameFollowsTheNamesRule(t *testing.T) {
	priv := testKey(1)
	v, err := NewVerifier(VerifierConfig{Keys: []ed25519.PublicKey{publicKey(priv)}})
	if err != nil {
		t.Fatal(err)
	}
	c := testClaims(1)
	c.Name = "Al\u202Eice"
	const want = "token: name: character 3 is U+202E (RIGHT-TO-LEFT OVERRIDE), a bidi control"
	if _, err := Sign(priv, c); err == nil || err.Error() != want {
		t.Errorf("Sign: %v, want %q", err, want)
	}
	tok := signUnchecked(priv, c)
	if _, err := Parse(tok); err == nil || err.Error() != want {
		t.Errorf("Parse: %v, want %q", err, want)
	}
	if _, err := v.Verify(tok, t0); reasonOf(t, err) != Malformed || err.Error() != want {
		t.Errorf("Verify: %v, want Malformed %q", err, want)
	}
}

func TestValidFieldEdges(t *testing.T) {
	for _, edit := range []func(*Claims){
		func(c *Claims) { c.User = strings.Repeat("u", 64) },
		func(c *Claims) { c.User = "ü" },
		func(c *Claims) { c.Name = strings.Repeat("é", 16) },
		func(c *Claims) { c.Name = "名前 with spaces" },
		func(c *Claims) { c.Name = "محمد" },
		func(c *Claims) { c.Name = "👨‍👩‍👧" },
		func(c *Claims) { c.User = "user\u202E42" }, // user ids are not shown: no control characters is enough
		func(c *Claims) { c.Room = strings.Repeat("r", 64) },
		func(c *Claims) { c.Room = "AZaz09_.-" },
		func(c *Claims) { c.Team = 0 },
		func(c *Claims) { c.Team = 2 },
		func(c *Claims) { c.Class = "" },
		func(c *Claims) { c.Class = strings.Repeat("c", 32) },
		func(c *Claims) { c.NotBefore = time.Unix(0, 0) },
		func(c *Claims) { c.Expires = time.Unix(maxUnix, 0) },
	} {
		c := testClaims(1)
		edit(&c)
		tok, err := Sign(testKey(1), c)
		if err != nil {
			t.Errorf("Sign(%+v): %v", c, err)
			continue
		}
		if _, err := Parse(tok); err != nil {
			t.Errorf("Parse(Sign(%+v)): %v", c, err)
		}
	}
}

// TestLargestToken checks that the largest valid token fits in MaxLen.
func TestLargestToken(t *testing.T) {
	c := testClaims(1)
	c.User = strings.Repeat("u", maxUserLen)
	c.Name = strings.Repeat("n", maxNameLen)
	c.Room = strings.Repeat("r", maxRoomLen)
	c.Class = strings.Repeat("c", maxClassLen)
	tok := mustSign(t, testKey(1), c)
	if len(tok) != 302 || len(tok) > MaxLen {
		t.Errorf("largest token is %d bytes, want 302", len(tok))
	}
}

func TestParseMalformed(t *testing.T) {
	tok := mustSign(t, testKey(1), testClaims(1))
	for n := range len(tok) {
		_, err := Parse(tok[:n])
		if reasonOf(t, err) != Malformed || !strings.Contains(err.Error(), "truncated") {
			t.Errorf("Parse of the first %d of %d bytes: %v, want truncated", n, len(tok), err)
		}
	}

	for _, tt := range []struct {
		name, want string
		tok        []byte
	}{
		{"oversized", "oversized", append(bytes.Clone(tok), make([]byte, MaxLen+1-len(tok))...)},
		{"trailing byte", "trailing", append(bytes.Clone(tok), 0)},
		{"version 0", "version", append([]byte{0}, tok[1:]...)},
		{"version 2", "version", append([]byte{2}, tok[1:]...)},
		{"huge not_before", "not_before", withU64(tok, 9, 1<<63)},
		{"huge expires", "expires", withU64(tok, 17, 1<<64-1)},
	} {
		_, err := Parse(tt.tok)
		if reasonOf(t, err) != Malformed || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Parse: %v, want Malformed mentioning %q", tt.name, err, tt.want)
		}
	}
}

// withU64 returns a copy of tok with v written at offset off.
func withU64(tok []byte, off int, v uint64) []byte {
	tok = bytes.Clone(tok)
	for i := range 8 {
		tok[off+i] = byte(v >> (56 - 8*i))
	}
	return tok
}

func TestDecode(t *testing.T) {
	tok := mustSign(t, testKey(1), testClaims(1))
	text := Encode(tok)
	if strings.ContainsAny(text, "=+/") {
		t.Fatalf("Encode = %q: padding or standard alphabet", text)
	}
	if got, err := Decode(text); err != nil || !bytes.Equal(got, tok) {
		t.Fatalf("Decode(Encode(tok)) = %x, %v; want %x", got, err, tok)
	}
	// 136 bytes encode to 182 characters, the last two for one byte: the
	// padded form ends in "==", and the last character has 4 unused bits.
	for _, bad := range []string{
		text + "==",
		text + "=",
		text[:len(text)-1] + "Z", // non-zero unused bits
		strings.NewReplacer("-", "+", "_", "/").Replace(text),
		text[:10] + "\n" + text[10:],
		text[:10] + "\r\n" + text[10:],
		text[:10] + " " + text[10:],
		" " + text,
		text + "\n",
		"!" + text[1:],
		strings.Repeat("A", 684),
	} {
		if _, err := Decode(bad); reasonOf(t, err) != Malformed || !strings.HasPrefix(err.Error(), "token: ") {
			t.Errorf("Decode(%q) = %v, want a Malformed *Error", bad, err)
		}
	}
	if !strings.ContainsAny(strings.NewReplacer("-", "+", "_", "/").Replace(text), "+/") {
		t.Error("the test token's text form has no - or _: the standard alphabet case tests nothing")
	}
	// The text form of MaxLen bytes decodes.
	if _, err := Decode(strings.Repeat("A", 683)); err != nil {
		t.Errorf("Decode of 683 characters: %v", err)
	}
}

func TestNewNonce(t *testing.T) {
	a, err := NewNonce(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewNonce(nil)
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Errorf("two random nonces are both %x", a)
	}
	src := bytes.NewReader(bytes.Repeat([]byte{7}, 20))
	if n, err := NewNonce(src); err != nil || n != [16]byte{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7} {
		t.Errorf("NewNonce(sevens) = %x, %v", n, err)
	}
	if _, err := NewNonce(src); err == nil || !strings.HasPrefix(err.Error(), "token: nonce: ") {
		t.Errorf("NewNonce of 4 bytes: %v, want an error", err)
	}
}

func TestKeyID(t *testing.T) {
	// The public key of the seed 0x00, 0x01, ..., 0x1f; its SHA-256 starts
	// with these 8 bytes.
	pub, _ := hex.DecodeString("03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8")
	if got, want := KeyIDString(KeyID(pub)), "56475aa75463474c"; got != want {
		t.Errorf("KeyID = %s, want %s", got, want)
	}
	if s := KeyIDString([8]byte{0xAB, 0, 1, 2, 3, 4, 5, 0xff}); s != "ab000102030405ff" {
		t.Errorf("KeyIDString = %q", s)
	}
}

func TestReasonString(t *testing.T) {
	want := []string{"malformed", "unknown_key", "bad_signature", "expired", "not_yet_valid", "too_long", "replayed", "cache_full"}
	for i, w := range want {
		if got := Reason(i + 1).String(); got != w {
			t.Errorf("Reason(%d) = %q, want %q", i+1, got, w)
		}
	}
	if got := Reason(0).String(); got != "Reason(0)" {
		t.Errorf("Reason(0) = %q", got)
	}
	if got := (&Error{Reason: Expired, Msg: "expired 2m3s ago"}).Error(); got != "token: expired 2m3s ago" {
		t.Errorf("Error() = %q", got)
	}
}
