package main

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rewind-gg/rewind/bots"
	"github.com/rewind-gg/rewind/examples/levels"
	"github.com/rewind-gg/rewind/netshim"
	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/shotjoin"
	"github.com/rewind-gg/rewind/ticks"
	"github.com/rewind-gg/rewind/token"
	"github.com/rewind-gg/rewind/tune"
)

type demoConfig struct {
	networkConfig
	duration time.Duration
	bots     int
	tickRate int
	window   ticks.Span
	admin    string
	logLevel string
	record   string // a directory to record the match into
	shots    string // a CSV file to write every hitscan shot into, joined with the server's judgement
	fleet    fleetConfig
}

// networkConfig is the network the shims in front of the bots simulate:
// the demo's, and rewind bots' against a server on this machine.
type networkConfig struct {
	network        string   // a preset of the four below (networkPresets)
	overrides      []string // the flags of the four given on the command line
	rttMin, rttMax time.Duration
	jitter         time.Duration
	loss           float64
	shape          networkShape // the preset's shapes beyond the four
}

// networkPreset is the network the shims simulate, as the demo's flags say
// it: round trips spread from rttMin to rttMax over the bots, jitter and
// loss each way.
type networkPreset struct {
	rttMin, rttMax, jitter time.Duration
	loss                   float64
	shape                  networkShape
}

// networkShape is what a preset adds to the four flags' network: bursts of
// loss and spikes of delay each way, and a capped uplink.
type networkShape struct {
	burst       netshim.Burst
	spike       netshim.Spike
	uplink      int // bits per second, 0: no cap
	uplinkQueue int // packets
	summary     string
}

// networkPresets are the names --network takes. default is the flags' own
// defaults; mobile a congested mobile network, round trips near 800 ms.
//
// handover, thin and burst are the shapes a mobile network adds, as issue
// reports measured them: a handover's 2 s stall to a 700 ms round trip every
// 10 s on a 120 ms path; an uplink of 32 kbit/s with a 10-packet drop-tail
// queue; Gilbert–Elliott bursts of loss averaging 3.5% (bursts of 5
// packets).
var networkPresets = map[string]networkPreset{
	"default": {rttMin: 60 * time.Millisecond, rttMax: 200 * time.Millisecond, jitter: 10 * time.Millisecond, loss: 0.05},
	"mobile":  {rttMin: 750 * time.Millisecond, rttMax: 850 * time.Millisecond, jitter: 30 * time.Millisecond, loss: 0.10},
	"handover": {rttMin: 110 * time.Millisecond, rttMax: 130 * time.Millisecond, jitter: 10 * time.Millisecond, loss: 0.01,
		shape: networkShape{spike: netshim.Spike{Every: 10 * time.Second, For: 2 * time.Second, Extra: 290 * time.Millisecond},
			summary: "a 2 s spike to a 700 ms round trip every 10 s"}},
	"thin": {rttMin: 80 * time.Millisecond, rttMax: 120 * time.Millisecond, jitter: 10 * time.Millisecond, loss: 0.01,
		shape: networkShape{uplink: 32000, uplinkQueue: 10, summary: "uplink capped at 32 kbit/s, a 10-packet queue"}},
	"burst": {rttMin: 60 * time.Millisecond, rttMax: 200 * time.Millisecond, jitter: 10 * time.Millisecond,
		shape: networkShape{burst: netshim.Burst{Enter: 0.0073, Leave: 0.2, Loss: 1}, summary: "bursts of loss, 3.5% on average, 5 packets long"}},
}

// networkNames lists the presets, in the order the help and errors give them.
var networkNames = []string{"default", "mobile", "handover", "thin", "burst"}

// applyNetwork sets the network from the --network preset, except the
// values whose flags were given on the command line (changed reports those):
// they override the preset.
func (dc *networkConfig) applyNetwork(changed func(flag string) bool) error {
	p, ok := networkPresets[dc.network]
	if !ok {
		return fmt.Errorf("--network: unknown preset %q (valid: %s)", dc.network, strings.Join(networkNames, ", "))
	}
	dc.overrides, dc.shape = nil, p.shape
	for _, v := range []struct {
		flag   string
		preset func()
	}{
		{"rtt-min", func() { dc.rttMin = p.rttMin }},
		{"rtt-max", func() { dc.rttMax = p.rttMax }},
		{"jitter", func() { dc.jitter = p.jitter }},
		{"loss", func() { dc.loss = p.loss }},
	} {
		if changed(v.flag) {
			dc.overrides = append(dc.overrides, "--"+v.flag)
		} else {
			v.preset()
		}
	}
	return nil
}

func newDemoCmd(stdout, stderr io.Writer) *cobra.Command {
	var dc demoConfig
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Play a 6v6 match of bots over real QUIC through a simulated network, and report",
		Long: `Start a server and a match of bots in this process, on the sample map courtyard
(built into the binary: two floors, ramps, stairs, cover, a hurdle, a crawlway;
--level arena plays the built-in arena, --level FILE a glTF level). Every bot
connects over QUIC on loopback through its own network shim, which adds latency (the round
trips spread from --rtt-min to --rtt-max over the bots), jitter and loss in
each direction. One status line a second; at the end, a report per bot:
round trip, inputs sent and applied, prediction corrections, shots, hits the
shooter saw and hits the server confirmed by lag compensation, bandwidth;
then per target the hits seen on it, confirmed, and the server's hit events
on it that the shooter's screen did not show (false positives).

--network picks a preset of --rtt-min, --rtt-max, --jitter and --loss:
default (60–200 ms, 10 ms jitter, 5% loss) or mobile (750–850 ms, 30 ms
jitter, 10% loss); or a mobile network's shapes on top of them: handover
(110–130 ms, 1% loss, and a 2 s spike to a 700 ms round trip every 10 s),
thin (80–120 ms, 1% loss, an uplink of 32 kbit/s with a 10-packet queue) or
burst (60–200 ms, bursts of loss averaging 3.5%). The four flags, when given,
override the preset's four.`,
		Example: `  rewind demo
  rewind demo --network mobile
  rewind demo --network handover   # a mobile handover's stalls
  rewind demo --duration 1m --loss 0.1 --rtt-max 300ms
  rewind demo --window 0      # lag compensation off: watch confirmed hits drop
  rewind demo --level arena   # the built-in arena instead of the sample map
  rewind demo --level maps/yard.glb        # the server and the bots on a studio's level`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := dc.applyNetwork(cmd.Flags().Changed); err != nil {
				return &exitError{code: 2, msg: "demo: " + err.Error()}
			}
			if err := dc.validate(); err != nil {
				return &exitError{code: 2, msg: "demo: " + err.Error()}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runDemo(ctx, dc, stdout, stderr)
		},
	}
	dc.flags(cmd.Flags())
	return cmd
}

// flags declares the demo's flags. The network's four default to the
// default preset; applyNetwork settles them once the line is parsed.
// networkFlags are the flags of a networkConfig.
var networkFlags = []string{"network", "rtt-min", "rtt-max", "jitter", "loss"}

func (nc *networkConfig) flags(f *pflag.FlagSet) {
	def := networkPresets["default"]
	f.StringVar(&nc.network, "network", "default", "network preset: "+strings.Join(networkNames, ", ")+"; --rtt-min, --rtt-max, --jitter and --loss override it")
	f.DurationVar(&nc.rttMin, "rtt-min", def.rttMin, "the shortest round trip the shims add (overrides --network's)")
	f.DurationVar(&nc.rttMax, "rtt-max", def.rttMax, "the longest round trip the shims add (overrides --network's)")
	f.DurationVar(&nc.jitter, "jitter", def.jitter, "jitter each way (overrides --network's)")
	f.Float64Var(&nc.loss, "loss", def.loss, "packet loss each way, 0..1 (overrides --network's)")
}

func (nc *networkConfig) validate() error {
	switch {
	case nc.rttMin < 0 || nc.rttMax < nc.rttMin:
		return fmt.Errorf("--rtt-min %v and --rtt-max %v: need 0 ≤ min ≤ max", nc.rttMin, nc.rttMax)
	case nc.jitter < 0:
		return fmt.Errorf("--jitter: %v is negative", nc.jitter)
	case !(nc.loss >= 0 && nc.loss < 1):
		return fmt.Errorf("--loss: %v is outside [0, 1)", nc.loss)
	}
	return nil
}

// shim starts the network shim of bot i of n in front of target: half the
// bot's round trip each way (spread from rttMin to rttMax over the bots),
// jitter, loss and the preset's shapes; it returns the bot's round trip.
func (nc *networkConfig) shim(target string, i, n int, seed uint64) (*netshim.Shim, time.Duration, error) {
	rtt := nc.rttMin
	if n > 1 {
		rtt += (nc.rttMax - nc.rttMin) * time.Duration(i) / time.Duration(n-1)
	}
	way := netshim.Conditions{Latency: rtt / 2, Jitter: nc.jitter, Loss: nc.loss, Burst: nc.shape.burst, Spike: nc.shape.spike}
	up := way
	up.Rate, up.Queue = nc.shape.uplink, nc.shape.uplinkQueue
	sh, err := netshim.Start(netshim.Config{Listen: "127.0.0.1:0", Target: target, Up: up, Down: way, Seed: seed*1000 + uint64(i)})
	return sh, rtt, err
}

// describe is the network in words, for a report's first line.
func (nc *networkConfig) describe() string {
	network := nc.network
	if len(nc.overrides) > 0 {
		network += " but " + strings.Join(nc.overrides, ", ")
	}
	shape := ""
	if nc.shape.summary != "" {
		shape = "; " + nc.shape.summary
	}
	return fmt.Sprintf("network %s: round trips %v–%v, jitter %v, loss %.0f%% each way%s", network, nc.rttMin, nc.rttMax, nc.jitter, nc.loss*100, shape)
}

func (dc *demoConfig) flags(f *pflag.FlagSet) {
	dc.networkConfig.flags(f)
	f.DurationVar(&dc.duration, "duration", 30*time.Second, "how long the match lasts")
	f.IntVar(&dc.bots, "bots", 12, "how many bots (two teams)")
	f.IntVar(&dc.tickRate, "tick-rate", 20, "server ticks per second")
	dc.window = ticks.Span{D: server.DefaultWindow}
	f.Var(&dc.window, "window", "lag-compensation window, a duration such as 1s; a bare number counts ticks (0: lag compensation off)")
	f.StringVar(&dc.admin, "admin", "", "admin HTTP address for /metrics, /rooms and the live view /view/ (empty: none)")
	f.StringVar(&dc.record, "record", "", "record the match into this directory (then: rewind tune DIR/*.rwr, rewind view FILE)")
	f.StringVar(&dc.shots, "shots", "", "write every hitscan shot into this CSV file: what its bot saw, what the server decided, and the cause of each hit lost or false positive (docs/tuning.md)")
	f.StringVar(&dc.logLevel, "log-level", "warn", "server log level")
	dc.fleet.flags(f, []string{"assault", "breacher", "raptor"}, "seed of the bots' choices and the shims' losses", levels.Courtyard)
}

func (dc *demoConfig) validate() error {
	switch {
	case dc.duration <= 0:
		return fmt.Errorf("--duration: %v must be positive", dc.duration)
	case dc.bots < 1 || dc.bots > 255:
		return fmt.Errorf("--bots: %d is outside 1..255", dc.bots)
	}
	if _, err := dc.window.WholeTicks(dc.tickRate); err != nil {
		return fmt.Errorf("--window: %w", err)
	}
	return dc.networkConfig.validate()
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
	cfg.LagComp.Window, cfg.LagComp.WindowTicks = dc.window.D, 0
	if dc.window.InTicks {
		cfg.LagComp.Window, cfg.LagComp.WindowTicks = 0, int(dc.window.N)
	}
	cfg.MaxPlayers = max(cfg.MaxPlayers, dc.bots)
	// Every bot comes from 127.0.0.1 (through its shim), and they all dial
	// at once: the per-source caps must take them all. A redial after a
	// handshake timeout may spend a second join.
	cfg.Limits.HandshakesPerSource = max(cfg.Limits.HandshakesPerSource, dc.bots)
	cfg.Limits.PlayersPerSource = max(cfg.Limits.PlayersPerSource, dc.bots)
	cfg.Limits.JoinBurst = max(cfg.Limits.JoinBurst, 2*dc.bots)
	// The bots dial at once and wait for the slowest before they play; a
	// dial's round trips, lost packets and probe timeouts all scale with the
	// round trip. A dial is the QUIC handshake (one round trip; two when the
	// server answers with a Retry, past 64 handshakes in flight) and the
	// join (one more). quic-go sends a lost flight again after a probe
	// timeout of about three round trips, doubling with each loss in a row,
	// and gives a handshake up after 10 s (then connect dials again). 20
	// round trips cover two lost flights in a row on top of the dial's own;
	// the 15 s are the LAN budget, a redial included.
	dialTimeout := 15*time.Second + 20*dc.rttMax
	// Bots that joined early send no input until the last one has: the
	// input timeout runs from their join, so it gets the dial's time on top.
	cfg.InputTimeout += dialTimeout
	cfg.MaxDatagramRate = max(cfg.MaxDatagramRate, 5*dc.tickRate)
	cfg.Log = server.LogConfig{Level: dc.logLevel, Format: "auto"}
	// The match is always recorded: its counts (tune.CountFile) are the
	// ones rewind tune and view print. Without --record, into a directory
	// removed at the end.
	cfg.Record.Dir = dc.record
	if cfg.Record.Dir == "" {
		tmp, err := os.MkdirTemp("", "rewind-demo-")
		if err != nil {
			return &exitError{code: 1, msg: "demo: " + err.Error()}
		}
		defer os.RemoveAll(tmp)
		cfg.Record.Dir = tmp
	}
	cfg.Level = serverLevel(dc.fleet.level)
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
		// Not scaled with the round trip: by now the bots have left, and
		// the server closes its connections without waiting on the network
		// (past a fixed 300 ms closing period).
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
		sh, rtt, err := dc.shim(srv.Addr().String(), i, dc.bots, dc.fleet.seed)
		if err != nil {
			return &exitError{code: 1, msg: "demo: " + err.Error()}
		}
		shims = append(shims, sh)
		f.addBot(sh.Addr().String(), rtt)
		f.bots[i].tally.KeepShots = dc.shots != ""
	}
	fmt.Fprintf(stdout, "rewind demo: %d bots, %s, %s, %v\n", dc.bots, dc.describe(), cfg.DescribeWindow(), dc.duration)
	dc.fleet.room = "demo"
	dc.fleet.certSHA256 = srv.CertSHA256()
	dc.fleet.key = priv
	cctx, cancel := context.WithTimeout(ctx, dialTimeout)
	dialStart := time.Now()
	err = f.connect(cctx, dc.fleet, 0)
	cancel()
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("demo: connecting the bots (within %v): %v", dialTimeout, err)}
	}
	fmt.Fprintf(stdout, "%d bots joined in %v", dc.bots, time.Since(dialStart).Round(time.Millisecond))
	if n := f.redials.Load(); n > 0 {
		fmt.Fprintf(stdout, " (%d dials made again after a timeout)", n)
	}
	fmt.Fprintln(stdout)
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
		up.Overflowed += st.Up.Overflowed
		up.Bytes += st.Up.Bytes
		down.Packets += st.Down.Packets
		down.Dropped += st.Down.Dropped
		down.Overflowed += st.Down.Overflowed
		down.Bytes += st.Down.Bytes
	}
	perClient := func(d netshim.DirStats) float64 {
		return float64(d.Bytes) * 8 / 1000 / elapsed.Seconds() / float64(max(len(shims), 1))
	}
	fmt.Fprintf(stdout, "network shims: client→server %d packets (%.1f kbit/s per client), %d dropped (%d by a full queue); server→client %d packets (%.1f kbit/s per client), %d dropped (%d by a full queue)\n",
		up.Packets, perClient(up), up.Dropped, up.Overflowed, down.Packets, perClient(down), down.Dropped, down.Overflowed)
	if final.Recording != "" {
		// The room closes its recording as it ends; Shutdown waits for it.
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			return &exitError{code: 1, msg: "demo: " + err.Error()}
		}
		counts, err := tune.CountFile(ctx, final.Recording, nil)
		if err != nil {
			fmt.Fprintf(stdout, "match counts: %v\n", err)
		} else {
			fmt.Fprintf(stdout, "match counts (as rewind tune and view count them, docs/tuning.md): %s\n", counts)
		}
		if dc.shots != "" {
			if err := writeShots(ctx, dc.shots, final.Recording, f, stdout); err != nil {
				return &exitError{code: 1, msg: "demo: --shots: " + err.Error()}
			}
		}
		if dc.record != "" {
			fmt.Fprintf(stdout, "recorded: %s\n  rewind replay %s\n  rewind tune %s\n  rewind view %s\n",
				final.Recording, final.Recording, final.Recording, final.Recording)
		}
	}
	return nil
}

// writeShots joins the fleet's shots with the recording's judgement of
// them, writes them to path (CSV) and prints their summary.
func writeShots(ctx context.Context, path, recording string, f *fleet, stdout io.Writer) error {
	var shots []bots.ShotRecord
	for _, b := range f.bots {
		shots = append(shots, b.tally.Shots()...)
	}
	rows, err := shotjoin.Join(ctx, recording, shots, shotjoin.Config{})
	if err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := shotjoin.WriteCSV(out, rows); err != nil {
		out.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "shots joined with the server's judgement (%s): %s\n", path, shotjoin.Summarize(rows))
	return nil
}
