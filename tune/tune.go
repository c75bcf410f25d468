package tune

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/ticks"
	"github.com/rewind-gg/rewind/weapons"
)

// Config configures a sweep.
type Config struct {
	// Windows are the lag-compensation windows to judge under (each with
	// max_unlag = the window: the window bounds the rewind). A duration is
	// rounded up to whole ticks of each recording's tick rate, as a room
	// does; a bare number of ticks needs recordings of one tick rate.
	Windows []ticks.Span
	// MaxRewind sweeps weapons' max_rewind caps too: for each weapon
	// named, every value (0: no cap but the window) with every window.
	MaxRewind map[string][]ticks.Span
	// Weapons limits the weapon rows to these weapons (empty: every weapon).
	Weapons []string
	// Settle is the settling period: a player's first Settle after its
	// first input. Its view-lag claims are left out of the histogram, and
	// its shots are counted under "phase" "settling" (0: no settling period).
	Settle time.Duration
	// Kinds is the weapon-kind registry (nil: the built-in kinds).
	Kinds *weapons.Registry
	// Workers replay in parallel (0: GOMAXPROCS). A recording's settings
	// are split among them; each also replays the match and the "seen" and
	// "present" variants.
	Workers int
	// Progress, when set, is told the bytes of recordings read so far and
	// the total to read; it is called from the workers, one at a time.
	Progress func(read, total int64)
}

// Setting is one point of a sweep.
type Setting struct {
	Window ticks.Span
	// MaxRewind are the weapons' caps this setting changes, by weapon name.
	MaxRewind map[string]ticks.Span
	// Recorded judges under each recording's own lag compensation, as the
	// match had it (Window and MaxRewind unused): CountFile's setting.
	Recorded bool
}

// String names the setting: "window=500ms", "window=10 rifle.max_rewind=4".
func (s Setting) String() string {
	if s.Recorded {
		return "recorded"
	}
	b := strings.Builder{}
	fmt.Fprintf(&b, "window=%s", s.Window)
	for _, w := range slices.Sorted(maps.Keys(s.MaxRewind)) {
		fmt.Fprintf(&b, " %s.max_rewind=%s", w, s.MaxRewind[w])
	}
	return b.String()
}

// caps names the weapon caps of the setting alone: "" for none.
func (s Setting) caps() string {
	_, after, _ := strings.Cut(s.String(), " ")
	return after
}

// WindowTicks is the setting's window in ticks at a tick rate.
func (s Setting) WindowTicks(rate int) int {
	n, _ := s.Window.WholeTicks(rate)
	return n
}

// lagComp is the setting's lag compensation for a recording.
func (s Setting) lagComp(setup *replay.Setup) (lagcomp.Config, map[string]float64) {
	lc := setup.LagComp.Config()
	if s.Recorded {
		return lc, nil
	}
	lc.WindowTicks, lc.MaxUnlagTicks = s.WindowTicks(setup.TickRate), 0
	var caps map[string]float64
	for w, v := range s.MaxRewind {
		if caps == nil {
			caps = map[string]float64{}
		}
		caps[w] = v.Ticks(setup.TickRate)
	}
	return lc, caps
}

// Settings returns the sweep's settings: every window with every
// combination of the weapons' caps, windows varying fastest.
func (c *Config) Settings() []Setting {
	combos := []map[string]ticks.Span{{}}
	for _, w := range slices.Sorted(maps.Keys(c.MaxRewind)) {
		var next []map[string]ticks.Span
		for _, combo := range combos {
			for _, v := range c.MaxRewind[w] {
				m := maps.Clone(combo)
				m[w] = v
				next = append(next, m)
			}
		}
		combos = next
	}
	var out []Setting
	for _, combo := range combos {
		for _, w := range c.Windows {
			out = append(out, Setting{Window: w, MaxRewind: combo})
		}
	}
	return out
}

// Validate names the first bad option.
func (c *Config) Validate() error {
	if len(c.Windows) == 0 {
		return errors.New("windows: none")
	}
	for _, w := range c.Windows {
		if err := checkSpan(w); err != nil {
			return fmt.Errorf("windows: %w", err)
		}
	}
	for w, vs := range c.MaxRewind {
		if len(vs) == 0 {
			return fmt.Errorf("max-rewind %s: no values", w)
		}
		for _, v := range vs {
			if err := checkSpan(v); err != nil {
				return fmt.Errorf("max-rewind %s: %w", w, err)
			}
		}
	}
	if c.Settle < 0 {
		return fmt.Errorf("settle: %v is negative", c.Settle)
	}
	if n := len(c.Settings()); n > 1000 {
		return fmt.Errorf("%d settings: at most 1000 in one sweep", n)
	}
	return nil
}

// checkSpan checks a window or cap before the tick rates are known.
func checkSpan(s ticks.Span) error {
	if s.InTicks {
		if _, err := s.WholeTicks(1); err != nil || s.N > lagcomp.MaxWindowTicks {
			return fmt.Errorf("%s is not a whole number of ticks in 0..%d", s, lagcomp.MaxWindowTicks)
		}
	}
	if s.D < 0 || s.N < 0 {
		return fmt.Errorf("%s is negative", s)
	}
	return nil
}

// checkRates checks the settings against the recordings' tick rates:
// ticks need one rate, and a duration is at most lagcomp.MaxWindowTicks
// at each.
func (c *Config) checkRates(recs []Recording) error {
	rates := map[int][]string{}
	for _, r := range recs {
		rates[r.TickRate] = append(rates[r.TickRate], r.Path)
	}
	spans := slices.Clone(c.Windows)
	for _, vs := range c.MaxRewind {
		spans = append(spans, vs...)
	}
	if len(rates) > 1 {
		for _, s := range spans {
			if s.InTicks {
				var by []string
				for _, rate := range slices.Sorted(maps.Keys(rates)) {
					by = append(by, fmt.Sprintf("%d Hz: %s", rate, strings.Join(rates[rate], ", ")))
				}
				return OptionError{fmt.Errorf("tune: a window or cap of %s ticks, but the recordings' tick rates differ (%s): give durations, such as 0-1500ms/100ms",
					s, strings.Join(by, "; "))}
			}
		}
	}
	for rate := range rates {
		for _, s := range spans {
			if n, _ := s.WholeTicks(rate); n > lagcomp.MaxWindowTicks {
				return OptionError{fmt.Errorf("tune: %s is %d ticks at %d Hz: at most %d", s, n, rate, lagcomp.MaxWindowTicks)}
			}
		}
	}
	return nil
}

// Row is what one setting did, for every shot together or a group of them.
type Row struct {
	Setting Setting
	// By names the breakdown ("all", "weapon", "player", "view lag",
	// "phase", "recording"), Group the group in it ("all" for By "all").
	By, Group string
	Shots     int64 // shots the server fired and decided
	Decisions int64 // its decisions on them (ShotEvents: a miss, or one per target hit)
	// Seen are hits the shooters' screens showed: (shot, target) pairs.
	// Confirmed are those the server registered under the setting.
	Seen, Confirmed int64
	// Hits are the (shot, target) pairs the server registered under the
	// setting; Unseen those no shooter's screen showed; Damaging those
	// that dealt damage; Disputed those of them a victim could dispute.
	Hits, Unseen, Damaging, Disputed int64
	// Clamped counts the shots resolved with less view lag than claimed.
	Clamped int64
	// Ticks simulated, and the setting's lag compensation over them.
	Ticks, Rewinds, Buckets int64
	MaxBuckets              int

	setting int // the setting's index in the report
}

// Weapon is the row's weapon: "" for a row of every weapon.
func (r *Row) Weapon() string {
	if r.By == ByWeapon {
		return r.Group
	}
	return ""
}

// Breakdowns, Row.By.
const (
	ByAll       = "all"
	ByWeapon    = "weapon"
	ByPlayer    = "player" // the shooter
	ByViewLag   = "view lag"
	ByPhase     = "phase"
	ByRecording = "recording"
)

// Confirmation is the share of seen hits the server confirmed (NaN
// without any).
func (r *Row) Confirmation() float64 { return ratio(r.Confirmed, r.Seen) }

// DisputedShare is the share of damaging hits a victim could dispute.
func (r *Row) DisputedShare() float64 { return ratio(r.Disputed, r.Damaging) }

// RewindsPerTick and BucketsPerTick are the setting's cost.
func (r *Row) RewindsPerTick() float64 { return ratio(r.Rewinds, r.Ticks) }

// BucketsPerTick is the mean of distinct view times per tick.
func (r *Row) BucketsPerTick() float64 { return ratio(r.Buckets, r.Ticks) }

func ratio(a, b int64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// add sums o into r (the same setting and group, another match).
func (r *Row) add(o *Row) {
	r.Shots += o.Shots
	r.Decisions += o.Decisions
	r.Seen += o.Seen
	r.Confirmed += o.Confirmed
	r.Hits += o.Hits
	r.Unseen += o.Unseen
	r.Damaging += o.Damaging
	r.Disputed += o.Disputed
	r.Clamped += o.Clamped
	r.Ticks += o.Ticks
	r.Rewinds += o.Rewinds
	r.Buckets += o.Buckets
	r.MaxBuckets = max(r.MaxBuckets, o.MaxBuckets)
}

// Recording is one file of a sweep.
type Recording struct {
	Path     string
	TickRate int
	Window   int // the window it was recorded with, ticks
	Ticks    int64
	Players  int
}

// Report is a sweep's outcome over every recording.
type Report struct {
	Files      []string    // as given
	Recordings []Recording // the ones replayed, in the order given
	Rates      []int       // their tick rates, ascending
	Ticks      int64       // of all matches
	Players    int         // players spawned, over all matches
	// Rows are setting by setting, in Settings order; within a setting,
	// every shot together (By "all") first, then the breakdowns in the
	// order of Breakdowns, each group by name.
	Rows     []Row
	Settings []Setting
	// ViewLag is the view lag players claimed, once per input applied,
	// outside the settling period; Settling those within it.
	ViewLag, Settling Histogram
	// Disputed are the disputed hits of every setting, by setting, file
	// and tick.
	Disputed []Disputed
	// Skipped are recordings that could not be replayed, or not to their
	// end, and why; the report covers the ticks before the error.
	Skipped []string

	weapons []string       // Config.Weapons
	index   map[rowKey]int // while merging
}

// Breakdowns are the Row.By of the rows, in their order.
var Breakdowns = []string{ByAll, ByWeapon, ByPlayer, ByViewLag, ByPhase, ByRecording}

// Sweep replays every recording under every setting and sums the rows. A
// recording that cannot be read or replayed is skipped (Report.Skipped
// says why); an error when none can be, or when the options do not fit
// the recordings.
func Sweep(ctx context.Context, files []string, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return sweep(ctx, files, cfg, cfg.Settings())
}

func sweep(ctx context.Context, files []string, cfg Config, settings []Setting) (*Report, error) {
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	rep := &Report{Files: files, Settings: settings, weapons: cfg.Weapons}
	// Each recording's settings in chunks, one job each; a worker replays
	// the match with its chunk's variants (and "seen" and "present").
	chunks := min(workers, len(settings))
	type job struct {
		rec    int
		chunk  int
		chunks int
	}
	var jobs []job
	var total int64
	for _, f := range files {
		rec, size, err := check(f, &cfg)
		if errors.As(err, new(OptionError)) {
			return nil, err
		}
		if err != nil {
			rep.Skipped = append(rep.Skipped, err.Error())
			continue
		}
		rep.Recordings = append(rep.Recordings, rec)
		for c := range chunks {
			jobs = append(jobs, job{len(rep.Recordings) - 1, c, chunks})
			total += size
		}
	}
	if err := cfg.checkRates(rep.Recordings); err != nil {
		return nil, err
	}
	var mu sync.Mutex // rep, progress
	var read int64
	progress := func(n int64) {
		if cfg.Progress == nil {
			return
		}
		mu.Lock()
		read += n
		cfg.Progress(read, total)
		mu.Unlock()
	}
	replayed := make([]bool, len(rep.Recordings))
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				rec := &rep.Recordings[j.rec]
				lo, hi := j.chunk*len(settings)/j.chunks, (j.chunk+1)*len(settings)/j.chunks
				m, err := judgeFile(ctx, rec.Path, settings[lo:hi], &cfg, j.chunk == 0, progress)
				mu.Lock()
				if m != nil {
					rep.merge(m, j.rec, lo, j.chunk == 0)
					replayed[j.rec] = true
				}
				if err != nil && j.chunk == 0 && ctx.Err() == nil {
					rep.Skipped = append(rep.Skipped, err.Error())
				}
				mu.Unlock()
			}
		}()
	}
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !slices.Contains(replayed, true) {
		return nil, fmt.Errorf("tune: no recording could be replayed: %s", strings.Join(rep.Skipped, "; "))
	}
	for i := range rep.Recordings {
		if !replayed[i] {
			rep.Recordings[i].Path = "" // all its chunks failed: dropped below
		}
	}
	rep.Recordings = slices.DeleteFunc(rep.Recordings, func(r Recording) bool { return r.Path == "" })
	for _, r := range rep.Recordings {
		if !slices.Contains(rep.Rates, r.TickRate) {
			rep.Rates = append(rep.Rates, r.TickRate)
		}
	}
	slices.Sort(rep.Rates)
	rep.sortRows()
	sort.SliceStable(rep.Disputed, func(a, b int) bool {
		x, y := &rep.Disputed[a], &rep.Disputed[b]
		if x.setting != y.setting {
			return x.setting < y.setting
		}
		if x.rec != y.rec {
			return x.rec < y.rec
		}
		return x.Tick < y.Tick || x.Tick == y.Tick && (x.Shooter < y.Shooter || x.Shooter == y.Shooter && x.Shot < y.Shot)
	})
	return rep, nil
}

// merge adds recording rec's rows for settings from index lo on; the
// match-wide figures come with its first chunk.
func (rep *Report) merge(m *matchJudge, rec, lo int, first bool) {
	r := &rep.Recordings[rec]
	if first {
		rep.Ticks += m.ticks
		rep.Players += m.players
		rep.ViewLag.merge(&m.viewLag)
		rep.Settling.merge(&m.settling)
		r.Ticks, r.Players = m.ticks, m.players
	}
	if rep.index == nil {
		rep.index = map[rowKey]int{}
	}
	for i, rows := range m.rows() {
		for _, row := range rows {
			row.Setting, row.setting = rep.Settings[lo+i], lo+i
			rep.addRow(lo+i, row)
			if row.By == ByAll {
				row.By, row.Group = ByRecording, r.Path
				rep.addRow(lo+i, row)
			}
		}
	}
	for i, ds := range m.disputed {
		for _, d := range ds {
			d.File, d.setting, d.rec = r.Path, lo+i, rec
			d.Setting = rep.Settings[lo+i]
			d.TickRate = r.TickRate
			d.WindowTicks = m.windows[i]
			rep.Disputed = append(rep.Disputed, d)
		}
	}
}

func (rep *Report) addRow(setting int, r Row) {
	k := rowKey{setting, r.By, r.Group}
	if j, ok := rep.index[k]; ok {
		rep.Rows[j].add(&r)
		return
	}
	rep.index[k] = len(rep.Rows)
	rep.Rows = append(rep.Rows, r)
}

// rowKey is a row's setting (its index) and group.
type rowKey struct {
	setting   int
	by, group string
}

// sortRows orders the rows by setting, then breakdown and group, and keeps
// the weapon rows of the chosen weapons only.
func (rep *Report) sortRows() {
	key := make([]rowKey, len(rep.Rows))
	for k, i := range rep.index {
		key[i] = k
	}
	order := make([]int, len(rep.Rows))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ka, kb := key[order[a]], key[order[b]]
		if ka.setting != kb.setting {
			return ka.setting < kb.setting
		}
		if ba, bb := slices.Index(Breakdowns, ka.by), slices.Index(Breakdowns, kb.by); ba != bb {
			return ba < bb
		}
		if ka.by == ByRecording {
			return slices.Index(rep.Files, ka.group) < slices.Index(rep.Files, kb.group)
		}
		return ka.group < kb.group
	})
	rows := make([]Row, 0, len(rep.Rows))
	for _, i := range order {
		r := rep.Rows[i]
		if r.By == ByWeapon && len(rep.weapons) > 0 && !slices.Contains(rep.weapons, r.Group) {
			continue
		}
		rows = append(rows, r)
	}
	rep.Rows, rep.index = rows, nil
}

// judgeFile replays one recording with the variants of settings. A
// recording damaged after some ticks returns the judge of the intact part
// with the error.
func judgeFile(ctx context.Context, path string, settings []Setting, cfg *Config, first bool, progress func(int64)) (*matchJudge, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	cr := &countingReader{r: f, report: progress}
	rd, err := replay.NewReader(cr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer cr.flush()
	m := newMatchJudge(rd.Setup(), settings, first, cfg.Settle)
	rcfg := m.config(cfg.Kinds)
	rcfg.OnTick = func(t *replay.Tick) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		m.tick(t)
		return nil
	}
	res, err := replay.Run(rd, rcfg)
	m.finish(&res)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if m.ticks > 0 {
			return m, fmt.Errorf("%s: partly replayed (%d ticks): %w", path, m.ticks, err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// countingReader reports the bytes read, a few at a time.
type countingReader struct {
	r       io.Reader
	n       int64
	report  func(int64)
	pending int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.pending += int64(n)
	if c.pending >= 256<<10 {
		c.flush()
	}
	return n, err
}

func (c *countingReader) flush() {
	if c.pending > 0 {
		c.report(c.pending)
		c.pending = 0
	}
}

// OptionError is an option that does not fit the recordings (a weapon
// they lack, ticks over several tick rates), as opposed to a recording
// that cannot be read.
type OptionError struct{ error }

func (e OptionError) Unwrap() error { return e.error }

// check reads a recording's header, and that the weapons the sweep names
// are in it, before any replay starts.
func check(path string, cfg *Config) (Recording, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return Recording{}, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Recording{}, 0, err
	}
	rd, err := replay.NewReader(f)
	if err != nil {
		return Recording{}, 0, fmt.Errorf("%s: %w", path, err)
	}
	setup := rd.Setup()
	has := func(name string) bool {
		return slices.ContainsFunc(setup.Weapons, func(d weapons.Definition) bool { return d.Name == name })
	}
	for _, w := range slices.Sorted(maps.Keys(cfg.MaxRewind)) {
		if !has(w) {
			return Recording{}, 0, OptionError{fmt.Errorf("tune: %s: max-rewind: no weapon %q in the recording", path, w)}
		}
	}
	for _, w := range cfg.Weapons {
		if !has(w) {
			return Recording{}, 0, OptionError{fmt.Errorf("tune: %s: weapon: no weapon %q in the recording", path, w)}
		}
	}
	return Recording{Path: path, TickRate: setup.TickRate, Window: setup.LagComp.WindowTicks}, st.Size(), nil
}

// Expand returns the recordings named: a file as it is, a directory's
// *.rwr files (replay.Extension) by name.
func Expand(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			out = append(out, a) // a file, or one whose error the sweep reports
			continue
		}
		found, err := filepath.Glob(filepath.Join(a, "*"+replay.Extension))
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no %s recordings in the directory", a, replay.Extension)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}
