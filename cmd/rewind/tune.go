package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/rewind-gg/rewind/ticks"
	"github.com/rewind-gg/rewind/tune"
)

type tuneOptions struct {
	windows   string
	maxRewind []string
	weapons   []string
	out       string
	format    string
	progress  string
	workers   int
	perWeapon bool
	target    float64
	list      string
	at        string
	settle    time.Duration
	breakdown bool
}

func newTuneCmd(stdout, stderr io.Writer) *cobra.Command {
	var o tuneOptions
	cmd := &cobra.Command{
		Use:   "tune FILE|DIR...",
		Short: "Replay recorded matches under a sweep of lag-compensation settings, show the trade and recommend a window",
		Long: `Replay recorded matches (rewind serve --record, rewind demo --record; a
directory stands for its *.rwr files) under every setting of a sweep:
lag-compensation windows, and weapons' max_rewind caps. The world stays the
recorded one; every shot is judged again. For each setting, over all the
matches:

  shots          shots the server fired and decided
  seen hits      (shot, target) pairs the shooters' screens showed: the shot
                 resolved at the view time its client claimed, however deep
  confirmed      of those, the ones the server registers under the setting
  server hits    the pairs it registers; unseen: no screen showed them
  disputed       server hits that dealt damage to a victim that, in its own
                 present at the server tick, was out of the shooter's line of
                 sight or reach, where the shot would not have hit it
  clamped        shots granted less view lag than claimed
  rewinds/tick, buckets/tick   what the setting costs the server

and the view lag players claimed. Prints a table (windows in ms, their ticks
beside; * marks the recorded window) and a recommendation: the smallest window
that confirms --target of the hits seen, and what it costs in disputed hits
against its neighbours. Writes into --out: tune.csv (every setting by player,
view-lag band, phase, recording and weapon, with 95% Wilson intervals),
disputed.csv (every disputed hit of every setting), recommendation.txt,
viewlag.csv and four plots (confirmation, disputed, tradeoff, viewlag).

Windows are durations, each rounded up to whole ticks of each recording's
tick rate as a room does; bare numbers are ticks, refused when the recordings'
tick rates differ. Each setting's window is also its max_unlag.

A file that cannot be read, or only in part, is skipped with a warning (its
intact ticks count); the exit status is 0 when a report was made, 1 when no
recording could be replayed or the report could not be written, 2 for bad
options. docs/tuning.md explains it.`,
		Example: `  rewind tune rec/
  rewind tune rec/*.rwr --windows 0-1s/50ms --target 95 --out report --format svg
  rewind tune rec/ --list disputed                   # the disputed hits at the recorded window
  rewind tune rec/ --list disputed --at recommended
  rewind tune rec/*.rwr --windows 0,4,8,12 --max-rewind rifle=2,4,8 --weapon rifle`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTune(cmd.Context(), args, &o, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.windows, "windows", "0-2s/100ms", "windows to judge under: a list of W and A-B/STEP, durations (each recording's ticks) or bare ticks (one tick rate)")
	f.StringArrayVar(&o.maxRewind, "max-rewind", nil, "sweep a weapon's max_rewind too: WEAPON=A,B,C, durations or ticks (0: no cap but the window; repeatable)")
	f.StringArrayVar(&o.weapons, "weapon", nil, "report only this weapon's rows (repeatable; default: every weapon)")
	f.StringVar(&o.out, "out", "tune-report", "directory for the CSVs, recommendation.txt and the plots (empty: print only)")
	f.StringVar(&o.format, "format", "png", "plot format: png or svg")
	f.StringVar(&o.progress, "progress", "auto", "progress bar on stderr: auto (on a terminal), on, off")
	f.IntVar(&o.workers, "workers", 0, "replays in parallel (0: one per core)")
	f.BoolVar(&o.perWeapon, "per-weapon", false, "a table line per weapon too (tune.csv always has them)")
	f.Float64Var(&o.target, "target", 99, "the confirmation to recommend a window for, % of the hits shooters saw")
	f.StringVar(&o.list, "list", "", "print a list: disputed (the disputed hits of the --at setting)")
	f.StringVar(&o.at, "at", "recorded", "the setting --list and --breakdown show: recorded (each recording's own window), recommended, or a window of the sweep")
	f.DurationVar(&o.settle, "settle", 5*time.Second, "the settling period after each player's first input: its claims leave the view-lag histogram, its shots are phase \"settling\" (0: none)")
	f.BoolVar(&o.breakdown, "breakdown", false, "print the breakdowns (player, view-lag band, phase, recording, weapon) at the --at setting")
	return cmd
}

func runTune(ctx context.Context, args []string, o *tuneOptions, stdout, stderr io.Writer) error {
	usage := func(format string, args ...any) error {
		return &exitError{code: 2, msg: "tune: " + fmt.Sprintf(format, args...)}
	}
	windows, err := parseWindows(o.windows)
	if err != nil {
		return usage("--windows: %v", err)
	}
	cfg := tune.Config{Windows: windows, Weapons: o.weapons, Workers: o.workers, MaxRewind: map[string][]ticks.Span{}, Settle: o.settle}
	for _, s := range o.maxRewind {
		name, list, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return usage("--max-rewind %q: want WEAPON=A,B,C", s)
		}
		for _, v := range strings.Split(list, ",") {
			sp, err := ticks.Parse(v)
			if err != nil {
				return usage("--max-rewind %q: %v", s, err)
			}
			cfg.MaxRewind[name] = append(cfg.MaxRewind[name], sp)
		}
	}
	if err := cfg.Validate(); err != nil {
		return usage("%v", err)
	}
	if o.format != "png" && o.format != "svg" {
		return usage("--format %q: png or svg", o.format)
	}
	if !(o.target > 0 && o.target <= 100) {
		return usage("--target %v: a percentage in (0, 100]", o.target)
	}
	if o.list != "" && o.list != "disputed" {
		return usage("--list %q: disputed", o.list)
	}
	var at ticks.Span
	if o.at != "recorded" && o.at != "recommended" {
		if at, err = ticks.Parse(o.at); err != nil {
			return usage("--at: %v (or recorded, recommended)", err)
		}
	}
	files, err := tune.Expand(args)
	if err != nil {
		return usage("%v", err)
	}
	show := o.progress == "on"
	switch o.progress {
	case "auto":
		if f, ok := stderr.(*os.File); ok {
			show = isatty.IsTerminal(f.Fd())
		}
	case "on", "off":
	default:
		return usage("--progress %q: auto, on or off", o.progress)
	}
	var bar *progressbar.ProgressBar // the workers' calls are one at a time
	if show {
		cfg.Progress = func(read, total int64) {
			if bar == nil {
				// A share and the time left: the bytes go by once per
				// setting, at memory speed, which says nothing.
				bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(stderr),
					progressbar.OptionSetDescription(fmt.Sprintf("replaying %d recording(s) × %d settings", len(files), len(cfg.Settings()))),
					progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
			}
			bar.Set64(read)
		}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	rep, err := tune.Sweep(ctx, files, cfg)
	if bar != nil {
		bar.Finish() // the last update may have been throttled; then cleared
	}
	if err != nil {
		code := 1
		if errors.As(err, new(tune.OptionError)) {
			code = 2
		}
		return &exitError{code: code, msg: err.Error()}
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(stderr, "tune: warning: skipped: %s\n", s)
	}
	if err := rep.WriteTable(stdout, o.perWeapon); err != nil {
		return &exitError{code: 1, msg: "tune: " + err.Error()}
	}
	fmt.Fprintf(stdout, "\n%d settings × %d recording(s) in %v\n\n", len(rep.Settings), len(rep.Recordings), time.Since(start).Round(time.Millisecond))
	target := o.target / 100
	rep.WriteRecommendation(stdout, target)
	chosen, err := chooseSettings(rep, o.at, at, target)
	if (o.list != "" || o.breakdown) && err != nil {
		return &exitError{code: 1, msg: "tune: --at: " + err.Error()}
	}
	if o.breakdown {
		for _, s := range uniqueSettings(chosen) {
			fmt.Fprintln(stdout)
			rep.WriteBreakdown(stdout, s)
		}
	}
	if o.list == "disputed" {
		var hits []tune.Disputed
		for rec, s := range chosen {
			for _, d := range rep.DisputedAt(s) {
				if d.File == rec {
					hits = append(hits, d)
				}
			}
		}
		slices.SortStableFunc(hits, func(a, b tune.Disputed) int {
			return cmp.Or(cmp.Compare(slices.Index(files, a.File), slices.Index(files, b.File)), cmp.Compare(a.Tick, b.Tick))
		})
		fmt.Fprintf(stdout, "\n%d disputed hit(s) at the %s window:\n", len(hits), o.at)
		tune.WriteDisputedTable(stdout, hits)
	}
	if o.out == "" {
		return nil
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return &exitError{code: 1, msg: "tune: --out: " + err.Error()}
	}
	written := []string{}
	for _, w := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"tune.csv", rep.WriteCSV},
		{"disputed.csv", func(w io.Writer) error { return tune.WriteDisputedCSV(w, rep.Disputed) }},
		{"recommendation.txt", func(w io.Writer) error { return rep.WriteRecommendation(w, target) }},
		{"viewlag.csv", rep.WriteViewLagCSV},
	} {
		path := filepath.Join(o.out, w.name)
		if err := writeOutput(path, w.write); err != nil {
			return &exitError{code: 1, msg: "tune: " + err.Error()}
		}
		written = append(written, path)
	}
	plots, err := rep.WritePlots(o.out, o.format)
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	fmt.Fprintf(stdout, "\nwrote %s\n", strings.Join(append(written, plots...), ", "))
	return nil
}

// chooseSettings returns, by recording, the index of the setting --at
// names, among those without caps: the one at the recording's own window
// (recorded), the recommendation, or the window given.
func chooseSettings(rep *tune.Report, at string, window ticks.Span, target float64) (map[string]int, error) {
	out := map[string]int{}
	if at == "recommended" {
		for _, rec := range rep.Recommend(target) {
			if rec.Caps == "" && rec.Row != nil {
				for _, r := range rep.Recordings {
					out[r.Path] = rec.Setting
				}
				return out, nil
			}
		}
		return nil, fmt.Errorf("no window of the sweep without caps confirms the --target")
	}
	for _, r := range rep.Recordings {
		want, _ := window.WholeTicks(r.TickRate)
		if at == "recorded" {
			want = r.Window
		}
		i := slices.IndexFunc(rep.Settings, func(s tune.Setting) bool { return len(s.MaxRewind) == 0 && s.WindowTicks(r.TickRate) == want })
		if i < 0 {
			return nil, fmt.Errorf("%s: the window %s, %d ticks at %d Hz, is not in --windows", r.Path, at, want, r.TickRate)
		}
		out[r.Path] = i
	}
	return out, nil
}

func uniqueSettings(m map[string]int) []int {
	var out []int
	for _, s := range m {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// writeOutput creates path and writes it with write.
func writeOutput(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// parseWindows reads a list of windows: "0,2,4", "0-30/2", "0-2s/100ms",
// "250ms". In a range, a bare 0 goes with durations.
func parseWindows(s string) ([]ticks.Span, error) {
	var out []ticks.Span
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		span, stepS, hasStep := strings.Cut(part, "/")
		lo, hi, isRange := strings.Cut(span, "-")
		a, err := ticks.Parse(lo)
		if err != nil {
			return nil, fmt.Errorf("%q is not a window or a range A-B/STEP: %v", part, err)
		}
		if !isRange {
			if hasStep {
				return nil, fmt.Errorf("%q: a step needs a range A-B/STEP", part)
			}
			out = append(out, a)
			continue
		}
		b, err := ticks.Parse(hi)
		step := ticks.Span{N: 1, InTicks: true}
		if err == nil && hasStep {
			step, err = ticks.Parse(stepS)
		}
		if err != nil {
			return nil, fmt.Errorf("%q is not a range A-B/STEP: %v", part, err)
		}
		inTicks := a.InTicks && b.InTicks && step.InTicks
		if !inTicks { // durations: a bare 0 is 0 s
			for _, x := range []*ticks.Span{&a, &b, &step} {
				if x.InTicks && x.N == 0 {
					*x = ticks.Span{}
				}
			}
			if a.InTicks || b.InTicks || step.InTicks {
				return nil, fmt.Errorf("%q mixes ticks and durations", part)
			}
		}
		if inTicks {
			if step.N < 1 || b.N < a.N || step.N != math.Trunc(step.N) {
				return nil, fmt.Errorf("%q is not a range A-B/STEP with A ≤ B and STEP a whole tick or more", part)
			}
			for w := a.N; w <= b.N; w += step.N {
				out = append(out, ticks.Span{N: w, InTicks: true})
			}
			continue
		}
		if step.D <= 0 || b.D < a.D {
			return nil, fmt.Errorf("%q is not a range A-B/STEP with A ≤ B and STEP > 0", part)
		}
		if (b.D-a.D)/step.D > 1000 {
			return nil, fmt.Errorf("%q: more than 1000 windows", part)
		}
		for w := a.D; w <= b.D; w += step.D {
			out = append(out, ticks.Span{D: w})
		}
	}
	return out, nil
}
