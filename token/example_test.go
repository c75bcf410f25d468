package token_test

import (
	"crypto/ed25519"
	"fmt"
	"time"

	"github.com/rewind-gg/rewind/token"
)

func Example() {
	// The matchmaker's key; a real one comes from token.LoadPrivateKey.
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

	// The matchmaker mints a token and hands its text form to the player.
	nonce, err := token.NewNonce(nil)
	if err != nil {
		panic(err)
	}
	tok, err := token.Sign(priv, token.Claims{
		NotBefore: now,
		Expires:   now.Add(2 * time.Minute),
		Nonce:     nonce,
		User:      "user-42",
		Name:      "Alice",
		Room:      "match-7",
		Team:      1,
	})
	if err != nil {
		panic(err)
	}
	text := token.Encode(tok)

	// The game server gets the text in the player's Join.
	v, err := token.NewVerifier(token.VerifierConfig{
		Keys: []ed25519.PublicKey{priv.Public().(ed25519.PublicKey)},
	})
	if err != nil {
		panic(err)
	}
	joined := now.Add(3 * time.Second)
	for range 2 {
		bin, err := token.Decode(text)
		if err != nil {
			fmt.Println(err)
			continue
		}
		c, err := v.Verify(bin, joined)
		if err != nil {
			// Every error of Verify is an *Error, whose Reason is a
			// metric label.
			fmt.Println("rejected:", err.(*token.Error).Reason)
			continue
		}
		fmt.Printf("%s joins %s on team %d\n", c.Name, c.Room, c.Team)
	}
	// Output:
	// Alice joins match-7 on team 1
	// rejected: replayed
}
