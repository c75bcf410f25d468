package tune

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/weapons"
)

// Config configures a sweep.
type Config struct {
	// Windows are the lag-compensation windows to judge under, in ticks
	// (each with max_unlag = the window: the window bounds the rewind).
	Windows []int
	// MaxRewind sweeps weapons' max_rewind_ticks too: for each weapon
	// named, every value (0: no cap but the window) with every window.
	MaxRewind map[string][]float64
	// Weapons limits the rows to these weapons (empty: every weapon, and
	// all of them together).
	Weapons []string
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
	Window int
	// MaxRewind are the weapons' caps this setting changes, by weapon name.
	MaxRewind map[string]float64
}

// String names the setting: "window=10", "window=10 rifle.max_rewind=4".
func (s Setting) String() string {
	b := strings.Builder{}
	fmt.Fprintf(&b, "window=%d", s.Window)
	for _, w := range slices.Sorted(maps.Keys(s.MaxRewind)) {
		fmt.Fprintf(&b, " %s.max_rewind=%s", w, strconv.FormatFloat(s.MaxRewind[w], 'f', -1, 64))
	}
	return b.String()
}

// caps names the weapon caps of the setting alone: "" for none.
func (s Setting) caps() string {
	_, after, _ := strings.Cut(s.String(), " ")
	return after
}

// Settings returns the sweep's settings: every window with every
// combination of the weapons' caps, windows varying fastest.
func (c *Config) Settings() []Setting {
	combos := []map[string]float64{{}}
	for _, w := range slices.Sorted(maps.Keys(c.MaxRewind)) {
		var next []map[string]float64
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
		if w < 0 || w > lagcomp.MaxWindowTicks {
			return fmt.Errorf("windows: %d is outside 0..%d", w, lagcomp.MaxWindowTicks)
		}
	}
	for w, vs := range c.MaxRewind {
		if len(vs) == 0 {
			return fmt.Errorf("max-rewind %s: no values", w)
		}
		for _, v := range vs {
			if !(v >= 0 && v <= lagcomp.MaxWindowTicks) {
				return fmt.Errorf("max-rewind %s: %v is outside 0..%d ticks", w, v, lagcomp.MaxWindowTicks)
			}
		}
	}
	if n := len(c.Settings()); n > 1000 {
		return fmt.Errorf("%d settings: at most 1000 in one sweep", n)
	}
	return nil
}

// Row is what one setting did, for one weapon or all of them.
type Row struct {
	Setting Setting
	Weapon  string // "" : every weapon
	Shots   int64  // shots fired
	// Seen are hits the shooters' screens showed: (shot, target) pairs.
	// Confirmed are those the server registered under the setting.
	Seen, Confirmed int64
	// Hits are the (shot, target) pairs the server registered under the
	// setting; Unseen those no shooter's screen showed; Damaging those
	// that dealt damage; Disputed those of them a victim could dispute.
	Hits, Unseen, Damaging, Disputed int64
	// Clamped counts shots resolved with less view lag than claimed.
	Clamped int64
	// Ticks simulated, and the setting's lag compensation over them.
	Ticks, Rewinds, Buckets int64
	MaxBuckets              int
}

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

// add sums o into r (the same setting and weapon, another match).
func (r *Row) add(o *Row) {
	r.Shots += o.Shots
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

// Report is a sweep's outcome over every recording.
type Report struct {
	Files   []string
	Ticks   int64 // of all matches
	Players int   // players spawned, over all matches
	// Rows are setting by setting, in Settings order; within a setting,
	// every weapon together ("") first, then each weapon by name.
	Rows     []Row
	Settings []Setting
	// ViewLag is the view lag players claimed, once per input applied.
	ViewLag Histogram
	// Skipped are recordings that could not be replayed to their end, and
	// why; the report covers the ticks before the error.
	Skipped []string

	index map[rowKey]int // while merging
}

// Sweep replays every recording under every setting and sums the rows.
func Sweep(ctx context.Context, files []string, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	settings := cfg.Settings()
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// Each recording's settings in chunks, one job each; a worker replays
	// the match with its chunk's variants (and "seen" and "present").
	chunks := min(workers, len(settings))
	type job struct {
		file   string
		chunk  int
		chunks int
	}
	var jobs []job
	var total int64
	for _, f := range files {
		st, err := check(f, &cfg)
		if err != nil {
			return nil, err
		}
		for c := range chunks {
			jobs = append(jobs, job{f, c, chunks})
			total += st.Size()
		}
	}
	rep := &Report{Files: files, Settings: settings}
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
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				lo, hi := j.chunk*len(settings)/j.chunks, (j.chunk+1)*len(settings)/j.chunks
				m, err := judgeFile(ctx, j.file, settings[lo:hi], &cfg, j.chunk == 0, progress)
				if m == nil {
					errs[i] = err
					continue
				}
				mu.Lock()
				rep.merge(m, lo, j.chunk == 0)
				if err != nil && j.chunk == 0 {
					rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: %v", j.file, err))
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
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	rep.sortRows(cfg.Weapons)
	return rep, nil
}

// merge adds one recording's rows for settings from index lo on; the
// match-wide figures come with its first chunk.
func (rep *Report) merge(m *matchJudge, lo int, first bool) {
	if first {
		rep.Ticks += m.ticks
		rep.Players += m.players
		rep.ViewLag.merge(&m.viewLag)
	}
	if rep.index == nil {
		rep.index = map[rowKey]int{}
	}
	for i, rows := range m.rows() {
		for _, r := range rows {
			r.Setting = rep.Settings[lo+i]
			k := rowKey{lo + i, r.Weapon}
			if j, ok := rep.index[k]; ok {
				rep.Rows[j].add(&r)
				continue
			}
			rep.index[k] = len(rep.Rows)
			rep.Rows = append(rep.Rows, r)
		}
	}
}

// rowKey is a row's setting (its index) and weapon.
type rowKey struct {
	setting int
	weapon  string
}

// sortRows orders the rows by setting, then "all" and the weapons by name,
// and keeps the chosen weapons only (with no "all" row then).
func (rep *Report) sortRows(only []string) {
	setting := map[int]int{} // row → setting index
	for k, i := range rep.index {
		setting[i] = k.setting
	}
	order := make([]int, len(rep.Rows))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		if sa, sb := setting[order[a]], setting[order[b]]; sa != sb {
			return sa < sb
		}
		return rep.Rows[order[a]].Weapon < rep.Rows[order[b]].Weapon
	})
	rows := make([]Row, 0, len(rep.Rows))
	for _, i := range order {
		if r := rep.Rows[i]; len(only) == 0 || slices.Contains(only, r.Weapon) {
			rows = append(rows, r)
		}
	}
	rep.Rows, rep.index = rows, nil
}

// judgeFile replays one recording with the variants of settings.
func judgeFile(ctx context.Context, path string, settings []Setting, cfg *Config, first bool, progress func(int64)) (*matchJudge, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	defer f.Close()
	cr := &countingReader{r: f, report: progress}
	rd, err := replay.NewReader(cr)
	if err != nil {
		return nil, fmt.Errorf("tune: %s: %w", path, err)
	}
	defer cr.flush()
	m := newMatchJudge(rd.Setup(), settings, first)
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
		var re *replay.RecordError
		if errors.As(err, &re) && m.ticks > 0 {
			return m, err // a damaged or truncated tail: the intact part counts
		}
		return nil, fmt.Errorf("tune: %s: %w", path, err)
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

// check reads a recording's header, and that the weapons the sweep names
// are in it, before any replay starts.
func check(path string, cfg *Config) (os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	rd, err := replay.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("tune: %s: %w", path, err)
	}
	has := func(name string) bool {
		return slices.ContainsFunc(rd.Setup().Weapons, func(d weapons.Definition) bool { return d.Name == name })
	}
	for _, w := range slices.Sorted(maps.Keys(cfg.MaxRewind)) {
		if !has(w) {
			return nil, fmt.Errorf("tune: %s: max-rewind: no weapon %q in the recording", path, w)
		}
	}
	for _, w := range cfg.Weapons {
		if !has(w) {
			return nil, fmt.Errorf("tune: %s: weapon: no weapon %q in the recording", path, w)
		}
	}
	return st, nil
}
