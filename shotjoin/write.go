package shotjoin

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Header is the CSV's first row.
var header = []string{"player", "shot", "seq", "tick", "view", "outcome", "cause", "ran", "decided", "late_ticks",
	"server_view", "server_span", "clamp", "claimed_lag", "seen", "marked", "hits", "trusted_hits", "blocked", "by_shield", "eye_offset_m", "target_offset_m"}

// WriteCSV writes rows, one per shot, after a header row. Lists of player
// ids are separated by spaces; an offset that could not be measured is
// empty.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	for i := range rows {
		r := &rows[i]
		seen := make([]uint32, len(r.Seen))
		for j, s := range r.Seen {
			seen[j] = s.ID
		}
		rec := []string{u(r.Player), u(r.Shot), u(r.Seq), i64(r.Tick), f(r.View, 4), r.Outcome.String(), r.Cause.String(),
			strconv.FormatBool(r.Ran), "", "", "", "", r.Clamp, "", ids(seen), ids(r.Marked), ids(r.Hits), ids(r.TrustedHits),
			strconv.FormatBool(r.Blocked), strconv.FormatBool(r.ByShield), f(r.EyeOffset, 4), f(r.TargetOffset, 4)}
		if r.Ran {
			rec[8], rec[9], rec[10], rec[11] = i64(r.Decided), i64(r.Decided-r.Tick), f(r.ServerView, 4), u(uint16(r.ServerSpan))
			if r.Clamp != "" {
				rec[13] = f(r.ClaimedLag, 4)
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func u[T uint16 | uint32](v T) string { return strconv.FormatUint(uint64(v), 10) }
func i64(v int64) string              { return strconv.FormatInt(v, 10) }

func f(v float64, prec int) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func ids(v []uint32) string {
	s := make([]string, len(v))
	for i, id := range v {
		s[i] = u(id)
	}
	return strings.Join(s, " ")
}

// Summary counts a join's shots by outcome, and its hits lost and false
// positives by cause.
type Summary struct {
	Shots    int
	Outcomes [len(outcomeNames)]int
	// Missed and FalsePositive count, by cause, the shots that lost a hit
	// seen and the shots with a hit on a target not seen (confirmed shots
	// with another target among them too).
	Missed, FalsePositive [len(causeNames)]int
}

// Summarize counts rows.
func Summarize(rows []Row) Summary {
	var s Summary
	for i := range rows {
		r := &rows[i]
		s.Shots++
		s.Outcomes[r.Outcome]++
		switch {
		case r.Outcome == Missed:
			s.Missed[r.Cause]++
		case r.Outcome != AfterDeath && r.Outcome != Shielded && len(r.FalsePositives()) > 0:
			s.FalsePositive[r.Cause]++
		}
	}
	return s
}

// String is the summary in a few lines, as the demo prints it.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d hitscan shots:", s.Shots)
	for o, n := range s.Outcomes {
		if n > 0 {
			fmt.Fprintf(&b, " %s %d", Outcome(o), n)
		}
	}
	for _, line := range []struct {
		what string
		by   [len(causeNames)]int
	}{{"hits lost, by cause:", s.Missed}, {"false positives, by cause:", s.FalsePositive}} {
		total := 0
		for _, n := range line.by {
			total += n
		}
		if total == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n  %s", line.what)
		for c, n := range line.by {
			if n > 0 {
				fmt.Fprintf(&b, " %s %d", Cause(c), n)
			}
		}
	}
	return b.String()
}
