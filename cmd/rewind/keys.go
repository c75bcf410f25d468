package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rewind-gg/rewind/token"
)

func newKeygenCmd(stdout io.Writer) *cobra.Command {
	var dir, name string
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Make an Ed25519 key pair for signing connect tokens",
		Long: `Write NAME.key (the private key: the matchmaker signs tokens with it; keep it
secret, mode 0600) and NAME.pub (the public key: servers check tokens with it,
auth.public_keys) into --dir (created if needed), as PEM. Prints the key id tokens
name it by.
Existing files are never overwritten.

The private key is PKCS #8 v1 (RFC 5208: the seed, without the public key), as
OpenSSL writes it and OpenSSL, Python's cryptography, Node.js and Go read it; the
public key is PKIX. Rust's ring reads it with
Ed25519KeyPair::from_pkcs8_maybe_unchecked, not from_pkcs8 (docs/tokens.md).`,
		Example: `  rewind keygen --dir keys --name matchmaker-2026-11
  rewind serve --public-key keys/matchmaker-2026-11.pub`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if name == "" || strings.ContainsAny(name, `/\`) {
				return &exitError{code: 2, msg: "keygen: --name: a file name without a directory"}
			}
			pub, priv, err := token.GenerateKey(nil)
			if err != nil {
				return &exitError{code: 1, msg: "keygen: " + err.Error()}
			}
			privPEM, err := token.MarshalPrivateKey(priv)
			if err != nil {
				return &exitError{code: 1, msg: "keygen: " + err.Error()}
			}
			pubPEM, err := token.MarshalPublicKey(pub)
			if err != nil {
				return &exitError{code: 1, msg: "keygen: " + err.Error()}
			}
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return &exitError{code: 1, msg: "keygen: " + err.Error()}
			}
			keyPath, pubPath := filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
			if err := writeNew(keyPath, privPEM, 0o600); err != nil {
				return &exitError{code: 1, msg: "keygen: " + err.Error()}
			}
			if err := writeNew(pubPath, pubPEM, 0o644); err != nil {
				os.Remove(keyPath)
				return &exitError{code: 1, msg: "keygen: " + err.Error()}
			}
			fmt.Fprintf(stdout, "key id      %s\nprivate key %s (the matchmaker's: keep it secret)\npublic key  %s (the servers': auth.public_keys)\n",
				token.KeyIDString(token.KeyID(pub)), keyPath, pubPath)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", ".", "directory to write the files into")
	cmd.Flags().StringVar(&name, "name", "matchmaker", "file name of the pair, without extension")
	return cmd
}

// writeNew writes a file that must not exist yet.
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// tokenFlags are a token's claims as flags.
type tokenFlags struct {
	key, room, user, name, class string
	team                         uint8
	ttl                          time.Duration
}

func newTokenCmd(stdout io.Writer) *cobra.Command {
	var tf tokenFlags
	cmd := &cobra.Command{
		Use:   "token --key FILE --room ROOM --user ID [--name NAME] [--team 1|2] [--class CLASS] [--ttl 5m]",
		Short: "Mint a connect token (development and tests; a matchmaker mints its own)",
		Long: `Sign a connect token with a private key from rewind keygen and print its text
form (base64url): what a matchmaker hands a player for one join (docs/tokens.md).
A token is single-use. "rewind token inspect TOKEN" prints what a token says.`,
		Example: `  rewind token --key keys/matchmaker.key --room match-7 --user u-42 --name Alice --team 1
  rewind bots --server 127.0.0.1:4433 --key keys/matchmaker.key --room match-7 -n 12`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if tf.key == "" || tf.room == "" || tf.user == "" {
				return &exitError{code: 2, msg: "token: --key, --room and --user are required"}
			}
			priv, err := token.LoadPrivateKey(tf.key)
			if err != nil {
				return &exitError{code: 2, msg: "token: --key: " + err.Error()}
			}
			if tf.name == "" {
				tf.name = tf.user
			}
			tok, err := mint(priv, tf.room, tf.user, tf.name, tf.team, tf.class, tf.ttl)
			if err != nil { // "token: name: …", from package token
				return &exitError{code: 2, msg: err.Error()}
			}
			fmt.Fprintln(stdout, tok)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&tf.key, "key", "", "the private key file (rewind keygen)")
	f.StringVar(&tf.room, "room", "", "the room (match) the token joins")
	f.StringVar(&tf.user, "user", "", "the player's stable user id")
	f.StringVar(&tf.name, "name", "", "the display name (default: the user id)")
	f.Uint8Var(&tf.team, "team", 0, "1 or 2; 0 lets the server balance the teams")
	f.StringVar(&tf.class, "class", "", "the class (empty: the server's default)")
	f.DurationVar(&tf.ttl, "ttl", 5*time.Minute, "how long the token is valid")
	cmd.AddCommand(newTokenInspectCmd(stdout))
	return cmd
}

// mint signs a token valid from now for ttl, with a fresh nonce.
func mint(priv ed25519.PrivateKey, room, user, name string, team uint8, class string, ttl time.Duration) (string, error) {
	nonce, err := token.NewNonce(nil)
	if err != nil {
		return "", err
	}
	now := time.Now()
	b, err := token.Sign(priv, token.Claims{NotBefore: now, Expires: now.Add(ttl), Nonce: nonce,
		User: user, Name: name, Room: room, Team: team, Class: class})
	if err != nil {
		return "", err
	}
	return token.Encode(b), nil
}

func newTokenInspectCmd(stdout io.Writer) *cobra.Command {
	var pubPath string
	cmd := &cobra.Command{
		Use:   "inspect TOKEN",
		Short: "Print what a connect token says (and, with --public-key, whether its signature holds)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			b, err := token.Decode(strings.TrimSpace(args[0]))
			if err != nil {
				return &exitError{code: 2, msg: "token inspect: " + err.Error()}
			}
			c, err := token.Parse(b)
			if err != nil {
				return &exitError{code: 2, msg: "token inspect: " + err.Error()}
			}
			fmt.Fprintf(stdout, "key id      %s\nuser        %s\nname        %s\nroom        %s\nteam        %d\nclass       %q\nnot before  %s\nexpires     %s\nnonce       %s\nsize        %d bytes\n",
				token.KeyIDString(c.KeyID), c.User, c.Name, c.Room, c.Team, c.Class, c.NotBefore.Format(time.RFC3339),
				c.Expires.Format(time.RFC3339), base64.RawURLEncoding.EncodeToString(c.Nonce[:]), len(b))
			if pubPath == "" {
				return nil
			}
			pub, err := token.LoadPublicKey(pubPath)
			if err != nil {
				return &exitError{code: 2, msg: "token inspect: --public-key: " + err.Error()}
			}
			v, err := token.NewVerifier(token.VerifierConfig{Keys: []ed25519.PublicKey{pub}})
			if err != nil {
				return &exitError{code: 1, msg: "token inspect: " + err.Error()}
			}
			if _, err := v.Verify(b, time.Now()); err != nil {
				var te *token.Error
				if errors.As(err, &te) {
					return &exitError{code: 1, msg: fmt.Sprintf("verdict     refused (%s): %v", te.Reason, err)}
				}
				return &exitError{code: 1, msg: "verdict     refused: " + err.Error()}
			}
			fmt.Fprintln(stdout, "verdict     valid now (signature, times)")
			return nil
		},
	}
	cmd.Flags().StringVar(&pubPath, "public-key", "", "check the signature and times with this public key file")
	return cmd
}
