// Package token implements Rewind's connect tokens: short-lived, single-use
// permissions to join a match, signed by a studio's matchmaker and checked by
// game servers. The idea is netcode.io's connect token
// (https://github.com/networkprotocol/netcode/blob/master/STANDARD.md),
// reduced to what is left once QUIC's TLS encrypts the connection: a token is
// signed, not encrypted, and carries no keys.
//
// The matchmaker holds an Ed25519 private key and mints a token with Sign for
// each join it grants: who the player is, which room, which team and class,
// when the token starts and stops being valid, and a random nonce. The player
// passes the token on to the game server in its Join message; where a token
// travels as text, it is in the form of Encode. The server holds the
// matchmaker's public keys, several at once while keys are rotated, and
// checks each token with a Verifier: its structure, the signature, the times
// with some clock-skew tolerance, and that its nonce was not used before.
// Whether the room exists is the server's concern, not this package's.
//
// The binary format, the test vector and examples of minting tokens in other
// languages are in docs/tokens.md.
package token
