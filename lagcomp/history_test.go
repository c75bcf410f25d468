package lagcomp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
)

func TestHistoryKeepsWindowPlusOneFrames(t *testing.T) {
	e := entities(1)
	h := NewHistory(3)
	for tick := int64(0); tick < 10; tick++ {
		mustRecord(t, h, tick, pose(e[0], 1, float64(tick), 0))
	}
	if h.Newest() != 9 || h.Oldest() != 6 || h.Window() != 3 {
		t.Fatalf("newest %d oldest %d window %d, want 9 6 3", h.Newest(), h.Oldest(), h.Window())
	}
	for tick := int64(0); tick < 12; tick++ {
		poses, ok := h.Frame(tick)
		want := tick >= 6 && tick <= 9
		if ok != want {
			t.Errorf("Frame(%d) present=%v, want %v", tick, ok, want)
		}
		if ok && poses[0].Pos.X != float64(tick) {
			t.Errorf("Frame(%d) x=%v, want %d", tick, poses[0].Pos.X, tick)
		}
	}
}

func TestHistoryRecordsWhoExisted(t *testing.T) {
	e := entities(3)
	h := NewHistory(30)
	mustRecord(t, h, 0, pose(e[0], 1, 0, 0), pose(e[1], 2, 1, 0))
	mustRecord(t, h, 1, pose(e[2], 1, 2, 0), pose(e[1], 2, 1, 0)) // e0 gone, e2 new, any order
	f0, _ := h.Frame(0)
	f1, _ := h.Frame(1)
	if len(f0) != 2 || f0[0].Entity != e[0] || f0[1].Entity != e[1] {
		t.Errorf("tick 0: %+v", f0)
	}
	if len(f1) != 2 || f1[0].Entity != e[1] || f1[1].Entity != e[2] {
		t.Errorf("tick 1 not ordered by entity: %+v", f1)
	}
}

// PoseAt finds an entity's pose in a frame, and nothing for an entity that
// had no hitbox then or a tick outside the window.
func TestHistoryPoseAt(t *testing.T) {
	e := entities(3)
	h := NewHistory(2)
	mustRecord(t, h, 0, pose(e[2], 1, 2, 0), pose(e[0], 2, 5, 0))
	if p, ok := h.PoseAt(0, e[2]); !ok || p.Pos.X != 2 {
		t.Errorf("e2 at tick 0: %+v %v", p, ok)
	}
	if p, ok := h.PoseAt(0, e[0]); !ok || p.Pos.X != 5 {
		t.Errorf("e0 at tick 0: %+v %v", p, ok)
	}
	if _, ok := h.PoseAt(0, e[1]); ok {
		t.Error("e1 had no hitbox at tick 0")
	}
	if _, ok := h.PoseAt(1, e[0]); ok {
		t.Error("tick 1 is not recorded")
	}
}

func TestHistoryRejectsOldTicksAndLeavesGapsAbsent(t *testing.T) {
	e := entities(1)
	h := NewHistory(10)
	mustRecord(t, h, 5, pose(e[0], 1, 0, 0))
	if err := h.Record(5, nil); err == nil {
		t.Error("recording tick 5 twice should fail")
	}
	if err := h.Record(4, nil); err == nil {
		t.Error("recording an older tick should fail")
	}
	mustRecord(t, h, 6, pose(e[0], 1, 1, 0))
	mustRecord(t, h, 8, pose(e[0], 1, 3, 0))
	// A gap starts the history afresh: every tick from Oldest to Newest is held.
	if h.Oldest() != 8 || h.Newest() != 8 {
		t.Errorf("after a gap: oldest %d newest %d, want 8 8", h.Oldest(), h.Newest())
	}
	for _, tick := range []int64{5, 6, 7} {
		if _, ok := h.Frame(tick); ok {
			t.Errorf("tick %d before the gap should be absent", tick)
		}
	}
}

func TestHistoryReusesStorage(t *testing.T) {
	e := entities(12)
	h := NewHistory(30)
	poses := make([]Pose, 12)
	for i := range poses {
		poses[i] = pose(e[i], 1, float64(i), 0)
	}
	tick := int64(0)
	for ; tick < 40; tick++ {
		mustRecord(t, h, tick, poses...)
	}
	allocs := testing.AllocsPerRun(100, func() {
		_ = h.Record(tick, poses)
		tick++
	})
	if allocs != 0 {
		t.Errorf("Record allocates %v times per tick in steady state", allocs)
	}
}

func TestViewTimeAt(t *testing.T) {
	cfg := Config{WindowTicks: 30}
	tests := []struct {
		name         string
		present, old int64
		lag          float64
		resolution   int
		want         float64
	}{
		{"exact", 100, 0, 3.5, 0, 96.5},
		{"window clamp", 100, 0, 45, 0, 70},
		{"no rewind into the future", 100, 0, -2, 0, 100},
		{"history start", 10, 0, 25, 0, 0},
		{"oldest frame", 100, 80, 25, 0, 80},
		{"round to quarter", 100, 0, 3.3, 4, 96.75},
		{"half rounds up", 100, 0, 3.25, 2, 97},
		{"half rounds up (exact half tick)", 100, 0, 3.5, 1, 97},
		{"whole ticks", 100, 0, 3.49, 1, 97},
		{"rounding never leaves the window", 100, 0, 29.9, 1, 70},
		{"NaN is the present", 100, 0, math.NaN(), 0, 100},
	}
	for _, tt := range tests {
		c := cfg
		c.ViewResolution = tt.resolution
		got := c.ViewTimeAt(tt.present, tt.old, tt.lag)
		if got.Ticks() != tt.want || got.Frac < 0 || got.Frac >= 1 {
			t.Errorf("%s: got %+v (%v), want %v", tt.name, got, got.Ticks(), tt.want)
		}
	}
	if got := (Config{WindowTicks: 0}).ViewTimeAt(50, 0, 10); got != (ecs.ViewTime{Tick: 50}) {
		t.Errorf("window 0 must resolve at the present, got %+v", got)
	}
}

// TestViewTimesAreViewTimeAt asks ViewTimes for lags repeated, close, of
// −0, NaN and ±Inf, more of them than it has slots, at several ticks and
// resolutions: every answer is ViewTimeAt's, bit for bit.
func TestViewTimesAreViewTimeAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 70))
	special := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1e300, -3, 45}
	var v ViewTimes
	for round := range 200 {
		c := Config{WindowTicks: 1 + rng.IntN(40), ViewResolution: []int{0, 1, 4, 1000}[rng.IntN(4)]}
		present := int64(rng.IntN(1000))
		oldest := max(0, present-int64(rng.IntN(50)))
		v.Reset(c, present, oldest)
		lags := make([]float64, 1+rng.IntN(3*viewTimeSlots))
		for i := range lags {
			if rng.IntN(8) == 0 {
				lags[i] = special[rng.IntN(len(special))]
			} else {
				lags[i] = float64(rng.IntN(80)) / 8
			}
		}
		for range 4 * len(lags) {
			lag := lags[rng.IntN(len(lags))]
			got, want := v.At(lag), c.ViewTimeAt(present, oldest, lag)
			if got.Tick != want.Tick || math.Float64bits(got.Frac) != math.Float64bits(want.Frac) || got.Back != want.Back || got.Span != want.Span {
				t.Fatalf("round %d: lag %v at %d (oldest %d, %+v): %+v, want %+v", round, lag, present, oldest, c, got, want)
			}
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Config{
		{WindowTicks: -1, CellSize: 4},
		{WindowTicks: MaxWindowTicks + 1, CellSize: 4},
		{ViewResolution: -1, CellSize: 4},
		{CellSize: 0},
	} {
		if c.Validate() == nil {
			t.Errorf("%+v should be invalid", c)
		}
	}
}

// A crouched pose is placed crouched: its capsule's top and head lower by
// the difference of the heights. Between a crouched tick and a standing one
// it stays as the earlier tick has it, as a client shows the flags of the
// earlier snapshot.
func TestCrouchedPoses(t *testing.T) {
	e := entities(1)
	h := NewHistory(10)
	hb := ecs.Hitbox{Radius: 0.4, Height: 1.8, HeadHeight: 0.3, CrouchHeight: 1.1}
	crouched := Pose{Entity: e[0], Team: 1, Hitbox: hb, Pos: geom.V(0, 0, 0), Crouched: true}
	standing := Pose{Entity: e[0], Team: 1, Hitbox: hb, Pos: geom.V(1, 0, 0)}
	mustRecord(t, h, 0, crouched)
	mustRecord(t, h, 1, standing)
	w := NewCollisionWorld(4)
	tm := NewTimeMachine(h, w)
	for _, tt := range []struct {
		at       ecs.ViewTime
		crouched bool
		x        float64
	}{{ecs.ViewTime{Tick: 0}, true, 0}, {ecs.ViewTime{Tick: 0, Frac: 0.5}, true, 0.5}, {ecs.ViewTime{Tick: 1}, false, 1}} {
		tm.TravelTo(tt.at)
		c, ok := w.Hitbox(e[0])
		top, head := 1.8, 1.5
		if tt.crouched {
			top, head = 1.1, 0.8
		}
		if !ok || c.Capsule.B.Y != top-0.4 || c.Capsule.A.X != tt.x || math.Abs(c.HeadY-head) > 1e-12 {
			t.Errorf("at %v: %+v, want the capsule's top at %v and the head from %v", tt.at, c, top, head)
		}
	}
}

// A spanned time is drawn between its two snapshots' ticks, on the straight
// line a client draws, not the path of the ticks in between; a teleport or
// an absence at any of them forbids the line; snapshots not both held make
// it one tick's time.
func TestPosesAtSpanned(t *testing.T) {
	e := entities(3)
	h := NewHistory(10)
	// e0 turns at tick 11: x 0, 1, then z 1 at tick 12. e1 dies at tick 11
	// and is back at tick 12. e2 teleports at tick 12.
	mustRecord(t, h, 10, pose(e[0], 1, 0, 0), pose(e[1], 1, 5, 0), pose(e[2], 1, 8, 0))
	mustRecord(t, h, 11, pose(e[0], 1, 1, 0), pose(e[2], 1, 9, 0))
	tele := pose(e[2], 1, 20, 0)
	tele.Teleport = true
	mustRecord(t, h, 12, pose(e[0], 1, 1, 1), pose(e[1], 1, 6, 0), tele)
	mustRecord(t, h, 13, pose(e[0], 1, 1, 2), pose(e[1], 1, 7, 0), pose(e[2], 1, 21, 0))

	// 10.75 between snapshots 10 and 12: 3/8 of the way.
	at := ecs.ViewTime{Tick: 10, Frac: 0.75, Back: 0, Span: 2}
	if a, b, f := at.Between(); a != 10 || b != 12 || f != 0.375 {
		t.Fatalf("Between: %d %d %v, want 10 12 0.375", a, b, f)
	}
	poses, got := h.PosesAt(at, nil)
	if got != at {
		t.Errorf("time used %+v, want %+v", got, at)
	}
	want := map[ecs.Entity]geom.Vec3{
		e[0]: geom.V(0.375, 0, 0.375), // the line from (0,0) to (1,1), not the path through (1,0)
		e[1]: geom.V(5, 0, 0),         // absent at 11: not moving
		e[2]: geom.V(8, 0, 0),         // teleported at 12: not moving
	}
	for _, p := range poses {
		if p.Pos != want[p.Entity] {
			t.Errorf("%v at %+v: %v, want %v", p.Entity, at, p.Pos, want[p.Entity])
		}
	}
	// 11.5, 1.5 ticks after snapshot 10 of a pair 3 apart (10 and 13): half
	// of the way, computed as a client computes it ((t − a) / (b − a)).
	at = ecs.ViewTime{Tick: 11, Frac: 0.5, Back: 1, Span: 3}
	poses, _ = h.PosesAt(at, poses[:0])
	if p := poses[0]; p.Entity != e[0] || p.Pos != geom.V(0, 0, 0).Lerp(geom.V(1, 0, 2), (11.5-10)/3) {
		t.Errorf("e0 at %+v: %v", at, p.Pos)
	}
	// A pair whose later snapshot is not held yet: one tick's time.
	at = ecs.ViewTime{Tick: 12, Frac: 0.5, Back: 0, Span: 2}
	poses, got = h.PosesAt(at, poses[:0])
	if want := (ecs.ViewTime{Tick: 12, Frac: 0.5}); got != want || poses[0].Pos != geom.V(1, 0, 1.5) {
		t.Errorf("at %+v: used %+v, e0 at %v; want %+v and (1, 0, 1.5)", at, got, poses[0].Pos, want)
	}
}
