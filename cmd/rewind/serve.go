package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/ticks"
)

// serverFlags declares the flags that override config keys (server.FlagKeys).
func serverFlags(fs *pflag.FlagSet) {
	d := server.DefaultConfig()
	fs.String("listen", d.Listen, "UDP address for QUIC (listen)")
	fs.Int("tick-rate", d.TickRate, "simulation ticks per second (tick_rate)")
	fs.Int("snapshot-rate", d.SnapshotRate, "snapshots per second, a divisor of the tick rate (snapshot_rate)")
	fs.Int("max-players", d.MaxPlayers, "players per room (max_players)")
	fs.Var(&ticks.Span{D: d.LagComp.Window}, "window", "deepest lag-compensation rewind, a duration such as 1s (lagcomp.window); a bare number counts ticks (lagcomp.window_ticks)")
	fs.Duration("max-unlag", d.LagComp.MaxUnlag, "deepest view lag a claim is granted, 0: the window (lagcomp.max_unlag)")
	fs.Int("resolution", d.LagComp.ViewResolution, "bucket view times to 1/N tick, 0 exact (lagcomp.view_resolution)")
	fs.Bool("no-buckets", false, "one rewind per item instead of per bucket (lagcomp.bucketing=false)")
	fs.Bool("friendly-fire", d.Match.FriendlyFire, "shots hit teammates (match.friendly_fire)")
	fs.StringSlice("public-key", nil, "the matchmaker's public key file (rewind keygen), repeatable; none: open development mode (auth.public_keys)")
	fs.Bool("insecure-open", false, "allow open development mode on a non-loopback address (auth.insecure_open_mode)")
	fs.String("results", "", "append each match's result to this file, as a JSON line (results.file)")
	fs.String("record", "", "record every match into this directory, a file each, for rewind replay, tune and view (record.dir)")
	fs.Duration("drain-timeout", d.DrainTimeout, "on SIGTERM, how long running matches may finish (drain_timeout)")
	fs.String("admin", d.Admin.Listen, "admin HTTP address for /metrics, /healthz, /readyz, /rooms, empty to disable (admin.listen)")
	fs.String("pprof", "", "HTTP address for Go's profiler, /debug/pprof/ (pprof.listen; empty: off)")
	fs.String("log-level", d.Log.Level, "trace, debug, info, warn or error (log.level)")
	fs.String("log-format", d.Log.Format, "auto, json or console (log.format)")
	fs.String("tls-cert", "", "certificate file; with --tls-key, instead of a self-signed certificate (tls.cert)")
	fs.String("tls-key", "", "private key file (tls.key)")
	fs.String("weapons", "", "weapons file, TOML or YAML (weapons_file; empty: the built-in weapons)")
	fs.String("level", "", "the level to play, a glTF file (.glb, .gltf), arena for the built-in one, or courtyard for the sample map built in (level.file; empty: arena)")
}

func newServeCmd(stdout, stderr io.Writer) *cobra.Command {
	var configPath string
	var printConfig, check bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Host matches: a QUIC game server with lag compensation",
		Long: `Host matches over QUIC. With the matchmaker's public keys (auth.public_keys) only
players with a connect token join, in the room, team and class it names; without
keys the server runs in open development mode, on loopback only. Configuration:
defaults, then --config FILE (TOML or YAML), then REWIND_* environment variables
(REWIND_TICK_RATE=30, REWIND_LAGCOMP__WINDOW=1s), then flags. See
docs/running.md and docs/deploy.md.

--check is a preflight: it loads everything the server would (the configuration,
the keys, the TLS files, the level, the weapons) and checks that the results file
and the record directory can be written, then exits: 0, or 2 with one line per
problem, naming its key or file. A REWIND_* variable that is no config key, which
serve only warns of, is an error there.

SIGTERM or SIGINT drains: no new players, running matches may finish for up to
drain_timeout, then the rest are closed (reason drain_timeout) and every result is
written. A second Ctrl-C (SIGINT) stops at once: the matches left are closed
(reason interrupted), their results written. A second SIGTERM changes nothing
(Kubernetes sends one after Agones' Shutdown; its grace period bounds the drain).`,
		Example: `  rewind serve
  rewind serve --config rewind.toml --listen 0.0.0.0:4433 --public-key matchmaker.pub
  rewind serve --level courtyard       # the sample map built in (bots and clients: --level courtyard too)
  rewind serve --level maps/yard.glb
  rewind serve --print-config
  rewind serve --config rewind.toml --check
  rewind serve --tick-rate 60 --window 1s
  REWIND_LAGCOMP__WINDOW=1s rewind serve --admin 127.0.0.1:9090`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if printConfig && check {
				return &exitError{code: 2, msg: "serve: --print-config and --check: give one"}
			}
			cfg, warnings, err := server.LoadConfig(configPath, os.Environ(), cmd.Flags())
			if err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			if lc := serverLevel(cfg.Level.File); lc.Data != nil { // a sample map built in
				cfg.Level = lc
			}
			if printConfig {
				out, err := cfg.TOML()
				if err != nil {
					return &exitError{code: 1, msg: err.Error()}
				}
				stdout.Write(out)
				return nil
			}
			log, err := server.NewLogger(cfg.Log, stderr)
			if err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			if check {
				return checkServe(cfg, warnings, log, stdout)
			}
			for _, w := range warnings {
				log.Warn().Msg(w)
			}
			// From here on every failure is a log line, in log.format: a
			// JSON log stays JSON to its last line.
			srv, err := server.New(cfg, log)
			if err != nil {
				log.Error().Err(err).Msg("serve: not started")
				return &exitError{code: 2}
			}
			if err := start(srv, log, cfg.Agones.ReadyTimeout); err != nil {
				log.Error().Err(err).Msg("serve: not started")
				return &exitError{code: 1}
			}
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sigs)
			select {
			case sig := <-sigs:
				log.Info().Str("signal", sig.String()).Dur("drain_timeout", cfg.DrainTimeout).Msg("draining; Ctrl-C again stops at once")
			case <-srv.Stopping():
			}
			ictx, interrupt := context.WithCancelCause(context.Background())
			defer interrupt(nil)
			dctx, cancel := context.WithTimeout(ictx, cfg.DrainTimeout)
			defer cancel()
			go func() {
				for {
					select {
					case sig := <-sigs:
						// Ctrl-C again means now; a SIGTERM (Kubernetes sends one
						// after Agones' Shutdown) changes nothing.
						if sig == os.Interrupt {
							log.Warn().Msg("interrupted again: stopping now")
							interrupt(server.ErrInterrupted)
							return
						}
						log.Info().Str("signal", sig.String()).Msg("already draining")
					case <-dctx.Done():
						return
					}
				}
			}()
			srv.Drain(dctx)
			// Past the drain a signal terminates the process, as by default:
			// nothing is left to wait for but the rooms' last tick.
			signal.Stop(sigs)
			sctx, scancel := context.WithTimeout(context.Background(), shutdownBound)
			defer scancel()
			if err := srv.Shutdown(sctx); err != nil {
				log.Error().Err(err).Msg("serve: shutdown")
				return &exitError{code: 1}
			}
			log.Info().Msg("stopped")
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file (.toml, .yaml or .yml)")
	cmd.Flags().BoolVar(&printConfig, "print-config", false, "print the effective configuration (TOML) and exit")
	cmd.Flags().BoolVar(&check, "check", false, "load and check everything the server needs (config, keys, level, weapons, results and record paths), then exit: 0, or 2 naming each problem")
	serverFlags(cmd.Flags())
	return cmd
}

// checkServe is serve --check: the configuration's warnings are errors, then
// server.Check. It prints one line per problem on the log (so that a
// pod's log shows them as it shows the server's), or ok on stdout.
func checkServe(cfg server.Config, warnings []string, log zerolog.Logger, stdout io.Writer) error {
	var errs []error
	for _, w := range warnings {
		errs = append(errs, errors.New(strings.TrimSuffix(w, " (ignored)")))
	}
	errs = append(errs, server.Check(cfg, log))
	err := errors.Join(errs...)
	if err == nil {
		fmt.Fprintln(stdout, "serve --check: ok")
		return nil
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		log.Error().Msg(line)
	}
	return &exitError{code: 2}
}

// start starts srv. Start can wait for agones.ready_timeout (the Agones SDK
// server is retried until it answers): while it waits the log says so
// every startNotice, so that a server stuck there is not silent.
func start(srv *server.Server, log zerolog.Logger, readyTimeout time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- srv.Start() }()
	t := time.NewTicker(startNotice)
	defer t.Stop()
	begun := time.Now()
	for {
		select {
		case err := <-done:
			return err
		case <-t.C:
			log.Warn().Dur("waited", time.Since(begun).Round(time.Millisecond)).Dur("agones_ready_timeout", readyTimeout).
				Msg("still starting: the Agones SDK server has not answered yet")
		}
	}
}

// startNotice is how often start says it is still waiting.
const startNotice = 2 * time.Second

// shutdownBound is how long Shutdown may take after the drain: rooms finish
// their tick and write their results, connections close.
const shutdownBound = 10 * time.Second
