package movement

import (
	"math"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/trimesh"
)

// State is a character's movement: with the Character, the input and the
// level, everything the next tick depends on. A snapshot that lets a client
// reconcile carries Pos, Vel, Crouched and JumpHeld, unquantised
// (docs/movement.md, "What a snapshot carries").
type State struct {
	Pos      geom.Vec3 // the feet: the capsule's bottom is Skin above
	Vel      geom.Vec3 // m/s
	Crouched bool
	JumpHeld bool // the jump button was down last tick: a jump needs it up first

	// OnGround and Ground (the ground's unit normal, zero in the air) are
	// what the last Move ended on, for the caller (animations, sounds,
	// bots). Move does not read them: it finds the ground again from the
	// fields above, so a snapshot need not carry them.
	OnGround bool
	Ground   geom.Vec3
}

// maxTick is the longest tick Move accepts, in seconds.
const maxTick = 1.0

// Move advances s by one tick of dt seconds (0 < dt ≤ 1; otherwise, or with
// a position that is not finite, s is left as it is) under in, against the
// triangles of world whose mask shares a bit with mask (a nil world is
// empty). c must have passed Validate. The server and the client's
// prediction both run it: the same arguments give the same s, bit for bit,
// on one machine; it allocates nothing and any number of goroutines may run
// it at once on one world.
//
// A tick, in the order of QuakeWorld's PlayerMove and Source's FullWalkMove
// (docs/movement.md walks through each step and why):
//
//  1. find the ground: a sweep down by twice the skin meets a face whose
//     normal has a Y of at least cos(MaxSlope) (or an edge of one: a perch),
//     and the character is not moving away from it; if the sweep says the
//     capsule touches something (a start inside geometry: a spawn, a
//     snapshot), push it out first;
//  2. jump, if on the ground and the button went down;
//  3. crouch, or stand up if the standing capsule fits (in the air, which
//     includes the tick of a jump, by moving the feet rather than the head);
//  4. on the ground: friction, acceleration along the ground, a step-slide
//     (Quake's PM_StepSlideMove, Source's StepMove) and a snap down to the
//     ground within StepHeight (Source's StayOnGround);
//     in the air: air acceleration, half the tick's gravity, a slide
//     (Quake's PM_SlideMove, Source's TryPlayerMove), the ground found
//     again, and the other half of gravity unless it landed.
func Move(c *Character, s *State, in Input, dt float64, world *trimesh.Mesh, mask trimesh.Mask) {
	move(c, s, in, dt, world, mask, nil, true)
}

// NearMargin is the margin a character's [trimesh.Near] gathers with: a
// little more than a tick's queries reach beyond the last tick's at a run,
// so that it gathers again every few ticks.
const NearMargin = 0.6

// MoveNear is Move against the level near caches (its mesh, and its mask),
// which it keeps around the character from tick to tick: one near per
// character (trimesh.NewNear with NearMargin). It gives the same state as
// Move, bit for bit, and is cheaper on a large level. near may not be
// shared by goroutines.
func MoveNear(c *Character, s *State, in Input, dt float64, near *trimesh.Near) {
	move(c, s, in, dt, near.Mesh(), near.Mask(), near, true)
}

// move is Move, with or without its shortcuts: answers it takes from what
// it already knows instead of asking the mesh again (a contact inside a
// face is its own ground; a walker that stays inside the flat face it
// stands on stays on it). They give the same state, bit for bit, as asking
// (a test runs both); they only make the common cases cheaper.
func move(c *Character, s *State, in Input, dt float64, world *trimesh.Mesh, mask trimesh.Mask, near *trimesh.Near, shortcuts bool) {
	if !(dt > 0 && dt <= maxTick) || !s.Pos.IsFinite() {
		return
	}
	if !s.Vel.IsFinite() {
		s.Vel = geom.Vec3{}
	}
	m := mover{c: c, world: world, near: near, mask: mask, dt: dt, walkable: math.Cos(c.MaxSlope * (math.Pi / 180)), shortcuts: shortcuts}

	// A sweep from a capsule that touches anything reports it at t = 0,
	// whatever the direction: the ground sweep says whether to push out.
	h, hit := m.sweep(s.Pos, s.Crouched, down, 2*c.Skin)
	if hit && h.T == 0 {
		m.depenetrate(&s.Pos, s.Crouched)
		h, hit = m.sweep(s.Pos, s.Crouched, down, 2*c.Skin)
	}
	onGround, ground, _, _ := m.standing(s.Pos, s.Vel, s.Crouched, h, hit, 2*c.Skin)

	if in.Jump && !s.JumpHeld && onGround && c.JumpHeight > 0 {
		s.Vel.Y = jumpSpeed(c.JumpHeight, c.Gravity, dt)
		onGround = false
	}
	s.JumpHeld = in.Jump
	m.crouch(s, in.Crouch, onGround)

	wish := stick(in.MoveX, in.MoveZ, in.Yaw)
	speed := c.RunSpeed
	switch {
	case s.Crouched && onGround:
		speed = c.CrouchSpeed
	case in.Sprint && !s.Crouched && finite(in.MoveZ) > 0:
		speed = c.SprintSpeed
	}
	var wishDir geom.Vec3
	wishSpeed := 0.0
	if l := wish.Len(); l > 0 {
		wishDir, wishSpeed = wish.Scale(1/l), l*speed
	}

	if onGround {
		var floor *trimesh.Hit
		if shortcuts && ground == up && h.Normal == up {
			floor = &h // on flat ground, perhaps inside a face: walk may not need to look again
		}
		m.walk(s, ground, floor, wishDir, wishSpeed)
	} else {
		m.fly(s, wishDir, wishSpeed)
	}
}

// The controller's bounds and thresholds. The loops are bounded by these
// counts, so that no corner of any level can make a tick loop.
const (
	maxBumps  = 4 // sweeps per slide: Quake's and Source's numbumps
	maxPlanes = 5 // planes a slide clips against: MAX_CLIP_PLANES
	maxPushes = 4 // depenetration pushes per call

	// leaveSpeed: moving away from the ground faster than this (m/s along
	// its normal) is leaving it: a jump's second tick, a launch. Quake
	// III's PM_GroundTrace uses 10 units/s.
	leaveSpeed = 0.25
	// slack: a velocity whose component into a plane is above −slack
	// (m/s) does not move into it: what clipping leaves along a plane's
	// normal is rounding.
	slack = 1e-9
	// sameNormal: a contact whose normal is this close to a plane's (the
	// cosine of 8°) is that plane again (Quake III's PM_SlideMove): a
	// crease between them would be mostly rounding.
	sameNormal = 0.99
	// minGap: a triangle closer than Radius + minGap (m) touches the
	// capsule, which depenetrate then pushes off to Radius + Skin. It is far
	// above rounding and below the least gap the controller leaves
	// (minSkin × perchY).
	minGap = 1e-5
	// perchY: a contact below the capsule whose normal's Y is at least this
	// (up to 89° from vertical) may hold it up; see support.
	perchY = 0.02
	// perchReach: how far past a contact, in metres, the face that holds
	// the character is looked for.
	perchReach = 1e-3
	// minMove: a slide stops when less than this is left to move, in
	// metres.
	minMove = 1e-9
	// contactRoom: the contacts an overlap query holds without allocating.
	contactRoom = 32
	// faceMargin: a point this far inside a triangle's edges (metres) is
	// on its face for a ray down, whatever the rounding.
	faceMargin = 1e-6
	// shortReach: a long sweep down is asked first this many skins long
	// (sweepDown), and sweepSlack is how far, relative to the lengths,
	// the contact must be from that sweep's end to answer the long one.
	shortReach = 2
	sweepSlack = 1e-9
)

var (
	up   = geom.V(0, 1, 0)
	down = geom.V(0, -1, 0)
)

// mover is one tick's constants.
type mover struct {
	c     *Character
	world *trimesh.Mesh
	// near, if not nil, caches world's triangles around the character:
	// the queries ask it (raycast, sweep, overlap).
	near     *trimesh.Near
	mask     trimesh.Mask
	dt       float64
	walkable float64 // cos(MaxSlope): a walkable normal's least Y
	// shortcuts: take answers from what the tick already knows (move).
	shortcuts bool
}

// walk is a tick on the ground (Source's WalkMove, with Quake III's
// PM_WalkMove's motion along the ground plane): friction, acceleration
// toward the wish direction laid on the ground (by GroundAccel times the
// wish speed or the run speed, whichever is higher: Quake's times the wish
// speed alone would leave a crouch or a half stick sluggish, held back by
// friction's floor of StopSpeed), the velocity kept in the
// ground plane at its speed (so slopes are walked at full speed), a
// step-slide, and a snap down onto ground within StepHeight (Source's
// StayOnGround), which keeps a walker on stairs and slopes going down. No
// gravity acts while on the ground; walking off an edge, the character
// takes the second half of the tick's.
//
// floor is the tick's ground probe when it met flat ground (nil otherwise):
// a walker that slid freely across it and ends with its footprint inside
// the same flat face, a margin from its edges, is on that face at the same
// height, and the snap down would meet that face first at the probe's
// distance, bit for bit; so it rests there without looking again (the
// common case of walking on a floor, where the snap is half the tick's
// queries).
func (m *mover) walk(s *State, ground geom.Vec3, floor *trimesh.Hit, wishDir geom.Vec3, wishSpeed float64) {
	c := m.c
	v := friction(s.Vel, c.Friction, c.StopSpeed, m.dt)
	if wishSpeed > 0 {
		v = accelerate(v, alongGround(wishDir, ground), wishSpeed, c.GroundAccel*max(wishSpeed, c.RunSpeed)*m.dt)
	}
	v = onPlane(v, ground)
	var blocked bool
	s.Pos, s.Vel, blocked = m.stepSlide(s.Pos, v, s.Crouched, ground)
	if floor != nil && !blocked && s.Vel.Y == 0 && m.onFace(floor.Tri, s.Pos) {
		m.rest(&s.Pos, s.Crouched, floor.T)
		s.OnGround, s.Ground = true, ground
		return
	}
	if held, n, t, _ := m.ground(s.Pos, s.Vel, s.Crouched, c.StepHeight+2*c.Skin); held {
		m.rest(&s.Pos, s.Crouched, t)
		s.Vel = onPlane(s.Vel, n)
		s.OnGround, s.Ground = true, n
		return
	}
	s.OnGround, s.Ground = false, geom.Vec3{}
	s.Vel.Y -= c.Gravity * m.dt / 2
}

// fly is a tick in the air (Source's AirMove): air acceleration, then
// gravity split in halves around the slide, as Source's StartGravity and
// FinishGravity do, so that free flight follows the exact parabola at tick
// boundaries: x += (v − g·dt/2)·dt, v −= g·dt. Landing (ground found after
// the slide) puts the feet on it, takes the velocity's component into it
// off and skips the second half: on flat ground the vertical speed is then
// 0.
func (m *mover) fly(s *State, wishDir geom.Vec3, wishSpeed float64) {
	c := m.c
	v := accelerate(s.Vel, wishDir, min(wishSpeed, c.AirWishSpeed), c.AirAccel*wishSpeed*m.dt)
	v.Y -= c.Gravity * m.dt / 2
	s.Pos, v, _ = m.slide(s.Pos, v, s.Crouched, geom.Vec3{})
	if held, n, t, _ := m.ground(s.Pos, v, s.Crouched, 2*c.Skin); held {
		m.rest(&s.Pos, s.Crouched, t)
		if into := v.Dot(n); into < 0 {
			v = v.AddScaled(n, -into)
		}
		s.Vel, s.OnGround, s.Ground = v, true, n
		return
	}
	v.Y -= c.Gravity * m.dt / 2
	s.Vel, s.OnGround, s.Ground = v, false, geom.Vec3{}
}

// onFace reports whether feet at pos stand inside flat triangle i (facing
// up or down), every edge at least the radius and two skins away: the
// capsule then rests on the face alone.
func (m *mover) onFace(i int, pos geom.Vec3) bool {
	fn, ok := m.world.Normal(i)
	return ok && (fn == up || fn == down) && m.inside(i, fn, pos, m.c.Radius+2*m.c.Skin)
}

// inside reports whether p projects onto triangle i, of normal n, at least
// margin from each of its edges.
func (m *mover) inside(i int, n, p geom.Vec3, margin float64) bool {
	t, ok := m.world.Triangle(i)
	return ok && insideEdge(t.A, t.B, n, p, margin) && insideEdge(t.B, t.C, n, p, margin) && insideEdge(t.C, t.A, n, p, margin)
}

// insideEdge reports whether p lies at least margin inside the edge e0–e1
// of a triangle of normal n (inside asks each edge in turn, written out
// rather than looped over).
func insideEdge(e0, e1, n, p geom.Vec3, margin float64) bool {
	edge := e1.Sub(e0)
	// The distance of p from the edge's line times its length, positive on
	// the inside.
	return !(edge.Cross(p.Sub(e0)).Dot(n) < margin*edge.Len())
}

// ground reports whether the capsule with feet at pos has ground within
// reach below it, the normal to walk along, how far down it is, and the
// height of the point it stands on (QuakeWorld's PM_CatagorizePosition): a
// sweep down meets something that holds it up (support), and the velocity
// is not leaving it (Quake III's test, so that a jump's second tick is not
// taken for standing). The ground is found from the state alone: twice the
// skin below for a character at rest on it, further for a walker kept on
// it or a step.
//
// The sweep reports the first contact only, and a capsule at the foot of a
// steep slope or beside a ledge meets that before the floor right under
// it: then the floor under the axis, found by a ray, holds it, if the
// capsule can get down to rest on it (Skin above) before the contact.
func (m *mover) ground(pos, vel geom.Vec3, crouched bool, reach float64) (held bool, n geom.Vec3, t, top float64) {
	h, ok := m.sweepDown(pos, crouched, reach)
	return m.standing(pos, vel, crouched, h, ok, reach)
}

// sweepDown is the sweep straight down for reach, asked first for
// shortReach when reach is longer: most ground lies within that (a walker
// on a face), and a contact found well within the short sweep (sweepSlack
// short of its end) is the long one's too, bit for bit (the first contact
// is the least over the triangles, each triangle's distance is computed the
// same way whatever the length, and a length only leaves out what lies
// beyond it); the short sweep tests fewer triangles in full. Else the long
// sweep answers.
func (m *mover) sweepDown(pos geom.Vec3, crouched bool, reach float64) (trimesh.Hit, bool) {
	if short := shortReach * m.c.Skin; m.near != nil && reach > short {
		if h, ok := m.sweep(pos, crouched, down, short); ok && h.T <= short-sweepSlack*(1+reach) {
			return h, true
		}
	}
	return m.sweep(pos, crouched, down, reach)
}

// standing is ground given its sweep's result.
func (m *mover) standing(pos, vel geom.Vec3, crouched bool, h trimesh.Hit, ok bool, reach float64) (held bool, n geom.Vec3, t, top float64) {
	if !ok {
		return false, geom.Vec3{}, 0, 0
	}
	held, n = m.support(pos, crouched, h)
	t, top = h.T, pos.Y+m.c.Skin+m.c.Radius-h.T-h.Normal.Y*m.c.Radius
	if !held {
		bottom := pos.Add(geom.V(0, m.c.Skin, 0))
		r, ok := m.raycast(bottom, down, reach)
		if !ok || r.Normal.Y < m.walkable || r.T-m.c.Skin > h.T {
			return false, geom.Vec3{}, 0, 0
		}
		held, n, t, top = true, r.Normal, r.T, bottom.Y-r.T
	}
	if vel.Dot(n) > leaveSpeed {
		return false, geom.Vec3{}, 0, 0
	}
	return true, n, t, top
}

// rest puts the feet at pos on the ground t below the capsule: the
// capsule then rests Skin above it, and the feet on it, whatever gap the
// move ended with. Up is swept, so as not to rise into a ceiling.
func (m *mover) rest(pos *geom.Vec3, crouched bool, t float64) {
	skin := m.c.Skin
	switch {
	case t-skin > minMove:
		pos.Y -= t - skin
	case skin-t > minMove:
		rise := skin - t
		if h, ok := m.sweep(*pos, crouched, up, rise); ok {
			rise = backoff(h.T, -h.Normal.Y, skin)
		}
		pos.Y += rise
	}
}

// support reports whether h, the contact of a sweep straight down from
// feet at pos, holds the character up, and the normal of the ground to
// walk along.
//
// What holds the character is a face that is walkable (its normal's Y at
// least cos(MaxSlope), as Quake and Source judge their floors), under the
// contact. On a face, the contact's normal is the face's; but the capsule's
// round bottom also meets edges (a stair's nosing, a ledge), whose contact
// normal tilts with how far the edge is from the capsule's axis rather than
// with the ground: walking along it would ride the nosings of a stair like
// bumps and launch off them, and a capsule stepping onto a stair, which
// lands on the nosing at a tilt that grows the shorter the tick, would be
// refused. So the face is found by a short ray down just past the contact
// (away from the axis: where the surface the edge bounds lies), and its
// normal judged and walked along; the character then perches on the edge,
// as Unreal's CharacterMovementComponent perches capsules on ledges. The
// contact must lie on the capsule's lower half (normal's Y at least
// perchY). A sharp ridge between two steep faces holds nothing.
func (m *mover) support(pos geom.Vec3, crouched bool, h trimesh.Hit) (bool, geom.Vec3) {
	n := h.Normal
	if n.Y < perchY {
		return false, geom.Vec3{}
	}
	a, _ := m.c.segment(pos, crouched)
	contact := a.AddScaled(down, h.T).AddScaled(n, -m.c.Radius)
	past := geom.V(-n.X, 0, -n.Z).Normalize()
	o := contact.AddScaled(past, perchReach).AddScaled(up, m.c.Skin)
	if fn, ok := m.world.Normal(h.Tri); m.shortcuts && ok && (n == fn || n == fn.Scale(-1)) && m.inside(h.Tri, fn, o, 2*m.c.Skin+faceMargin) {
		// A contact inside the face (its normal is the face's), with the
		// ray well inside it too (its start, up to the twice the skin the
		// ray goes down, on a slope moved that much along the face): the
		// ray would meet that face and say the same.
		return n.Y >= m.walkable, n
	}
	if r, ok := m.raycast(o, down, 2*m.c.Skin); ok {
		if r.Normal.Y < m.walkable {
			return false, geom.Vec3{}
		}
		return true, r.Normal
	}
	if n.Y < m.walkable { // the ray slipped off a sliver: the contact decides
		return false, geom.Vec3{}
	}
	return true, n
}

// crouch crouches while the button is held, and stands up when it is not
// and the standing capsule fits, touching nothing (Source's Duck and
// CanUnduck). On the ground the feet stay and the head moves. In the air
// the head stays and the feet move, so that a crouch-jump clears Height −
// CrouchHeight more (Source's duck-jump); standing up in the air lowers the
// feet back if there is room, else (just off the ground, or over a ledge)
// raises the head as on the ground. Crouching needs no test: the crouched
// capsule lies inside the standing one.
func (m *mover) crouch(s *State, want, onGround bool) {
	lift := m.c.Height - m.c.CrouchHeight
	switch {
	case want && !s.Crouched:
		s.Crouched = true
		if !onGround {
			s.Pos.Y += lift
		}
	case !want && s.Crouched:
		if !onGround && m.fits(s.Pos.Sub(geom.V(0, lift, 0))) {
			s.Pos.Y -= lift
			s.Crouched = false
		} else if m.fits(s.Pos) {
			s.Crouched = false
		}
	}
}

// fits reports whether the standing capsule with feet at pos touches
// nothing.
func (m *mover) fits(pos geom.Vec3) bool {
	var buf [contactRoom]trimesh.Contact
	return len(m.overlap(pos, false, m.c.Radius+minGap, buf[:0])) == 0
}

// jumpSpeed returns the take-off speed whose highest position at a tick
// boundary is h above the take-off, under gravity g with ticks of dt. Free
// flight is the exact parabola y(n) = v·n·dt − g·(n·dt)²/2 at tick n, so
// the continuous apex v²/2g is sampled up to g·dt²/8 short (6 mm at 20 Hz
// with g = 20 m/s²). For a given peak tick n, y(n) = h gives
// v = h/(n·dt) + g·n·dt/2, and n is the highest tick exactly when
// n(n−1)/2 ≤ c ≤ n(n+1)/2 with c = h/(g·dt²); the highest position is
// increasing in v, so that v is the only one.
func jumpSpeed(h, g, dt float64) float64 {
	c := h / (g * dt * dt)
	n := max(1, math.Ceil((math.Sqrt(1+8*c)-1)/2))
	if n > 1 && (n-1)*n/2 >= c {
		n--
	}
	if n*(n+1)/2 < c {
		n++
	}
	return h/(n*dt) + g*n*dt/2
}

// friction is Quake's PM_Friction on the ground: the speed drops by
// max(speed, stop) × f × dt, never below 0.
func friction(v geom.Vec3, f, stop, dt float64) geom.Vec3 {
	speed := v.Len()
	if speed == 0 {
		return v
	}
	drop := max(speed, stop) * f * dt
	return v.Scale(max(speed-drop, 0) / speed)
}

// accelerate is Quake's PM_Accelerate and PM_AirAccelerate: it adds up to
// most along the unit dir, and no more than brings the speed along dir to
// limit. Speed across dir is untouched, which is what lets air strafing
// turn and gain speed.
func accelerate(v, dir geom.Vec3, limit, most float64) geom.Vec3 {
	add := limit - v.Dot(dir)
	if add <= 0 {
		return v
	}
	return v.AddScaled(dir, min(most, add))
}

// alongGround returns the horizontal unit direction dir lifted onto the
// ground plane of normal n (vertically) and made unit again, as Quake III
// clips its forward and right vectors to the ground: full stick walks a
// slope at the wish speed along it.
func alongGround(dir, n geom.Vec3) geom.Vec3 {
	if dir == (geom.Vec3{}) {
		return dir
	}
	return geom.V(dir.X, -(n.X*dir.X+n.Z*dir.Z)/n.Y, dir.Z).Normalize()
}

// onPlane returns v laid in the plane of unit normal n at its speed
// (Quake III's PM_WalkMove: "don't decrease velocity when going up or down
// a slope"); zero if v is along n.
func onPlane(v, n geom.Vec3) geom.Vec3 {
	speed := v.Len()
	p := v.AddScaled(n, -v.Dot(n))
	l := p.Len()
	if l == 0 || speed == 0 {
		return geom.Vec3{}
	}
	return p.Scale(speed / l)
}

// backoff returns how far to move along a motion whose first contact is at
// t, its normal closing at along metres per metre moved, to stop Skin
// short of it: the distance to a convex set shrinks no faster forwards than
// it grows backwards, so backing off skin/along leaves a gap of at least
// skin. A grazing contact (small along) would back off further than the
// motion went: the motion then stops where it started, and the slide clips
// its velocity to go along. (Sweeps straight down back off Skin
// vertically instead, leaving a gap of Skin times the normal's Y: at least
// minSkin × perchY on a perch, so that the next tick's ground sweep, twice
// the skin long, finds what they landed on.)
func backoff(t, along, skin float64) float64 {
	if along > 0 {
		t -= skin / along
	} else {
		t -= skin
	}
	return max(t, 0)
}

// sweep is the capsule with feet at pos swept along the unit d for l.
func (m *mover) sweep(pos geom.Vec3, crouched bool, d geom.Vec3, l float64) (trimesh.Hit, bool) {
	if m.world == nil {
		return trimesh.Hit{}, false
	}
	a, b := m.c.segment(pos, crouched)
	if m.near != nil {
		return m.near.SweepCapsule(a, b, m.c.Radius, d, l, m.mask)
	}
	return m.world.SweepCapsule(a, b, m.c.Radius, d, l, m.mask)
}

// raycast is the ray from o along the unit d for l.
func (m *mover) raycast(o, d geom.Vec3, l float64) (trimesh.Hit, bool) {
	if m.near != nil {
		return m.near.Raycast(o, d, l, m.mask)
	}
	return m.world.Raycast(o, d, l, m.mask)
}

// overlap appends the triangles closer than r to the capsule's core with
// feet at pos.
func (m *mover) overlap(pos geom.Vec3, crouched bool, r float64, out []trimesh.Contact) []trimesh.Contact {
	if m.world == nil {
		return out
	}
	a, b := m.c.segment(pos, crouched)
	if m.near != nil {
		return m.near.OverlapCapsule(a, b, r, m.mask, out)
	}
	return m.world.OverlapCapsule(a, b, r, m.mask, out)
}
