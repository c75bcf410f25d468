package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"time"

	"github.com/rewind-gg/rewind/protocol"
)

// tlsConfig loads the configured certificate, or generates a self-signed one
// for localhost when none is configured (development; clients must then skip
// verification or pin the certificate).
func tlsConfig(c TLSConfig) (*tls.Config, error) {
	var cert tls.Certificate
	var err error
	if c.Cert != "" {
		cert, err = tls.LoadX509KeyPair(c.Cert, c.Key)
		if err != nil {
			return nil, fmt.Errorf("config: tls: %w", err)
		}
	} else if cert, err = selfSigned(); err != nil {
		return nil, fmt.Errorf("server: self-signed certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{protocol.ALPN}, MinVersion: tls.VersionTLS13}, nil
}

func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "rewind self-signed"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// certSHA256 is the SHA-256 of the leaf certificate's DER encoding: what a
// client pins (client.Config.ServerCertSHA256) when no CA vouches for the
// server, as the matchmaker hands it out with the token.
func certSHA256(tc *tls.Config) []byte {
	sum := sha256.Sum256(tc.Certificates[0].Certificate[0])
	return sum[:]
}
