package tune

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
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

// WriteTable writes the report as an aligned table: a line per setting,
// for every weapon together; with perWeapon, a line per weapon too (a
// report of chosen weapons has only those).
func (rep *Report) WriteTable(w io.Writer, perWeapon bool) error {
	fmt.Fprintf(w, "%d recording(s), %d ticks, %d players\n", len(rep.Files), rep.Ticks, rep.Players)
	if h := &rep.ViewLag; h.N > 0 {
		fmt.Fprintf(w, "view lag players claimed (%d inputs): p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms\n",
			h.N, h.Quantile(0.5), h.Quantile(0.9), h.Quantile(0.99), h.Max)
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(w, "partly replayed: %s\n", s)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "window\tcaps\tweapon\tshots\tseen hits\tconfirmed\tconfirmed %\tserver hits\tunseen\tdisputed\tdisputed %\tclamped\trewinds/tick\tbuckets/tick\t")
	for i := range rep.Rows {
		r := &rep.Rows[i]
		weapon := r.Weapon
		if weapon == "" {
			weapon = "all"
		} else if !perWeapon && rep.hasAll() {
			continue
		}
		caps := r.Setting.caps()
		if caps == "" {
			caps = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%s\t%d\t%.2f\t%.2f\t\n", r.Setting.Window, caps, weapon,
			r.Shots, r.Seen, r.Confirmed, percent(r.Confirmation()), r.Hits, r.Unseen, r.Disputed, percent(r.DisputedShare()),
			r.Clamped, r.RewindsPerTick(), r.BucketsPerTick())
	}
	return tw.Flush()
}

func percent(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return strconv.FormatFloat(100*f, 'f', 1, 64)
}

// hasAll reports whether the report has rows for every weapon together.
func (rep *Report) hasAll() bool {
	return len(rep.Rows) > 0 && rep.Rows[0].Weapon == ""
}

// CSVHeader is the first line of WriteCSV's output.
var CSVHeader = []string{"setting", "window", "caps", "weapon", "shots", "seen_hits", "confirmed", "confirmed_pct",
	"server_hits", "unseen_hits", "damaging_hits", "disputed", "disputed_pct", "clamped_shots", "ticks", "rewinds_per_tick",
	"buckets_per_tick", "max_buckets"}

// WriteCSV writes the rows as CSV, with a header line (CSVHeader);
// weapon "all" is every weapon together, and a percentage without a base
// is empty.
func (rep *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader)
	num := func(f float64) string {
		if math.IsNaN(f) {
			return ""
		}
		return strconv.FormatFloat(f, 'f', 4, 64)
	}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	for i := range rep.Rows {
		r := &rep.Rows[i]
		weapon := r.Weapon
		if weapon == "" {
			weapon = "all"
		}
		cw.Write([]string{r.Setting.String(), strconv.Itoa(r.Setting.Window), r.Setting.caps(), weapon, itoa(r.Shots),
			itoa(r.Seen), itoa(r.Confirmed), num(100 * r.Confirmation()), itoa(r.Hits), itoa(r.Unseen), itoa(r.Damaging),
			itoa(r.Disputed), num(100 * r.DisputedShare()), itoa(r.Clamped), itoa(r.Ticks), num(r.RewindsPerTick()),
			num(r.BucketsPerTick()), strconv.Itoa(r.MaxBuckets)})
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
