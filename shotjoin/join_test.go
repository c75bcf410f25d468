package shotjoin

import (
	"bytes"
	"encoding/csv"
	"math"
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/bots"
	"github.com/rewind-gg/rewind/geom"
)

// Each hit lost or false positive gets the first difference that explains
// it, in the documented order; shots that need none get none.
func TestJoinCauses(t *testing.T) {
	seen := []bots.SeenTarget{{ID: 7, Pos: geom.V(1, 0, 1)}}
	onTime := func() *serverShot {
		return &serverShot{ran: true, decided: 50, view: 45.5, eye: 0.001, target: 0}
	}
	shot := func(seen []bots.SeenTarget, marked ...uint32) *bots.ShotRecord {
		return &bots.ShotRecord{Player: 3, Shot: 9, Tick: 50, View: 45.5, Seen: seen, Marked: marked}
	}
	for _, tt := range []struct {
		name    string
		client  *bots.ShotRecord
		server  func(*serverShot)
		outcome Outcome
		cause   Cause
	}{
		{"confirmed", shot(seen, 7), nil, Confirmed, CauseNone},
		{"nothing seen, nothing hit", shot(nil), nil, NoHitSeen, CauseNone},
		{"not run", shot(seen), func(s *serverShot) { s.ran = false }, Missed, NotRun},
		{"clamped", shot(seen), func(s *serverShot) { s.clamp = "measured" }, Missed, Clamped},
		{"late", shot(seen), func(s *serverShot) { s.decided = 52 }, Missed, Late},
		{"eye moved", shot(seen), func(s *serverShot) { s.eye = 0.3 }, Missed, EyeMoved},
		{"target moved", shot(seen), func(s *serverShot) { s.target = 0.05 }, Missed, TargetMoved},
		{"view time", shot(seen), func(s *serverShot) { s.view = 45.25 }, Missed, ViewTime},
		{"a shield not shown", shot(seen), func(s *serverShot) { s.blocked, s.byShield = true, true }, Missed, Shield},
		{"unexplained", shot(seen), nil, Missed, Unexplained},
		{"a false positive", shot(nil, 8), nil, FalsePositive, Unexplained},
		{"confirmed, and a target not seen", shot(seen, 7, 8), func(s *serverShot) { s.target = 0.05 }, Confirmed, TargetMoved},
		{"after death", &bots.ShotRecord{Seen: seen, AfterDeath: true}, func(s *serverShot) { s.ran = false }, AfterDeath, CauseNone},
	} {
		s := onTime()
		if tt.server != nil {
			tt.server(s)
		}
		r := join(tt.client, s)
		if r.Outcome != tt.outcome || r.Cause != tt.cause {
			t.Errorf("%s: %v, %v; want %v, %v", tt.name, r.Outcome, r.Cause, tt.outcome, tt.cause)
		}
	}
	if r := join(shot(seen), nil); r.Cause != NotRun || r.Ran || !math.IsNaN(r.EyeOffset) {
		t.Errorf("no server shot: %+v", r)
	}
}

// The CSV has a row per shot under its header, lists of ids separated by
// spaces and unmeasured offsets empty; the summary counts outcomes and
// causes.
func TestWriteCSVAndSummary(t *testing.T) {
	seen := []bots.SeenTarget{{ID: 7}, {ID: 9}}
	rows := []Row{
		join(&bots.ShotRecord{Player: 3, Shot: 9, Seq: 8, Tick: 50, View: 45.5, Seen: seen, Marked: []uint32{7}},
			&serverShot{ran: true, decided: 50, view: 45.5, span: 2, hits: []uint32{7}, eye: 0, target: math.NaN()}),
		join(&bots.ShotRecord{Player: 4, Shot: 1, Tick: 51, View: 47, Seen: seen[:1]},
			&serverShot{ran: true, decided: 53, view: 46, clamp: "measured", claimed: 4, eye: math.NaN(), target: math.NaN()}),
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, rows); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	col := func(r int, name string) string {
		for i, h := range recs[0] {
			if h == name {
				return recs[r][i]
			}
		}
		t.Fatalf("no column %q", name)
		return ""
	}
	for _, c := range []struct {
		row        int
		name, want string
	}{
		{1, "outcome", "confirmed"}, {1, "seen", "7 9"}, {1, "hits", "7"}, {1, "server_span", "2"}, {1, "cause", ""},
		{1, "target_offset_m", ""}, {1, "eye_offset_m", "0.0000"},
		{2, "outcome", "missed"}, {2, "cause", "clamped"}, {2, "late_ticks", "2"}, {2, "claimed_lag", "4.0000"}, {2, "eye_offset_m", ""},
	} {
		if got := col(c.row, c.name); got != c.want {
			t.Errorf("row %d %s: %q, want %q", c.row, c.name, got, c.want)
		}
	}
	sum := Summarize(rows)
	if sum.Shots != 2 || sum.Outcomes[Confirmed] != 1 || sum.Outcomes[Missed] != 1 || sum.Missed[Clamped] != 1 {
		t.Errorf("summary %+v", sum)
	}
	if s := sum.String(); !strings.Contains(s, "2 hitscan shots: confirmed 1 missed 1") || !strings.Contains(s, "hits lost, by cause: clamped 1") {
		t.Errorf("summary text %q", s)
	}
}
