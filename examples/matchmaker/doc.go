// Package matchmaker is the game-server side of a matchmaker for Rewind on
// Agones, for a studio to copy: given a match (its id and its players), it
// allocates a GameServer through the Agones allocator service, reads the
// server's certificate hash from the allocation, and mints each player's
// connect token, so that each player gets a Ticket: the address to dial,
// the certificate to pin, the token to send. When a server refuses a
// player's join with wrong_room or full, the player reports it (Refused),
// and the match is allocated again, a bounded number of times.
//
// It speaks the allocator service's REST API (POST /gameserverallocation,
// the JSON of allocation.proto's AllocationRequest and AllocationResponse)
// over HTTPS with mutual TLS, with net/http only: Agones' Go packages are
// not needed. The flow and the choices are in README.md beside this file;
// docs/deploy.md is the deployment it fits, docs/tokens.md the tokens.
//
//	key, err := token.LoadPrivateKey("matchmaker.key")
//	cert, err := tls.LoadX509KeyPair("client.crt", "client.key") // allocator-client.default
//	ca := x509.NewCertPool()
//	ca.AppendCertsFromPEM(caPEM) // allocator-tls-ca's tls-ca.crt
//	mm, err := matchmaker.New(matchmaker.Config{
//		Allocator: "203.0.113.5", ClientCert: cert, AllocatorCA: ca,
//		Fleet: "rewind-density", Matches: matchmaker.MatchesList, Key: key,
//	})
//	a, err := mm.Allocate(ctx, matchmaker.Match{ID: "match-7", Players: players})
//	// hand a.Tickets[i] to players[i]; a refused player's report:
//	t, err := mm.Refused(ctx, refusal)
//
// Dial is the player's side with the Go client: it dials a ticket and
// reports refusals.
package matchmaker
