package view

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/matchtest"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/replay"
)

// script is a scripted match with known shots: alice (team 1) stands still
// at (0, 0, −10); bob (team 2) runs along +x at (−6, 0, 10). At tick 20
// alice fires her rifle at where bob was at tick 17, claiming that she sees
// 3 ticks behind: the server rewinds bob 3 ticks, and the shot hits. At
// tick 40 she fires at where bob is, claiming 10 ticks: the server puts bob
// 3 m back, and the shot misses. At tick 50 bob fires a rocket at alice. At
// tick 90 bob leaves.
type script struct {
	data []byte
	// bob17 is where bob was at tick 17, bob20 at tick 20 (the wire's
	// positions: what the history records).
	bob17, bob20 geom.Vec3
	ticks        int64
}

const (
	hitTick    = 20
	crouchFrom = 2 // bob crouches from this tick…
	crouchTo   = 5 // …to this one
	missTick   = 40
	rocketTick = 50
	leaveTick  = 90
	scriptEnd  = 120
)

func recordScript(t testing.TB) *script {
	t.Helper()
	sc, _ := matchtest.RoomConfig(t)
	sc.LagComp = lagcomp.Config{WindowTicks: 30, Bucketing: true, CellSize: 4}
	var buf bytes.Buffer
	r := matchtest.NewRecorded(t, sc, matchtest.Level(geom.AABB{Min: geom.V(8, 0, -2), Max: geom.V(10, 3, 2)}), replay.RecorderConfig{Writer: &buf})
	sim := r.Sim
	rifle, _ := sim.Catalog.Lookup("rifle")
	rocket, _ := sim.Catalog.Lookup("rocket")
	alice := r.Spawn(matchtest.Player("alice", 1, geom.V(0, 0, -10), rifle))
	bob := r.Spawn(matchtest.Player("bob", 2, geom.V(-6, 0, 10), rocket))
	s := &script{}
	aim := func(from, to geom.Vec3) (yaw, pitch float64) {
		d := to.Add(geom.V(0, 1.1, 0)).Sub(from.Add(geom.V(0, sc.EyeHeight, 0)))
		return math.Atan2(d.X, d.Z), math.Atan2(d.Y, math.Hypot(d.X, d.Z))
	}
	pos := func(e ecs.Entity, tick int64) geom.Vec3 {
		p, ok := sim.History.PoseAt(tick, e)
		if !ok {
			t.Fatalf("no pose of %v at tick %d", e, tick)
		}
		return p.Pos
	}
	for tick := int64(0); tick < scriptEnd; tick++ {
		a := ecs.Input{Tick: tick, Weapon: rifle, ViewTime: ecs.ViewTime{Tick: tick}}
		switch tick {
		case hitTick:
			a.Yaw, a.Pitch = aim(geom.V(0, 0, -10), pos(bob, hitTick-3))
			a.Buttons, a.Shot, a.ViewTime = ecs.ButtonFire, 1, ecs.ViewTime{Tick: hitTick - 3}
			s.bob17 = pos(bob, hitTick-3)
		case missTick:
			a.Yaw, a.Pitch = aim(geom.V(0, 0, -10), pos(bob, missTick-1).Add(geom.V(0.3, 0, 0)))
			a.Buttons, a.Shot, a.ViewTime = ecs.ButtonFire, 2, ecs.ViewTime{Tick: missTick - 10}
		}
		r.Queue(alice, a)
		if tick < leaveTick {
			b := ecs.Input{Tick: tick, MoveX: 1, Weapon: rocket, ViewTime: ecs.ViewTime{Tick: tick}}
			if tick >= crouchFrom && tick < crouchTo {
				b.Buttons = ecs.ButtonCrouch
			}
			if tick == rocketTick {
				b.Yaw, b.Pitch = aim(pos(bob, tick-1), geom.V(0, 0, -10))
				b.Buttons, b.Shot = ecs.ButtonFire, 1
			}
			r.Queue(bob, b)
		}
		if tick == leaveTick {
			r.Despawn(bob)
		}
		r.Step()
		if tick == hitTick {
			s.bob20 = pos(bob, hitTick)
		}
	}
	r.Close()
	s.data, s.ticks = buf.Bytes(), scriptEnd
	return s
}

func writeRecording(t testing.TB, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script"+replay.Extension)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func near(a, b Num) bool { return math.Abs(float64(a-b)) <= 0.006 }

// findShot returns the first shot decided at tick by kind.
func findShot(t *testing.T, m *Match, tick int64, kind string) *Shot {
	t.Helper()
	for i := range m.Shots {
		if s := &m.Shots[i]; s.Tick == tick && s.Kind == kind {
			return s
		}
	}
	t.Fatalf("no %s shot decided at tick %d in %d shots", kind, tick, len(m.Shots))
	return nil
}

func TestMatchShowsTheRewind(t *testing.T) {
	s := recordScript(t)
	f, err := Load(writeRecording(t, s.data), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := f.Match(0)
	if m.Room != "r1" || m.Ticks != s.ticks || len(m.Frames) != int(s.ticks) || m.First != 0 || m.End != "finished" || m.Error != "" {
		t.Fatalf("match: room %q, %d ticks, %d frames from %d, end %q, error %q", m.Room, m.Ticks, len(m.Frames), m.First, m.End, m.Error)
	}
	if len(m.Players) != 2 || m.Players[0].Name != "alice" || m.Players[1].Name != "bob" || m.Players[1].Team != 2 {
		t.Fatalf("players %+v", m.Players)
	}
	// The level: the arena's floor, edge walls and the box, lowest first,
	// the box's top (3 m) the highest; a live poll leaves it out.
	lv := m.Level
	if lv == nil || lv.Name != "arena" || len(lv.Tris) != 2+8+12 || lv.Low != 0 || lv.High != level.ArenaWallHeight ||
		lv.Bounds != [4]Num{-30, -30, 30, 30} || lv.Tris[0][6] != 0 || lv.Tris[len(lv.Tris)-1][6] != level.ArenaWallHeight {
		t.Fatalf("level %+v", lv)
	}
	if part, _ := f.Match(5); part.Level != nil {
		t.Error("a poll carries the level again")
	}
	// The hit: alice's rifle, rewound 3 ticks, bob where he was at tick 17.
	hit := findShot(t, m, hitTick, "hitscan")
	if hit.Result != "hit" || hit.Shooter != 0 || hit.Target != 1 || hit.Weapon != "rifle" || hit.Lag != 3 || hit.View != hitTick-3 ||
		hit.Damage == 0 || hit.Dealt != hit.Damage {
		t.Fatalf("the hit: %+v", hit)
	}
	if len(hit.Rewound) != 2 {
		t.Fatalf("rewound hitboxes: %v", hit.Rewound)
	}
	for _, r := range hit.Rewound {
		if r[0] == 1 && (!near(r[1], Num(s.bob17.X)) || !near(r[2], Num(s.bob17.Z))) {
			t.Errorf("bob rewound to %v, was at %v at tick 17", r, s.bob17)
		}
	}
	// Bob crouched from tick 2 to 4: the frames say so (the page draws a
	// smaller marker), and where his feet were (the height, 0 here).
	for tick, f := range m.Frames[:hitTick] {
		for _, p := range f.Players {
			crouched := p[0] == 1 && tick >= crouchFrom && tick < crouchTo
			if (p[5] == 1) != crouched || p[4] != 0 {
				t.Errorf("tick %d: player %v crouched %v, height %v; want crouched %v at height 0", tick, p[0], p[5], p[4], crouched)
			}
		}
	}
	bobNow := m.Frames[hitTick].Players[1]
	if bobNow[0] != 1 || !near(bobNow[1], Num(s.bob20.X)) || math.Abs(float64(bobNow[1])-s.bob17.X) < 0.8 {
		t.Errorf("bob in the present at tick %d: %v; rewound at %v: want 0.9 m apart", hitTick, bobNow, s.bob17)
	}
	if !near(hit.Origin[0], 0) || !near(hit.Origin[1], 1.6) || !near(hit.Origin[2], -10) {
		t.Errorf("the ray starts at %v, alice's eye is at (0, 1.6, −10)", hit.Origin)
	}
	// The miss: claimed 10 ticks, the shot aimed where bob was.
	miss := findShot(t, m, missTick, "hitscan")
	if miss.Result != "miss" || miss.Target != -1 || miss.Lag != 10 {
		t.Errorf("the miss: %+v", miss)
	}
	// The rocket: its flight tick by tick, from bob to its contact.
	var rocket *Shot
	for i := range m.Shots {
		if m.Shots[i].Kind == "projectile" && !m.Shots[i].Splash {
			rocket = &m.Shots[i]
		}
	}
	if rocket == nil || rocket.Fired != rocketTick || rocket.Shooter != 1 || len(rocket.Path) < 5 ||
		rocket.Path[len(rocket.Path)-1] != [2]Num{rocket.Point[0], rocket.Point[2]} {
		t.Fatalf("the rocket: %+v", rocket)
	}
	for i, p := range rocket.Path[1 : len(rocket.Path)-1] {
		if d := math.Hypot(float64(p[0]-rocket.Path[i][0]), float64(p[1]-rocket.Path[i][1])); d < 1.2 || d > 1.3 {
			t.Errorf("the rocket's step %d is %.2f m, 25 m/s at 20 Hz is 1.25 m", i, d)
		}
	}
	// Bob left at tick 90: the frames after show alice alone.
	if n := len(m.Frames[leaveTick+1].Players); n != 1 {
		t.Errorf("%d players after bob left", n)
	}
	// The JSON is what the page reads.
	b, err := json.Marshal(m)
	if err != nil || !bytes.Contains(b, []byte(`"result":"hit"`)) {
		t.Fatalf("JSON: %v", err)
	}
}

func TestMatchSince(t *testing.T) {
	s := recordScript(t)
	f, err := Load(writeRecording(t, s.data), nil)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := f.Match(0)
	part, _ := f.Match(missTick)
	if part.First != missTick || len(part.Frames) != int(s.ticks)-missTick || len(part.Players) != 2 {
		t.Fatalf("from %d: first %d, %d frames", missTick, part.First, len(part.Frames))
	}
	for _, sh := range part.Shots {
		if sh.Tick < missTick {
			t.Errorf("a shot of tick %d from tick %d on", sh.Tick, missTick)
		}
	}
	if len(part.Shots) == 0 || len(part.Shots) >= len(all.Shots) {
		t.Errorf("%d of %d shots from tick %d", len(part.Shots), len(all.Shots), missTick)
	}
	if end, _ := f.Match(10_000); len(end.Frames) != 0 || len(end.Shots) != 0 {
		t.Errorf("beyond the end: %d frames, %d shots", len(end.Frames), len(end.Shots))
	}
}

// A recording still being written: the follower shows what is there, a
// record cut in half waits for its other half, and the end closes it.
func TestFollowerReadsAsItIsWritten(t *testing.T) {
	s := recordScript(t)
	path := filepath.Join(t.TempDir(), "live"+replay.Extension)
	rd, err := replay.NewReader(bytes.NewReader(s.data))
	if err != nil {
		t.Fatal(err)
	}
	header := int(rd.Offset()) // the setup and the level
	cut := header + (len(s.data)-header)*6/10
	if err := os.WriteFile(path, s.data[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	fw, err := Follow(path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := fw.Match(0)
	if !m.Live || m.End != "" || m.Error != "" || m.Ticks < 20 || m.Ticks >= s.ticks {
		t.Fatalf("the first 60%%: live %v, %d ticks, end %q, error %q", m.Live, m.Ticks, m.End, m.Error)
	}
	first := m.Ticks
	// Half of the rest, most likely ending inside a record: nothing breaks.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mid := cut + (len(s.data)-cut)/2 + 3
	f.Write(s.data[cut:mid])
	m, _ = fw.Match(first)
	if !m.Live || m.Error != "" || m.Ticks <= first || m.First != first {
		t.Fatalf("80%%: live %v, %d ticks (from %d), first frame %d, error %q", m.Live, m.Ticks, first, m.First, m.Error)
	}
	f.Write(s.data[mid:])
	m, _ = fw.Match(0)
	if m.Live || m.End != "finished" || m.Ticks != s.ticks || len(m.Frames) != int(s.ticks) {
		t.Fatalf("all: live %v, %d ticks, end %q, error %q", m.Live, m.Ticks, m.End, m.Error)
	}
	whole, _ := Load(path, nil)
	w, _ := whole.Match(0)
	if a, b := mustJSON(t, m), mustJSON(t, w); a != b {
		t.Errorf("following the recording and loading it whole differ")
	}
}

func TestFollowerKeepsTheNewestTicks(t *testing.T) {
	s := recordScript(t)
	fw, err := Follow(writeRecording(t, s.data), nil, 30)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := fw.Match(0)
	if m.First != s.ticks-30 || len(m.Frames) != 30 || m.Ticks != s.ticks {
		t.Fatalf("kept %d frames from %d of %d ticks", len(m.Frames), m.First, m.Ticks)
	}
	for _, sh := range m.Shots {
		if sh.Tick < m.First {
			t.Errorf("a shot of tick %d kept", sh.Tick)
		}
	}
}

func TestDamagedRecordingShowsWhatIsIntact(t *testing.T) {
	s := recordScript(t)
	bad := bytes.Clone(s.data)
	bad[len(bad)*7/10] ^= 0x55
	f, err := Load(writeRecording(t, bad), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := f.Match(0)
	if m.Error == "" || !strings.Contains(m.Error, "record at byte") || m.Ticks == 0 || m.Ticks >= s.ticks {
		t.Fatalf("a damaged recording: %d ticks, error %q", m.Ticks, m.Error)
	}
	if _, err := Load(writeRecording(t, []byte("not a recording")), nil); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Errorf("not a recording: %v", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHandler(t *testing.T) {
	s := recordScript(t)
	f, err := Load(writeRecording(t, s.data), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.StripPrefix("/view/x", Handler(f)))
	defer srv.Close()
	get := func(path string) (int, string, string) {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header.Get("Content-Type"), string(b)
	}
	if code, _, body := get("/view/x/"); code != 200 || !strings.Contains(body, "<canvas") || !strings.Contains(body, `src="view.js"`) {
		t.Errorf("the page: %d %.100s", code, body)
	}
	if code, ctype, _ := get("/view/x/view.js"); code != 200 || !strings.Contains(ctype, "javascript") {
		t.Errorf("view.js: %d %s", code, ctype)
	}
	code, ctype, body := get("/view/x/match.json?from=100")
	var m Match
	if code != 200 || ctype != "application/json" || json.Unmarshal([]byte(body), &m) != nil || m.First != 100 || len(m.Frames) != 20 {
		t.Errorf("match.json?from=100: %d %s first %d, %d frames", code, ctype, m.First, len(m.Frames))
	}
	if code, _, _ := get("/view/x/match.json?from=-3"); code != 400 {
		t.Errorf("from=-3: %d, want 400", code)
	}
}
