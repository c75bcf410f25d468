package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rewind-gg/rewind/server"
)

// serverFlags declares the flags that override config keys (server.FlagKeys).
func serverFlags(fs *pflag.FlagSet) {
	d := server.DefaultConfig()
	fs.String("listen", d.Listen, "UDP address for QUIC (listen)")
	fs.Int("tick-rate", d.TickRate, "simulation ticks per second (tick_rate)")
	fs.Int("snapshot-rate", d.SnapshotRate, "snapshots per second, a divisor of the tick rate (snapshot_rate)")
	fs.Int("max-players", d.MaxPlayers, "players per room (max_players)")
	fs.Int("window", d.LagComp.WindowTicks, "deepest lag-compensation rewind, ticks (lagcomp.window_ticks)")
	fs.Int("resolution", d.LagComp.ViewResolution, "bucket view times to 1/N tick, 0 exact (lagcomp.view_resolution)")
	fs.Bool("no-buckets", false, "one rewind per item instead of per bucket (lagcomp.bucketing=false)")
	fs.Bool("friendly-fire", d.Match.FriendlyFire, "shots hit teammates (match.friendly_fire)")
	fs.String("admin", d.Admin.Listen, "admin HTTP address for /metrics and /debug/pprof, empty to disable (admin.listen)")
	fs.String("log-level", d.Log.Level, "trace, debug, info, warn or error (log.level)")
	fs.String("log-format", d.Log.Format, "auto, json or console (log.format)")
	fs.String("tls-cert", "", "certificate file; with --tls-key, instead of a self-signed certificate (tls.cert)")
	fs.String("tls-key", "", "private key file (tls.key)")
	fs.String("weapons", "", "weapons file, TOML or YAML (weapons_file; empty: the built-in weapons)")
}

func newServeCmd(stderr io.Writer) *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Host matches: a QUIC game server with lag compensation",
		Long: `Host matches over QUIC. Rooms are created when the first player joins and
closed when the last one leaves. Configuration: defaults, then --config FILE
(TOML or YAML), then REWIND_* environment variables (REWIND_TICK_RATE=30,
REWIND_LAGCOMP__WINDOW_TICKS=10), then flags. See docs/running.md.
SIGINT or SIGTERM shuts down gracefully: rooms finish their tick and clients
are told why they are disconnected.`,
		Example: `  rewind serve
  rewind serve --config rewind.toml --listen 0.0.0.0:4433
  REWIND_LAGCOMP__WINDOW_TICKS=10 rewind serve --admin 127.0.0.1:9090`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := server.LoadConfig(configPath, os.Environ(), cmd.Flags())
			if err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			log, err := server.NewLogger(cfg.Log, stderr)
			if err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			srv, err := server.New(cfg, log)
			if err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			if err := srv.Start(); err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			<-ctx.Done()
			stop()
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("serve: shutdown: %v", err)}
			}
			log.Info().Msg("stopped")
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file (.toml, .yaml or .yml)")
	serverFlags(cmd.Flags())
	return cmd
}
