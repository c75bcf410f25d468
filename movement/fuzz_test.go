package movement

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/stresslevel"
)

// solidShape is a convex solid of a fuzz level, for telling whether a point
// is inside it.
type solidShape struct {
	centre  geom.Vec3
	yaw     float64 // about the centre
	half    geom.Vec3
	rise    float64 // > 0: a wedge whose top rises along local +x to 2·half.Y
	movable bool    // blocks movement
}

// inside reports whether p is inside the solid by more than margin.
func (sh *solidShape) inside(p geom.Vec3, margin float64) bool {
	d := p.Sub(sh.centre)
	sin, cos := math.Sincos(sh.yaw) // undo shapeTriangles' turn
	x, z := d.X*cos+d.Z*sin, -d.X*sin+d.Z*cos
	h := sh.half
	if math.Abs(x) > h.X-margin || math.Abs(z) > h.Z-margin || d.Y < -h.Y+margin {
		return false
	}
	top := h.Y
	if sh.rise > 0 {
		top = -h.Y + (x+h.X)/(2*h.X)*2*h.Y // the slope's height at x
		// the distance from p to the slope plane, not its height above
		return (top-d.Y)*2*h.X/math.Hypot(2*h.X, 2*h.Y) > margin
	}
	return d.Y < top-margin
}

// fuzzLevel is a closed room (a floor, four walls 5 cm thick, a ceiling)
// with boxes, thin walls, steps and ramps in it, turned at random angles,
// some of them only blocking shots.
func fuzzLevel(rng *rand.Rand) (parts [][]stresslevel.Triangle, shapes []solidShape, room geom.AABB) {
	f := func(lo, hi float64) float64 { return lo + rng.Float64()*(hi-lo) }
	half, height := f(4, 10), f(2.5, 6)
	room = geom.AABB{Min: geom.V(-half, 0, -half), Max: geom.V(half, height, half)}
	add := func(lo, hi geom.Vec3) {
		parts = append(parts, box(lo, hi))
	}
	add(geom.V(-half-1, -1, -half-1), geom.V(half+1, 0, half+1))
	add(geom.V(-half-1, height, -half-1), geom.V(half+1, height+0.05, half+1))
	add(geom.V(-half-0.05, 0, -half), geom.V(-half, height, half))
	add(geom.V(half, 0, -half), geom.V(half+0.05, height, half))
	add(geom.V(-half, 0, -half-0.05), geom.V(half, height, -half))
	add(geom.V(-half, 0, half), geom.V(half, height, half+0.05))
	for range rng.IntN(10) {
		var sh solidShape
		switch rng.IntN(4) {
		case 0: // a crate or a step
			sh.half = geom.V(f(0.2, 1.5), f(0.05, 0.8), f(0.2, 1.5))
		case 1: // a thin wall
			sh.half = geom.V(f(0.5, 3), f(0.5, 2), 0.025)
		case 2: // a pillar
			sh.half = geom.V(f(0.1, 0.5), height/2, f(0.1, 0.5))
		default: // a ramp of 5° to 75°
			sh.half = geom.V(f(0.5, 2), 0, f(0.5, 2))
			sh.half.Y = sh.half.X * math.Tan(f(5, 75)*math.Pi/180)
			sh.rise = 1
		}
		sh.centre = geom.V(f(-half, half), sh.half.Y, f(-half, half))
		if rng.IntN(4) == 0 {
			sh.centre.Y += f(0, 1.5) // floating: something to go under or hit one's head on
		}
		sh.yaw = f(-math.Pi, math.Pi)
		if rng.IntN(2) == 0 {
			sh.yaw = float64(rng.IntN(4)) * math.Pi / 2
		}
		mask := solid
		if rng.IntN(8) == 0 {
			mask = shotOnly
		}
		sh.movable = mask == solid
		parts = append(parts, shapeTriangles(&sh, uint8(mask)))
		shapes = append(shapes, sh)
	}
	return parts, shapes, room
}

// shapeTriangles returns the solid's triangles in the world: a box's, or a
// wedge's.
func shapeTriangles(sh *solidShape, mask uint8) []stresslevel.Triangle {
	h := sh.half
	var local []stresslevel.Triangle
	if sh.rise > 0 {
		local = wedge(-h.X, h.X, -h.Z, h.Z, 2*h.Y)
		for i := range local {
			local[i].Mask = mask
		}
		for i := range local { // the wedge's base is y = 0: centre it
			for _, v := range []*geom.Vec3{&local[i].A, &local[i].B, &local[i].C} {
				v.Y -= h.Y
			}
		}
	} else {
		local = stresslevel.Box(h.Scale(-1), h, mask)
	}
	sin, cos := math.Sincos(sh.yaw)
	turn := func(v geom.Vec3) geom.Vec3 {
		return geom.V(v.X*cos-v.Z*sin, v.Y, v.X*sin+v.Z*cos).Add(sh.centre)
	}
	for i := range local {
		local[i].A, local[i].B, local[i].C = turn(local[i].A), turn(local[i].B), turn(local[i].C)
	}
	return local
}

// FuzzMove moves a character by random inputs (with kicks of up to 60 m/s
// in any direction) around random small levels, at a random tick rate, and
// checks that it never gets into the level, never leaves the room or gets
// inside a solid, and never holds a number that is not finite.
func FuzzMove(f *testing.F) {
	for seed := range uint64(12) {
		script := make([]byte, 900)
		r := rand.New(rand.NewPCG(seed, 1))
		for i := range script {
			script[i] = byte(r.UintN(256))
		}
		f.Add(seed, script)
	}
	f.Fuzz(fuzzMove)
}

// fuzzMove is FuzzMove's body: the level, the character and the tick rate
// come from seed, the inputs from script, three bytes a tick.
func fuzzMove(t *testing.T, seed uint64, script []byte) {
	rng := rand.New(rand.NewPCG(seed, 2))
	parts, shapes, room := fuzzLevel(rng)
	m := world(t, parts...)
	c := DefaultCharacter()
	c.Radius = 0.25 + rng.Float64()*0.25
	c.Skin = 0.001 + rng.Float64()*0.02
	c.StepHeight = rng.Float64() * 0.6
	c.MaxSlope = 20 + rng.Float64()*50
	c.JumpHeight = rng.Float64() * 1.5
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	dt := 1 / []float64{10, 20, 30, 60, 128}[rng.IntN(5)]
	// Start on the floor, clear of everything.
	var s State
	placed := false
	for range 100 {
		s = player(geom.V(room.Min.X+1+rng.Float64()*(room.Max.X-room.Min.X-2), 0, room.Min.Z+1+rng.Float64()*(room.Max.Z-room.Min.Z-2)))
		if clearance(&c, &s, m, 0.1) > c.Skin/2 && !insideSolid(&c, &s, shapes) {
			placed = true
			break
		}
	}
	if !placed {
		return
	}
	for i := 0; i+3 <= len(script) && i < 3*600; i += 3 {
		b0, b1, b2 := script[i], script[i+1], script[i+2]
		in := Input{
			MoveX:  float64(int(b0&0x0f)-7) / 7,
			MoveZ:  float64(int(b0>>4)-7) / 7,
			Yaw:    float64(b1) * 2 * math.Pi / 256,
			Jump:   b2&1 != 0,
			Crouch: b2&6 == 6,
			Sprint: b2&8 != 0,
		}
		if b2&0xf0 == 0xf0 { // a kick
			dir := geom.V(rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()).Normalize()
			s.Vel = dir.Scale(60 * rng.Float64())
		}
		before := s
		Move(&c, &s, in, dt, m, solid)
		if !s.Pos.IsFinite() || !s.Vel.IsFinite() || !s.Ground.IsFinite() {
			t.Fatalf("tick %d: not finite: %+v", i/3, s)
		}
		if d := clearance(&c, &s, m, 0.1); d < -1e-9 {
			t.Fatalf("tick %d: %.3g m into the level at %v (from %+v, input %+v)", i/3, -d, s.Pos, before, in)
		}
		cp := c.Capsule(&s)
		for _, p := range []geom.Vec3{cp.A, cp.B} {
			if !room.Contains(p) {
				t.Fatalf("tick %d: out of the room at %v (from %+v, input %+v)", i/3, s.Pos, before, in)
			}
		}
		if insideSolid(&c, &s, shapes) {
			t.Fatalf("tick %d: inside a solid at %v (from %+v, input %+v)", i/3, s.Pos, before, in)
		}
	}
}

// insideSolid reports whether the capsule's core is inside a solid that
// blocks movement.
func insideSolid(c *Character, s *State, shapes []solidShape) bool {
	cp := c.Capsule(s)
	for i := range shapes {
		if !shapes[i].movable {
			continue
		}
		for k := range 5 {
			if shapes[i].inside(cp.A.Lerp(cp.B, float64(k)/4), 0) {
				return true
			}
		}
	}
	return false
}

// FuzzMove's body on 200 more random levels and scripts than its seeds, in
// every test run.
func TestRandomLevels(t *testing.T) {
	r := rand.New(rand.NewPCG(77, 1))
	for k := range 200 {
		seed, script := r.Uint64(), make([]byte, 1800)
		for i := range script {
			script[i] = byte(r.UintN(256))
		}
		if !t.Run(fmt.Sprint(k), func(t *testing.T) { fuzzMove(t, seed, script) }) {
			t.Fatalf("level seed %d", seed)
		}
	}
}
