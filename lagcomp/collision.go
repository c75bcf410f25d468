package lagcomp

import (
	"fmt"
	"math"
	"slices"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/trimesh"
)

// ColliderKind says what a collider is and how time treats it.
type ColliderKind uint8

const (
	// KindHitbox is a player's capsule. Hitboxes are rewound.
	KindHitbox ColliderKind = iota + 1
	// KindStatic is level geometry: the triangles of the level's mesh that
	// block shots. It always exists and is never rewound.
	KindStatic
	// KindShield is a placed barrier: a box that is never rewound, so it
	// blocks exactly while it exists in the present.
	KindShield
)

// String returns the kind's name.
func (k ColliderKind) String() string {
	switch k {
	case KindHitbox:
		return "hitbox"
	case KindStatic:
		return "static"
	case KindShield:
		return "shield"
	}
	return "unknown"
}

// Collider is one shape of the collision world.
type Collider struct {
	Entity ecs.Entity   // the entity the collider belongs to
	Owner  ecs.Entity   // excluded from its owner's queries (a hitbox is owned by its player)
	Team   uint8        // 0: no team
	Kind   ColliderKind // 0: a free slot of the collision world
	// Capsule is a hitbox's shape; HeadY is the height from which a contact
	// counts as a headshot (+Inf when the hitbox has no head).
	Capsule geom.Capsule
	HeadY   float64
	// Box is a shield's shape.
	Box geom.AABB

	bounds geom.AABB
	stamp  uint64 // the last query that examined this collider
	epoch  uint64 // the last travel that placed this hitbox
	sorted uint64 // the last travel that put it in the sort-and-sweep list
}

// Mask selects the kinds of collider a query considers.
type Mask uint8

const (
	// Hitboxes makes a query consider player hitboxes.
	Hitboxes Mask = 1 << iota
	// Blockers makes a query consider the level's geometry and shields.
	Blockers
	// Everything is what a bullet considers.
	Everything = Hitboxes | Blockers
)

// Filter says which colliders a query may touch.
type Filter struct {
	// Ignore is the querying entity's owner (the shooter): colliders it owns
	// (its own hitbox, its own shield) are transparent to it.
	Ignore ecs.Entity
	// Team is the shooter's team. Teammates' hitboxes (the same team; 0 is a
	// team like any other) are transparent unless FriendlyFire; a shield with
	// a team other than 0 lets that team's shots through.
	Team         uint8
	FriendlyFire bool
	Mask         Mask
}

// accepts reports whether the filter lets a query touch c.
func (f *Filter) accepts(c *Collider) bool {
	if !c.Owner.IsZero() && c.Owner == f.Ignore {
		return false
	}
	switch c.Kind {
	case KindHitbox:
		return f.Mask&Hitboxes != 0 && (f.FriendlyFire || c.Team != f.Team)
	case KindShield:
		return f.Mask&Blockers != 0 && (c.Team == 0 || c.Team != f.Team)
	default:
		return f.Mask&Blockers != 0
	}
}

// Hit is where a query touched a collider.
type Hit struct {
	Entity ecs.Entity   // the collider's entity
	Kind   ColliderKind // what was touched
	T      float64      // distance along the ray or sweep, metres
	Point  geom.Vec3    // the ray point, or the sphere's centre, at contact
	Head   bool         // a hitbox was touched at or above its head height
	// Tri is the level triangle touched (Kind KindStatic): its index in the
	// mesh given to SetLevel.
	Tri int
}

// CollisionWorld is a room's collision scene: the colliders lag-compensated
// queries run against. Hitboxes are placed by the [TimeMachine]; shields by
// the room's systems; the level's geometry is a triangle mesh given once
// (SetLevel), which rooms may share. It is not safe for concurrent use: it
// belongs to the room's goroutine.
type CollisionWorld struct {
	cols     []Collider
	free     []int32
	hitboxes []int32 // live hitbox colliders, in the order last placed
	spare    []int32 // the previous hitbox list, reused

	hitboxOf  []int32              // entity index → hitbox collider, −1 when none
	blockerOf map[ecs.Entity]int32 // shield colliders by entity

	static grid   // shields, updated when they change
	moving sweepX // hitboxes, re-sorted after every travel

	// The level: its mesh (nil: none), the mask of its triangles that block
	// shots, and the collider its contacts report (its entity).
	level     *trimesh.Mesh
	levelMask trimesh.Mask
	levelCol  Collider
	contacts  []trimesh.Contact // OverlapSphere's scratch

	stamp uint64 // query counter
	epoch uint64 // travel counter
	last  TravelStats

	// staticBounds covers every shield (hasStatic: there is one); bounds
	// covers them and the hitboxes (hasBounds: there is any): no query
	// touches a shield or a hitbox outside it. Both change only when
	// colliders do, not per query. The level is queried on its own.
	staticBounds geom.AABB
	hasStatic    bool
	bounds       geom.AABB
	hasBounds    bool
	// staticDirty: a blocker was removed and the static grid and bounds are
	// rebuilt before the next query, once however many were removed.
	staticDirty bool
}

// TravelStats counts what the last placement of hitboxes did.
type TravelStats struct {
	Moved, Created, Removed int
}

// NewCollisionWorld returns an empty collision world whose broadphase uses
// cells of cellSize metres.
func NewCollisionWorld(cellSize float64) *CollisionWorld {
	if !(cellSize > 0) {
		cellSize = DefaultConfig().CellSize
	}
	return &CollisionWorld{
		blockerOf: make(map[ecs.Entity]int32),
		static:    newGrid(cellSize, 4096),
	}
}

func (w *CollisionWorld) alloc() int32 {
	if n := len(w.free); n > 0 {
		i := w.free[n-1]
		w.free = w.free[:n-1]
		return i
	}
	w.cols = append(w.cols, Collider{})
	return int32(len(w.cols) - 1)
}

func (w *CollisionWorld) release(i int32) {
	w.cols[i] = Collider{}
	w.free = append(w.free, i)
}

// SetLevel makes m the level's geometry: its triangles whose mask shares
// a bit with mask block shots, projectiles and lines of sight, at any
// height; their contacts name entity e (KindStatic) and the triangle
// (Hit.Tri). m is only read: rooms may share one. A nil m removes the
// level.
func (w *CollisionWorld) SetLevel(e ecs.Entity, m *trimesh.Mesh, mask trimesh.Mask) {
	w.level, w.levelMask = m, mask
	w.levelCol = Collider{Entity: e, Kind: KindStatic}
}

// Level returns the level's mesh (nil: none) and the entity its contacts
// name.
func (w *CollisionWorld) Level() (*trimesh.Mesh, ecs.Entity) { return w.level, w.levelCol.Entity }

// AddShield adds a shield box for entity e, placed by owner for team (0: a
// shield that blocks everybody). Shields are never rewound.
func (w *CollisionWorld) AddShield(e, owner ecs.Entity, team uint8, box geom.AABB) error {
	return w.addBlocker(Collider{Entity: e, Owner: owner, Team: team, Kind: KindShield, Box: box})
}

func (w *CollisionWorld) addBlocker(c Collider) error {
	if !c.Box.Min.IsFinite() || !c.Box.Max.IsFinite() {
		return fmt.Errorf("lagcomp: %s box of entity %v is not finite", c.Kind, c.Entity)
	}
	if _, ok := w.blockerOf[c.Entity]; ok {
		return fmt.Errorf("lagcomp: entity %v already has a %s collider", c.Entity, c.Kind)
	}
	c.Box = geom.Box(c.Box.Min, c.Box.Max)
	c.bounds = c.Box
	i := w.alloc()
	w.cols[i] = c
	w.blockerOf[c.Entity] = i
	if !w.staticDirty { // else the rebuild includes it
		w.static.insert(i, c.bounds)
		w.growStatic(c.bounds)
		w.updateBounds()
	}
	return nil
}

func (w *CollisionWorld) growStatic(b geom.AABB) {
	if w.hasStatic {
		w.staticBounds = w.staticBounds.Union(b)
	} else {
		w.staticBounds, w.hasStatic = b, true
	}
}

// RemoveBlocker removes the shield of entity e, and reports whether there
// was one.
func (w *CollisionWorld) RemoveBlocker(e ecs.Entity) bool {
	i, ok := w.blockerOf[e]
	if !ok {
		return false
	}
	delete(w.blockerOf, e)
	w.release(i)
	w.staticDirty = true
	return true
}

// syncStatic rebuilds the static grid after blockers were removed, in
// collider order so the layout never depends on map order.
func (w *CollisionWorld) syncStatic() {
	if !w.staticDirty {
		return
	}
	w.staticDirty = false
	w.static.clear()
	w.hasStatic = false
	for j := range w.cols {
		if c := &w.cols[j]; c.Kind == KindShield { // a live shield (released colliders are zero)
			w.static.insert(int32(j), c.bounds)
			w.growStatic(c.bounds)
		}
	}
	w.updateBounds()
}

// updateBounds recomputes the bounds of every collider.
func (w *CollisionWorld) updateBounds() {
	w.bounds, w.hasBounds = w.moving.union, len(w.moving.col) > 0
	if w.hasStatic {
		if w.hasBounds {
			w.bounds = w.staticBounds.Union(w.bounds)
		} else {
			w.bounds = w.staticBounds
		}
		w.hasBounds = true
	}
}

// Pose is a rewindable collider's state at one tick: a player's hitbox.
type Pose struct {
	Entity ecs.Entity
	Team   uint8
	Hitbox ecs.Hitbox
	Pos    geom.Vec3 // feet
	// Crouched lowers the capsule's top to Hitbox.CrouchHeight.
	Crouched bool
	// Teleport marks a pose not reached by moving from the tick before (a
	// respawn, a move longer than physics allows): the time machine never
	// interpolates into it.
	Teleport bool
}

// placeHitboxes makes the set of hitboxes exactly poses: hitboxes of entities
// already placed are moved, missing ones created, extra ones removed.
func (w *CollisionWorld) placeHitboxes(poses []Pose) {
	w.epoch++
	epoch := w.epoch
	var last TravelStats
	next := w.spare[:0] // a local: no write barrier's check per append
	for k := range poses {
		p := &poses[k]
		id := int(p.Entity.ID())
		for id >= len(w.hitboxOf) {
			w.hitboxOf = append(w.hitboxOf, -1)
		}
		i := w.hitboxOf[id]
		if i >= 0 && w.cols[i].Entity == p.Entity {
			last.Moved++
		} else {
			if i >= 0 { // a removed entity whose index was recycled
				w.release(i)
				last.Removed++
			}
			i = w.alloc()
			w.hitboxOf[id] = i
			last.Created++
		}
		c := &w.cols[i]
		c.Entity, c.Owner, c.Kind = p.Entity, p.Entity, KindHitbox
		setHitbox(c, p, p.Pos, epoch)
		next = append(next, i)
	}
	for _, i := range w.hitboxes {
		c := &w.cols[i]
		if c.Kind == KindHitbox && c.epoch != epoch {
			if w.hitboxOf[c.Entity.ID()] == i {
				w.hitboxOf[c.Entity.ID()] = -1
			}
			w.release(i)
			last.Removed++
		}
	}
	// The same hitboxes as the last placement's: none created, none
	// removed, and as many (no entity twice).
	same := last.Created == 0 && last.Removed == 0 && len(next) == len(w.hitboxes)
	w.last = last
	w.spare, w.hitboxes = w.hitboxes, next
	w.moving.update(w.cols, epoch, next, same)
	w.updateBounds()
}

// holds reports whether the hitboxes placed are those of poses' entities,
// in poses' order: placing poses then only moves each (beginMove,
// moveHitbox, endMove), as placeHitboxes would.
func (w *CollisionWorld) holds(poses []Pose) bool {
	if len(poses) != len(w.hitboxes) {
		return false
	}
	for k, i := range w.hitboxes {
		if w.cols[i].Entity != poses[k].Entity {
			return false
		}
	}
	return true
}

// beginMove starts moving the hitboxes placed (holds), and returns the
// placement's epoch.
func (w *CollisionWorld) beginMove() uint64 {
	w.epoch++
	return w.epoch
}

// moveHitbox moves the k-th hitbox placed to pose p, its feet at pos.
func (w *CollisionWorld) moveHitbox(k int, epoch uint64, p *Pose, pos geom.Vec3) {
	setHitbox(&w.cols[w.hitboxes[k]], p, pos, epoch)
}

// setHitbox makes hitbox collider c pose p's of placement epoch, its feet
// at pos (p's, or where the time machine moved them).
func setHitbox(c *Collider, p *Pose, pos geom.Vec3, epoch uint64) {
	capsule := p.Hitbox.Capsule(pos, p.Crouched)
	headY := math.Inf(1)
	if p.Hitbox.HeadHeight > 0 {
		headY = pos.Y + p.Hitbox.Top(p.Crouched) - p.Hitbox.HeadHeight
	}
	c.Team = p.Team
	c.Capsule, c.HeadY, c.bounds, c.epoch = capsule, headY, capsuleBounds(capsule), epoch
}

// endMove ends the placement of epoch that moved every hitbox placed.
func (w *CollisionWorld) endMove(epoch uint64) {
	w.last = TravelStats{Moved: len(w.hitboxes)}
	w.moving.update(w.cols, epoch, w.hitboxes, true)
	w.updateBounds()
}

// capsuleBounds is c.Bounds() (geom.SegmentBounds) for a hitbox's
// vertical capsule: its ends differ only in Y.
func capsuleBounds(c geom.Capsule) geom.AABB {
	lo, hi := c.A.Y, c.B.Y
	if hi < lo {
		lo, hi = hi, lo
	}
	r := c.Radius
	return geom.AABB{Min: geom.Vec3{X: c.A.X - r, Y: lo - r, Z: c.A.Z - r}, Max: geom.Vec3{X: c.A.X + r, Y: hi + r, Z: c.A.Z + r}}
}

// LastTravel returns what the last placement of hitboxes did.
func (w *CollisionWorld) LastTravel() TravelStats { return w.last }

// Hitbox returns the current collider of entity e's hitbox.
func (w *CollisionWorld) Hitbox(e ecs.Entity) (Collider, bool) {
	id := int(e.ID())
	if id >= len(w.hitboxOf) || w.hitboxOf[id] < 0 || w.cols[w.hitboxOf[id]].Entity != e {
		return Collider{}, false
	}
	return w.cols[w.hitboxOf[id]], true
}

// NumHitboxes returns how many hitboxes are placed.
func (w *CollisionWorld) NumHitboxes() int { return len(w.hitboxes) }

// Raycast returns the first collider the filter accepts along the ray from o
// in the unit direction d within maxDist metres.
func (w *CollisionWorld) Raycast(o, d geom.Vec3, maxDist float64, f Filter) (Hit, bool) {
	return w.Sweep(o, d, maxDist, 0, f)
}

// Sweep returns the first collider the filter accepts that a sphere of radius
// r touches moving from o in the unit direction d over dist metres. A sphere
// that starts in contact touches at T = 0. Of two contacts at the same
// distance, a blocker (the level, a shield) wins over a hitbox (cover
// protects), then the lower entity id.
//
// The level is asked first (trimesh's exact ray or swept sphere, over its
// triangles that block shots); shields and hitboxes are then walked only up
// to its contact.
func (w *CollisionWorld) Sweep(o, d geom.Vec3, dist, r float64, f Filter) (Hit, bool) {
	w.stamp++
	best := Hit{T: math.Inf(1)}
	bestCol := noCollider
	if !o.IsFinite() || !d.IsFinite() || !(dist >= 0) || !(r >= 0) {
		return best, false
	}
	w.syncStatic()
	if w.level != nil && f.Mask&Blockers != 0 {
		var h trimesh.Hit
		var ok bool
		if r == 0 {
			h, ok = w.level.Raycast(o, d, dist, w.levelMask)
		} else {
			h, ok = w.level.SweepSphere(o, r, d, dist, w.levelMask)
		}
		if ok {
			best.T, best.Point, best.Tri, bestCol = h.T, o.AddScaled(d, h.T), h.Tri, levelCollider
		}
	}
	// Nothing lies outside the colliders' bounds: walk only the part of the
	// sweep inside them (a 100 km ray over a 60 m arena costs 60 m).
	if w.hasBounds {
		if from, to, inside := geom.RaySpan(o, d, min(dist, best.T), w.bounds.Expand(r)); inside {
			w.walk(o, d, dist, r, from, to, f, &best, &bestCol)
		}
	}
	if bestCol == noCollider {
		return Hit{}, false
	}
	c := w.col(bestCol)
	best.Entity, best.Kind = c.Entity, c.Kind
	if c.Kind == KindHitbox {
		contact := best.Point
		if r > 0 { // the touching point is r from the centre, toward the axis
			axis := geom.ClosestOnSegment(best.Point, c.Capsule.A, c.Capsule.B)
			contact = best.Point.AddScaled(axis.Sub(best.Point).Normalize(), r)
		}
		best.Head = contact.Y >= c.HeadY
	}
	if c.Kind != KindStatic {
		best.Tri = 0
	}
	return best, true
}

// Pseudo-indices of colliders: none yet, and the level (not in cols).
const (
	noCollider    int32 = -1
	levelCollider int32 = -2
)

// col returns collider i, the level's for levelCollider.
func (w *CollisionWorld) col(i int32) *Collider {
	if i == levelCollider {
		return &w.levelCol
	}
	return &w.cols[i]
}

// walk sweeps over the shields and hitboxes from distance from to to along
// the sweep, keeping the best contact.
func (w *CollisionWorld) walk(o, d geom.Vec3, dist, r, from, to float64, f Filter, best *Hit, bestCol *int32) {
	for _, i := range w.static.large {
		w.sweepOne(i, o, d, dist, r, f, best, bestCol)
	}
	// Walk the sweep in chunks of one cell: every collider first touched
	// within a chunk overlaps that chunk's bounds, so once the best contact
	// lies within the chunks walked, nothing further can beat it.
	step := 1 / w.static.inv
	for n := math.Floor(from / step); ; n++ { // a float count: ranges may exceed any int
		t0 := max(n*step, from)
		t1 := min((n+1)*step, to)
		chunk := geom.SegmentBounds(o.AddScaled(d, t0), o.AddScaled(d, t1), r)
		w.visit(&w.static, chunk, o, d, dist, r, f, best, bestCol)
		for k, end := w.moving.span(chunk); k < end; k++ {
			if w.moving.bounds[k].Overlaps(chunk) {
				if i := w.moving.col[k]; w.cols[i].stamp != w.stamp {
					w.sweepOne(i, o, d, dist, r, f, best, bestCol)
				}
			}
		}
		if (*bestCol != noCollider && best.T <= t1) || t1 >= to {
			break
		}
	}
}

func (w *CollisionWorld) visit(g *grid, chunk geom.AABB, o, d geom.Vec3, dist, r float64, f Filter, best *Hit, bestCol *int32) {
	g.each(chunk, func(i int32) {
		if c := &w.cols[i]; c.stamp != w.stamp && c.bounds.Overlaps(chunk) {
			w.sweepOne(i, o, d, dist, r, f, best, bestCol)
		}
	})
}

func (w *CollisionWorld) sweepOne(i int32, o, d geom.Vec3, dist, r float64, f Filter, best *Hit, bestCol *int32) {
	c := &w.cols[i]
	c.stamp = w.stamp
	if !f.accepts(c) {
		return
	}
	var t float64
	var ok bool
	if c.Kind == KindHitbox {
		t, ok = geom.SweepSphereCapsule(o, d, dist, r, c.Capsule)
	} else {
		t, ok = geom.SweepSphereAABB(o, d, dist, r, c.Box)
	}
	if !ok || t > best.T {
		return
	}
	if t == best.T && *bestCol != noCollider && !w.beats(c, w.col(*bestCol)) {
		return
	}
	best.T, best.Point = t, o.AddScaled(d, t)
	*bestCol = i
}

// beats breaks a tie between two contacts at the same distance.
func (w *CollisionWorld) beats(c, than *Collider) bool {
	cb, tb := c.Kind != KindHitbox, than.Kind != KindHitbox
	if cb != tb {
		return cb
	}
	return c.Entity.ID() < than.Entity.ID()
}

// OverlapSphere appends to out every collider the filter accepts that
// intersects the sphere, ordered by entity id, and returns the extended
// slice. The level counts once, as its entity, when a triangle of it that
// blocks shots comes closer to the centre than the radius (touching does
// not count there); Tri is the lowest such triangle.
func (w *CollisionWorld) OverlapSphere(s geom.Sphere, f Filter, out []Hit) []Hit {
	start := len(out)
	if w.level != nil && f.Mask&Blockers != 0 && s.Center.IsFinite() {
		w.contacts = w.level.OverlapCapsule(s.Center, s.Center, s.Radius, w.levelMask, w.contacts[:0])
		if len(w.contacts) > 0 {
			out = append(out, Hit{Entity: w.levelCol.Entity, Kind: KindStatic, Point: s.Center, Tri: w.contacts[0].Tri})
		}
	}
	return w.overlap(s.Bounds(), f, out, start, func(c *Collider) bool {
		if c.Kind == KindHitbox {
			return geom.SphereOverlapsCapsule(s, c.Capsule)
		}
		return geom.SphereOverlapsAABB(s, c.Box)
	}, s.Center)
}

// OverlapCapsule appends to out every hitbox the filter accepts that
// intersects the capsule, ordered by entity id, and returns the extended
// slice. Neither the level nor shields are tested: capsule overlaps are for
// melee, which walls do not block.
func (w *CollisionWorld) OverlapCapsule(cp geom.Capsule, f Filter, out []Hit) []Hit {
	f.Mask &= Hitboxes
	return w.overlap(cp.Bounds(), f, out, len(out), func(c *Collider) bool {
		return geom.CapsuleOverlapsCapsule(cp, c.Capsule)
	}, geom.ClosestOnSegment(cp.A.Lerp(cp.B, 0.5), cp.A, cp.B))
}

// overlap appends the colliders in bounds that the filter accepts and test
// passes, and sorts out[start:] by entity.
func (w *CollisionWorld) overlap(bounds geom.AABB, f Filter, out []Hit, start int, test func(*Collider) bool, center geom.Vec3) []Hit {
	w.syncStatic()
	w.stamp++
	check := func(i int32) {
		c := &w.cols[i]
		if c.stamp == w.stamp {
			return
		}
		c.stamp = w.stamp
		if !c.bounds.Overlaps(bounds) || !f.accepts(c) || !test(c) {
			return
		}
		h := Hit{Entity: c.Entity, Kind: c.Kind, Point: center}
		if c.Kind == KindHitbox { // the capsule's surface point facing the centre
			p := geom.ClosestOnSegment(center, c.Capsule.A, c.Capsule.B)
			p = p.AddScaled(center.Sub(p).Normalize(), c.Capsule.Radius)
			h.Head = p.Y >= c.HeadY
		}
		out = append(out, h)
	}
	for k, end := w.moving.span(bounds); k < end; k++ {
		check(w.moving.col[k])
	}
	for _, i := range w.static.large {
		check(i)
	}
	w.static.each(bounds, check)
	slices.SortFunc(out[start:], func(a, b Hit) int { return ecs.CompareEntity(a.Entity, b.Entity) })
	return out
}
