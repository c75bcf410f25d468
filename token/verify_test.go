package token

import (
	"bytes"
	"crypto/ed25519"
	"strings"
	"sync"
	"testing"
	"time"
)

// newVerifier returns a verifier with the defaults (skew 30s, max lifetime
// 1h, capacity 65536) for the public keys of privs.
func newVerifier(t testing.TB, cfg VerifierConfig, privs ...ed25519.PrivateKey) *Verifier {
	t.Helper()
	for _, priv := range privs {
		cfg.Keys = append(cfg.Keys, publicKey(priv))
	}
	v, err := NewVerifier(cfg)
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	return v
}

// flip returns a copy of tok with the low bit of byte i flipped.
func flip(tok []byte, i int) []byte {
	tok = bytes.Clone(tok)
	tok[i] ^= 1
	return tok
}

func TestVerifyRejections(t *testing.T) {
	const skew = 30 * time.Second
	key, otherKey := testKey(1), testKey(2)
	valid := testClaims(1) // t0 to t0+10m
	tok := mustSign(t, key, valid)
	exp := valid.Expires
	lifetime := func(d time.Duration) Claims {
		c := testClaims(1)
		c.Expires = c.NotBefore.Add(d)
		return c
	}
	nonceOffset := 1 + 8 + 8 + 8

	for _, tt := range []struct {
		name string
		tok  []byte
		now  time.Time
		want Reason // 0: accepted
		msg  string // in the error
	}{
		{"valid", tok, t0.Add(time.Minute), 0, ""},
		{"signature byte flipped", flip(tok, len(tok)-1), t0, BadSignature, "signature does not verify"},
		{"first signature byte flipped", flip(tok, len(tok)-64), t0, BadSignature, ""},
		{"nonce byte flipped", flip(tok, nonceOffset), t0, BadSignature, ""},
		{"user byte flipped", flip(tok, nonceOffset+16+1), t0, BadSignature, ""},
		{"unknown key", mustSign(t, otherKey, valid), t0, UnknownKey, "unknown key id " + KeyIDString(KeyID(publicKey(otherKey)))},
		{"key id byte flipped", flip(tok, 1), t0, UnknownKey, ""},
		{"at not_before", tok, t0, 0, ""},
		{"at not_before - skew", tok, t0.Add(-skew), 0, ""},
		{"1ns before not_before - skew", tok, t0.Add(-skew - 1), NotYetValid, ""},
		{"1s before not_before - skew", tok, t0.Add(-skew - time.Second), NotYetValid, "not valid for another 31s"},
		{"long before", tok, t0.Add(-time.Hour), NotYetValid, "not valid for another 1h0m0s"},
		{"1ns before expires", tok, exp.Add(-1), 0, ""},
		{"at expires", tok, exp, 0, ""},
		{"1ns before expires + skew", tok, exp.Add(skew - 1), 0, ""},
		{"1s before expires + skew", tok, exp.Add(skew - time.Second), 0, ""},
		{"at expires + skew", tok, exp.Add(skew), Expired, "expired 30s ago"},
		{"1s after expires + skew", tok, exp.Add(skew + time.Second), Expired, "expired 31s ago"},
		{"2m3s after expires", tok, exp.Add(2*time.Minute + 3*time.Second + 400*time.Millisecond), Expired, "expired 2m3s ago"},
		{"lifetime 1h", mustSign(t, key, lifetime(time.Hour)), t0, 0, ""},
		{"lifetime 1h1s", mustSign(t, key, lifetime(time.Hour+time.Second)), t0, TooLong, "lifetime 1h0m1s is over 1h0m0s"},
		{"too long and expired", mustSign(t, key, lifetime(48*time.Hour)), t0.Add(72 * time.Hour), TooLong, ""},
		{"truncated", tok[:len(tok)-1], t0, Malformed, "truncated"},
		{"oversized", append(bytes.Clone(tok), make([]byte, MaxLen+1-len(tok))...), t0, Malformed, "oversized"},
		{"trailing byte", append(bytes.Clone(tok), 0), t0, Malformed, "trailing"},
		{"version 2", append([]byte{2}, tok[1:]...), t0, Malformed, "unknown version 2"},
		{"empty", nil, t0, Malformed, "truncated"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := newVerifier(t, VerifierConfig{}, key)
			got, err := v.Verify(tt.tok, tt.now)
			if r := reasonOf(t, err); r != tt.want {
				t.Fatalf("Verify: %v (%v), want %v", err, r, tt.want)
			}
			if err != nil {
				if !strings.HasPrefix(err.Error(), "token: ") || !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("Verify: %q, want it to mention %q", err, tt.msg)
				}
				if !sameClaims(got, Claims{}) {
					t.Errorf("Verify returned claims %+v with an error", got)
				}
				if n := v.Remembered(); n != 0 {
					t.Errorf("a rejected token left %d nonces remembered", n)
				}
				return
			}
			if n := v.Remembered(); n != 1 {
				t.Errorf("Remembered = %d after one accepted token, want 1", n)
			}
		})
	}
}

// TestEveryBitFlipRejected flips each bit of a token in turn: no such
// token may pass.
func TestEveryBitFlipRejected(t *testing.T) {
	key := testKey(1)
	tok := mustSign(t, key, testClaims(1))
	v := newVerifier(t, VerifierConfig{}, key)
	for i := range tok {
		for bit := range 8 {
			bad := bytes.Clone(tok)
			bad[i] ^= 1 << bit
			if _, err := v.Verify(bad, t0); err == nil {
				t.Fatalf("token with bit %d of byte %d flipped accepted", bit, i)
			}
		}
	}
	if _, err := v.Verify(tok, t0); err != nil {
		t.Errorf("the original token, after its altered copies: %v", err)
	}
}

func TestVerifyConfiguredLimits(t *testing.T) {
	key := testKey(1)
	c := testClaims(1)
	c.Expires = t0.Add(3 * time.Minute)
	tok := mustSign(t, key, c)
	cfg := VerifierConfig{Skew: 5 * time.Second, MaxLifetime: 2 * time.Minute}
	if _, err := newVerifier(t, cfg, key).Verify(tok, t0); reasonOf(t, err) != TooLong {
		t.Errorf("3m token with MaxLifetime 2m: %v, want TooLong", err)
	}
	cfg.MaxLifetime = 3 * time.Minute
	for _, tt := range []struct {
		now  time.Time
		want Reason
	}{
		{t0.Add(-5 * time.Second), 0},
		{t0.Add(-6 * time.Second), NotYetValid},
		{c.Expires.Add(4 * time.Second), 0},
		{c.Expires.Add(5 * time.Second), Expired},
	} {
		if _, err := newVerifier(t, cfg, key).Verify(tok, tt.now); reasonOf(t, err) != tt.want {
			t.Errorf("skew 5s, now = not_before%+v: %v, want %v", tt.now.Sub(t0), err, tt.want)
		}
	}
}

func TestReplay(t *testing.T) {
	key := testKey(1)
	v := newVerifier(t, VerifierConfig{}, key)
	first := testClaims(1) // t0 to t0+10m, remembered until t0+10m30s
	tok := mustSign(t, key, first)
	if _, err := v.Verify(tok, t0); err != nil {
		t.Fatalf("first Verify: %v", err)
	}
	_, err := v.Verify(tok, t0.Add(time.Second))
	if reasonOf(t, err) != Replayed || !strings.Contains(err.Error(), "nonce 01010101010101010101010101010101 already used") {
		t.Fatalf("second Verify: %v, want Replayed naming the nonce", err)
	}

	// Another token with the same nonce is a replay too, while the first
	// one's nonce is remembered.
	other := testClaims(1)
	other.User = "user-43"
	other.Expires = t0.Add(time.Hour)
	if _, err := v.Verify(mustSign(t, key, other), t0.Add(10*time.Minute+29*time.Second)); reasonOf(t, err) != Replayed {
		t.Fatalf("another token with the same nonce: %v, want Replayed", err)
	}

	// Once the first token expired, its nonce may be used again.
	later := testClaims(1)
	later.NotBefore = t0.Add(20 * time.Minute)
	later.Expires = t0.Add(30 * time.Minute)
	if _, err := v.Verify(mustSign(t, key, later), later.NotBefore); err != nil {
		t.Fatalf("the same nonce after the first token expired: %v", err)
	}
	if n := v.Remembered(); n != 1 {
		t.Errorf("Remembered = %d, want 1", n)
	}
	if _, err := v.Verify(mustSign(t, key, later), later.NotBefore.Add(time.Minute)); reasonOf(t, err) != Replayed {
		t.Errorf("the re-signed token again: %v, want Replayed", err)
	}
}

// TestClockGoesBack checks that a nonce dropped at a later now does not
// make its token acceptable when now goes back.
func TestClockGoesBack(t *testing.T) {
	key := testKey(1)
	v := newVerifier(t, VerifierConfig{}, key)
	tok := mustSign(t, key, testClaims(1)) // remembered until t0+10m30s
	if _, err := v.Verify(tok, t0); err != nil {
		t.Fatal(err)
	}
	later := testClaims(2)
	later.Expires = t0.Add(time.Hour)
	if _, err := v.Verify(mustSign(t, key, later), t0.Add(20*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if n := v.Remembered(); n != 1 {
		t.Fatalf("Remembered = %d, want 1: the first nonce dropped", n)
	}
	_, err := v.Verify(tok, t0.Add(time.Minute))
	if reasonOf(t, err) != Expired {
		t.Errorf("the first token, one minute in: %v, want Expired", err)
	}
	// A token that expires after the latest now is still judged at now.
	fresh := testClaims(3)
	fresh.Expires = t0.Add(30 * time.Minute)
	if _, err := v.Verify(mustSign(t, key, fresh), t0.Add(time.Minute)); err != nil {
		t.Errorf("a fresh token, one minute in: %v", err)
	}
}

func TestKeyRotation(t *testing.T) {
	oldKey, newKey, strangerKey := testKey(1), testKey(2), testKey(3)
	v := newVerifier(t, VerifierConfig{}, oldKey, newKey)
	for i, key := range []ed25519.PrivateKey{oldKey, newKey} {
		c, err := v.Verify(mustSign(t, key, testClaims(byte(i))), t0)
		if err != nil {
			t.Errorf("token of key %d: %v", i, err)
		} else if c.KeyID != KeyID(publicKey(key)) {
			t.Errorf("token of key %d: key id %x", i, c.KeyID)
		}
	}
	if _, err := v.Verify(mustSign(t, strangerKey, testClaims(9)), t0); reasonOf(t, err) != UnknownKey {
		t.Errorf("token of a third key: %v, want UnknownKey", err)
	}
	want := []string{KeyIDString(KeyID(publicKey(oldKey))), KeyIDString(KeyID(publicKey(newKey)))}
	if got := v.KeyIDs(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("KeyIDs = %q, want %q", got, want)
	}
}

func TestCapacity(t *testing.T) {
	key := testKey(1)
	v := newVerifier(t, VerifierConfig{Capacity: 3}, key)
	sign := func(n byte, nb time.Time) []byte {
		c := testClaims(n)
		c.NotBefore, c.Expires = nb, nb.Add(time.Minute) // remembered until nb+1m30s
		return mustSign(t, key, c)
	}
	for n := range byte(3) {
		if _, err := v.Verify(sign(n, t0.Add(time.Duration(n)*time.Second)), t0.Add(time.Duration(n)*time.Second)); err != nil {
			t.Fatalf("token %d: %v", n, err)
		}
	}
	fourth := sign(3, t0)
	_, err := v.Verify(fourth, t0.Add(10*time.Second))
	if reasonOf(t, err) != CacheFull || !strings.Contains(err.Error(), "3 unexpired nonces") {
		t.Fatalf("fourth token: %v, want CacheFull", err)
	}
	// A replay is still a replay when the cache is full.
	if _, err := v.Verify(sign(0, t0), t0.Add(10*time.Second)); reasonOf(t, err) != Replayed {
		t.Errorf("replay with a full cache: %v, want Replayed", err)
	}
	// At t0+1m30s the first token expired: one place is free.
	now := t0.Add(time.Minute + 30*time.Second)
	if _, err := v.Verify(sign(4, now), now); err != nil {
		t.Errorf("a token once the first expired: %v", err)
	}
	if _, err := v.Verify(sign(5, now), now); reasonOf(t, err) != CacheFull {
		t.Errorf("a token with the cache full again: %v, want CacheFull", err)
	}
	// Later, all have expired.
	now = t0.Add(time.Hour)
	for n := byte(6); n < 9; n++ {
		if _, err := v.Verify(sign(n, now), now); err != nil {
			t.Errorf("token %d an hour later: %v", n, err)
		}
	}
	if n := v.Remembered(); n != 3 {
		t.Errorf("Remembered = %d, want 3", n)
	}
}

// TestNonceHeap checks that nonces are dropped in the order of expiry
// whatever the order they were added in.
func TestNonceHeap(t *testing.T) {
	var c nonceCache
	c.init(1000)
	// Expiries 0..99 seconds after t0, added in a scrambled order.
	for i := range 100 {
		s := (i * 37) % 100
		if err := c.add([16]byte{byte(s)}, t0.Add(time.Duration(s+1)*time.Second), t0); err != nil {
			t.Fatal(err)
		}
	}
	for s := range 100 {
		now := t0.Add(time.Duration(s+1) * time.Second)
		// Adding a nonce with a later expiry moves the horizon to now.
		if err := c.add([16]byte{byte(s), 1}, now.Add(time.Hour), now); err != nil {
			t.Fatal(err)
		}
		if _, held := c.held[[16]byte{byte(s)}]; held {
			t.Fatalf("nonce %d held at its expiry", s)
		}
		if s < 99 {
			if _, held := c.held[[16]byte{byte(s + 1)}]; !held {
				t.Fatalf("nonce %d dropped before its expiry", s+1)
			}
		}
	}
}

func TestConcurrentVerify(t *testing.T) {
	key := testKey(1)
	v := newVerifier(t, VerifierConfig{}, key)
	tok := mustSign(t, key, testClaims(1))
	const workers = 8
	errs := make([]error, workers)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range workers {
		done.Go(func() {
			start.Wait()
			_, errs[i] = v.Verify(tok, t0)
		})
	}
	start.Done()
	done.Wait()
	accepted := 0
	for _, err := range errs {
		switch r := reasonOf(t, err); r {
		case 0:
			accepted++
		case Replayed:
		default:
			t.Errorf("Verify: %v, want success or Replayed", err)
		}
	}
	if accepted != 1 {
		t.Errorf("%d of %d concurrent Verify calls accepted the token, want 1", accepted, workers)
	}
}

func TestNewVerifierErrors(t *testing.T) {
	pub := publicKey(testKey(1))
	for _, tt := range []struct {
		name string
		cfg  VerifierConfig
		want string
	}{
		{"no keys", VerifierConfig{}, "no keys"},
		{"short key", VerifierConfig{Keys: []ed25519.PublicKey{pub[:31]}}, "key 0 is 31 bytes"},
		{"duplicate key", VerifierConfig{Keys: []ed25519.PublicKey{pub, publicKey(testKey(2)), pub}}, "key 2 has the id " + KeyIDString(KeyID(pub))},
		{"negative skew", VerifierConfig{Keys: []ed25519.PublicKey{pub}, Skew: -time.Second}, "negative skew"},
		{"negative lifetime", VerifierConfig{Keys: []ed25519.PublicKey{pub}, MaxLifetime: -time.Second}, "negative max lifetime"},
		{"negative capacity", VerifierConfig{Keys: []ed25519.PublicKey{pub}, Capacity: -1}, "negative capacity"},
	} {
		v, err := NewVerifier(tt.cfg)
		if err == nil || !strings.HasPrefix(err.Error(), "token: verifier: ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: NewVerifier = %v, %v; want an error mentioning %q", tt.name, v, err, tt.want)
		}
	}
}

// TestVerifierCopiesKeys checks that changing the configured key afterwards
// does not change the verifier.
func TestVerifierCopiesKeys(t *testing.T) {
	key := testKey(1)
	pub := bytes.Clone(publicKey(key))
	v, err := NewVerifier(VerifierConfig{Keys: []ed25519.PublicKey{pub}})
	if err != nil {
		t.Fatal(err)
	}
	pub[0] ^= 1
	if _, err := v.Verify(mustSign(t, key, testClaims(1)), t0); err != nil {
		t.Errorf("Verify after the caller's key changed: %v", err)
	}
}

func TestVerifyMonotonicNow(t *testing.T) {
	key := testKey(1)
	v := newVerifier(t, VerifierConfig{}, key)
	c := testClaims(1)
	now := time.Now()
	c.NotBefore, c.Expires = now, now.Add(time.Minute)
	if _, err := v.Verify(mustSign(t, key, c), now); err != nil {
		t.Errorf("a token valid from time.Now(): %v", err)
	}
}
