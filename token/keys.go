package token

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// PEM block types of the keys, as OpenSSL writes them.
const (
	privateKeyType = "PRIVATE KEY" // PKCS #8
	publicKeyType  = "PUBLIC KEY"  // PKIX (SubjectPublicKeyInfo)
)

// GenerateKey returns a new key pair for a matchmaker, from 32 bytes read
// from r, or from crypto/rand if r is nil.
func GenerateKey(r io.Reader) (ed25519.PublicKey, ed25519.PrivateKey, error) {
	pub, priv, err := ed25519.GenerateKey(r)
	if err != nil {
		return nil, nil, fmt.Errorf("token: generate key: %w", err)
	}
	return pub, priv, nil
}

// MarshalPrivateKey returns priv as a PKCS #8 "PRIVATE KEY" PEM block, the
// format OpenSSL, Python's cryptography and Node.js read.
func MarshalPrivateKey(priv ed25519.PrivateKey) ([]byte, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("token: private key of %d bytes, want %d", len(priv), ed25519.PrivateKeySize)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("token: private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: privateKeyType, Bytes: der}), nil
}

// MarshalPublicKey returns pub as a PKIX "PUBLIC KEY" PEM block.
func MarshalPublicKey(pub ed25519.PublicKey) ([]byte, error) {
	if len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("token: public key of %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("token: public key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: publicKeyType, Bytes: der}), nil
}

// ParsePrivateKey returns the Ed25519 private key of the first PEM block in
// pemBytes, which must be a PKCS #8 "PRIVATE KEY".
func ParsePrivateKey(pemBytes []byte) (ed25519.PrivateKey, error) {
	priv, err := parsePrivateKey(pemBytes)
	if err != nil {
		return nil, fmt.Errorf("token: private key: %w", err)
	}
	return priv, nil
}

// ParsePublicKey returns the Ed25519 public key of the first PEM block in
// pemBytes, which must be a PKIX "PUBLIC KEY".
func ParsePublicKey(pemBytes []byte) (ed25519.PublicKey, error) {
	pub, err := parsePublicKey(pemBytes)
	if err != nil {
		return nil, fmt.Errorf("token: public key: %w", err)
	}
	return pub, nil
}

// LoadPrivateKey reads a private key file as ParsePrivateKey does.
func LoadPrivateKey(path string) (ed25519.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("token: private key: %w", err)
	}
	priv, err := parsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("token: private key %s: %w", path, err)
	}
	return priv, nil
}

// LoadPublicKey reads a public key file as ParsePublicKey does.
func LoadPublicKey(path string) (ed25519.PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("token: public key: %w", err)
	}
	pub, err := parsePublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("token: public key %s: %w", path, err)
	}
	return pub, nil
}

func parsePrivateKey(pemBytes []byte) (ed25519.PrivateKey, error) {
	der, err := pemBlock(pemBytes, privateKeyType)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("not a PKCS #8 key: %w", err)
	}
	priv, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("not an Ed25519 key (%T)", key)
	}
	return priv, nil
}

func parsePublicKey(pemBytes []byte) (ed25519.PublicKey, error) {
	der, err := pemBlock(pemBytes, publicKeyType)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("not a PKIX key: %w", err)
	}
	pub, ok := key.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("not an Ed25519 key (%T)", key)
	}
	return pub, nil
}

// pemBlock returns the contents of the first PEM block in data, which must
// be of type want.
func pemBlock(data []byte, want string) ([]byte, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	if block.Type == want {
		return block.Bytes, nil
	}
	// The legacy formats of other algorithms: PKCS #1, SEC 1, DSA.
	for _, alg := range []string{"RSA ", "EC ", "DSA "} {
		if strings.HasPrefix(block.Type, alg) {
			return nil, fmt.Errorf("not an Ed25519 key (PEM block %q)", block.Type)
		}
	}
	return nil, fmt.Errorf("PEM block is %q, want %q", block.Type, want)
}
