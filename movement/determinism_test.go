package movement

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/stresslevel"
	"github.com/rewind-gg/rewind/trimesh"
)

// inputs is a seeded stream of inputs like a player's: the stick held for
// a while, the view turning, the buttons pressed now and then.
type inputs struct {
	rng  *rand.Rand
	cur  Input
	hold int
}

func newInputs(seed uint64) *inputs { return &inputs{rng: rand.New(rand.NewPCG(seed, 0x6d6f7665))} }

func (g *inputs) next() Input {
	if g.hold == 0 {
		g.hold = 1 + g.rng.IntN(40)
		stick := []float64{-1, -0.5, 0, 0, 0.5, 1, 1, 1}
		g.cur.MoveX = stick[g.rng.IntN(len(stick))]
		g.cur.MoveZ = stick[g.rng.IntN(len(stick))]
		g.cur.Sprint = g.rng.IntN(3) == 0
		g.cur.Crouch = g.rng.IntN(6) == 0
	}
	g.hold--
	g.cur.Yaw = math.Mod(g.cur.Yaw+g.rng.NormFloat64()*0.1, 2*math.Pi)
	g.cur.Pitch = g.rng.Float64() - 0.5
	g.cur.Jump = g.rng.IntN(12) == 0
	return g.cur
}

// spawnOn returns the feet of a character standing at (x, z) on the
// highest surface of m there.
func spawnOn(m *trimesh.Mesh, x, z float64) geom.Vec3 {
	top := m.Bounds().Max.Y + 5
	h, ok := m.Raycast(geom.V(x, top, z), geom.V(0, -1, 0), 1000, solid)
	if !ok {
		return geom.V(x, 0, z)
	}
	return geom.V(x, top-h.T+0.05, z)
}

// same reports whether two states are equal bit for bit.
func same(a, b *State) bool {
	return sameVec(a.Pos, b.Pos) && sameVec(a.Vel, b.Vel) && sameVec(a.Ground, b.Ground) &&
		a.Crouched == b.Crouched && a.JumpHeld == b.JumpHeld && a.OnGround == b.OnGround
}

func sameVec(a, b geom.Vec3) bool {
	return math.Float64bits(a.X) == math.Float64bits(b.X) &&
		math.Float64bits(a.Y) == math.Float64bits(b.Y) &&
		math.Float64bits(a.Z) == math.Float64bits(b.Z)
}

// snapshot is what a snapshot carries of a state (docs/movement.md): the
// position and velocity as float64 bits, and two flags. restore is what a
// client rebuilds from it.
type snapshot struct {
	pos, vel [3]uint64
	flags    uint8
}

func takeSnapshot(s *State) snapshot {
	var sn snapshot
	for i, v := range s.Pos.Array() {
		sn.pos[i] = math.Float64bits(v)
	}
	for i, v := range s.Vel.Array() {
		sn.vel[i] = math.Float64bits(v)
	}
	if s.Crouched {
		sn.flags |= 1
	}
	if s.JumpHeld {
		sn.flags |= 2
	}
	return sn
}

func (sn snapshot) restore() State {
	var p, v [3]float64
	for i := range 3 {
		p[i], v[i] = math.Float64frombits(sn.pos[i]), math.Float64frombits(sn.vel[i])
	}
	return State{Pos: geom.FromArray(p), Vel: geom.FromArray(v), Crouched: sn.flags&1 != 0, JumpHeld: sn.flags&2 != 0}
}

// playthrough returns n ticks of a seeded player's inputs on the level m
// at 60 Hz, and the states they lead to.
func playthrough(c *Character, m *trimesh.Mesh, n int) ([]Input, []State) {
	g := newInputs(9)
	s := player(spawnOn(m, 0.5, 0.5))
	ins, out := make([]Input, n), make([]State, n)
	for i := range n {
		ins[i] = g.next()
		Move(c, &s, ins[i], 1.0/60, m, solid)
		out[i] = s
	}
	return ins, out
}

// Two runs of the same 10,000 inputs on a level give the same states, bit
// for bit; and a client that takes any of the states through a snapshot
// and replays the inputs since reaches the same states again.
func TestDeterminism(t *testing.T) {
	c := DefaultCharacter()
	m := world(t, stresslevel.Level(11, 24, 40))
	const ticks = 10000
	in, a := playthrough(&c, m, ticks)
	_, b := playthrough(&c, m, ticks)
	crouched, jumped := 0, 0
	for i := range a {
		if !same(&a[i], &b[i]) {
			t.Fatalf("tick %d: %+v and %+v", i, a[i], b[i])
		}
		if a[i].Crouched {
			crouched++
		}
		if !a[i].OnGround && a[i].Vel.Y > 0 {
			jumped++
		}
	}
	if crouched == 0 || jumped == 0 {
		t.Errorf("the inputs never crouched (%d) or jumped (%d)", crouched, jumped)
	}
	for from := 0; from < ticks-200; from += 997 {
		s := takeSnapshot(&a[from]).restore()
		for i := from + 1; i < from+200; i++ {
			Move(&c, &s, in[i], 1.0/60, m, solid)
			if !same(&s, &a[i]) {
				t.Fatalf("replayed from the snapshot of tick %d: tick %d differs: %+v, want %+v", from, i, s, a[i])
			}
		}
	}
}

// A snapshot that rounds the state is not one a client can predict from:
// with the velocity to 1/256 m/s and the position to 1/1024 m (the wire's
// projectiles and the level's grid), the next tick of most moving states
// lands further than the 1e-6 m a client tolerates from where the server's
// does, so the client would correct itself forever.
func TestLossySnapshot(t *testing.T) {
	c := DefaultCharacter()
	m := world(t, stresslevel.Level(11, 24, 40))
	in, a := playthrough(&c, m, 2000)
	moving, off := 0, 0
	for i := range len(a) - 1 {
		if a[i].Vel.Len() < 0.5 {
			continue
		}
		moving++
		s := takeSnapshot(&a[i]).restore()
		s.Pos, s.Vel = s.Pos.Round(1024), s.Vel.Round(256)
		Move(&c, &s, in[i+1], 1.0/60, m, solid)
		if s.Pos.Sub(a[i+1].Pos).Len() > 1e-6 {
			off++
		}
	}
	if moving < 500 || off < moving*9/10 {
		t.Errorf("%d of %d moving states came out within the tolerance", moving-off, moving)
	}
}

// Move allocates nothing: walking, sliding on walls, stepping, jumping,
// crouching, pushed out of the floor.
func TestNoAllocation(t *testing.T) {
	c := DefaultCharacter()
	m := world(t, stresslevel.Level(11, 24, 40), floor(30))
	g := newInputs(3)
	s := player(spawnOn(m, 0.5, 0.5))
	ins := make([]Input, 512)
	for i := range ins {
		ins[i] = g.next()
	}
	i := 0
	if n := testing.AllocsPerRun(5000, func() {
		Move(&c, &s, ins[i%len(ins)], 0.05, m, solid)
		i++
		if i%700 == 0 {
			s.Pos.Y -= 0.3 // into whatever is below
		}
	}); n != 0 {
		t.Errorf("%v allocations per tick", n)
	}
}

// Move's shortcuts change nothing: on levels with flat floors and rolling
// terrain, at 20 and 60 Hz, 5,000 ticks of a player's inputs give the same
// states, bit for bit, with them as when every answer is asked of the
// mesh; and they were taken.
func TestShortcutsChangeNothing(t *testing.T) {
	floors := append(floor(20), box(geom.V(-3, 0, 2), geom.V(3, 0.3, 6))...)
	floors = append(floors, stairs(-6, -4, 4, 0.2, 0.3, 6)...)
	for _, lv := range []struct {
		name string
		m    *trimesh.Mesh
	}{{"floors", world(t, floors)}, {"terrain", world(t, stresslevel.Level(11, 24, 40))}} {
		for _, rate := range []float64{20, 60} {
			c := DefaultCharacter()
			g := newInputs(5)
			start := spawnOn(lv.m, 0, 0)
			a, b := player(start), player(start)
			for i := range 5000 {
				in := g.next()
				move(&c, &a, in, 1/rate, lv.m, solid, nil, true)
				move(&c, &b, in, 1/rate, lv.m, solid, nil, false)
				if !same(&a, &b) {
					t.Fatalf("%s at %v Hz, tick %d: %+v with the shortcuts, %+v without", lv.name, rate, i, a, b)
				}
				if a.Pos.Y < -10 || a.Pos.Sub(start).Len() > 15 {
					a, b = player(start), player(start)
				}
			}
		}
	}
}

// MoveNear gives Move's states, bit for bit: on flat floors, stairs and
// rolling terrain with crates and walls, at 20 and 60 Hz, walking, jumping,
// crouching and pushed into the floor now and then, with a near that
// gathers again as the player goes and one whose margin is too small to
// hold a tick's queries (every query beyond the last one's box gathers);
// the first holds triangles on at least half the ticks. It allocates
// nothing.
func TestMoveNearIsMove(t *testing.T) {
	floors := append(floor(20), box(geom.V(-3, 0, 2), geom.V(3, 0.3, 6))...)
	floors = append(floors, stairs(-6, -4, 4, 0.2, 0.3, 6)...)
	for _, lv := range []struct {
		name string
		m    *trimesh.Mesh
	}{{"floors", world(t, floors)}, {"terrain", world(t, stresslevel.Level(11, 24, 40))}} {
		for _, rate := range []float64{20, 60} {
			for _, margin := range []float64{NearMargin, 0} {
				c := DefaultCharacter()
				g := newInputs(7)
				start := spawnOn(lv.m, 0, 0)
				a, b := player(start), player(start)
				near := trimesh.NewNear(lv.m, solid, margin)
				gathered := 0
				for i := range 5000 {
					in := g.next()
					Move(&c, &a, in, 1/rate, lv.m, solid)
					MoveNear(&c, &b, in, 1/rate, near)
					if !same(&a, &b) {
						t.Fatalf("%s at %v Hz, margin %v, tick %d: %+v by Move, %+v by MoveNear", lv.name, rate, margin, i, a, b)
					}
					if near.Len() > 0 {
						gathered++
					}
					switch {
					case a.Pos.Y < -10 || a.Pos.Sub(start).Len() > 15:
						a, b = player(start), player(start)
					case i%700 == 699:
						a.Pos.Y -= 0.3 // into whatever is below
						b.Pos.Y -= 0.3
					}
				}
				if margin > 0 && gathered < 2500 {
					t.Errorf("%s at %v Hz, margin %v: the near held triangles on %d ticks of 5000", lv.name, rate, margin, gathered)
				}
			}
		}
	}
	c := DefaultCharacter()
	m := world(t, stresslevel.Level(11, 24, 40))
	near := trimesh.NewNear(m, solid, NearMargin)
	g := newInputs(3)
	s := player(spawnOn(m, 0.5, 0.5))
	if n := testing.AllocsPerRun(2000, func() { MoveNear(&c, &s, g.next(), 0.05, near) }); n != 0 {
		t.Errorf("%v allocations per tick", n)
	}
}
