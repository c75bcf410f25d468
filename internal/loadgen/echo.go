package loadgen

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"

	"github.com/quic-go/quic-go"
)

// EchoALPN is the ALPN of EchoQUIC.
const EchoALPN = "rewind-echo"

// EchoUDP answers every packet on conn with a packet of size bytes that
// starts with the packet's first four (the client's id), until ctx ends:
// the plain-UDP floor, one read and one write per packet.
func EchoUDP(ctx context.Context, conn *net.UDPConn, size int) error {
	context.AfterFunc(ctx, func() { conn.Close() })
	in := make([]byte, 2048)
	out := make([]byte, max(size, 4))
	for {
		n, from, err := conn.ReadFromUDPAddrPort(in)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("echo: %w", err)
		}
		if n < 4 {
			continue
		}
		copy(out, in[:4])
		if _, err := conn.WriteToUDPAddrPort(out, from); err != nil && ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
			return fmt.Errorf("echo: %w", err)
		}
	}
}

// EchoQUIC accepts quic-go connections on conn and answers every DATAGRAM
// with one of size bytes, until ctx ends: the minimal quic-go floor.
func EchoQUIC(ctx context.Context, conn *net.UDPConn, cert tls.Certificate, size int) error {
	tr := &quic.Transport{Conn: conn}
	defer tr.Close()
	ln, err := tr.Listen(&tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{EchoALPN}},
		&quic.Config{EnableDatagrams: true})
	if err != nil {
		return fmt.Errorf("echo: %w", err)
	}
	defer ln.Close()
	out := make([]byte, max(size, 4))
	for {
		c, err := ln.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("echo: %w", err)
		}
		go func() {
			reply := make([]byte, len(out))
			for {
				d, err := c.ReceiveDatagram(ctx)
				if err != nil {
					return
				}
				copy(reply, d[:min(4, len(d))])
				if c.SendDatagram(reply) != nil {
					return
				}
			}
		}()
	}
}

// SelfSigned makes a certificate for EchoQUIC.
func SelfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rewind-echo"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
