package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/ticks"
)

type replayOptions struct {
	window     ticks.Span
	maxUnlag   ticks.Span
	resolution int
	bucketing  bool
	cellSize   float64
	maxRewind  []string
}

func newReplayCmd(stdout io.Writer) *cobra.Command {
	var o replayOptions
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Re-simulate a recorded match and check that every event comes out the same",
		Long: `Re-simulate a match recorded by rewind serve --record (or demo --record) with the
real simulation, and check every tick's events against the recording. A tick
whose events differ is an error naming it (the simulation is not the one that
recorded the match); a damaged or truncated file replays up to its last intact
record, and the error names the offset of the first bad one.

--bucketing and --cell-size change how lag compensation computes, not what
it decides: the replay is still checked. --window, --max-unlag, --resolution
and --max-rewind judge the match's shots again under those settings, beside
the match: the world stays the recorded one (every player where it was, alive
or dead as it was), and the summary says what the settings would have decided
differently. docs/replay.md.`,
		Example: `  rewind replay rec/demo-20261124T101530.123Z.rwr
  rewind replay rec/demo-20261124T101530.123Z.rwr --bucketing=false
  rewind replay rec/demo-20261124T101530.123Z.rwr --window 200ms --max-rewind rifle=100ms`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReplay(cmd, args[0], &o, stdout)
		},
	}
	f := cmd.Flags()
	f.Var(&o.window, "window", "judge the shots under this window, a duration such as 1s, rounded up to whole ticks; a bare number counts ticks (lagcomp.window)")
	f.Var(&o.maxUnlag, "max-unlag", "judge the shots under this max_unlag, a duration; a bare number counts ticks (0: the window)")
	f.IntVar(&o.resolution, "resolution", 0, "judge the shots with view times bucketed to 1/N tick (lagcomp.view_resolution)")
	f.StringArrayVar(&o.maxRewind, "max-rewind", nil, "judge the shots with WEAPON=DURATION as the weapon's max_rewind (a bare number counts ticks; repeatable)")
	f.BoolVar(&o.bucketing, "bucketing", true, "bucket shots by view time (results are the same either way: checked)")
	f.Float64Var(&o.cellSize, "cell-size", 0, "broadphase cell, metres (0: as recorded; results are the same: checked)")
	return cmd
}

func runReplay(cmd *cobra.Command, path string, o *replayOptions, stdout io.Writer) error {
	fail := func(format string, args ...any) error {
		return &exitError{code: 1, msg: "replay: " + fmt.Sprintf(format, args...)}
	}
	f, err := os.Open(path)
	if err != nil {
		return fail("%v", err)
	}
	defer f.Close()
	rd, err := replay.NewReader(f)
	if err != nil {
		return &exitError{code: 1, msg: path + ": " + err.Error()}
	}
	setup := rd.Setup()
	cfg := replay.Config{CellSize: o.cellSize}
	if cmd.Flags().Changed("bucketing") {
		cfg.Bucketing = &o.bucketing
	}
	changed := func(names ...string) bool {
		for _, n := range names {
			if cmd.Flags().Changed(n) {
				return true
			}
		}
		return false
	}
	if changed("window", "max-unlag", "resolution", "max-rewind") {
		lc := setup.LagComp.Config()
		if changed("window") {
			w, err := o.window.WholeTicks(setup.TickRate)
			if err != nil {
				return &exitError{code: 2, msg: "replay: --window: " + err.Error()}
			}
			lc.WindowTicks, lc.MaxUnlagTicks = w, min(lc.MaxUnlagTicks, float64(w))
		}
		if changed("max-unlag") {
			lc.MaxUnlagTicks = o.maxUnlag.Ticks(setup.TickRate)
		}
		if changed("resolution") {
			lc.ViewResolution = o.resolution
		}
		if err := lc.Validate(); err != nil {
			return &exitError{code: 2, msg: "replay: " + err.Error()}
		}
		caps, err := parseCaps(o.maxRewind, setup.TickRate)
		if err == nil {
			err = recordedWeapons(setup, caps)
		}
		if err != nil {
			return &exitError{code: 2, msg: "replay: --max-rewind: " + err.Error()}
		}
		name := fmt.Sprintf("window=%d max_unlag=%s resolution=%d", lc.WindowTicks, ticksString(lc.MaxUnlag()), lc.ViewResolution)
		for _, w := range slices.Sorted(maps.Keys(caps)) {
			name += fmt.Sprintf(" %s.max_rewind=%s", w, ticksString(caps[w]))
		}
		cfg.Variants = []replay.Variant{{Name: name, LagComp: lc, MaxRewind: caps}}
	}
	start := time.Now()
	res, err := replay.Run(rd, cfg)
	elapsed := time.Since(start)
	var de *replay.DivergenceError
	var re *replay.RecordError
	if err != nil && !errors.As(err, &de) && !errors.As(err, &re) {
		// Nothing was simulated: this build cannot make the recorded setup
		// a simulation (a weapon kind registered in code, say). A summary
		// of no ticks would read as a replay that failed its check.
		return &exitError{code: 1, msg: fmt.Sprintf("%s: %v", path, err)}
	}
	printReplay(stdout, path, &res, elapsed)
	if err != nil {
		if de != nil {
			return &exitError{code: 1, msg: fmt.Sprintf("%s: %v\n(the simulation is not the one that recorded the match: a different build, or a determinism bug)", path, err)}
		}
		return &exitError{code: 1, msg: fmt.Sprintf("%s: %v (the %d ticks before it replayed and matched)", path, err, res.Ticks)}
	}
	return nil
}

// printReplay writes what a replay did.
func printReplay(w io.Writer, path string, res *replay.Result, elapsed time.Duration) {
	s := &res.Setup
	fmt.Fprintf(w, "%s: room %q", path, s.Room)
	if s.Started != "" {
		fmt.Fprintf(w, ", started %s", s.Started)
	}
	if l := s.LevelRef; l != nil {
		fmt.Fprintf(w, ", level %s (%d triangles, digest %.12s)", l.Name, l.Triangles, l.Digest)
	}
	fmt.Fprintf(w, ", %d Hz, window %d ticks (%v)", s.TickRate, s.LagComp.WindowTicks, ticks.Duration(float64(s.LagComp.WindowTicks), s.TickRate))
	if s.LagComp.MaxUnlagTicks > 0 {
		fmt.Fprintf(w, ", max_unlag %s ticks (%v)", ticksString(s.LagComp.MaxUnlagTicks), ticks.Duration(s.LagComp.MaxUnlagTicks, s.TickRate))
	}
	if res.End != "" {
		fmt.Fprintf(w, ", ended: %s", res.End)
	}
	fmt.Fprintln(w)
	rate := float64(res.Ticks) / max(elapsed.Seconds(), 1e-9)
	verdict := "every event reproduced exactly"
	if !res.Verified {
		verdict = "NOT reproduced"
	}
	fmt.Fprintf(w, "replayed %d ticks (%.1f s of match) in %v: %.0f ticks/s, %.0f× real time; %s\n", res.Ticks,
		float64(res.Ticks)/float64(max(s.TickRate, 1)), elapsed.Round(time.Millisecond), rate, rate/float64(max(s.TickRate, 1)), verdict)
	if res.Incomplete {
		fmt.Fprintf(w, "the recording is incomplete: its writer fell behind at tick %d (%d ticks dropped)\n", res.FirstMissing, res.Dropped)
	}
	t := &res.Tally
	fmt.Fprintf(w, "  %d players, %d inputs; %d shot events, %d hits, %d kills, %d respawns, %d shots refused, %d clamped; %.2f rewinds and %.2f buckets per tick\n",
		res.Players, res.Inputs, t.Shots, t.Hits, t.Kills, t.Respawns, t.Rejected, t.Clamps, perTick(t.Rewinds, t.Ticks), perTick(t.Buckets, t.Ticks))
	for _, v := range res.Variants {
		fmt.Fprintf(w, "under %s: %d hits (recorded %d), %d kills (%d), %d clamped (%d); %.2f rewinds and %.2f buckets per tick\n",
			v.Name, v.Hits, t.Hits, v.Kills, t.Kills, v.Clamps, t.Clamps, perTick(v.Rewinds, v.Ticks), perTick(v.Buckets, v.Ticks))
		if v.Differ == 0 {
			fmt.Fprintf(w, "  every tick's events as recorded\n")
		} else {
			fmt.Fprintf(w, "  %d of %d ticks judged differently, the first at tick %d (the world stays the recorded one: kills are each tick's verdicts, not carried on)\n",
				v.Differ, v.Ticks, v.FirstDiffer)
		}
	}
}

func perTick(n, ticks int64) float64 { return float64(n) / float64(max(ticks, 1)) }

func ticksString(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// recordedWeapons checks that every weapon --max-rewind names is one of the
// recording's, before anything is replayed: a misspelt name is the user's
// mistake, and the error lists the names there are.
func recordedWeapons(setup replay.Setup, caps map[string]float64) error {
	names := make([]string, len(setup.Weapons))
	for i, d := range setup.Weapons {
		names[i] = d.Name
	}
	for name := range caps {
		if !slices.Contains(names, name) {
			return fmt.Errorf("no weapon %q in the recording (its weapons: %s)", name, strings.Join(names, ", "))
		}
	}
	return nil
}

// parseCaps reads WEAPON=DURATION pairs (a bare number counts ticks) into
// caps in ticks at rate.
func parseCaps(pairs []string, rate int) (map[string]float64, error) {
	out := map[string]float64{}
	for _, p := range pairs {
		name, v, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%q: want WEAPON=DURATION", p)
		}
		sp, err := ticks.Parse(v)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", p, err)
		}
		out[name] = sp.Ticks(rate)
	}
	return out, nil
}
