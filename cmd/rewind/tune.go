package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

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
}

func newTuneCmd(stdout, stderr io.Writer) *cobra.Command {
	var o tuneOptions
	cmd := &cobra.Command{
		Use:   "tune FILE...",
		Short: "Replay recorded matches under a sweep of lag-compensation settings and show the trade",
		Long: `Replay recorded matches (rewind serve --record, rewind demo --record) under every
setting of a sweep: lag-compensation windows, and weapons' max_rewind caps. The
world stays the recorded one; every shot is judged again. For each setting,
over all the matches:

  seen hits      (shot, target) pairs the shooters' screens showed: the shot
                 resolved at the view time its client claimed, however deep
  confirmed      of those, the ones the server registers under the setting
  server hits    the pairs it registers; unseen: no screen showed them
  disputed       server hits that dealt damage to a victim that, in its own
                 present at the server tick, was out of the shooter's line of
                 sight or reach, where the shot would not have hit it
  clamped        shots granted less view lag than claimed
  rewinds/tick, buckets/tick   what the setting costs the server

and the view lag players claimed. Prints a table; writes tune.csv,
viewlag.csv and three plots (confirmation, disputed, viewlag) into --out.
Each setting's window is also its max_unlag. docs/tuning.md explains it.`,
		Example: `  rewind tune rec/*.rwr
  rewind tune rec/*.rwr --windows 0-30/2 --out report --format svg
  rewind tune rec/*.rwr --windows 0,4,8,12 --max-rewind rifle=2,4,8 --weapon rifle`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTune(cmd.Context(), args, &o, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.windows, "windows", "0-30/2", "windows to judge under, ticks: a list of N and A-B/STEP")
	f.StringArrayVar(&o.maxRewind, "max-rewind", nil, "sweep a weapon's max_rewind_ticks too: WEAPON=A,B,C (0: no cap but the window; repeatable)")
	f.StringArrayVar(&o.weapons, "weapon", nil, "report only this weapon (repeatable; default: every weapon, and all together)")
	f.StringVar(&o.out, "out", "tune-report", "directory for tune.csv, viewlag.csv and the plots (empty: the table only)")
	f.StringVar(&o.format, "format", "png", "plot format: png or svg")
	f.StringVar(&o.progress, "progress", "auto", "progress bar on stderr: auto (on a terminal), on, off")
	f.IntVar(&o.workers, "workers", 0, "replays in parallel (0: one per core)")
	f.BoolVar(&o.perWeapon, "per-weapon", false, "a table line per weapon too (tune.csv always has them)")
	return cmd
}

func runTune(ctx context.Context, files []string, o *tuneOptions, stdout, stderr io.Writer) error {
	usage := func(format string, args ...any) error {
		return &exitError{code: 2, msg: "tune: " + fmt.Sprintf(format, args...)}
	}
	windows, err := parseWindows(o.windows)
	if err != nil {
		return usage("--windows: %v", err)
	}
	cfg := tune.Config{Windows: windows, Weapons: o.weapons, Workers: o.workers, MaxRewind: map[string][]float64{}}
	for _, s := range o.maxRewind {
		name, list, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return usage("--max-rewind %q: want WEAPON=A,B,C", s)
		}
		for _, v := range strings.Split(list, ",") {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return usage("--max-rewind %q: %q is not a number of ticks", s, v)
			}
			cfg.MaxRewind[name] = append(cfg.MaxRewind[name], f)
		}
	}
	if err := cfg.Validate(); err != nil {
		return usage("%v", err)
	}
	if o.format != "png" && o.format != "svg" {
		return usage("--format %q: png or svg", o.format)
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
		return &exitError{code: 1, msg: err.Error()}
	}
	if err := rep.WriteTable(stdout, o.perWeapon); err != nil {
		return &exitError{code: 1, msg: "tune: " + err.Error()}
	}
	fmt.Fprintf(stdout, "\n%d settings × %d recording(s) in %v\n", len(rep.Settings), len(files), time.Since(start).Round(time.Millisecond))
	if o.out == "" {
		return nil
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return &exitError{code: 1, msg: "tune: --out: " + err.Error()}
	}
	written := []string{}
	for name, write := range map[string]func(io.Writer) error{"tune.csv": rep.WriteCSV, "viewlag.csv": rep.WriteViewLagCSV} {
		path := filepath.Join(o.out, name)
		if err := writeOutput(path, write); err != nil {
			return &exitError{code: 1, msg: "tune: " + err.Error()}
		}
		written = append(written, path)
	}
	plots, err := rep.WritePlots(o.out, o.format)
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	fmt.Fprintf(stdout, "wrote %s\n", strings.Join(append(written, plots...), ", "))
	return nil
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

// parseWindows reads a list of windows: "0,2,4", "0-30/2", "5-8".
func parseWindows(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		span, stepS, hasStep := strings.Cut(part, "/")
		lo, hi, isRange := strings.Cut(span, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("%q is not a window or a range A-B/STEP", part)
		}
		if !isRange {
			if hasStep {
				return nil, fmt.Errorf("%q: a step needs a range A-B/STEP", part)
			}
			out = append(out, a)
			continue
		}
		b, err := strconv.Atoi(hi)
		step := 1
		if hasStep {
			step, err = strconv.Atoi(stepS)
		}
		if err != nil || step < 1 || b < a {
			return nil, fmt.Errorf("%q is not a range A-B/STEP with A ≤ B and STEP ≥ 1", part)
		}
		for w := a; w <= b; w += step {
			out = append(out, w)
		}
	}
	return out, nil
}
