package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/token"
)

func newBotsCmd(stdout, stderr io.Writer) *cobra.Command {
	var addr, room, certHex, keyPath, tokensPath string
	var n int
	var duration time.Duration
	var fc fleetConfig
	var nc networkConfig
	cmd := &cobra.Command{
		Use:   "bots --server ADDR -n N",
		Short: "Drive bots against a running server",
		Long: `Connect N bots to a running server (rewind serve), split into two teams,
and let them play: they move, aim at the nearest visible enemy with some error,
and fire with their whole loadout (melee within reach, a shield now and then,
ranged weapons in turn). One status line a second; a report when they stop (after --duration,
or on Ctrl-C).

Against a server on this machine, --network (and --rtt-min, --rtt-max, --jitter,
--loss) puts each bot behind a network shim of its own, as rewind demo does:
the same presets (default, mobile, handover, thin, burst). Without any of
them, the bots connect directly.`,
		Example: `  rewind bots --server 127.0.0.1:4433 -n 12
  rewind bots --server 127.0.0.1:4433 -n 4 --room duel --duration 1m
  rewind bots --server 127.0.0.1:4433 -n 12 --network handover   # through shims: a mobile handover's stalls
  matchmaker --tokens 12 | rewind bots --server 127.0.0.1:4433 --tokens -   # one bot per token, as the tokens say
  rewind bots --server 127.0.0.1:4433 -n 12 --level courtyard   # the level the server plays (here the sample map)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if addr == "" {
				return &exitError{code: 2, msg: "bots: --server is required"}
			}
			if tokensPath != "" {
				if keyPath != "" {
					return &exitError{code: 2, msg: "bots: --tokens and --key: give one (tokens minted elsewhere, or the key to mint them)"}
				}
				pool, err := loadTokens(tokensPath, cmd.InOrStdin())
				if err != nil {
					return &exitError{code: 2, msg: "bots: --tokens: " + err.Error()}
				}
				fc.tokens = pool
				if !cmd.Flags().Changed("n") {
					n = pool.len()
				}
				if n > pool.len() {
					return &exitError{code: 2, msg: fmt.Sprintf("bots: -n %d bots, but --tokens holds %d tokens (one per bot)", n, pool.len())}
				}
			}
			if n < 1 || n > 255 {
				return &exitError{code: 2, msg: fmt.Sprintf("bots: -n: %d is outside 1..255", n)}
			}
			fc.room = room
			if keyPath != "" {
				key, err := token.LoadPrivateKey(keyPath)
				if err != nil {
					return &exitError{code: 2, msg: "bots: --key: " + err.Error()}
				}
				fc.key = key
			}
			if certHex != "" {
				sum, err := hex.DecodeString(certHex)
				if err != nil || len(sum) != sha256.Size {
					return &exitError{code: 2, msg: "bots: --cert-sha256: want 64 hex digits (the server logs its cert_sha256 at start)"}
				}
				fc.certSHA256 = sum
			}
			f := &fleet{}
			shaped := false
			for _, name := range networkFlags {
				shaped = shaped || cmd.Flags().Changed(name)
			}
			if shaped {
				if err := nc.applyNetwork(cmd.Flags().Changed); err != nil {
					return &exitError{code: 2, msg: "bots: " + err.Error()}
				}
				if err := nc.validate(); err != nil {
					return &exitError{code: 2, msg: "bots: " + err.Error()}
				}
				for i := range n {
					sh, rtt, err := nc.shim(addr, i, n, fc.seed)
					if err != nil { // the shim relays to loopback only
						return &exitError{code: 2, msg: "bots: --network: " + err.Error()}
					}
					defer sh.Close()
					f.addBot(sh.Addr().String(), rtt)
				}
				fmt.Fprintf(stdout, "rewind bots: %d bots, %s\n", n, nc.describe())
			} else {
				for range n {
					f.addBot(addr, 0)
				}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if duration > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, duration)
				defer cancel()
			}
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			// At most a server's default handshakes_per_source at once: the
			// bots all come from this host.
			if err := f.connect(dctx, fc, server.DefaultConfig().Limits.HandshakesPerSource); err != nil {
				return &exitError{code: 1, msg: "bots: " + err.Error()}
			}
			start := time.Now()
			f.holdFireBefore(ctx, time.Second)
			f.run(ctx)
			f.statusLoop(ctx, stdout, nil)
			f.wait()
			fmt.Fprintln(stdout)
			f.report(stdout, time.Since(start), nil)
			for _, b := range f.bots {
				if b.err != nil {
					fmt.Fprintf(stderr, "%s: %v\n", b.name, b.err)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "server", "", "the server's address, host:port")
	cmd.Flags().IntVarP(&n, "n", "n", 12, "how many bots")
	cmd.Flags().StringVar(&room, "room", "demo", "the room to join")
	cmd.Flags().DurationVar(&duration, "duration", 0, "how long to play (0: until Ctrl-C)")
	cmd.Flags().StringVar(&certHex, "cert-sha256", "", "pin the server's certificate: its SHA-256, hex (rewind serve logs it as cert_sha256)")
	cmd.Flags().BoolVar(&fc.insecure, "insecure", false, "do not verify the server's certificate (development only)")
	cmd.Flags().StringVar(&tokensPath, "tokens", "", "connect tokens a matchmaker minted, one a line, from this file or - (standard input): one per bot, which joins as its token says (room, name, team, class); a bot that dials again takes the next")
	cmd.Flags().StringVar(&keyPath, "key", "", "sign each bot's connect token with this private key (rewind keygen); none: the server must be in open development mode")
	fc.flags(cmd.Flags(), nil, "seed of the bots' choices and the shims' losses", level.ArenaName)
	nc.flags(cmd.Flags())
	return cmd
}
