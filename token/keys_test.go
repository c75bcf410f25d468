package token

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGenerateKey(t *testing.T) {
	seed := bytes.Repeat([]byte{5}, 32)
	pub, priv, err := GenerateKey(bytes.NewReader(seed))
	if err != nil {
		t.Fatal(err)
	}
	if want := testKey(5); !priv.Equal(want) || !pub.Equal(publicKey(want)) {
		t.Error("GenerateKey(r) is not the key of the seed read from r")
	}
	if _, _, err := GenerateKey(bytes.NewReader(seed[:31])); err == nil || !strings.HasPrefix(err.Error(), "token: ") {
		t.Errorf("GenerateKey of 31 bytes: %v, want an error", err)
	}
	pub1, _, err := GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	pub2, _, err := GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	if pub1.Equal(pub2) {
		t.Error("two random keys are equal")
	}
}

func TestPEMRoundTrip(t *testing.T) {
	priv := testKey(1)
	privPEM, err := MarshalPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM, err := MarshalPublicKey(publicKey(priv))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(privPEM, []byte("-----BEGIN PRIVATE KEY-----\n")) {
		t.Errorf("private key PEM:\n%s", privPEM)
	}
	if !bytes.HasPrefix(pubPEM, []byte("-----BEGIN PUBLIC KEY-----\n")) {
		t.Errorf("public key PEM:\n%s", pubPEM)
	}
	if got, err := ParsePrivateKey(privPEM); err != nil || !got.Equal(priv) {
		t.Errorf("ParsePrivateKey(MarshalPrivateKey(k)) = %x, %v", got, err)
	}
	if got, err := ParsePublicKey(pubPEM); err != nil || !got.Equal(publicKey(priv)) {
		t.Errorf("ParsePublicKey(MarshalPublicKey(k)) = %x, %v", got, err)
	}

	dir := t.TempDir()
	privPath, pubPath := filepath.Join(dir, "mm.key"), filepath.Join(dir, "mm.pub")
	if err := os.WriteFile(privPath, privPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pubPath, pubPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadPrivateKey(privPath); err != nil || !got.Equal(priv) {
		t.Errorf("LoadPrivateKey = %x, %v", got, err)
	}
	if got, err := LoadPublicKey(pubPath); err != nil || !got.Equal(publicKey(priv)) {
		t.Errorf("LoadPublicKey = %x, %v", got, err)
	}
	// Each file is the other's wrong kind of key.
	if _, err := LoadPrivateKey(pubPath); err == nil || !strings.Contains(err.Error(), pubPath) {
		t.Errorf("LoadPrivateKey of a public key: %v, want an error naming the file", err)
	}
	if _, err := LoadPublicKey(privPath); err == nil || !strings.Contains(err.Error(), privPath) {
		t.Errorf("LoadPublicKey of a private key: %v, want an error naming the file", err)
	}
	missing := filepath.Join(dir, "missing.pem")
	if _, err := LoadPrivateKey(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("LoadPrivateKey of a missing file: %v, want an error naming the file", err)
	}
	if _, err := LoadPublicKey(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("LoadPublicKey of a missing file: %v, want an error naming the file", err)
	}
}

// TestParseOpenSSLKey reads a key as `openssl genpkey -algorithm ed25519`
// writes it: the seed 0x00, 0x01, ..., 0x1f.
func TestParseOpenSSLKey(t *testing.T) {
	const privPEM = "-----BEGIN PRIVATE KEY-----\n" +
		"MC4CAQAwBQYDK2VwBCIEIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f\n" +
		"-----END PRIVATE KEY-----\n"
	const pubPEM = "-----BEGIN PUBLIC KEY-----\n" +
		"MCowBQYDK2VwAyEAA6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=\n" +
		"-----END PUBLIC KEY-----\n"
	priv, err := ParsePrivateKey([]byte(privPEM))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ParsePublicKey([]byte(pubPEM))
	if err != nil {
		t.Fatal(err)
	}
	if !pub.Equal(priv.Public()) || KeyIDString(KeyID(pub)) != "56475aa75463474c" {
		t.Errorf("key id %s, want 56475aa75463474c", KeyIDString(KeyID(pub)))
	}
	if got, _ := MarshalPrivateKey(priv); string(got) != privPEM {
		t.Errorf("MarshalPrivateKey =\n%s\nwant\n%s", got, privPEM)
	}
	if got, _ := MarshalPublicKey(pub); string(got) != pubPEM {
		t.Errorf("MarshalPublicKey =\n%s\nwant\n%s", got, pubPEM)
	}
}

func TestParseKeyErrors(t *testing.T) {
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	// pemOf(typ)(der, err) is der in a PEM block of type typ.
	pemOf := func(typ string) func([]byte, error) []byte {
		return func(der []byte, err error) []byte {
			if err != nil {
				t.Fatal(err)
			}
			return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
		}
	}
	ecPKCS8 := pemOf("PRIVATE KEY")(x509.MarshalPKCS8PrivateKey(ecKey))
	ecSEC1 := pemOf("EC PRIVATE KEY")(x509.MarshalECPrivateKey(ecKey))
	ecPKIX := pemOf("PUBLIC KEY")(x509.MarshalPKIXPublicKey(&ecKey.PublicKey))
	rsaPKCS8 := pemOf("PRIVATE KEY")(x509.MarshalPKCS8PrivateKey(rsaKey))
	rsaPKCS1 := pemOf("RSA PRIVATE KEY")(x509.MarshalPKCS1PrivateKey(rsaKey), nil)
	rsaPKIX := pemOf("PUBLIC KEY")(x509.MarshalPKIXPublicKey(&rsaKey.PublicKey))
	rsaPKCS1Pub := pemOf("RSA PUBLIC KEY")(x509.MarshalPKCS1PublicKey(&rsaKey.PublicKey), nil)
	garbageDER := pemOf("PRIVATE KEY")([]byte("not DER"), nil)
	garbagePubDER := pemOf("PUBLIC KEY")([]byte("not DER"), nil)
	edPriv, _ := MarshalPrivateKey(testKey(1))
	edPub, _ := MarshalPublicKey(publicKey(testKey(1)))

	for _, tt := range []struct {
		name  string
		parse func([]byte) error
		pem   []byte
		want  string
	}{
		{"private: garbage", parsePriv, []byte("garbage"), "token: private key: no PEM block"},
		{"private: empty", parsePriv, nil, "no PEM block"},
		{"private: bad DER", parsePriv, garbageDER, "token: private key: not a PKCS #8 key: "},
		{"private: ECDSA PKCS #8", parsePriv, ecPKCS8, "token: private key: not an Ed25519 key (*ecdsa.PrivateKey)"},
		{"private: ECDSA SEC 1", parsePriv, ecSEC1, `not an Ed25519 key (PEM block "EC PRIVATE KEY")`},
		{"private: RSA PKCS #8", parsePriv, rsaPKCS8, "not an Ed25519 key (*rsa.PrivateKey)"},
		{"private: RSA PKCS #1", parsePriv, rsaPKCS1, `not an Ed25519 key (PEM block "RSA PRIVATE KEY")`},
		{"private: a public key", parsePriv, edPub, `PEM block is "PUBLIC KEY", want "PRIVATE KEY"`},
		{"public: garbage", parsePub, []byte("garbage"), "token: public key: no PEM block"},
		{"public: bad DER", parsePub, garbagePubDER, "token: public key: not a PKIX key: "},
		{"public: ECDSA", parsePub, ecPKIX, "not an Ed25519 key (*ecdsa.PublicKey)"},
		{"public: RSA", parsePub, rsaPKIX, "not an Ed25519 key (*rsa.PublicKey)"},
		{"public: RSA PKCS #1", parsePub, rsaPKCS1Pub, `not an Ed25519 key (PEM block "RSA PUBLIC KEY")`},
		{"public: a private key", parsePub, edPriv, `PEM block is "PRIVATE KEY", want "PUBLIC KEY"`},
	} {
		if err := tt.parse(tt.pem); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error containing %q", tt.name, err, tt.want)
		}
	}

	if _, err := MarshalPrivateKey(testKey(1)[:32]); err == nil {
		t.Error("MarshalPrivateKey of 32 bytes succeeded")
	}
	if _, err := MarshalPublicKey(publicKey(testKey(1))[:31]); err == nil {
		t.Error("MarshalPublicKey of 31 bytes succeeded")
	}
}

func parsePriv(b []byte) error { _, err := ParsePrivateKey(b); return err }
func parsePub(b []byte) error  { _, err := ParsePublicKey(b); return err }
