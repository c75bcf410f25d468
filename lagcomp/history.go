package lagcomp

import (
	"fmt"
	"slices"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
)

// History is a ring of per-tick frames: for each of the last window+1 ticks,
// the pose of every rewindable collider that existed at that tick. Frames
// reuse their storage, so recording allocates only while the room grows.
type History struct {
	frames []frame
	newest int64
	count  int
}

type frame struct {
	tick  int64
	poses []Pose // ordered by entity index
}

// NewHistory returns a history deep enough for rewinds of window ticks: it
// keeps window+1 frames, the present and window past ticks.
func NewHistory(window int) *History {
	return &History{frames: make([]frame, window+1), newest: -1}
}

// Record stores the poses of tick. Ticks must be recorded in increasing
// order. The history is one run of consecutive ticks: after a gap (a tick
// never recorded) it starts afresh at tick, so every tick from Oldest to
// Newest is always present.
func (h *History) Record(tick int64, poses []Pose) error {
	if h.count > 0 && tick <= h.newest {
		return fmt.Errorf("lagcomp: history: tick %d recorded after tick %d", tick, h.newest)
	}
	if tick < 0 {
		return fmt.Errorf("lagcomp: history: negative tick %d", tick)
	}
	f := &h.frames[tick%int64(len(h.frames))]
	f.tick = tick
	f.poses = append(f.poses[:0], poses...)
	slices.SortFunc(f.poses, func(a, b Pose) int { return ecs.CompareEntity(a.Entity, b.Entity) })
	if h.count == 0 || tick != h.newest+1 {
		h.count = 1
	} else {
		h.count = min(h.count+1, len(h.frames))
	}
	h.newest = tick
	return nil
}

// Frame returns the poses recorded at tick, ordered by entity index. The
// slice is valid until the frame is overwritten, window+1 ticks later.
func (h *History) Frame(tick int64) ([]Pose, bool) {
	if h.count == 0 || tick > h.newest || tick < h.Oldest() || tick < 0 {
		return nil, false
	}
	f := &h.frames[tick%int64(len(h.frames))]
	if f.tick != tick {
		return nil, false
	}
	return f.poses, true
}

// PoseAt returns entity e's pose recorded at tick: whether e had a hitbox
// then.
func (h *History) PoseAt(tick int64, e ecs.Entity) (Pose, bool) {
	frame, _ := h.Frame(tick)
	if i, ok := slices.BinarySearchFunc(frame, e, func(p Pose, e ecs.Entity) int { return ecs.CompareEntity(p.Entity, e) }); ok {
		return frame[i], true
	}
	return Pose{}, false
}

// PosesAt appends to out every hitbox as it stood at time t, and returns
// it with the time actually used: each entity recorded at ⌊t⌋ stands at the
// interpolation of its poses at ⌊t⌋ and ⌊t⌋+1 by the fraction of t (at its
// ⌊t⌋ pose if it was not recorded at ⌊t⌋+1, or if its ⌊t⌋+1 pose is a
// teleport: nobody ever stood between the two), crouched as it was at ⌊t⌋
// (a client shows a remote player's flags of the earlier snapshot too);
// entities not recorded at ⌊t⌋ are absent. A spanned t (ViewTime.Span:
// the client's snapshots were more than a tick apart) is the same between
// the two snapshots' ticks, as the client drew it: a straight line, not the
// path of the ticks in between (a teleport at any of them still forbids
// the line). A time outside the history is clamped to the oldest or newest
// frame (a spanned one whose snapshots are not both held is one tick's).
// This is what the TimeMachine places, and what tools that show a rewind
// draw.
func (h *History) PosesAt(t ecs.ViewTime, out []Pose) ([]Pose, ecs.ViewTime) {
	poses, t, framed := h.posesAt(t, out)
	if framed { // the frame itself: out's own copy
		return append(out, poses...), t
	}
	return poses, t
}

// posesAt is PosesAt, except that a time of one frame (no interpolation)
// returns that frame itself, to be read and not kept (framed), rather than
// out with a copy of it appended.
func (h *History) posesAt(t ecs.ViewTime, out []Pose) (poses []Pose, at ecs.ViewTime, framed bool) {
	s, ok := h.between(t)
	if !ok {
		return out, t, false
	}
	if s.frac == 0 {
		return s.a, s.t, true
	}
	for k := range s.a {
		p := s.a[k]
		p.Pos = h.pos(&s, &s.a[k])
		out = append(out, p)
	}
	return out, s.t, false
}

// span is what the poses at a time are drawn from (PosesAt): each pose of
// frame a, at its position moved toward its pose in frame b by frac.
type span struct {
	a, b   []Pose
	frac   float64
	t      ecs.ViewTime // the time used
	ta, tb int64        // a's and b's ticks
	j      int          // how far pos has gone through b
}

// between returns what the poses at time t are drawn from, false when the
// history holds nothing.
func (h *History) between(t ecs.ViewTime) (span, bool) {
	if h.count == 0 {
		return span{}, false
	}
	if ta, tb, _ := t.Between(); t.Spanned() && (ta < h.Oldest() || tb > h.newest) {
		t.Back, t.Span = 0, 0
	}
	switch {
	case t.Tick < h.Oldest():
		t = ecs.ViewTime{Tick: h.Oldest()}
	case t.Tick >= h.newest:
		t = ecs.ViewTime{Tick: h.newest}
	}
	s := span{t: t}
	s.ta, s.tb, s.frac = t.Between()
	s.a, _ = h.Frame(s.ta)
	if s.frac != 0 {
		s.b, _ = h.Frame(s.tb)
	}
	return s, true
}

// pos returns where p, a pose of s.a, stands at s's time: at its pose in
// a, or, where it was recorded in b too and nothing forbids the line (a
// teleport), at the interpolation of the two. The poses of a are asked in
// a's order.
func (h *History) pos(s *span, p *Pose) geom.Vec3 {
	if s.frac == 0 {
		return p.Pos
	}
	b, j := s.b, s.j
	if !(j < len(b) && b[j].Entity == p.Entity) { // else the frames go on alike
		for j < len(b) && ecs.CompareEntity(b[j].Entity, p.Entity) < 0 {
			j++
		}
		s.j = j
	}
	if j < len(b) && b[j].Entity == p.Entity && !b[j].Teleport && (!s.t.Spanned() || !h.teleported(p.Entity, s.ta+1, s.tb-1)) {
		return p.Pos.Lerp(b[j].Pos, s.frac)
	}
	return p.Pos
}

// teleported reports whether e teleported (or was absent: dead, gone) at
// any tick from..to: a line across them would show it where it never
// stood.
func (h *History) teleported(e ecs.Entity, from, to int64) bool {
	for tick := from; tick <= to; tick++ {
		if p, ok := h.PoseAt(tick, e); !ok || p.Teleport {
			return true
		}
	}
	return false
}

// Newest returns the newest recorded tick (the present), or −1.
func (h *History) Newest() int64 { return h.newest }

// Oldest returns the oldest tick still held, or −1 when nothing is recorded.
func (h *History) Oldest() int64 {
	if h.count == 0 {
		return -1
	}
	return h.newest - int64(h.count) + 1
}

// Window returns the deepest rewind the history can serve, in ticks.
func (h *History) Window() int { return len(h.frames) - 1 }
