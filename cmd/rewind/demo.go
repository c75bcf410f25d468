package main

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rewind-gg/rewind/netshim"
	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/token"
)

type demoConfig struct {
	duration       time.Duration
	bots           int
	rttMin, rttMax time.Duration
	jitter         time.Duration
	loss           float64
	tickRate       int
	window         int
	admin          string
	logLevel       string
	fleet          fleetConfig
}

func newDemoCmd(stdout, stderr io.Writer) *cobra.Command {
	var dc demoConfig
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Play a 6v6 match of bots over real QUIC through a simulated network, and report",
		Long: `Start a server and a match of bots in this process. Every bot connects over
QUIC on loopback through its own network shim, which adds latency (the round
trips spread from --rtt-min to --rtt-max over the bots), jitter and loss in
each direction. One status line a second; at the end, a report per bot:
round trip, inputs sent and applied, prediction corrections, shots, hits the
shooter saw and hits the server confirmed by lag compensation, bandwidth.`,
		Example: `  rewind demo
  rewind demo --duration 1m --loss 0.1 --rtt-max 300ms
  rewind demo --window 0      # lag compensation off: watch confirmed hits drop`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := dc.validate(); err != nil {
				return &exitError{code: 2, msg: "demo: " + err.Error()}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runDemo(ctx, dc, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&dc.duration, "duration", 30*time.Second, "how long the match lasts")
	f.IntVar(&dc.bots, "bots", 12, "how many bots (two teams)")
	f.DurationVar(&dc.rttMin, "rtt-min", 60*time.Millisecond, "the shortest round trip the shims add")
	f.DurationVar(&dc.rttMax, "rtt-max", 200*time.Millisecond, "the longest round trip the shims add")
	f.DurationVar(&dc.jitter, "jitter", 10*time.Millisecond, "jitter each way")
	f.Float64Var(&dc.loss, "loss", 0.05, "packet loss each way, 0..1")
	f.IntVar(&dc.tickRate, "tick-rate", 20, "server ticks per second")
	f.IntVar(&dc.window, "window", 30, "lag-compensation window, ticks (0: lag compensation off)")
	f.StringVar(&dc.admin, "admin", "", "admin HTTP address for /metrics and /debug/pprof (empty: none)")
	f.StringVar(&dc.logLevel, "log-level", "warn", "server log level")
	dc.fleet.flags(f, []string{"assault", "breacher"}, "seed of the bots' choices and the shims' losses")
	return cmd
}

func (dc *demoConfig) validate() error {
	switch {
	case dc.duration <= 0:
		return fmt.Errorf("--duration: %v must be positive", dc.duration)
	case dc.bots < 1 || dc.bots > 255:
		return fmt.Errorf("--bots: %d is outside 1..255", dc.bots)
	case dc.rttMin < 0 || dc.rttMax < dc.rttMin:
		return fmt.Errorf("--rtt-min %v and --rtt-max %v: need 0 ≤ min ≤ max", dc.rttMin, dc.rttMax)
	case dc.jitter < 0:
		return fmt.Errorf("--jitter: %v is negative", dc.jitter)
	case !(dc.loss >= 0 && dc.loss < 1):
		return fmt.Errorf("--loss: %v is outside [0, 1)", dc.loss)
	}
	return nil
}

func runDemo(ctx context.Context, dc demoConfig, stdout, stderr io.Writer) error {
	// The demo is its own matchmaker: a key pair of its own, a token for
	// every bot.
	pub, priv, err := token.GenerateKey(nil)
	if err != nil {
		return &exitError{code: 1, msg: "demo: " + err.Error()}
	}
	cfg := server.DefaultConfig()
	cfg.Auth.Keys = []ed25519.PublicKey{pub}
	cfg.Listen = "127.0.0.1:0"
	cfg.Admin.Listen = dc.admin
	cfg.TickRate, cfg.SnapshotRate = dc.tickRate, dc.tickRate
	cfg.LagComp.WindowTicks = dc.window
	cfg.MaxPlayers = max(cfg.MaxPlayers, dc.bots)
	cfg.MaxDatagramRate = max(cfg.MaxDatagramRate, 5*dc.tickRate)
	cfg.Log = server.LogConfig{Level: dc.logLevel, Format: "auto"}
	if err := cfg.Validate(); err != nil {
		return &exitError{code: 2, msg: "demo: " + err.Error()}
	}
	log, err := server.NewLogger(cfg.Log, stderr)
	if err != nil {
		return &exitError{code: 2, msg: "demo: " + err.Error()}
	}
	srv, err := server.New(cfg, log)
	if err != nil {
		return &exitError{code: 2, msg: "demo: " + err.Error()}
	}
	if err := srv.Start(); err != nil {
		return &exitError{code: 1, msg: "demo: " + err.Error()}
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	f := &fleet{}
	var shims []*netshim.Shim
	defer func() {
		for _, s := range shims {
			s.Close()
		}
	}()
	for i := range dc.bots {
		rtt := dc.rttMin
		if dc.bots > 1 {
			rtt += (dc.rttMax - dc.rttMin) * time.Duration(i) / time.Duration(dc.bots-1)
		}
		way := netshim.Conditions{Latency: rtt / 2, Jitter: dc.jitter, Loss: dc.loss}
		sh, err := netshim.Start(netshim.Config{Listen: "127.0.0.1:0", Target: srv.Addr().String(), Up: way, Down: way, Seed: dc.fleet.seed*1000 + uint64(i)})
		if err != nil {
			return &exitError{code: 1, msg: "demo: " + err.Error()}
		}
		shims = append(shims, sh)
		f.addBot(sh.Addr().String(), rtt)
	}
	fmt.Fprintf(stdout, "rewind demo: %d bots, round trips %v–%v, jitter %v, loss %.0f%% each way, window %d ticks, %v\n",
		dc.bots, dc.rttMin, dc.rttMax, dc.jitter, dc.loss*100, dc.window, dc.duration)
	dc.fleet.room = "demo"
	dc.fleet.certSHA256 = srv.CertSHA256()
	dc.fleet.key = priv
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	err = f.connect(cctx, dc.fleet)
	cancel()
	if err != nil {
		return &exitError{code: 1, msg: "demo: " + err.Error()}
	}
	mctx, stopMatch := context.WithTimeout(ctx, dc.duration)
	defer stopMatch()
	start := time.Now()
	f.holdFireBefore(mctx, dc.rttMax+time.Second)
	f.run(mctx)
	roomStats := func() (server.RoomStats, bool) {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		st, err := srv.Stats(sctx)
		if err != nil || len(st) == 0 {
			return server.RoomStats{}, false
		}
		return st[0], true
	}
	var last server.RoomStats
	f.statusLoop(mctx, stdout, func() (int64, int, int64) {
		if rs, ok := roomStats(); ok {
			last = rs
		}
		return last.Tick, len(last.Players), last.Rewinds
	})
	// The server's view of the bots, before they leave.
	final, _ := roomStats()
	f.wait()
	elapsed := time.Since(start)
	players := map[uint32]server.PlayerStats{}
	for _, p := range final.Players {
		players[p.ID] = p
	}
	fmt.Fprintf(stdout, "\nmatch over after %v: %d ticks, %.2f rewinds per tick (buckets per tick ≤ players), last tick took %v, %d overruns\n\n",
		elapsed.Round(time.Millisecond), final.Tick, float64(final.Rewinds)/float64(max(final.Tick, 1)), final.TickTime, final.Overruns)
	f.report(stdout, elapsed, players)
	var up, down netshim.DirStats
	for _, s := range shims {
		st := s.Stats()
		up.Packets += st.Up.Packets
		up.Dropped += st.Up.Dropped
		down.Packets += st.Down.Packets
		down.Dropped += st.Down.Dropped
	}
	fmt.Fprintf(stdout, "network shims: client→server %d packets, %d dropped; server→client %d packets, %d dropped\n",
		up.Packets, up.Dropped, down.Packets, down.Dropped)
	return nil
}
