package lagcomp

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/trimesh"
)

// scene: a shooter (team 1) at the origin, an enemy (team 2) 10 m ahead on +Z,
// a teammate (team 1) 5 m to the left, a wall between x=4..6 at z=9..10.
type scene struct {
	w                          *CollisionWorld
	shooter, enemy, mate, wall ecs.Entity
	spare                      []ecs.Entity
}

func newScene(t *testing.T) scene {
	e := entities(8)
	s := scene{w: NewCollisionWorld(4), shooter: e[0], enemy: e[1], mate: e[2], wall: e[3], spare: e[4:]}
	s.w.placeHitboxes([]Pose{
		{Entity: s.shooter, Team: 1, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8, HeadHeight: 0.3}, Pos: geom.V(0, 0, 0)},
		{Entity: s.enemy, Team: 2, Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8, HeadHeight: 0.3}, Pos: geom.V(0, 0, 10)},
		{Entity: s.mate, Team: 1, Hitbox: stdHitbox, Pos: geom.V(-5, 0, 0)},
	})
	setLevel(t, s.w, s.wall, []geom.AABB{{Min: geom.V(4, 0, 9), Max: geom.V(6, 3, 10)}})
	return s
}

func (s scene) bullet() Filter { return Filter{Ignore: s.shooter, Team: 1, Mask: Everything} }

func TestRaycastHitsCapsuleBodyAndHead(t *testing.T) {
	s := newScene(t)
	eye := geom.V(0, 1.6, 0.5)
	hit, ok := s.w.Raycast(eye, geom.V(0, 0, 1), 100, s.bullet())
	if !ok || hit.Entity != s.enemy || hit.Kind != KindHitbox || !hit.Head {
		t.Fatalf("eye-level shot: %+v %v, want a headshot on the enemy", hit, ok)
	}
	if math.Abs(hit.T-(10-0.5-math.Sqrt(0.4*0.4-0.2*0.2))) > 1e-9 {
		t.Errorf("contact at %v", hit.T)
	}
	hit, ok = s.w.Raycast(geom.V(0, 1, 0.5), geom.V(0, 0, 1), 100, s.bullet())
	if !ok || hit.Entity != s.enemy || hit.Head || math.Abs(hit.T-9.1) > 1e-9 {
		t.Errorf("chest shot: %+v %v, want a body hit at 9.1 m", hit, ok)
	}
	if _, ok := s.w.Raycast(geom.V(0, 1.81, 0.5), geom.V(0, 0, 1), 100, s.bullet()); ok {
		t.Error("a shot 1 cm over the head must miss")
	}
	if _, ok := s.w.Raycast(geom.V(0, 1, 0.5), geom.V(0, 0, 1), 9, s.bullet()); ok {
		t.Error("a shot that stops short must miss")
	}
}

func TestShooterIsNeverHitByItsOwnQueries(t *testing.T) {
	s := newScene(t)
	// From inside its own capsule, backwards: nothing behind.
	if hit, ok := s.w.Raycast(geom.V(0, 1, 0), geom.V(0, 0, -1), 100, s.bullet()); ok {
		t.Errorf("own hitbox hit: %+v", hit)
	}
	// Someone else's shot from behind hits the shooter.
	f := Filter{Ignore: s.enemy, Team: 2, Mask: Everything}
	if hit, ok := s.w.Raycast(geom.V(0, 1, -5), geom.V(0, 0, 1), 100, f); !ok || hit.Entity != s.shooter {
		t.Errorf("enemy shot: %+v %v", hit, ok)
	}
	// Overlaps too.
	got := s.w.OverlapSphere(geom.Sphere{Center: geom.V(0, 1, 0), Radius: 1}, s.bullet(), nil)
	if len(got) != 0 {
		t.Errorf("own melee overlapped %+v", got)
	}
}

func TestTeammatesAndFriendlyFire(t *testing.T) {
	s := newScene(t)
	left := geom.V(-1, 0, 0)
	if hit, ok := s.w.Raycast(geom.V(0, 1, 0), left, 100, s.bullet()); ok {
		t.Errorf("teammate hit without friendly fire: %+v", hit)
	}
	ff := s.bullet()
	ff.FriendlyFire = true
	if hit, ok := s.w.Raycast(geom.V(0, 1, 0), left, 100, ff); !ok || hit.Entity != s.mate {
		t.Errorf("friendly fire: %+v %v", hit, ok)
	}
	// A teamless shooter (team 0) hits everybody.
	if hit, ok := s.w.Raycast(geom.V(0, 1, 3), left, 100, Filter{Mask: Everything}); ok {
		t.Errorf("nobody stands there: %+v", hit)
	}
}

func TestFirstContactDecides(t *testing.T) {
	s := newScene(t)
	// The wall covers x 4..6 at z 9..10; put a second enemy behind it.
	x := s.spare[0]
	poses := []Pose{
		{Entity: s.shooter, Team: 1, Hitbox: stdHitbox, Pos: geom.V(0, 0, 0)},
		{Entity: x, Team: 2, Hitbox: stdHitbox, Pos: geom.V(5, 0, 12)},
	}
	s.w.placeHitboxes(poses)
	hit, ok := s.w.Raycast(geom.V(5, 1, 0), geom.V(0, 0, 1), 100, s.bullet())
	if !ok || hit.Entity != s.wall || hit.Kind != KindStatic || hit.T != 9 {
		t.Errorf("the wall is first: %+v %v", hit, ok)
	}
	// Melee ignores walls (Hitboxes only).
	got := s.w.OverlapSphere(geom.Sphere{Center: geom.V(5, 1, 10.5), Radius: 1.2}, Filter{Ignore: s.shooter, Team: 1, Mask: Hitboxes}, nil)
	if len(got) != 1 || got[0].Entity != x {
		t.Errorf("melee through the wall: %+v", got)
	}
}

func TestTieGoesToTheBlocker(t *testing.T) {
	e := entities(3)
	w := NewCollisionWorld(4)
	// A ray straight down onto a capsule's top (radius 0.5, height 2: the top
	// is at y=2) and a box whose top is at y=2: both contacts are exactly at
	// t=8 in floating point.
	w.placeHitboxes([]Pose{{Entity: e[0], Team: 2, Hitbox: ecs.Hitbox{Radius: 0.5, Height: 2}, Pos: geom.V(0, 0, 0)}})
	setLevel(t, w, e[1], []geom.AABB{{Min: geom.V(-0.25, 1, -0.25), Max: geom.V(0.25, 2, 0.25)}})
	hit, ok := w.Raycast(geom.V(0, 10, 0), geom.V(0, -1, 0), 100, Filter{Team: 1, Mask: Everything})
	if !ok || hit.Entity != e[1] || hit.T != 8 {
		t.Errorf("tie: %+v %v, want the box at 8", hit, ok)
	}
	if hit, _ := w.Raycast(geom.V(0, 10, 0), geom.V(0, -1, 0), 100, Filter{Team: 1, Mask: Hitboxes}); hit.T != 8 || hit.Entity != e[0] {
		t.Errorf("the capsule alone is touched at %v, want exactly 8", hit.T)
	}
}

func TestShieldsBlockByTeam(t *testing.T) {
	s := newScene(t)
	sh := s.spare[0]
	// A team-1 shield in front of the shooter: team 1 shoots through it,
	// team 2 is blocked by it.
	box := geom.AABB{Min: geom.V(-1, 0, 3), Max: geom.V(1, 2.5, 3.2)}
	if err := s.w.AddShield(sh, s.mate, 1, box); err != nil {
		t.Fatal(err)
	}
	if hit, ok := s.w.Raycast(geom.V(0, 1, 0.5), geom.V(0, 0, 1), 100, s.bullet()); !ok || hit.Entity != s.enemy {
		t.Errorf("own team's shield should let the shot through: %+v %v", hit, ok)
	}
	f := Filter{Ignore: s.enemy, Team: 2, Mask: Everything}
	if hit, ok := s.w.Raycast(geom.V(0, 1, 9.5), geom.V(0, 0, -1), 100, f); !ok || hit.Entity != sh || hit.Kind != KindShield {
		t.Errorf("enemy shot should stop at the shield: %+v %v", hit, ok)
	}
	// A teamless shield blocks everybody, its placer included when the placer
	// is not its owner... and is transparent to its owner.
	s.w.RemoveBlocker(sh)
	if err := s.w.AddShield(sh, s.mate, 0, box); err != nil {
		t.Fatal(err)
	}
	if hit, ok := s.w.Raycast(geom.V(0, 1, 0.5), geom.V(0, 0, 1), 100, s.bullet()); !ok || hit.Entity != sh {
		t.Errorf("teamless shield should block: %+v %v", hit, ok)
	}
	own := Filter{Ignore: s.mate, Team: 1, Mask: Everything}
	if hit, ok := s.w.Raycast(geom.V(0, 1, 0.5), geom.V(0, 0, 1), 100, own); !ok || hit.Entity != s.enemy {
		t.Errorf("the owner's own shield should let its shot through: %+v %v", hit, ok)
	}
	if !s.w.RemoveBlocker(sh) || s.w.RemoveBlocker(sh) {
		t.Error("RemoveBlocker should report the first removal only")
	}
	if hit, ok := s.w.Raycast(geom.V(0, 1, 9.5), geom.V(0, 0, -1), 100, f); !ok || hit.Entity != s.shooter {
		t.Errorf("after removal the shot reaches the shooter: %+v %v", hit, ok)
	}
}

func TestSweepSphereAndOverlaps(t *testing.T) {
	s := newScene(t)
	// A rocket of radius 0.1 passing 0.45 m beside the enemy's axis touches.
	hit, ok := s.w.Sweep(geom.V(0.45, 1, 0.5), geom.V(0, 0, 1), 20, 0.1, s.bullet())
	if !ok || hit.Entity != s.enemy {
		t.Errorf("grazing rocket: %+v %v", hit, ok)
	}
	// At 0.51 m it passes.
	if hit, ok := s.w.Sweep(geom.V(0.51, 1, 0.5), geom.V(0, 0, 1), 20, 0.1, s.bullet()); ok {
		t.Errorf("rocket 0.51 m away: %+v", hit)
	}
	// A sweep starting in contact touches at 0.
	if hit, ok := s.w.Sweep(geom.V(0, 1, 9.55), geom.V(1, 0, 0), 1, 0.1, s.bullet()); !ok || hit.T != 0 {
		t.Errorf("starting in contact: %+v %v", hit, ok)
	}
	// A zero-length sweep is an overlap test.
	if _, ok := s.w.Sweep(geom.V(0, 1, 5), geom.V(0, 0, 1), 0, 0.5, s.bullet()); ok {
		t.Error("zero-length sweep in empty space hit something")
	}
	// Sphere overlap returns every accepted collider, by entity id.
	all := Filter{Mask: Everything}
	got := s.w.OverlapSphere(geom.Sphere{Center: geom.V(0, 1, 0), Radius: 6}, all, nil)
	if ents := hitEntities(got); !slices.Equal(ents, []ecs.Entity{s.shooter, s.mate}) {
		t.Errorf("overlap: %v", ents)
	}
	got = s.w.OverlapSphere(geom.Sphere{Center: geom.V(4, 1, 9.5), Radius: 4.2}, all, got[:0])
	if ents := hitEntities(got); !slices.Equal(ents, []ecs.Entity{s.enemy, s.wall}) {
		t.Errorf("overlap with the wall: %v", ents)
	}
	// Capsule overlap (a tail strike): hitboxes only.
	// It runs from the teammate (-5,0) to the enemy (0,10), 4.5 m from the shooter.
	tail := geom.Capsule{A: geom.V(-5, 1, 0), B: geom.V(0, 1, 10), Radius: 0.5}
	got = s.w.OverlapCapsule(tail, all, nil)
	if ents := hitEntities(got); !slices.Equal(ents, []ecs.Entity{s.enemy, s.mate}) {
		t.Errorf("capsule overlap: %v", ents)
	}
}

func TestQueriesRejectNonFiniteInput(t *testing.T) {
	s := newScene(t)
	inf := math.Inf(1)
	for _, q := range []struct{ o, d geom.Vec3 }{
		{geom.V(math.NaN(), 1, 0), geom.V(0, 0, 1)},
		{geom.V(0, 1, 0), geom.V(0, inf, 1)},
	} {
		if _, ok := s.w.Sweep(q.o, q.d, 10, 0.1, Filter{Mask: Everything}); ok {
			t.Errorf("non-finite sweep %+v hit", q)
		}
	}
	if _, ok := s.w.Sweep(geom.V(0, 1, 0), geom.V(0, 0, 1), math.NaN(), 0.1, Filter{Mask: Everything}); ok {
		t.Error("NaN distance hit")
	}
	if err := s.w.AddShield(s.spare[0], s.shooter, 1, geom.AABB{Max: geom.V(inf, 1, 1)}); err == nil {
		t.Error("an infinite box should be refused")
	}
	if err := s.w.AddShield(s.spare[1], s.shooter, 1, geom.AABB{Max: geom.V(1, 1, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := s.w.AddShield(s.spare[1], s.shooter, 1, geom.AABB{Max: geom.V(1, 1, 1)}); err == nil {
		t.Error("a second collider for the same entity should be refused")
	}
}

func hitEntities(hits []Hit) []ecs.Entity {
	out := make([]ecs.Entity, len(hits))
	for i, h := range hits {
		out[i] = h.Entity
	}
	return out
}

// TestBroadphaseMatchesBruteForce builds random scenes (many hitboxes, small
// and huge boxes, shields of both teams) and checks every query against a
// brute-force test of every collider.
func TestBroadphaseMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	f := func(lo, hi float64) float64 { return lo + rng.Float64()*(hi-lo) }
	var queries, sweepHits, hitboxHits, overlaps int
	defer func() {
		// The comparison means something only if many queries touch things.
		t.Logf("%d queries: %d sweeps hit (%d hitboxes), %d overlaps non-empty", queries, sweepHits, hitboxHits, overlaps)
		if sweepHits < queries/8 || hitboxHits < queries/40 || overlaps < queries/5 {
			t.Errorf("too few contacts for the comparison to mean much")
		}
	}()
	for sceneNo := range 40 {
		nHit := []int{0, 3, 12, 40, 150}[sceneNo%5]
		es := entities(nHit + 40)
		w := NewCollisionWorld([]float64{1, 4, 16}[sceneNo%3])
		var poses []Pose
		for i := range nHit {
			poses = append(poses, Pose{Entity: es[i], Team: uint8(1 + rng.IntN(2)),
				Hitbox: ecs.Hitbox{Radius: f(0.2, 1), Height: f(2.1, 3)}, Pos: geom.V(f(-60, 60), f(-1, 1), f(-60, 60))})
		}
		w.placeHitboxes(poses)
		var blockers []Collider
		var walls, clips []geom.AABB
		levelE := es[nHit+39]
		for i := range 30 + sceneNo%10 {
			e := es[nHit+i]
			size := geom.V(f(0.1, 4), f(0.1, 4), f(0.1, 4))
			if i%10 == 0 {
				size = geom.V(f(50, 300), f(0.1, 1), f(50, 300)) // floors and long walls: the shields' large list
			}
			min := geom.V(f(-70, 70), f(-2, 3), f(-70, 70))
			box := geom.AABB{Min: min, Max: min.Add(size)}
			switch {
			case i%3 == 0:
				team := uint8(rng.IntN(3))
				if err := w.AddShield(e, es[rng.IntN(max(nHit, 1))], team, box); err != nil {
					t.Fatal(err)
				}
				blockers = append(blockers, Collider{Entity: e, Kind: KindShield, Team: team, Box: box})
			case i%7 == 1:
				clips = append(clips, box) // blocks movement only: shots pass
			default:
				walls = append(walls, box)
			}
		}
		level := setLevel(t, w, levelE, walls, clips...)
		// Remove a few blockers to exercise the rebuild.
		for k := 0; k < 3; k++ {
			i := rng.IntN(len(blockers))
			w.RemoveBlocker(blockers[i].Entity)
			blockers = slices.Delete(blockers, i, i+1)
		}
		var all []Collider
		for _, i := range w.hitboxes {
			all = append(all, w.cols[i])
		}
		for _, b := range blockers {
			c, _ := w.blocker(b.Entity)
			all = append(all, c)
		}
		for q := range 300 {
			o := geom.V(f(-70, 70), f(-1, 3), f(-70, 70))
			d := geom.V(f(-1, 1), f(-0.3, 0.3), f(-1, 1)).Normalize()
			dist := []float64{0, 0.5, 2, 10, 150}[q%5]
			if q%2 == 0 && nHit > 0 { // aim near a random hitbox, from close by
				p := poses[rng.IntN(nHit)].Pos.Add(geom.V(f(-1, 1), f(0, 2.5), f(-1, 1)))
				o = p.Add(geom.V(f(-8, 8), f(-1, 1), f(-8, 8)))
				d = p.Sub(o).Normalize()
			}
			r := []float64{0, 0.1, 0.7}[q%3]
			filter := Filter{Team: uint8(rng.IntN(3)), Mask: Mask(1 + rng.IntN(3)), FriendlyFire: rng.IntN(2) == 0}
			if nHit > 0 {
				filter.Ignore = es[rng.IntN(nHit)]
			}
			got, gotOK := w.Sweep(o, d, dist, r, filter)
			want, wantOK := bruteSweep(all, level, levelE, o, d, dist, r, filter)
			queries++
			if gotOK {
				sweepHits++
				if got.Kind == KindHitbox {
					hitboxHits++
				}
			}
			if gotOK != wantOK || (gotOK && (got.Entity != want.Entity || got.T != want.T || got.Tri != want.Tri)) {
				t.Fatalf("scene %d query %d: broadphase %+v %v, brute force %+v %v", sceneNo, q, got, gotOK, want, wantOK)
			}
			sp := geom.Sphere{Center: o, Radius: f(0.1, 8)}
			gotO := hitEntities(w.OverlapSphere(sp, filter, nil))
			wantO := bruteOverlap(all, level, levelE, sp, filter)
			if len(gotO) > 0 {
				overlaps++
			}
			if !slices.Equal(gotO, wantO) {
				t.Fatalf("scene %d overlap %d: broadphase %v, brute force %v", sceneNo, q, gotO, wantO)
			}
		}
	}
}

func (w *CollisionWorld) blocker(e ecs.Entity) (Collider, bool) {
	i, ok := w.blockerOf[e]
	if !ok {
		return Collider{}, false
	}
	return w.cols[i], true
}

// bruteSweep asks the level (its own query: trimesh's tests check it
// against a brute force) and then every other collider.
func bruteSweep(all []Collider, level *trimesh.Mesh, levelE ecs.Entity, o, d geom.Vec3, dist, r float64, f Filter) (Hit, bool) {
	best := Hit{T: math.Inf(1)}
	var bestC *Collider
	levelC := Collider{Entity: levelE, Kind: KindStatic}
	if f.Mask&Blockers != 0 {
		h, ok := level.Raycast(o, d, dist, shotMask)
		if r > 0 {
			h, ok = level.SweepSphere(o, r, d, dist, shotMask)
		}
		if ok {
			best.T, best.Entity, best.Tri, bestC = h.T, levelE, h.Tri, &levelC
		}
	}
	for i := range all {
		c := &all[i]
		if !f.accepts(c) {
			continue
		}
		var t float64
		var ok bool
		if c.Kind == KindHitbox {
			t, ok = geom.SweepSphereCapsule(o, d, dist, r, c.Capsule)
		} else {
			t, ok = geom.SweepSphereAABB(o, d, dist, r, c.Box)
		}
		if !ok || t > best.T {
			continue
		}
		if t == best.T && bestC != nil {
			cb, bb := c.Kind != KindHitbox, bestC.Kind != KindHitbox
			if cb != bb && !cb || cb == bb && c.Entity.ID() > bestC.Entity.ID() {
				continue
			}
		}
		best.T, best.Entity, best.Tri, bestC = t, c.Entity, 0, c
	}
	return best, bestC != nil
}

func bruteOverlap(all []Collider, level *trimesh.Mesh, levelE ecs.Entity, s geom.Sphere, f Filter) []ecs.Entity {
	var out []ecs.Entity
	if f.Mask&Blockers != 0 && len(level.OverlapCapsule(s.Center, s.Center, s.Radius, shotMask, nil)) > 0 {
		out = append(out, levelE)
	}
	for i := range all {
		c := &all[i]
		if !f.accepts(c) {
			continue
		}
		if c.Kind == KindHitbox && geom.SphereOverlapsCapsule(s, c.Capsule) ||
			c.Kind != KindHitbox && geom.SphereOverlapsAABB(s, c.Box) {
			out = append(out, c.Entity)
		}
	}
	slices.SortFunc(out, func(a, b ecs.Entity) int { return int(a.ID()) - int(b.ID()) })
	if out == nil {
		out = []ecs.Entity{}
	}
	return out
}

// Queries of absurd size stay bounded: a ray of 10^17 m walks only the part
// inside the colliders' bounds, and a sphere covering billions of cells looks
// at the grid's entries instead.
func TestHugeQueriesAreBounded(t *testing.T) {
	s := newScene(t)
	hit, ok := s.w.Raycast(geom.V(0, 1, 0.5), geom.V(0, 0, 1), 1e17, s.bullet())
	if !ok || hit.Entity != s.enemy {
		t.Errorf("a 1e17 m ray: %+v %v", hit, ok)
	}
	if _, ok := s.w.Raycast(geom.V(0, 1, 0.5), geom.V(0, 0, -1), 1e17, s.bullet()); ok {
		t.Error("a 1e17 m ray into nothing hit something")
	}
	if _, ok := s.w.Raycast(geom.V(0, 100, -1e9), geom.V(0, 0, 1), 1e17, s.bullet()); ok {
		t.Error("a ray passing over everything hit something")
	}
	got := s.w.OverlapSphere(geom.Sphere{Center: geom.V(0, 0, 0), Radius: 1e12}, Filter{Mask: Everything}, nil)
	if len(got) != 4 {
		t.Errorf("a sphere around the world overlaps %d colliders, want all 4", len(got))
	}
	if _, ok := s.w.Sweep(geom.V(0, 1, -50), geom.V(0, 0, 1), 100, 1e9, s.bullet()); !ok {
		t.Error("a sphere of 1e9 m touched nothing")
	}
	empty := NewCollisionWorld(4)
	if _, ok := empty.Raycast(geom.V(0, 0, 0), geom.V(1, 0, 0), 1e17, Filter{Mask: Everything}); ok {
		t.Error("an empty world was hit")
	}
}

// Team 0 is a team: two team-0 players are teammates (the scenario contract).
func TestTeamZeroIsATeam(t *testing.T) {
	e := entities(2)
	w := NewCollisionWorld(4)
	w.placeHitboxes([]Pose{pose(e[0], 0, 0, 0), pose(e[1], 0, 0, 10)})
	f := Filter{Ignore: e[0], Team: 0, Mask: Everything}
	if hit, ok := w.Raycast(geom.V(0, 1, 0.5), geom.V(0, 0, 1), 100, f); ok {
		t.Errorf("a team-0 shot hit a team-0 player: %+v", hit)
	}
	f.FriendlyFire = true
	if _, ok := w.Raycast(geom.V(0, 1, 0.5), geom.V(0, 0, 1), 100, f); !ok {
		t.Error("with friendly fire it should hit")
	}
}

// TestSweepXMovedIsUpdate moves a list's colliders (many keep their X
// order, some cross, a few share a Min.X) and compares update told the
// placement is the same set with update left to find out: the same list,
// bounds, widest, union and marks, bit for bit.
func TestSweepXMovedIsUpdate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 50))
	f := func(lo, hi float64) float64 { return lo + rng.Float64()*(hi-lo) }
	for n := range 20 {
		cols := make([]Collider, n+3) // some unused, as a world's freed slots are
		placed := rng.Perm(len(cols))[:n]
		var s sweepX
		epoch := uint64(1)
		var ids []int32
		for _, i := range placed {
			ids = append(ids, int32(i))
		}
		place := func() {
			for _, i := range ids {
				x := f(-20, 20)
				if rng.IntN(6) == 0 {
					x = 3 // ties of Min.X
				}
				r := f(0.2, 1)
				cols[i].Kind, cols[i].epoch = KindHitbox, epoch
				cols[i].bounds = geom.AABB{Min: geom.V(x-r, f(-1, 0), f(-5, 5)), Max: geom.V(x+r, f(1, 2), f(5, 6))}
			}
		}
		place()
		s.update(cols, epoch, ids, false)
		for round := range 50 {
			epoch++
			rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			place()
			colsB := slices.Clone(cols)
			b := sweepX{col: slices.Clone(s.col), bounds: slices.Clone(s.bounds), widest: s.widest, union: s.union}
			s.update(cols, epoch, ids, true)
			b.update(colsB, epoch, ids, false)
			if !slices.Equal(s.col, b.col) || !slices.Equal(s.bounds, b.bounds) || math.Float64bits(s.widest) != math.Float64bits(b.widest) || s.union != b.union {
				t.Fatalf("%d colliders, round %d: moved gives %v %v %v %v, update %v %v %v %v", n, round, s.col, s.bounds, s.widest, s.union, b.col, b.bounds, b.widest, b.union)
			}
			for i := range cols {
				if cols[i].sorted != colsB[i].sorted {
					t.Fatalf("%d colliders, round %d: collider %d marked %d, update marks %d", n, round, i, cols[i].sorted, colsB[i].sorted)
				}
			}
		}
	}
}
