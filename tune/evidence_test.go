package tune

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/matchtest"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/ticks"
)

// ms returns windows as durations.
func ms(ns ...int) []ticks.Span {
	var out []ticks.Span
	for _, n := range ns {
		out = append(out, ticks.Span{D: time.Duration(n) * time.Millisecond})
	}
	return out
}

// The behind-the-wall shot is disputed from window 8 on: its row names it.
func TestDisputedListed(t *testing.T) {
	path := behindTheWall(t)
	rep, err := Sweep(context.Background(), []string{path}, Config{Windows: tk(0, 4, 8, 12, 30)})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.DisputedAt(1); len(got) != 0 {
		t.Errorf("window 4: %+v, want no disputed hits", got)
	}
	got := rep.DisputedAt(2)
	if len(got) != 1 {
		t.Fatalf("window 8: %d disputed hits, want 1: %+v", len(got), got)
	}
	d := got[0]
	d.Present = geom.Vec3{}
	want := Disputed{File: path, Setting: rep.Settings[2], TickRate: 20, WindowTicks: 8, Tick: 15, Shot: 1, Shooter: "alice", Victim: "bob",
		ShooterID: got[0].ShooterID, VictimID: got[0].VictimID, Weapon: "rifle", ViewLagMS: 400, setting: 2}
	if got[0].ShooterID == got[0].VictimID {
		t.Errorf("shooter and victim: both wire id %d", got[0].ShooterID)
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("the disputed hit:\n got %+v\nwant %+v", d, want)
	}
	// Bob, behind the wall at tick 15 (running +x from −4.5 at 20 Hz; the
	// history holds poses on the wire's grid, 1/256 m).
	if p := got[0].Present; p != geom.V(-0.40234375, 0, 5) {
		t.Errorf("bob's present %v: want behind the wall at (-0.40234375, 0, 5)", p)
	}
	if n := len(rep.Disputed); n != 3 {
		t.Errorf("%d disputed hits over the sweep, want 3 (windows 8, 12, 30)", n)
	}
	var b bytes.Buffer
	if err := WriteDisputedCSV(&b, got); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(recs) != 2 || !reflect.DeepEqual(recs[0], DisputedHeader) {
		t.Fatalf("disputed.csv %q %v", recs, err)
	}
	row := recs[1]
	wantRow := []string{path, "15", "1", "alice", "bob", "rifle", "400", "8", "20", "", "400"}
	wantRow = append(wantRow, "-0.402", "0.000", "5.000")
	if !reflect.DeepEqual(row, wantRow) {
		t.Errorf("disputed.csv row %q, want %q", row, wantRow)
	}
	b.Reset()
	if err := WriteDisputedTable(&b, got); err != nil || !strings.Contains(b.String(), "alice") || !strings.Contains(b.String(), "400 ms (8)") {
		t.Errorf("the listing %v:\n%s", err, b.String())
	}
}

// The recommendation on a recording whose answer is known: the one seen
// hit is confirmed from window 8 (400 ms) on, and disputed there.
func TestRecommendation(t *testing.T) {
	path := behindTheWall(t)
	rep, err := Sweep(context.Background(), []string{path}, Config{Windows: tk(30, 0, 4, 12, 8)}) // out of order
	if err != nil {
		t.Fatal(err)
	}
	recs := rep.Recommend(0.99)
	if len(recs) != 1 || recs[0].Row == nil {
		t.Fatalf("%+v", recs)
	}
	r := recs[0]
	window := func(row *Row) int { return row.Setting.WindowTicks(20) }
	if window(r.Row) != 8 || r.Below == nil || window(r.Below) != 4 || r.Above == nil || window(r.Above) != 12 || r.Setting != 4 {
		t.Errorf("recommended window %d (setting %d), between %v and %v: want 8 between 4 and 12", window(r.Row), r.Setting, r.Below, r.Above)
	}
	var b bytes.Buffer
	rep.WriteRecommendation(&b, 0.99)
	for _, want := range []string{"window 400 ms (8 ticks), the smallest that confirms at least 99.0%", "1 of 1 seen hits (100.0%",
		"1 disputed of 1 damaging hits", "a step narrower, 200 ms (4 ticks): 0 of 1 seen hits", "(-1 disputed, -1 confirmed against 400 ms (8 ticks))",
		"a step wider, 600 ms (12 ticks)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the recommendation does not say %q:\n%s", want, b.String())
		}
	}
	rep, err = Sweep(context.Background(), []string{path}, Config{Windows: tk(0, 4)})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Recommend(0.99); len(r) != 1 || r[0].Row != nil || r[0].Widest == nil || window(r[0].Widest) != 4 {
		t.Errorf("windows 0 and 4: %+v, want none, the widest 4", r)
	}
	b.Reset()
	rep.WriteRecommendation(&b, 0.99)
	if !strings.Contains(b.String(), "no window of the sweep confirms 99.0%") {
		t.Errorf("%s", b.String())
	}
}

// A 20 Hz and a 60 Hz recording: windows in ticks are refused, naming the
// files and rates; durations are each recording's ticks.
func TestMixedTickRates(t *testing.T) {
	dir := t.TempDir()
	wall := behindTheWallIn(t, dir)
	sc, _ := matchtest.RoomConfig(t)
	sc.TickRate = 60
	sc.LagComp = lagcomp.Config{WindowTicks: 90, Bucketing: true, CellSize: 4}
	fast := filepath.Join(dir, "fast"+replay.Extension)
	r := matchtest.NewRecorded(t, sc, nil, replay.RecorderConfig{Path: fast})
	a := r.Spawn(matchtest.Player("carol", 1, geom.V(0, 0, 0)))
	for tick := range int64(30) {
		r.Queue(a, ecs.Input{Tick: tick, MoveX: 1, ViewTime: ecs.ViewTime{Tick: tick}})
		r.Step()
	}
	r.Close()
	_, err := Sweep(context.Background(), []string{wall, fast}, Config{Windows: tk(0, 8)})
	if err == nil || !strings.Contains(err.Error(), "20 Hz: "+wall) || !strings.Contains(err.Error(), "60 Hz: "+fast) {
		t.Errorf("windows in ticks over 20 and 60 Hz: %v", err)
	}
	rep, err := Sweep(context.Background(), []string{wall, fast}, Config{Windows: ms(200, 400)})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.Rates, []int{20, 60}) {
		t.Errorf("rates %v", rep.Rates)
	}
	type got struct {
		ms      float64
		ticks   string
		conf    float64
		dispute int64
	}
	var rows []got
	for i := range rep.Rows {
		if r := &rep.Rows[i]; r.By == ByAll {
			m, tk := rep.window(r.Setting)
			rows = append(rows, got{m, tk, r.Confirmation(), r.Disputed})
		}
	}
	want := []got{{200, "4@20Hz 12@60Hz", 0, 0}, {400, "8@20Hz 24@60Hz", 1, 1}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows %+v, want %+v", rows, want)
	}
	var b bytes.Buffer
	rep.WriteCSV(&b)
	if !strings.Contains(b.String(), "400.0000,24,60,recording,"+fast+",") || !strings.Contains(b.String(), "400.0000,8@20Hz 24@60Hz,20 60,all,all,") {
		t.Errorf("tune.csv: no 60 Hz recording's row at 24 ticks, or no row of both:\n%s", b.String())
	}
}

// The counts of the recorded setting are the sweep's at the recorded window.
func TestCountFile(t *testing.T) {
	path := behindTheWall(t)
	c, err := CountFile(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Counts{Shots: 1, Decisions: 1, Seen: 1, Confirmed: 1, Hits: 1, Damaging: 1, Disputed: 1}
	if c != want {
		t.Errorf("counts %+v, want %+v", c, want)
	}
	_, hits, err := JudgeRecorded(context.Background(), path, nil)
	if err != nil || len(hits) != 1 || hits[0].Tick != 15 || hits[0].Victim != "bob" || hits[0].WindowTicks != 30 {
		t.Errorf("the recorded setting's disputed hits: %+v %v", hits, err)
	}
	if s := c.String(); s != "1 shots (1 shot decisions), 1 seen hits, 1 confirmed (100.0%), 1 server hits (0 unseen), 1 disputed of 1 damaging (100.0%), 0 clamped" {
		t.Errorf("%s", s)
	}
	data := matchtest.Record(t, 6, 300)
	scripted := filepath.Join(t.TempDir(), "m"+replay.Extension)
	os.WriteFile(scripted, data, 0o644)
	c, err = CountFile(context.Background(), scripted, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Sweep(context.Background(), []string{scripted}, Config{Windows: tk(12)}) // the recorded max_unlag (window 20, max_unlag 12): what bounds claims
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Rows[0]
	if got := (Counts{r.Shots, r.Decisions, r.Seen, r.Confirmed, r.Hits, r.Unseen, r.Damaging, r.Disputed, r.Clamped}); got != c || c.Shots == 0 || c.Clamped == 0 {
		t.Errorf("CountFile %+v, the sweep at the recorded window %+v", c, got)
	}
}

func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n   int64
		lo, hi float64
	}{{0, 10, 0, 0.2775}, {5, 10, 0.2366, 0.7634}, {10, 10, 0.7225, 1}, {358, 358, 0.9894, 1}} {
		lo, hi := Wilson(c.k, c.n)
		if math.Abs(lo-c.lo) > 5e-5 || math.Abs(hi-c.hi) > 5e-5 {
			t.Errorf("Wilson(%d, %d) = %.4f, %.4f, want %.4f, %.4f", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
	if lo, _ := Wilson(0, 0); !math.IsNaN(lo) {
		t.Error("no base: not NaN")
	}
}

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.rwr", "a.rwr", "notes.txt"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	got, err := Expand([]string{dir, "x.rwr"})
	want := []string{filepath.Join(dir, "a.rwr"), filepath.Join(dir, "b.rwr"), "x.rwr"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%q %v, want %q", got, err, want)
	}
	if _, err := Expand([]string{t.TempDir()}); err == nil || !strings.Contains(err.Error(), "no .rwr recordings") {
		t.Errorf("an empty directory: %v", err)
	}
}

// The settling period: its claims leave the histogram, and its shots are
// a phase of their own.
func TestSettling(t *testing.T) {
	data := matchtest.Record(t, 6, 400)
	path := filepath.Join(t.TempDir(), "m"+replay.Extension)
	os.WriteFile(path, data, 0o644)
	all, err := Sweep(context.Background(), []string{path}, Config{Windows: tk(8)})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Sweep(context.Background(), []string{path}, Config{Windows: tk(8), Settle: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Settling.N == 0 || rep.Settling.N+rep.ViewLag.N != all.ViewLag.N || all.Settling.N != 0 {
		t.Errorf("settling %d + settled %d inputs, %d in all", rep.Settling.N, rep.ViewLag.N, all.ViewLag.N)
	}
	phases := map[string]int64{}
	for _, r := range rep.Rows {
		if r.By == ByPhase {
			phases[r.Group] = r.Shots
		}
	}
	if phases["settling"] == 0 || phases["settled"] == 0 || phases["settling"]+phases["settled"] != rep.Rows[0].Shots {
		t.Errorf("shots by phase %v, %d in all", phases, rep.Rows[0].Shots)
	}
}

// A rocket clamped at its launch and still flying when the recording ends
// is no shot, and so not clamped: clamped never exceeds shots.
func TestClampedAreShots(t *testing.T) {
	sc, _ := matchtest.RoomConfig(t)
	sc.LagComp = lagcomp.Config{WindowTicks: 30, Bucketing: true, CellSize: 4}
	path := filepath.Join(t.TempDir(), "rockets"+replay.Extension)
	r := matchtest.NewRecorded(t, sc, matchtest.Level(geom.AABB{Min: geom.V(-1, 0, 20), Max: geom.V(1, 3, 21)}), replay.RecorderConfig{Path: path})
	rocket, _ := r.Sim.Catalog.Lookup("rocket")
	alice := r.Spawn(matchtest.Player("alice", 1, geom.V(0, 0, 0), rocket))
	bob := r.Spawn(matchtest.Player("bob", 2, geom.V(10, 0, -10), rocket))
	for tick := int64(0); tick < 40; tick++ {
		in := ecs.Input{Tick: tick, Weapon: rocket, ViewTime: ecs.ViewTime{Tick: max(tick-8, 0)}}
		if tick == 5 || tick == 38 { // at the wall 20 m ahead: the first explodes, the last is still flying
			in.Buttons, in.Shot = ecs.ButtonFire, uint32(tick)
		}
		r.Queue(alice, in)
		r.Queue(bob, ecs.Input{Tick: tick, ViewTime: ecs.ViewTime{Tick: tick}})
		r.Step()
	}
	r.Close()
	rep, err := Sweep(context.Background(), []string{path}, Config{Windows: tk(4)})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Rows[0]; r.Shots != 1 || r.Clamped != 1 {
		t.Errorf("%d shots, %d clamped: want the rocket that exploded, clamped to 4 ticks, alone", r.Shots, r.Clamped)
	}
}
