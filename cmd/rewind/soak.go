package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/soak"
)

func newSoakCmd(stdout, stderr io.Writer) *cobra.Command {
	cfg := soak.DefaultConfig()
	var logLevel string
	var heapFloorMiB float64
	cmd := &cobra.Command{
		Use:   "soak",
		Short: "Run rooms of bots that come and go for a set time, and fail on growth or tick overruns",
		Long: `Start a server in this process (loopback, open development mode) and fill
--rooms rooms with --players bots each, over real QUIC. For --duration they
play while --churn bots a second leave, each replaced by a new bot in its
room. Every --interval a row: the time, the players in the rooms, joins and
leaves so far, goroutines, the live heap after a collection, the server's
tick overruns (rewind_tick_overruns_total), the moments the process was
starved for a CPU (it waited more than half a tick for one) and the inputs
the rooms applied per second.

The verdict fails (exit status 1) on any tick overrun that starvation does
not excuse (each starved moment excuses one overrun per room in its
interval: none on a machine with spare CPU); on goroutines grown
beyond --goroutine-slack or a live heap grown beyond --heap-ratio times its
baseline plus --heap-floor, from the first samples after --warmup to the
last; on inputs applied that did not grow between two samples, overall or in
a room; and on any bot that failed to join or that the server disconnected.`,
		Example: `  rewind soak                       # 8 rooms × 12 bots, 60 s, 2 bots replaced a second (CI's)
  rewind soak --duration 10m
  rewind soak --rooms 2 --players 4 --duration 20s --interval 2s --warmup 4s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Bounds.HeapFloor = uint64(heapFloorMiB * (1 << 20))
			if heapFloorMiB < 0 {
				return &exitError{code: 2, msg: fmt.Sprintf("soak: --heap-floor: %v is negative", heapFloorMiB)}
			}
			log, err := server.NewLogger(server.LogConfig{Level: logLevel, Format: "auto"}, stderr)
			if err != nil {
				return &exitError{code: 2, msg: "soak: --log-level: " + err.Error()}
			}
			cfg.Log = log
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runSoak(ctx, cfg, stdout)
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Rooms, "rooms", cfg.Rooms, "rooms")
	f.IntVar(&cfg.Players, "players", cfg.Players, "bots per room")
	f.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long the soak runs once the rooms are full (a whole number of intervals)")
	f.Float64Var(&cfg.Churn, "churn", cfg.Churn, "bots a second that leave, each replaced by a new one (0: none)")
	f.DurationVar(&cfg.Interval, "interval", cfg.Interval, "time between samples")
	f.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "samples before this are not baselines for the growth checks")
	f.IntVar(&cfg.Bounds.GoroutineSlack, "goroutine-slack", cfg.Bounds.GoroutineSlack, "goroutines the end may have over the first sample after the warm-up")
	f.Float64Var(&cfg.Bounds.HeapRatio, "heap-ratio", cfg.Bounds.HeapRatio, "the live heap at the end may be this many times the warm-up's…")
	f.Float64Var(&heapFloorMiB, "heap-floor", float64(cfg.Bounds.HeapFloor)/(1<<20), "…plus this many MiB")
	f.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the bots' choices")
	f.StringVar(&logLevel, "log-level", "error", "server log level")
	return cmd
}

// soakHeader is the sample table's header; soakRow formats a sample under
// it.
const soakHeader = "    time  players  joins  leaves  goroutines  heap MiB  overruns  starved  inputs applied/s"

func soakRow(s soak.Sample) string {
	row := fmt.Sprintf("%7.1fs  %7d  %5d  %6d  %10d  %8.1f  %8d  %7d  %16.0f", s.At.Seconds(), s.Players, s.Joins, s.Leaves,
		s.Goroutines, s.HeapMiB(), s.Overruns, s.Starved, s.AppliedRate)
	var notes []string
	if !s.Warm {
		notes = append(notes, "warm-up")
	}
	if len(s.Stalled) > 0 {
		notes = append(notes, "stalled: "+strings.Join(s.Stalled, ","))
	}
	if len(notes) > 0 {
		row += "  (" + strings.Join(notes, "; ") + ")"
	}
	return row
}

func runSoak(ctx context.Context, cfg soak.Config, stdout io.Writer) error {
	cfg.OnStart = func(st soak.Start) {
		fmt.Fprintf(stdout, "server %s, admin http://%s/metrics; %d bots joined in %v\n\n%s\n", st.Server, st.Admin, st.Joined,
			st.Fill.Round(time.Millisecond), soakHeader)
	}
	cfg.OnSample = func(s soak.Sample) { fmt.Fprintln(stdout, soakRow(s)) }
	s, err := soak.New(cfg)
	if err != nil {
		return &exitError{code: 2, msg: err.Error()}
	}
	fmt.Fprintf(stdout, "rewind soak: %d rooms × %d bots for %v, %g bots a second replaced, a sample every %v after a warm-up of %v\n",
		cfg.Rooms, cfg.Players, cfg.Duration, cfg.Churn, cfg.Interval, cfg.Warmup)
	rep, err := s.Run(ctx)
	if rep == nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	verr := soakVerdict(stdout, rep)
	if err != nil { // the soak ran, but its server did not shut down cleanly
		return &exitError{code: 1, msg: err.Error()}
	}
	return verr
}

// soakVerdict prints the soak's summary and verdict; a failed verdict is
// exit status 1.
func soakVerdict(stdout io.Writer, rep *soak.Report) error {
	fmt.Fprintf(stdout, "\n%s\n", rep.Summary())
	verdict := rep.Verdict()
	if verdict == nil {
		fmt.Fprintln(stdout, "verdict: PASS")
		return nil
	}
	fmt.Fprintln(stdout, "verdict: FAIL")
	for _, f := range soak.Failures(verdict) {
		fmt.Fprintf(stdout, "  - %s\n", f)
	}
	return &exitError{code: 1, msg: "soak: failed: " + strings.Join(soak.Failures(verdict), "; ")}
}
