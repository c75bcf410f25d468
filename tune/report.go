package tune

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rewind-gg/rewind/ticks"
)

// Histogram counts samples in 1 ms bins (view lags, in milliseconds).
type Histogram struct {
	Counts []int64 // Counts[i]: samples in [i, i+1) ms
	N      int64
	Sum    float64
	Max    float64
}

// maxHistogramMS bounds the bins: a claim beyond 60 s goes into the last.
const maxHistogramMS = 60_000

// Add counts one sample.
func (h *Histogram) Add(ms float64) {
	if !(ms >= 0) {
		ms = 0
	}
	i := min(int(ms), maxHistogramMS)
	for len(h.Counts) <= i {
		h.Counts = append(h.Counts, 0)
	}
	h.Counts[i]++
	h.N++
	h.Sum += ms
	h.Max = max(h.Max, ms)
}

func (h *Histogram) merge(o *Histogram) {
	for len(h.Counts) < len(o.Counts) {
		h.Counts = append(h.Counts, 0)
	}
	for i, n := range o.Counts {
		h.Counts[i] += n
	}
	h.N += o.N
	h.Sum += o.Sum
	h.Max = max(h.Max, o.Max)
}

// Quantile returns the q-quantile (0..1) to the millisecond: the lower
// edge of the bin it falls in. NaN without samples.
func (h *Histogram) Quantile(q float64) float64 {
	if h.N == 0 {
		return math.NaN()
	}
	rank := int64(math.Ceil(q * float64(h.N)))
	var seen int64
	for i, n := range h.Counts {
		if seen += n; seen >= max(rank, 1) {
			return float64(i)
		}
	}
	return float64(len(h.Counts) - 1)
}

// Mean returns the mean sample.
func (h *Histogram) Mean() float64 { return h.Sum / float64(h.N) }

// window is a setting's window for the report's recordings: its
// milliseconds (what the window is at the tick rate, when there is one;
// the duration asked for, when the rates differ) and its ticks ("10", or
// "10@20Hz 30@60Hz" for several rates).
func (rep *Report) window(s Setting) (ms float64, ticks string) {
	if s.Recorded {
		if len(rep.Recordings) == 1 {
			r := rep.Recordings[0]
			return ticksMS(r.Window, r.TickRate), strconv.Itoa(r.Window)
		}
		return math.NaN(), "recorded"
	}
	if len(rep.Rates) == 1 {
		n := s.WindowTicks(rep.Rates[0])
		return ticksMS(n, rep.Rates[0]), strconv.Itoa(n)
	}
	var parts []string
	for _, rate := range rep.Rates {
		parts = append(parts, fmt.Sprintf("%d@%dHz", s.WindowTicks(rate), rate))
	}
	return float64(s.Window.D) / float64(time.Millisecond), strings.Join(parts, " ")
}

// rates is the report's tick rates: "20", "20 60".
func (rep *Report) rates() string {
	var parts []string
	for _, r := range rep.Rates {
		parts = append(parts, strconv.Itoa(r))
	}
	return strings.Join(parts, " ")
}

// recordedMS is the window every recording was recorded with, in ms;
// NaN when they differ.
func (rep *Report) recordedMS() float64 {
	ms := math.NaN()
	for i, r := range rep.Recordings {
		w := ticksMS(r.Window, r.TickRate)
		if i > 0 && w != ms {
			return math.NaN()
		}
		ms = w
	}
	return ms
}

// windowLabel writes a window: "500 ms (10)".
func windowLabel(ms float64, ticks string) string {
	return fmt.Sprintf("%s ms (%s)", strconv.FormatFloat(ms, 'f', -1, 64), ticks)
}

// WriteTable writes the report as an aligned table: a line per setting,
// for every weapon together; with perWeapon, a line per weapon too. The
// window is in ms with its ticks beside it; "*" marks the window the
// recordings were recorded with.
func (rep *Report) WriteTable(w io.Writer, perWeapon bool) error {
	fmt.Fprintf(w, "%d recording(s) at %s Hz, %d ticks, %d players\n", len(rep.Recordings), rep.rates(), rep.Ticks, rep.Players)
	if h := &rep.ViewLag; h.N > 0 {
		fmt.Fprintf(w, "view lag players claimed (%d inputs): p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms\n",
			h.N, h.Quantile(0.5), h.Quantile(0.9), h.Quantile(0.99), h.Max)
	}
	if h := &rep.Settling; h.N > 0 {
		fmt.Fprintf(w, "left out: %d inputs in the settling period after each player's first (p50 %.0f ms, max %.0f ms)\n",
			h.N, h.Quantile(0.5), h.Max)
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(w, "skipped: %s\n", s)
	}
	fmt.Fprintln(w)
	recorded, marked := rep.recordedMS(), false
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "window ms\tticks\tcaps\tweapon\tshots\tseen hits\tconfirmed\tconfirmed %\tserver hits\tunseen\tdisputed\tdisputed %\tclamped\trewinds/tick\tbuckets/tick\t")
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if r.By != ByAll && !(perWeapon && r.By == ByWeapon) {
			continue
		}
		caps := r.Setting.caps()
		if caps == "" {
			caps = "-"
		}
		ms, ticks := rep.window(r.Setting)
		mark := ""
		if ms == recorded && !r.Setting.Recorded {
			mark, marked = "*", true
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%s\t%d\t%.2f\t%.2f\t\n", mark, strconv.FormatFloat(ms, 'f', -1, 64), ticks,
			caps, r.Group, r.Shots, r.Seen, r.Confirmed, percent(r.Confirmation()), r.Hits, r.Unseen, r.Disputed, percent(r.DisputedShare()),
			r.Clamped, r.RewindsPerTick(), r.BucketsPerTick())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if marked {
		fmt.Fprintf(w, "* the window the recordings were recorded with\n")
	}
	return nil
}

// WriteBreakdown writes the breakdowns of setting s: a line per group,
// with the counts and the 95% Wilson intervals of the two shares.
func (rep *Report) WriteBreakdown(w io.Writer, s int) error {
	ms, ticks := rep.window(rep.Settings[s])
	fmt.Fprintf(w, "breakdown at window %s%s (95%% Wilson intervals):\n", windowLabel(ms, ticks), capsSuffix(rep.Settings[s]))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "by\tgroup\tshots\tseen hits\tconfirmed\tconfirmed %\t95% CI\tdamaging\tdisputed\tdisputed %\t95% CI\tclamped\t")
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if r.setting != s || r.By == ByAll {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%d\t%d\t%s\t%s\t%d\t\n", r.By, r.Group, r.Shots, r.Seen, r.Confirmed,
			percent(r.Confirmation()), interval(r.Confirmed, r.Seen), r.Damaging, r.Disputed, percent(r.DisputedShare()),
			interval(r.Disputed, r.Damaging), r.Clamped)
	}
	return tw.Flush()
}

func capsSuffix(s Setting) string {
	if c := s.caps(); c != "" {
		return ", " + c
	}
	return ""
}

// interval writes the Wilson interval of k in n, in per cent: "98.5–100.0".
func interval(k, n int64) string {
	lo, hi := Wilson(k, n)
	if math.IsNaN(lo) {
		return "-"
	}
	return percent(lo) + "–" + percent(hi)
}

// Wilson returns the 95% Wilson score interval of a proportion of k in n
// (NaN, NaN without any): unlike k/n ± its normal error, it stays inside
// 0..1 and is honest for small n and for proportions near 0 or 1.
func Wilson(k, n int64) (lo, hi float64) {
	if n <= 0 {
		return math.NaN(), math.NaN()
	}
	const z = 1.959963984540054
	p, fn := float64(k)/float64(n), float64(n)
	d := 1 + z*z/fn
	c := (p + z*z/(2*fn)) / d
	h := z * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn)) / d
	return max(0, c-h), min(1, c+h)
}

func percent(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return strconv.FormatFloat(100*f, 'f', 1, 64)
}

// capWeapons are the weapons whose caps the sweep varies.
func (rep *Report) capWeapons() []string {
	set := map[string]bool{}
	for _, s := range rep.Settings {
		for w := range s.MaxRewind {
			set[w] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// spanMS is a cap in ms: a duration's, or ticks at the one tick rate.
func (rep *Report) spanMS(s ticks.Span) float64 {
	if s.InTicks && len(rep.Rates) == 1 {
		return s.N * 1000 / float64(rep.Rates[0])
	}
	return float64(s.D) / float64(time.Millisecond)
}

// CSVHeader is the first line of WriteCSV's output, the caps' columns
// (cap_WEAPON_ms, one per weapon whose cap is swept) after tick_rate.
var CSVHeader = []string{"window_ms", "window_ticks", "tick_rate", "by", "group", "shots", "shot_decisions", "seen_hits", "confirmed",
	"confirmed_pct", "confirmed_lo95", "confirmed_hi95", "server_hits", "unseen_hits", "damaging_hits", "disputed", "disputed_pct",
	"disputed_lo95", "disputed_hi95", "clamped_shots", "ticks", "rewinds_per_tick", "buckets_per_tick", "max_buckets"}

// WriteCSV writes every row as tidy CSV: one row per setting and group,
// with a header line (CSVHeader, a column per swept cap inserted after
// tick_rate). A recording's rows carry its own tick rate and ticks; a
// percentage without a base is empty.
func (rep *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	caps := rep.capWeapons()
	head := slices.Clone(CSVHeader[:3])
	for _, c := range caps {
		head = append(head, "cap_"+c+"_ms")
	}
	cw.Write(append(head, CSVHeader[3:]...))
	num := func(f float64) string {
		if math.IsNaN(f) {
			return ""
		}
		return strconv.FormatFloat(f, 'f', 4, 64)
	}
	pct := func(k, n int64) []string {
		lo, hi := Wilson(k, n)
		return []string{num(100 * ratio(k, n)), num(100 * lo), num(100 * hi)}
	}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	for i := range rep.Rows {
		r := &rep.Rows[i]
		ms, ticks := rep.window(r.Setting)
		rate := rep.rates()
		if r.By == ByRecording {
			if j := slices.IndexFunc(rep.Recordings, func(x Recording) bool { return x.Path == r.Group }); j >= 0 {
				rate = strconv.Itoa(rep.Recordings[j].TickRate)
				ticks = strconv.Itoa(r.Setting.WindowTicks(rep.Recordings[j].TickRate))
			}
		}
		rec := []string{num(ms), ticks, rate}
		for _, c := range caps {
			v, ok := r.Setting.MaxRewind[c]
			if !ok {
				rec = append(rec, "")
				continue
			}
			rec = append(rec, num(rep.spanMS(v)))
		}
		rec = append(rec, r.By, r.Group, itoa(r.Shots), itoa(r.Decisions), itoa(r.Seen), itoa(r.Confirmed))
		rec = append(rec, pct(r.Confirmed, r.Seen)...)
		rec = append(rec, itoa(r.Hits), itoa(r.Unseen), itoa(r.Damaging), itoa(r.Disputed))
		rec = append(rec, pct(r.Disputed, r.Damaging)...)
		rec = append(rec, itoa(r.Clamped), itoa(r.Ticks), num(r.RewindsPerTick()), num(r.BucketsPerTick()), strconv.Itoa(r.MaxBuckets))
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// WriteViewLagCSV writes the view-lag histogram as CSV: ms, the bin's
// lower edge, and the inputs in it (empty bins left out).
func (rep *Report) WriteViewLagCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"view_lag_ms", "inputs"})
	for i, n := range rep.ViewLag.Counts {
		if n > 0 {
			cw.Write([]string{strconv.Itoa(i), strconv.FormatInt(n, 10)})
		}
	}
	cw.Flush()
	return cw.Error()
}
