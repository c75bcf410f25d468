package token

import (
	"cmp"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"
)

// Defaults of VerifierConfig's zero fields.
const (
	defaultSkew        = 30 * time.Second
	defaultMaxLifetime = time.Hour
	defaultCapacity    = 65536
)

// VerifierConfig configures a Verifier.
type VerifierConfig struct {
	// Keys are the public keys whose tokens are accepted: at least one, and
	// more while keys are rotated. No two may have the same key id.
	Keys []ed25519.PublicKey

	// Skew is how far the server's clock may be from the matchmaker's: a
	// token is accepted from NotBefore-Skew until Expires+Skew. Zero means
	// 30s; negative is an error.
	Skew time.Duration

	// MaxLifetime is the longest Expires-NotBefore accepted, so that a
	// leaked token is not good for long. Zero means 1h; negative is an error.
	MaxLifetime time.Duration

	// Capacity is the most nonces remembered at once, bounding the memory
	// replay protection takes. Once that many unexpired tokens were
	// accepted, others are refused until some expire. Zero means 65536;
	// negative is an error.
	Capacity int
}

// A Verifier accepts valid tokens, each once. It is safe for concurrent use.
type Verifier struct {
	keys        map[[8]byte]ed25519.PublicKey
	ids         [][8]byte // in the order of the configuration, for KeyIDs
	skew        time.Duration
	maxLifetime time.Duration
	nonces      nonceCache
}

// NewVerifier returns a Verifier for the configuration, with defaults for
// its zero fields.
func NewVerifier(cfg VerifierConfig) (*Verifier, error) {
	if len(cfg.Keys) == 0 {
		return nil, errors.New("token: verifier: no keys")
	}
	if cfg.Skew < 0 {
		return nil, fmt.Errorf("token: verifier: negative skew %s", cfg.Skew)
	}
	if cfg.MaxLifetime < 0 {
		return nil, fmt.Errorf("token: verifier: negative max lifetime %s", cfg.MaxLifetime)
	}
	if cfg.Capacity < 0 {
		return nil, fmt.Errorf("token: verifier: negative capacity %d", cfg.Capacity)
	}
	v := &Verifier{
		keys:        make(map[[8]byte]ed25519.PublicKey, len(cfg.Keys)),
		skew:        cmp.Or(cfg.Skew, defaultSkew),
		maxLifetime: cmp.Or(cfg.MaxLifetime, defaultMaxLifetime),
	}
	v.nonces.init(cmp.Or(cfg.Capacity, defaultCapacity))
	for i, pub := range cfg.Keys {
		if len(pub) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("token: verifier: key %d is %d bytes, not an Ed25519 public key", i, len(pub))
		}
		id := KeyID(pub)
		if _, dup := v.keys[id]; dup {
			return nil, fmt.Errorf("token: verifier: key %d has the id %s of an earlier key", i, KeyIDString(id))
		}
		v.keys[id] = append(ed25519.PublicKey(nil), pub...)
		v.ids = append(v.ids, id)
	}
	return v, nil
}

// Verify returns the claims of tok if it is valid at now, and records its
// nonce so that it is not accepted again. Otherwise it returns an *Error;
// Parse reads the claims of a rejected token for logs.
//
// Verify checks, in this order: the size (Malformed); the version, the
// structure and the fields (Malformed); that the key id is one of the
// verifier's (UnknownKey); the signature (BadSignature); the lifetime
// (TooLong); NotBefore and Expires against now with the skew (NotYetValid,
// Expired); and last, atomically with recording it, that the nonce was not
// seen (Replayed) and that there is room to remember it (CacheFull). Only a
// token that passes every other check uses up its nonce, which is
// remembered until Expires+Skew.
//
// Callers pass the current time as now. If now goes back, tokens that
// expired before the latest now Verify was given stay expired: the verifier
// may have forgotten their nonces.
func (v *Verifier) Verify(tok []byte, now time.Time) (Claims, error) {
	c, n, err := parse(tok)
	if err != nil {
		return Claims{}, err
	}
	pub, ok := v.keys[c.KeyID]
	if !ok {
		return Claims{}, reject(UnknownKey, "unknown key id %s", KeyIDString(c.KeyID))
	}
	if !ed25519.Verify(pub, signedMessage(tok[:n]), tok[n:]) {
		return Claims{}, reject(BadSignature, "signature does not verify with key %s", KeyIDString(c.KeyID))
	}
	if life := c.Expires.Sub(c.NotBefore); life > v.maxLifetime {
		return Claims{}, reject(TooLong, "lifetime %s is over %s", life, v.maxLifetime)
	}
	now = now.Round(0) // compare wall clocks only, as the token's times are
	if now.Before(c.NotBefore.Add(-v.skew)) {
		return Claims{}, reject(NotYetValid, "not valid for another %s", roughly(c.NotBefore.Sub(now)))
	}
	until := c.Expires.Add(v.skew)
	if !now.Before(until) {
		return Claims{}, reject(Expired, "expired %s ago", roughly(now.Sub(c.Expires)))
	}
	if err := v.nonces.add(c.Nonce, until, now); err != nil {
		return Claims{}, err
	}
	return c, nil
}

// roughly rounds d for people to read: whole seconds, or milliseconds below
// a second.
func roughly(d time.Duration) time.Duration {
	if d < time.Second && d > -time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// KeyIDs returns the ids of the verifier's keys in lower-case hex, in the
// order of the configuration, for logs.
func (v *Verifier) KeyIDs() []string {
	ids := make([]string, len(v.ids))
	for i, id := range v.ids {
		ids[i] = KeyIDString(id)
	}
	return ids
}

// Remembered returns the number of nonces the verifier holds. Expired ones
// are dropped lazily, by Verify, so it may count some that no longer matter.
func (v *Verifier) Remembered() int { return v.nonces.len() }
