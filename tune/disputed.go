package tune

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/weapons"
)

// Disputed is a disputed hit: a hit the server registered under a setting
// that dealt damage to a victim out of the shooter's sight or reach in
// the victim's own present, and that the shot would not have hit there.
type Disputed struct {
	File        string
	Setting     Setting
	TickRate    int
	WindowTicks int    // the setting's window at the recording's tick rate
	Tick        int64  // the server tick of the hit
	Shot        uint32 // the client's label
	Shooter     string
	Victim      string
	// ShooterID and VictimID are the players' wire ids (replay.EntityID.WireID).
	ShooterID, VictimID uint32
	Weapon              string
	ViewLagMS           float64   // how far the server rewound for the shot
	Present             geom.Vec3 // the victim's feet at the server tick

	setting, rec int // indices in the report
}

// WindowMS is the hit's window in milliseconds.
func (d *Disputed) WindowMS() float64 { return ticksMS(d.WindowTicks, d.TickRate) }

func ticksMS(n, rate int) float64 { return float64(n) * 1000 / float64(rate) }

// DisputedAt returns the disputed hits of the setting with index s.
func (rep *Report) DisputedAt(s int) []Disputed {
	var out []Disputed
	for _, d := range rep.Disputed {
		if d.setting == s {
			out = append(out, d)
		}
	}
	return out
}

// DisputedHeader is the first line of WriteDisputedCSV's output.
var DisputedHeader = []string{"recording", "tick", "shot", "shooter", "victim", "weapon", "window_ms", "window_ticks", "tick_rate",
	"caps", "view_lag_ms", "victim_x", "victim_y", "victim_z"}

// WriteDisputedCSV writes disputed hits as CSV, with a header line
// (DisputedHeader).
func WriteDisputedCSV(w io.Writer, hits []Disputed) error {
	cw := csv.NewWriter(w)
	cw.Write(DisputedHeader)
	f := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	for _, d := range hits {
		cw.Write([]string{d.File, strconv.FormatInt(d.Tick, 10), strconv.FormatUint(uint64(d.Shot), 10), d.Shooter, d.Victim, d.Weapon,
			f(d.WindowMS(), 0), strconv.Itoa(d.WindowTicks), strconv.Itoa(d.TickRate), d.Setting.caps(), f(d.ViewLagMS, 0),
			f(d.Present.X, 3), f(d.Present.Y, 3), f(d.Present.Z, 3)})
	}
	cw.Flush()
	return cw.Error()
}

// WriteDisputedTable writes disputed hits as an aligned table.
func WriteDisputedTable(w io.Writer, hits []Disputed) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "recording\ttick\tshot\tshooter\tvictim\tweapon\twindow\tview lag\tvictim's present (x, y, z)\t")
	for _, d := range hits {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%.0f ms\t(%.2f, %.2f, %.2f)\t\n", d.File, d.Tick, d.Shot, d.Shooter, d.Victim, d.Weapon,
			windowLabel(d.WindowMS(), strconv.Itoa(d.WindowTicks)), d.ViewLagMS, d.Present.X, d.Present.Y, d.Present.Z)
	}
	return tw.Flush()
}

// Counts are a recording's counts under its recorded lag compensation, in
// the vocabulary of docs/tuning.md: what rewind demo, tune and view print.
type Counts struct {
	Shots     int64 // shots the server fired and decided
	Decisions int64 // its decisions: a miss, or one per target hit
	Seen      int64 // seen hits: (shot, target) pairs the shooters' screens showed
	Confirmed int64 // of those, the ones the server registered
	Hits      int64 // server hits: the (shot, target) pairs it registered
	Unseen    int64 // of those, the ones no shooter's screen showed
	Damaging  int64 // of those, the ones that dealt damage
	Disputed  int64 // of those, the ones a victim could dispute
	Clamped   int64 // shots granted less view lag than claimed
}

// CountFile counts a recording's shots and hits as the match judged them
// (its recorded window, max_unlag and caps): the counts every tool
// prints. A recording damaged after some ticks counts the intact part and
// returns the error with them.
func CountFile(ctx context.Context, path string, kinds *weapons.Registry) (Counts, error) {
	c, _, err := JudgeRecorded(ctx, path, kinds)
	return c, err
}

// JudgeRecorded is CountFile with the disputed hits, by tick: the hits
// rewind view flags.
func JudgeRecorded(ctx context.Context, path string, kinds *weapons.Registry) (Counts, []Disputed, error) {
	rep, err := sweep(ctx, []string{path}, Config{Kinds: kinds, Workers: 1}, []Setting{{Recorded: true}})
	if err != nil {
		return Counts{}, nil, err
	}
	r := &rep.Rows[0]
	c := Counts{Shots: r.Shots, Decisions: r.Decisions, Seen: r.Seen, Confirmed: r.Confirmed, Hits: r.Hits, Unseen: r.Unseen,
		Damaging: r.Damaging, Disputed: r.Disputed, Clamped: r.Clamped}
	if len(rep.Skipped) > 0 {
		return c, rep.Disputed, errors.New(rep.Skipped[0])
	}
	return c, rep.Disputed, nil
}

// String is the counts in one line, as the tools print them.
func (c Counts) String() string {
	return fmt.Sprintf("%d shots (%d shot decisions), %d seen hits, %d confirmed (%s%%), %d server hits (%d unseen), %d disputed of %d damaging (%s%%), %d clamped",
		c.Shots, c.Decisions, c.Seen, c.Confirmed, percent(ratio(c.Confirmed, c.Seen)), c.Hits, c.Unseen, c.Disputed, c.Damaging,
		percent(ratio(c.Disputed, c.Damaging)), c.Clamped)
}
