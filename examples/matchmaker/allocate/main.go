// Command allocate is a matchmaker's one step, from the command line: it
// allocates a Rewind match through the Agones allocator service and prints
// its assignment (the GameServer, and each player's ticket) as JSON. With
// --join it also joins every player with the Go client, re-allocating when a
// server refuses them, as a game's players would.
//
//	go run ./examples/matchmaker/allocate --allocator 203.0.113.5 \
//	    --cert client.crt --key client.key --ca ca.crt \
//	    --fleet rewind --signing-key matchmaker.key --match match.json
//
// match.json is a matchmaker.Match:
//
//	{"id": "match-7", "players": [{"user": "u-1", "name": "Alice", "team": 1}, {"user": "u-2", "name": "Bob", "team": 2}]}
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/examples/matchmaker"
	"github.com/rewind-gg/rewind/token"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "allocate:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("allocate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg                       matchmaker.Config
		certFile, keyFile, caFile string
		signingKey, matchFile     string
		join                      bool
		timeout                   time.Duration
	)
	fs.StringVar(&cfg.Allocator, "allocator", "", "the allocator service, host[:port] (kubectl get service agones-allocator -n agones-system: EXTERNAL-IP)")
	fs.StringVar(&certFile, "cert", "", "the client certificate, PEM (the allocator-client.default Secret's tls.crt)")
	fs.StringVar(&keyFile, "key", "", "its private key, PEM (tls.key)")
	fs.StringVar(&caFile, "ca", "", "the allocator's CA, PEM (the allocator-tls-ca Secret's tls-ca.crt); empty: the system's roots")
	fs.StringVar(&cfg.ServerName, "server-name", "", "the name the allocator's certificate is checked for (default: the host of --allocator)")
	fs.StringVar(&cfg.Namespace, "namespace", "default", "the game servers' namespace")
	fs.StringVar(&cfg.Fleet, "fleet", "", "the Fleet to allocate from")
	fs.StringVar(&cfg.Matches, "matches", matchmaker.MatchesAnnotation, "how the Fleet's servers take matches (their agones.matches): annotation, or list (high density)")
	fs.StringVar(&signingKey, "signing-key", "", "the matchmaker's Ed25519 private key, PEM (rewind keygen)")
	fs.StringVar(&matchFile, "match", "-", "the match, JSON ({\"id\", \"players\": [{\"user\", \"name\", \"team\", \"class\"}]}); - reads stdin")
	fs.BoolVar(&join, "join", false, "join every player with the Go client (standing still), re-allocating on refusals")
	fs.DurationVar(&timeout, "timeout", 30*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	var err error
	if cfg.Key, err = token.LoadPrivateKey(signingKey); err != nil {
		return fmt.Errorf("--signing-key: %w", err)
	}
	if certFile != "" || keyFile != "" {
		if cfg.ClientCert, err = tls.LoadX509KeyPair(certFile, keyFile); err != nil {
			return fmt.Errorf("--cert, --key: %w", err)
		}
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return fmt.Errorf("--ca: %w", err)
		}
		cfg.AllocatorCA = x509.NewCertPool()
		if !cfg.AllocatorCA.AppendCertsFromPEM(pem) {
			return fmt.Errorf("--ca: %s holds no PEM certificate", caFile)
		}
	}
	var m matchmaker.Match
	in := stdin
	if matchFile != "-" {
		f, err := os.Open(matchFile)
		if err != nil {
			return fmt.Errorf("--match: %w", err)
		}
		defer f.Close()
		in = f
	}
	dec := json.NewDecoder(in)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("--match: %w", err)
	}

	mm, err := matchmaker.New(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	a, err := mm.Allocate(ctx, m)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(a); err != nil {
		return err
	}
	if !join {
		return nil
	}

	return joinAll(ctx, mm, m.ID, stderr)
}

// joinAll joins every player of the match, as the game's clients would: a
// refusal goes back to the matchmaker, which answers with the ticket to try
// next. When that moves the match to a new room, the players already in the
// old one leave it and follow, with new tickets. It prints where each player
// is once all are in the match's room.
func joinAll(ctx context.Context, mm *matchmaker.Matchmaker, matchID string, out io.Writer) error {
	clients := map[string]*client.Client{}
	rooms := map[string]string{}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	for {
		a, ok := mm.Current(matchID)
		if !ok {
			return fmt.Errorf("match %s: forgotten", matchID)
		}
		moved := false
		for _, p := range a.Tickets {
			if rooms[p.User] == a.Room {
				continue
			}
			moved = true
			if c := clients[p.User]; c != nil {
				c.Close() // leaves the older room
			}
			t, err := mm.Ticket(matchID, p.User)
			if err != nil {
				return err
			}
			c, in, err := matchmaker.Dial(ctx, t, client.Config{Input: standStill{}}, mm.Refused)
			if err != nil {
				return fmt.Errorf("user %q: %w", p.User, err)
			}
			clients[p.User], rooms[p.User] = c, in.Room
		}
		if !moved { // every player is in the newest room (each refusal made at most one more)
			for _, p := range a.Tickets {
				fmt.Fprintf(out, "user %q joined room %s on %s at %s\n", p.User, a.Room, a.GameServer, a.Addr)
			}
			return nil
		}
	}
}

// standStill is a player who does nothing.
type standStill struct{}

func (standStill) Intent(*client.View) client.Intent { return client.Intent{} }
