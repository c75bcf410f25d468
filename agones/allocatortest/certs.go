package allocatortest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"time"
)

// authority is a certificate authority made for one fake.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// newAuthority makes a self-signed CA named name, valid for a day.
func newAuthority(name string) (*authority, error) {
	tmpl := template(name)
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid, tmpl.IsCA = true, true
	cert, key, err := create(tmpl, nil)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key}, nil
}

// issue returns a certificate for name signed by a, for usage, valid for a
// day, with ips as its IP address SANs.
func (a *authority) issue(name string, usage x509.ExtKeyUsage, ips ...net.IP) (tls.Certificate, error) {
	tmpl := template(name)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
	tmpl.IPAddresses = ips
	cert, key, err := create(tmpl, a)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}, nil
}

// template is a certificate for name, valid from an hour ago for a day.
func template(name string) *x509.Certificate {
	return &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
}

// create makes a new P-256 key and tmpl's certificate for it, signed by
// parent, or by itself if parent is nil.
func create(tmpl *x509.Certificate, parent *authority) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

// serial returns a random certificate serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(fmt.Sprintf("allocatortest: crypto/rand: %v", err)) // crypto/rand does not fail on Linux
	}
	return n
}

// verifyClient is the allocator's verifyClientCertificate
// (cmd/allocator/main.go): the client's certificate, with the intermediates
// it sent, must chain to roots for client authentication.
func verifyClient(roots *x509.CertPool) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return fmt.Errorf("allocatortest: no client certificate")
		}
		opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
		for _, r := range raw[1:] {
			c, err := x509.ParseCertificate(r)
			if err != nil {
				return fmt.Errorf("bad intermediate certificate: %w", err)
			}
			opts.Intermediates.AddCert(c)
		}
		c, err := x509.ParseCertificate(raw[0])
		if err != nil {
			return fmt.Errorf("bad client certificate: %w", err)
		}
		if _, err := c.Verify(opts); err != nil {
			return fmt.Errorf("failed to verify client certificate: %w", err)
		}
		return nil
	}
}
