package token

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rewind-gg/rewind/names"
)

// Version is the token format version, the first byte of every token.
const Version = 1

// MaxLen is the size of the largest token accepted, in bytes. Longer input
// is rejected before it is parsed.
const MaxLen = 512

// Limits of the string fields, in bytes.
const (
	maxUserLen  = 64
	maxNameLen  = names.MaxLen
	maxRoomLen  = 64
	maxClassLen = 32
)

const (
	keyIDLen = 8
	nonceLen = 16

	// maxUnix is the latest time a token may name, 9999-12-31T23:59:59Z, so
	// that every valid time converts to a time.Time and formats as RFC 3339.
	maxUnix = 253402300799
)

// signingContext precedes the token in the message its signature covers, so
// that a signature over a token cannot pass for a signature over anything
// else the same key signs.
const signingContext = "rewind token v1"

// Claims are what a token grants: who may join which room, from when and
// until when.
type Claims struct {
	KeyID     [8]byte   // the signing key's id: set by Sign, read by Parse and Verify
	NotBefore time.Time // the token is not valid before this time; whole seconds on the wire
	Expires   time.Time // the token is not valid from this time on; after NotBefore
	Nonce     [16]byte  // random and unique per token (see NewNonce)
	User      string    // stable user id: 1 to 64 bytes of UTF-8, no control characters
	Name      string    // display name, as package names allows: 1 to 32 bytes of UTF-8, printable and visible
	Room      string    // match or room id: 1 to 64 bytes of A-Z a-z 0-9 _ . -
	Team      uint8     // 1 or 2; 0 lets the server balance the teams
	Class     string    // 0 to 32 bytes of UTF-8, no control characters; empty: the server's default
}

// KeyID returns the id of a public key: the first 8 bytes of the SHA-256 of
// its 32 raw bytes. A token names the key that signed it by this id.
func KeyID(pub ed25519.PublicKey) [8]byte {
	sum := sha256.Sum256(pub)
	return [8]byte(sum[:keyIDLen])
}

// KeyIDString returns a key id in lower-case hex, as logs show it.
func KeyIDString(id [8]byte) string { return hex.EncodeToString(id[:]) }

// Validate checks every field but KeyID against the limits of the token
// format. NotBefore and Expires are checked as they will be sent, in whole
// seconds. The error is an *Error with Reason Malformed that names the
// field, such as "token: name: character 3 is U+202E (RIGHT-TO-LEFT
// OVERRIDE), a bidi control". The name follows the rule of package names;
// the user id and the class only need to be text (no control characters):
// the server shows neither to other players (and a class must be one of
// its classes).
func (c *Claims) Validate() error {
	nb, exp := c.NotBefore.Unix(), c.Expires.Unix()
	switch {
	case nb < 0 || nb > maxUnix:
		return malformed("not_before: %s is not within 1970 to 9999", c.NotBefore.UTC().Format(time.RFC3339))
	case exp < 0 || exp > maxUnix:
		return malformed("expires: %s is not within 1970 to 9999", c.Expires.UTC().Format(time.RFC3339))
	case exp <= nb:
		return malformed("expires: not after not_before")
	case !isText(c.User, 1, maxUserLen):
		return malformed("user: 1 to %d bytes of UTF-8, no control characters", maxUserLen)
	}
	if err := names.Check(c.Name); err != nil {
		return malformed("%v", err)
	}
	switch {
	case !isRoom(c.Room):
		return malformed("room: 1 to %d bytes of A-Z a-z 0-9 _ . -", maxRoomLen)
	case c.Team > 2:
		return malformed("team: %d is not 0, 1 or 2", c.Team)
	case !isText(c.Class, 0, maxClassLen):
		return malformed("class: at most %d bytes of UTF-8, no control characters", maxClassLen)
	}
	return nil
}

// isText reports whether s is valid UTF-8 without control characters, of
// min to max bytes.
func isText(s string, min, max int) bool {
	if len(s) < min || len(s) > max || !utf8.ValidString(s) {
		return false
	}
	return !strings.ContainsFunc(s, unicode.IsControl)
}

// isRoom reports whether s is a valid room id.
func isRoom(s string) bool {
	if len(s) < 1 || len(s) > maxRoomLen {
		return false
	}
	for _, b := range []byte(s) {
		switch {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '_', b == '.', b == '-':
		default:
			return false
		}
	}
	return true
}

// Sign returns the binary token for c, signed with priv. It sets the token's
// key id from priv's public key, ignoring c.KeyID, and refuses claims that
// do not Validate. Times are sent in whole seconds, truncated.
func Sign(priv ed25519.PrivateKey, c Claims) ([]byte, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("token: private key of %d bytes, want %d", len(priv), ed25519.PrivateKeySize)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c.KeyID = KeyID(priv.Public().(ed25519.PublicKey))
	msg := make([]byte, 0, len(signingContext)+MaxLen)
	msg = append(msg, signingContext...)
	msg = appendBody(msg, &c)
	sig := ed25519.Sign(priv, msg)
	return append(msg[len(signingContext):], sig...), nil
}

// appendBody appends the bytes of a token that precede its signature. The
// claims must be valid.
func appendBody(b []byte, c *Claims) []byte {
	b = append(b, Version)
	b = append(b, c.KeyID[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(c.NotBefore.Unix()))
	b = binary.BigEndian.AppendUint64(b, uint64(c.Expires.Unix()))
	b = append(b, c.Nonce[:]...)
	b = appendStr(b, c.User)
	b = appendStr(b, c.Name)
	b = appendStr(b, c.Room)
	b = append(b, c.Team)
	return appendStr(b, c.Class)
}

func appendStr(b []byte, s string) []byte {
	b = append(b, uint8(len(s)))
	return append(b, s...)
}

// signedMessage returns what a token's signature covers: the signing
// context, then body, the token's bytes before the signature.
func signedMessage(body []byte) []byte {
	msg := make([]byte, 0, len(signingContext)+len(body))
	msg = append(msg, signingContext...)
	return append(msg, body...)
}

// NewNonce returns 16 bytes read from r, or from crypto/rand if r is nil.
func NewNonce(r io.Reader) ([16]byte, error) {
	if r == nil {
		r = rand.Reader
	}
	var nonce [16]byte
	if _, err := io.ReadFull(r, nonce[:]); err != nil {
		return [16]byte{}, fmt.Errorf("token: nonce: %w", err)
	}
	return nonce, nil
}

// Encode returns the text form of a token: base64url without padding
// (RFC 4648, section 5).
func Encode(tok []byte) string { return base64.RawURLEncoding.EncodeToString(tok) }

// Decode returns the token whose text form is s. It accepts exactly what
// Encode returns: no padding, no characters of the standard base64 alphabet,
// no white space, no text longer than the text form of MaxLen bytes. Its
// errors are *Error with Reason Malformed.
func Decode(s string) ([]byte, error) {
	if max := base64.RawURLEncoding.EncodedLen(MaxLen); len(s) > max {
		return nil, malformed("oversized: text form of %d characters, over the %d of %d bytes", len(s), max, MaxLen)
	}
	// The decoder skips new lines; a token has none.
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return nil, malformed("not base64url without padding: new line at input byte %d", i)
	}
	tok, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, malformed("not base64url without padding: %v", err)
	}
	return tok, nil
}

// Parse returns the claims of a token, checking its structure and fields
// but not its signature: what tools need to show a token. Use a Verifier to
// accept one. Its errors are *Error with Reason Malformed.
func Parse(tok []byte) (Claims, error) {
	c, _, err := parse(tok)
	return c, err
}

// parse returns the claims of tok and the length of its body, the bytes
// before the signature.
func parse(tok []byte) (Claims, int, error) {
	if len(tok) > MaxLen {
		return Claims{}, 0, malformed("oversized: %d bytes, over %d", len(tok), MaxLen)
	}
	if len(tok) == 0 {
		return Claims{}, 0, malformed("truncated: empty")
	}
	if tok[0] != Version {
		return Claims{}, 0, malformed("unknown version %d", tok[0])
	}
	r := reader{b: tok[1:]}
	var c Claims
	copy(c.KeyID[:], r.take(keyIDLen, "key_id"))
	nb := r.u64("not_before")
	exp := r.u64("expires")
	copy(c.Nonce[:], r.take(nonceLen, "nonce"))
	c.User = r.str("user")
	c.Name = r.str("name")
	c.Room = r.str("room")
	c.Team = r.u8("team")
	c.Class = r.str("class")
	if r.short != "" {
		return Claims{}, 0, malformed("truncated: %d bytes end in %s", len(tok), r.short)
	}
	switch n := len(r.b); {
	case n < ed25519.SignatureSize:
		return Claims{}, 0, malformed("truncated: %d bytes end in signature", len(tok))
	case n > ed25519.SignatureSize:
		return Claims{}, 0, malformed("%d trailing bytes after the signature", n-ed25519.SignatureSize)
	}
	// Beyond maxUnix, the conversion to int64 might not hold the value.
	if nb > maxUnix {
		return Claims{}, 0, malformed("not_before: %d is after 9999", nb)
	}
	if exp > maxUnix {
		return Claims{}, 0, malformed("expires: %d is after 9999", exp)
	}
	c.NotBefore = time.Unix(int64(nb), 0).UTC()
	c.Expires = time.Unix(int64(exp), 0).UTC()
	if err := c.Validate(); err != nil {
		return Claims{}, 0, err
	}
	return c, len(tok) - ed25519.SignatureSize, nil
}

// reader reads the fields of a token. Once one runs past the end, short
// names it and every later read returns a zero value.
type reader struct {
	b     []byte
	short string
}

func (r *reader) take(n int, field string) []byte {
	if r.short != "" {
		return nil
	}
	if len(r.b) < n {
		r.short = field
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) u8(field string) uint8 {
	if p := r.take(1, field); p != nil {
		return p[0]
	}
	return 0
}

func (r *reader) u64(field string) uint64 {
	if p := r.take(8, field); p != nil {
		return binary.BigEndian.Uint64(p)
	}
	return 0
}

func (r *reader) str(field string) string {
	n := r.u8(field)
	return string(r.take(int(n), field))
}
