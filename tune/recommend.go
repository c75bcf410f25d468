package tune

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Recommendation is, for one combination of caps, the smallest window of
// the sweep that confirms at least a target share of the hits shooters
// saw, with its neighbours in the sweep: what a step narrower loses, and
// what a step wider costs.
type Recommendation struct {
	Target float64 // the share asked for, 0..1
	Caps   string  // the caps' setting, "" for none
	// Row is the recommended window's (every weapon together); nil when no
	// window of the sweep reaches the target, and Widest is the widest.
	Row, Widest  *Row
	Below, Above *Row // the windows beside it in the sweep, nil at its ends
	// Setting is Row's index in Report.Settings (−1: none).
	Setting int
}

// Recommend returns a recommendation per combination of caps, in the
// order of the settings.
func (rep *Report) Recommend(target float64) []Recommendation {
	var out []Recommendation
	order, byCaps := rep.byCaps()
	for _, c := range order {
		rows := byCaps[c]
		rec := Recommendation{Target: target, Caps: c, Setting: -1}
		for i, r := range rows {
			if r.Seen > 0 && r.Confirmation() >= target {
				rec.Row, rec.Setting = r, r.setting
				if i > 0 {
					rec.Below = rows[i-1]
				}
				if i+1 < len(rows) {
					rec.Above = rows[i+1]
				}
				break
			}
		}
		if rec.Row == nil && len(rows) > 0 {
			rec.Widest = rows[len(rows)-1]
		}
		out = append(out, rec)
	}
	return out
}

// byCaps returns the rows of every shot together by caps, each list in
// the order of its windows' ms; and the caps in the order of the settings.
func (rep *Report) byCaps() ([]string, map[string][]*Row) {
	byCaps := map[string][]*Row{}
	var order []string
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if r.By != ByAll || r.Setting.Recorded {
			continue
		}
		c := r.Setting.caps()
		if _, ok := byCaps[c]; !ok {
			order = append(order, c)
		}
		byCaps[c] = append(byCaps[c], r)
	}
	for _, rows := range byCaps {
		slices.SortStableFunc(rows, func(a, b *Row) int {
			ma, _ := rep.window(a.Setting)
			mb, _ := rep.window(b.Setting)
			return cmp.Compare(ma, mb)
		})
	}
	return order, byCaps
}

// WriteRecommendation writes the recommendations in words.
func (rep *Report) WriteRecommendation(w io.Writer, target float64) error {
	for _, rec := range rep.Recommend(target) {
		caps := ""
		if rec.Caps != "" {
			caps = " with " + rec.Caps
		}
		if rec.Row == nil {
			if rec.Widest == nil {
				continue
			}
			_, err := fmt.Fprintf(w, "recommendation%s: no window of the sweep confirms %s%% of the hits shooters saw; the widest, %s, confirms %s\n",
				caps, percent(target), rep.label(rec.Widest), confirmedText(rec.Widest))
			if err != nil {
				return err
			}
			continue
		}
		r := rec.Row
		fmt.Fprintf(w, "recommendation%s: window %s, the smallest that confirms at least %s%% of the hits shooters saw:\n", caps, rep.label(r), percent(target))
		fmt.Fprintf(w, "  it confirms %s; %s\n", confirmedText(r), disputedText(r))
		for _, n := range []struct {
			name string
			row  *Row
		}{{"a step narrower", rec.Below}, {"a step wider", rec.Above}} {
			if n.row == nil {
				continue
			}
			fmt.Fprintf(w, "  %s, %s: %s; %s (%+d disputed, %+d confirmed against %s)\n", n.name, rep.label(n.row), confirmedText(n.row),
				disputedText(n.row), n.row.Disputed-r.Disputed, n.row.Confirmed-r.Confirmed, rep.label(r))
		}
	}
	return nil
}

// label is a row's window: "500 ms (10 ticks)".
func (rep *Report) label(r *Row) string {
	ms, ticks := rep.window(r.Setting)
	unit := " ticks"
	if _, err := strconv.Atoi(ticks); err != nil {
		unit = ""
	}
	return fmt.Sprintf("%s ms (%s%s)", strconv.FormatFloat(ms, 'f', -1, 64), ticks, unit)
}

func confirmedText(r *Row) string {
	return fmt.Sprintf("%d of %d seen hits (%s%%, 95%% CI %s)", r.Confirmed, r.Seen, percent(r.Confirmation()), interval(r.Confirmed, r.Seen))
}

func disputedText(r *Row) string {
	return fmt.Sprintf("%d disputed of %d damaging hits (%s%%, 95%% CI %s)", r.Disputed, r.Damaging, percent(r.DisputedShare()),
		interval(r.Disputed, r.Damaging))
}
