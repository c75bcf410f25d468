package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/agones"
	"github.com/rewind-gg/rewind/agones/agonestest"
	"github.com/rewind-gg/rewind/agones/allocatortest"
	"github.com/rewind-gg/rewind/examples/matchmaker"
	"github.com/rewind-gg/rewind/internal/servertest"
	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/token"
)

// writePEM writes one PEM block to dir/name and returns the path.
func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The command, with the files an operator would have (the client
// certificate and key, the allocator's CA, the signing key, the match),
// allocates a match on a Rewind server behind the fake allocator, prints
// the assignment, and with --join joins both players.
func TestAllocate(t *testing.T) {
	a := allocatortest.New(t)
	pub, priv, err := token.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	sdk := agonestest.New(t)
	srv := servertest.Start(t, func(c *server.Config) {
		c.Auth.Keys, c.Auth.Rooms = []ed25519.PublicKey{pub}, server.RoomsByOperator
		c.Agones.Mode, c.Agones.SDKAddress, c.Agones.Players = "on", sdk.Addr(), "none"
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := sdk.Await(ctx, "POST", "/ready", 1); err != nil {
		t.Fatal(err)
	}
	a.Add(allocatortest.GameServer{Name: "gs-1", Labels: map[string]string{"agones.dev/fleet": "rewind"},
		Ports: []agones.Port{{Name: "default", Port: int32(srv.Addr().(*net.UDPAddr).Port)}}, SDK: sdk})

	dir := t.TempDir()
	cert, err := a.ClientCertificate()
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	signing, err := token.MarshalPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	signingPath := filepath.Join(dir, "matchmaker.key")
	if err := os.WriteFile(signingPath, signing, 0o600); err != nil {
		t.Fatal(err)
	}
	match := `{"id": "match-7", "players": [{"user": "u-1", "name": "Alice", "team": 1}, {"user": "u-2", "name": "Bob", "team": 2}]}`
	args := []string{"--allocator", a.Addr(),
		"--cert", writePEM(t, dir, "client.crt", "CERTIFICATE", cert.Certificate[0]),
		"--key", writePEM(t, dir, "client.key", "PRIVATE KEY", keyDER),
		"--ca", writePEM(t, dir, "ca.crt", "CERTIFICATE", a.CA().Raw),
		"--fleet", "rewind", "--signing-key", signingPath, "--join"}
	var stdout, stderr bytes.Buffer
	if err := run(ctx, args, strings.NewReader(match), &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var as matchmaker.Assignment
	if err := json.Unmarshal(stdout.Bytes(), &as); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if as.Room != "match-7" || as.GameServer != "gs-1" || as.Addr != srv.Addr().String() || len(as.Tickets) != 2 {
		t.Errorf("assignment %s", stdout.String())
	}
	for _, u := range []string{`"u-1"`, `"u-2"`} {
		if want := "user " + u + " joined room match-7 on gs-1 at " + srv.Addr().String(); !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q, want %q", stderr.String(), want)
		}
	}

	// A wrong flag says which.
	err = run(ctx, []string{"--signing-key", filepath.Join(dir, "none.key")}, strings.NewReader(match), &stdout, &stderr)
	if err == nil || !strings.HasPrefix(err.Error(), "--signing-key: ") {
		t.Errorf("a missing key: %v", err)
	}
}
