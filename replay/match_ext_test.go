package replay_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/internal/matchtest"
	"github.com/rewind-gg/rewind/replay"
)

const matchTicks = 400

// recordMatch plays the scripted 6-player match into a file and returns
// the match (its tallies) and the file's path.
func recordMatch(t *testing.T) (*matchtest.Match, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "match"+replay.Extension)
	m := matchtest.New(t, 6, replay.RecorderConfig{Path: path, QueueTicks: matchTicks + 64})
	m.Play(matchTicks)
	if m.Rec.Dropped() != 0 {
		t.Fatalf("%d ticks dropped", m.Rec.Dropped())
	}
	// The script must exercise what lag compensation does, or the tests
	// prove little.
	st := m.Sim.Stats()
	if m.Hits == 0 || m.Kills == 0 || m.Clamps == 0 || m.Rejected == 0 || st.Rewinds == 0 || st.MaxBuckets < 2 || m.Late != 6 {
		t.Fatalf("the scripted match is too quiet: %d hits, %d kills, %d clamps, %d rejected, %d rewinds, %d max buckets, %d late inputs (want 6)",
			m.Hits, m.Kills, m.Clamps, m.Rejected, st.Rewinds, st.MaxBuckets, m.Late)
	}
	return m, path
}

func open(t testing.TB, data []byte) *replay.Reader {
	t.Helper()
	rd, err := replay.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestReplayMatchesRecording(t *testing.T) {
	m, path := recordMatch(t)
	data := readFile(t, path)
	rd := open(t, data)
	if s := rd.Setup(); s.Room != "r1" || s.Started != "2025-01-02T03:04:05Z" || s.LevelRef == nil || s.LevelRef.Name != "arena" ||
		s.Level == nil || len(s.Level.Triangles) != 2+8+3*12 || len(s.Weapons) != 8 {
		t.Errorf("setup read back: %+v", s)
	}
	var seen []replay.Digest
	res, err := replay.Run(rd, replay.Config{OnTick: func(tk *replay.Tick) error {
		if got := replay.DigestOf(tk.Sim.Events); got != tk.Recorded || tk.Tick != tk.Sim.Now()-1 {
			return fmt.Errorf("OnTick: tick %d: %v, recorded %v", tk.Tick, got, tk.Recorded)
		}
		seen = append(seen, tk.Recorded)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	st := m.Sim.Stats()
	want := replay.Result{Players: 7, Tally: replay.Tally{Ticks: matchTicks, Events: m.Events, Shots: m.Shots, Hits: m.Hits,
		Kills: m.Kills, Clamps: m.Clamps, Rejected: m.Rejected, Rewinds: st.Rewinds, Items: st.Items, MaxBuckets: st.MaxBuckets},
		Verified: true, FirstMissing: -1, End: "finished", MatchResult: []byte(`{"match_id":"r1"}`), Variants: []replay.VariantResult{}}
	got := res
	got.Setup, got.Inputs, got.Respawns, got.Buckets = replay.Setup{}, 0, 0, 0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("replay\n got %+v\nwant %+v", got, want)
	}
	if res.Inputs < int64(6*matchTicks-40) || res.Buckets < res.Rewinds {
		t.Errorf("%d inputs queued, %d buckets for %d rewinds", res.Inputs, res.Buckets, res.Rewinds)
	}
	if !reflect.DeepEqual(seen, m.Digests) {
		t.Fatalf("OnTick saw %d ticks' digests, the match had %d, or they differ", len(seen), len(m.Digests))
	}
	t.Logf("%d bytes for %d ticks of 6 players (%.0f B/tick); %d events, %d hits, %d kills, %d rewinds",
		len(data), matchTicks, float64(len(data))/matchTicks, res.Events, res.Hits, res.Kills, res.Rewinds)
}

func TestReplayBucketingOffSameEvents(t *testing.T) {
	m, path := recordMatch(t)
	off := false
	res, err := replay.Run(open(t, readFile(t, path)), replay.Config{Bucketing: &off})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || res.Ticks != matchTicks || res.Events != m.Events || res.Hits != m.Hits {
		t.Errorf("bucketing off: %+v; want every tick's events as recorded (%d events, %d hits)", res, m.Events, m.Hits)
	}
	if res.Rewinds <= m.Sim.Stats().Rewinds {
		t.Errorf("bucketing off: %d rewinds, bucketed %d: want more", res.Rewinds, m.Sim.Stats().Rewinds)
	}
}

// A variant with the recorded settings judges every shot as recorded: the
// pinned world is the match's, tick after tick.
func TestVariantWithTheRecordedSettingsAgrees(t *testing.T) {
	m, path := recordMatch(t)
	rd := open(t, readFile(t, path))
	lc := rd.Setup().LagComp.Config()
	lc.Bucketing = false
	res, err := replay.Run(rd, replay.Config{Variants: []replay.Variant{{Name: "same", LagComp: lc}}})
	if err != nil {
		t.Fatal(err)
	}
	v := res.Variants[0]
	if v.Differ != 0 || v.FirstDiffer != -1 || v.Ticks != matchTicks || v.Events != m.Events || v.Hits != m.Hits || v.Kills != m.Kills {
		t.Errorf("the recorded settings as a variant: %+v; want the recording's events on every tick (%d events, %d hits, %d kills)",
			v, m.Events, m.Hits, m.Kills)
	}
}

func TestVariantOtherWindowDiffersInTheSameWorld(t *testing.T) {
	m, path := recordMatch(t)
	rd := open(t, readFile(t, path))
	lc := rd.Setup().LagComp.Config()
	lc.WindowTicks, lc.MaxUnlagTicks = 2, 0 // players see 0.5..15 ticks behind
	samePlaces := 0
	res, err := replay.Run(rd, replay.Config{Variants: []replay.Variant{{Name: "window 2", LagComp: lc}}, OnTick: func(tk *replay.Tick) error {
		// Whatever the variant decides, its players stand where the match's do.
		for _, s := range m.Seats {
			id := replay.EntityOf(s.Entity)
			e, inMatch := tk.Entity(-1, id)
			ve, inVariant := tk.Entity(0, id)
			if inMatch != inVariant {
				return fmt.Errorf("tick %d: player %v in the match %v, in the variant %v", tk.Tick, id, inMatch, inVariant)
			}
			if !inMatch {
				continue
			}
			want, _ := tk.Sim.PlayerState(e)
			got, _ := tk.Variants[0].PlayerState(ve)
			if got.Transform != want.Transform {
				return fmt.Errorf("tick %d: player %v at %v in the variant, %v in the match", tk.Tick, id, got.Transform, want.Transform)
			}
			samePlaces++
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	v := res.Variants[0]
	if !res.Verified || v.Ticks != matchTicks || v.Differ == 0 || v.FirstDiffer < 0 || samePlaces < 5*matchTicks {
		t.Fatalf("window 2: %+v (%d player-ticks compared); want all ticks simulated, some differing", v, samePlaces)
	}
	// Clamped to 2 ticks, shots were granted less lag.
	if v.Clamps <= m.Clamps {
		t.Errorf("window 2: %d clamps, %d recorded: want more", v.Clamps, m.Clamps)
	}
	t.Logf("window 2: %d of %d ticks differ, the first %d; hits %d (recorded %d)", v.Differ, v.Ticks, v.FirstDiffer, v.Hits, m.Hits)
}

// recordAt is a record's offset and type, and how many steps precede it.
type recordAt struct {
	off   int64
	typ   replay.RecordType
	steps int64
}

func offsets(t *testing.T, data []byte) ([]recordAt, int64) {
	t.Helper()
	rd := open(t, data)
	var out []recordAt
	var steps int64
	for {
		rec, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			return out, rd.Offset()
		}
		out = append(out, recordAt{rec.Offset, rec.Type, steps})
		if rec.Type == replay.RecordStep {
			steps++
		}
	}
}

// middle returns a record of type typ about halfway through.
func middle(t *testing.T, recs []recordAt, typ replay.RecordType) recordAt {
	for _, r := range recs[len(recs)/2:] {
		if r.typ == typ {
			return r
		}
	}
	t.Fatalf("no %v record in the second half", typ)
	return recordAt{}
}

func TestTruncatedTail(t *testing.T) {
	_, path := recordMatch(t)
	data := readFile(t, path)
	recs, end := offsets(t, data)
	if end != int64(len(data)) {
		t.Fatalf("records end at %d of %d bytes", end, len(data))
	}
	for _, typ := range []replay.RecordType{replay.RecordInput, replay.RecordStep} {
		at := middle(t, recs, typ)
		for _, cut := range []int64{1, 2, 5} { // inside the length, the payload, the checksum
			n := at.off + cut
			if typ == replay.RecordStep && cut == 5 {
				n = at.off + int64(data[at.off+1]) + 2 + 2 // two bytes into the checksum
			}
			res, err := replay.Run(open(t, data[:n]), replay.Config{})
			var re *replay.RecordError
			if !errors.As(err, &re) || re.Offset != at.off || !replay.Truncated(err) {
				t.Fatalf("cut at %d, inside the %v record at %d: %v", n, typ, at.off, err)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("record at byte %d", at.off)) {
				t.Errorf("the error does not name the offset: %v", err)
			}
			if res.Ticks != at.steps || !res.Verified {
				t.Errorf("cut at %d: the prefix replayed %d ticks (verified %v), want %d", n, res.Ticks, res.Verified, at.steps)
			}
		}
	}
	// Cut between two records: every record whole, the end record missing.
	// That is the same dead server as a cut inside a record, and says so.
	at := middle(t, recs, replay.RecordStep)
	res, err := replay.Run(open(t, data[:at.off]), replay.Config{})
	var re *replay.RecordError
	if !errors.As(err, &re) || re.Offset != at.off || re.Type != replay.RecordEnd ||
		!strings.Contains(err.Error(), fmt.Sprintf("record at byte %d (end): truncated", at.off)) {
		t.Errorf("cut at the record boundary %d: %v, want the missing end record named at that offset", at.off, err)
	}
	if res.Ticks != at.steps || !res.Verified || res.End != "" {
		t.Errorf("cut at the record boundary %d: %d ticks (verified %v), want %d", at.off, res.Ticks, res.Verified, at.steps)
	}
}

func TestCorruptByte(t *testing.T) {
	_, path := recordMatch(t)
	data := readFile(t, path)
	recs, _ := offsets(t, data)
	at := middle(t, recs, replay.RecordInput)
	for _, pos := range []int64{0, 1, 3, 9} { // the type, the length, the payload
		bad := bytes.Clone(data)
		bad[at.off+pos] ^= 0x10
		res, err := replay.Run(open(t, bad), replay.Config{})
		var re *replay.RecordError
		if !errors.As(err, &re) || re.Offset != at.off {
			t.Fatalf("byte %d flipped: %v; want a record error at %d", at.off+pos, err, at.off)
		}
		if res.Ticks != at.steps || !res.Verified {
			t.Errorf("byte %d flipped: the prefix replayed %d ticks, want %d", at.off+pos, res.Ticks, at.steps)
		}
		t.Logf("byte %d flipped: %v", at.off+pos, err)
	}
}

// A simulation other than the one that recorded the match (here the
// recording's own setup with one weapon's damage doubled, its header made
// whole again) is caught at the first tick whose events differ: the error
// names that tick and its step record, and the ticks before it matched.
func TestDivergenceNamesTheFirstDifferingTick(t *testing.T) {
	_, path := recordMatch(t)
	data := readFile(t, path)
	rd := open(t, data)
	setup := rd.Setup()
	// The first tick where a weapon's damage shows: a hit that deals some.
	first, weapon := int64(-1), -1
	if _, err := replay.Run(rd, replay.Config{OnTick: func(tk *replay.Tick) error {
		for _, ev := range tk.Sim.Events.Shots {
			if first < 0 && ev.Damage != 0 {
				first, weapon = tk.Tick, int(ev.Weapon)
			}
		}
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	if first <= 0 {
		t.Fatalf("the first damaging hit is at tick %d: want one after the first tick", first)
	}
	setup.Weapons[weapon].Damage *= 2
	js, err := json.Marshal(&setup)
	if err != nil {
		t.Fatal(err)
	}
	// The header as docs/replay.md lays it out; the records as recorded.
	n := int(binary.LittleEndian.Uint32(data[len(replay.Magic)+2:]))
	levelAt := len(replay.Magic) + 2 + 4 + n
	ln := int(binary.LittleEndian.Uint32(data[levelAt:]))
	lvl := data[levelAt+4 : levelAt+4+ln]
	records := data[levelAt+4+ln+4:]
	changed := binary.LittleEndian.AppendUint16([]byte(replay.Magic), replay.Version)
	changed = binary.LittleEndian.AppendUint32(changed, uint32(len(js)))
	changed = append(changed, js...)
	changed = binary.LittleEndian.AppendUint32(changed, uint32(ln))
	changed = append(changed, lvl...)
	changed = binary.LittleEndian.AppendUint32(changed, crc32.Checksum(changed[len(replay.Magic):], crc32.MakeTable(crc32.Castagnoli)))
	stepAt := int64(len(changed))
	changed = append(changed, records...)
	recs, _ := offsets(t, changed)
	for _, r := range recs {
		if r.typ == replay.RecordStep && r.steps == first {
			stepAt = r.off
			break
		}
	}

	res, err := replay.Run(open(t, changed), replay.Config{})
	var de *replay.DivergenceError
	if !errors.As(err, &de) || de.Tick != first || de.Offset != stepAt || de.Recorded == de.Replayed {
		t.Fatalf("%s damage doubled: %v; want the events of tick %d (the step record at byte %d) named", setup.Weapons[weapon].Name, err, first, stepAt)
	}
	if want := fmt.Sprintf("replay: tick %d (record at byte %d): events differ: ", first, stepAt); !strings.HasPrefix(err.Error(), want) {
		t.Errorf("the error %q does not start %q", err, want)
	}
	if res.Verified || res.Ticks != first+1 {
		t.Errorf("%d ticks simulated (verified %v), want the %d before the divergence and the one that differs", res.Ticks, res.Verified, first)
	}
	t.Logf("%s damage doubled: %v", setup.Weapons[weapon].Name, err)
}

// syncBuffer is a bytes.Buffer the writer goroutine writes while the test
// reads; wrote, when set, gets a signal after every write.
type syncBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer b.signal()
	return b.buf.Write(p)
}

func (b *syncBuffer) signal() {
	select {
	case b.wrote <- struct{}{}:
	default:
	}
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// stalledWriter blocks every write until released: a disk that hangs.
type stalledWriter struct {
	release chan struct{}
	syncBuffer
}

func (w *stalledWriter) Write(p []byte) (int, error) {
	<-w.release
	return w.syncBuffer.Write(p)
}

// fullDisk accepts room bytes, then fails.
type fullDisk struct {
	syncBuffer
	room int
}

var errNoSpace = errors.New("no space left on device")

func (w *fullDisk) Write(p []byte) (int, error) {
	w.mu.Lock()
	left := w.room - w.buf.Len()
	w.mu.Unlock()
	if len(p) > left {
		n, _ := w.syncBuffer.Write(p[:max(left, 0)])
		return n, errNoSpace
	}
	return w.syncBuffer.Write(p)
}

// within fails the test if f does not return in d: the room must never
// wait for the disk.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %v: the room waited for the writer", what, d)
	}
}

func TestRecorderDropsTicksWhenTheWriterStalls(t *testing.T) {
	w := &stalledWriter{release: make(chan struct{})}
	m := matchtest.New(t, 4, replay.RecorderConfig{Writer: w, QueueTicks: 4})
	within(t, 10*time.Second, "40 ticks on a stalled disk", func() {
		for range 40 {
			m.Tick()
		}
	})
	// The writer holds no tick (it is stuck on the header): the queue took
	// ticks 0..3, the rest were dropped.
	if got := m.Rec.Dropped(); got != 36 {
		t.Errorf("Dropped %d, want 36", got)
	}
	close(w.release)
	m.Rec.End("finished", []byte(`{"match_id":"r1"}`))
	if err := m.Rec.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(open(t, w.Bytes()), replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Incomplete || res.FirstMissing != 4 || res.Dropped != 36 || res.Ticks != 4 || !res.Verified || res.End != "finished" ||
		string(res.MatchResult) != `{"match_id":"r1"}` {
		t.Errorf("replay of an incomplete recording: %+v; want ticks 0..3, incomplete from 4, 36 dropped, the result kept", res)
	}
}

func TestRecorderWriteErrorReportedByClose(t *testing.T) {
	w := &fullDisk{room: 20_000}
	m := matchtest.New(t, 6, replay.RecorderConfig{Writer: w, FlushInterval: time.Millisecond})
	within(t, 20*time.Second, "200 ticks on a full disk", func() {
		for range 200 {
			m.Tick()
		}
	})
	err := m.Rec.Close()
	if !errors.Is(err, errNoSpace) || !errors.Is(m.Rec.Err(), errNoSpace) {
		t.Fatalf("Close: %v, Err: %v; want the disk's error", err, m.Rec.Err())
	}
	if err2 := m.Rec.Close(); err2 != err {
		t.Errorf("Close again: %v, want %v", err2, err)
	}
	m.Rec.Step(999, m.Sim.Events) // after Close: ignored, no panic
	// What reached the disk replays up to its cut.
	res, err := replay.Run(open(t, w.Bytes()), replay.Config{})
	var re *replay.RecordError
	if err != nil && !errors.As(err, &re) {
		t.Fatal(err)
	}
	if res.Ticks == 0 || res.Ticks >= 200 || !res.Verified {
		t.Errorf("prefix of a full disk: %+v, %v", res, err)
	}
}

func TestRecorderFlushesWithinTheInterval(t *testing.T) {
	w := &syncBuffer{wrote: make(chan struct{}, 1)}
	m := matchtest.New(t, 2, replay.RecorderConfig{Writer: w, FlushInterval: 20 * time.Millisecond})
	for range 10 {
		m.Tick()
	}
	// Ten ticks are far less than the writer's buffer: only the flush
	// interval gets them out.
	deadline := time.After(5 * time.Second)
	for {
		if recs, _ := countSteps(w.Bytes()); recs == 10 {
			break
		}
		select {
		case <-w.wrote:
		case <-deadline:
			recs, err := countSteps(w.Bytes())
			t.Fatalf("after 5 s, %d of 10 ticks written (%v)", recs, err)
		}
	}
	if err := m.Rec.Close(); err != nil {
		t.Fatal(err)
	}
}

// countSteps counts the step records in what was written so far.
func countSteps(data []byte) (int, error) {
	rd, err := replay.NewReader(bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		rec, err := rd.Next()
		if err != nil {
			return n, err
		}
		if rec.Type == replay.RecordStep {
			n++
		}
	}
}

// BenchmarkReplay re-simulates a recorded 12-player match (6 v 6, 600
// ticks: 30 s at 20 Hz) and reports simulated ticks per second and how
// many times faster than real time that is (target: ≥ 200×).
func BenchmarkReplay(b *testing.B) {
	data := matchtest.Record(b, 12, 600)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var ticks int64
	for b.Loop() {
		res, err := replay.Run(open(b, data), replay.Config{})
		if err != nil || res.Ticks != 600 {
			b.Fatalf("%d ticks: %v", res.Ticks, err)
		}
		ticks += res.Ticks
	}
	rate := float64(ticks) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "ticks/s")
	b.ReportMetric(rate/20, "x-realtime")
	b.ReportMetric(float64(len(data))/600, "B/tick")
}

// FuzzReader feeds the reader damaged recordings: it must return errors,
// never panic or allocate without bound.
func FuzzReader(f *testing.F) {
	good := matchtest.Record(f, 2, 5)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := replay.NewReader(bytes.NewReader(data))
		if err != nil {
			var he *replay.HeaderError
			if !errors.As(err, &he) {
				t.Fatalf("not a HeaderError: %v", err)
			}
			return
		}
		for {
			_, err := rd.Next()
			if err == io.EOF {
				return
			}
			var re *replay.RecordError
			if err != nil {
				if !errors.As(err, &re) {
					t.Fatalf("not a RecordError: %v", err)
				}
				return
			}
		}
	})
}
