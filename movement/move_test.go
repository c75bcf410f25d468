package movement

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/stresslevel"
)

// The tick rates the tests run at: the server's default and the usual ones.
var rates = []float64{20, 30, 60, 128}

func TestValidate(t *testing.T) {
	def := DefaultCharacter()
	if err := def.Validate(); err != nil {
		t.Fatalf("the default: %v", err)
	}
	for _, tt := range []struct {
		change func(*Character)
		want   string
	}{
		{func(c *Character) { c.RunSpeed = -1 }, "movement: run_speed: must be a positive number, got -1"},
		{func(c *Character) { c.Gravity = math.NaN() }, "movement: gravity: must be a finite number, got NaN"},
		{func(c *Character) { c.JumpHeight = -0.5 }, "movement: jump_height: must not be negative, got -0.5"},
		{func(c *Character) { c.SprintSpeed = 5 }, "movement: sprint_speed: 5 is below run_speed 6"},
		{func(c *Character) { c.CrouchSpeed = 7 }, "movement: crouch_speed: 7 is above run_speed 6"},
		{func(c *Character) { c.MaxSlope = 90 }, "movement: max_slope: 90 degrees: must be below 90"},
		{func(c *Character) { c.Skin = 0.2 }, "movement: skin: 0.2 is above radius/4 (0.1)"},
		{func(c *Character) { c.Skin = 1e-4 }, "movement: skin: 0.0001 is below 0.001 m"},
		{func(c *Character) { c.CrouchHeight = 0.7 }, "movement: crouch_height: 0.7 is below 2×radius + skin (0.81)"},
		{func(c *Character) { c.CrouchHeight = 2 }, "movement: crouch_height: 2 is above height 1.8"},
		{func(c *Character) { c.EyeHeight = 1.9 }, "movement: eye_height: 1.9 is above height 1.8"},
		{func(c *Character) { c.CrouchEyeHeight = 1.2 }, "movement: crouch_eye_height: 1.2 is above crouch_height 1.1"},
		{func(c *Character) { c.StepHeight = 1.1 }, "movement: step_height: 1.1 is not below crouch_height 1.1"},
		{func(c *Character) { c.AirAccel = math.Inf(1) }, "movement: air_accel: must be a finite number, got +Inf"},
	} {
		c := DefaultCharacter()
		tt.change(&c)
		err := c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("got %v, want %q", err, tt.want)
		}
	}
}

// Full stick on flat ground reaches the run speed, sprinting the sprint
// speed, crouched the crouch speed, exactly; letting go stops.
func TestGroundSpeeds(t *testing.T) {
	c := DefaultCharacter()
	m := world(t, floor(100))
	for _, tt := range []struct {
		name string
		in   Input
		want float64
	}{
		{"run", walking(0), c.RunSpeed},
		{"diagonal", Input{MoveX: 1, MoveZ: 1}, c.RunSpeed},
		{"half stick", Input{MoveZ: 0.5}, c.RunSpeed / 2},
		{"sprint", Input{MoveZ: 1, Sprint: true}, c.SprintSpeed},
		{"sprint backwards runs", Input{MoveZ: -1, Sprint: true}, c.RunSpeed},
		{"crouch", Input{MoveZ: 1, Crouch: true, Sprint: true}, c.CrouchSpeed},
	} {
		s := settle(&c, player(geom.V(0, 0, -80)), tt.in, 0.05, m, 60)
		if got := s.Vel.Len(); math.Abs(got-tt.want) > 1e-9 || !s.OnGround || s.Vel.Y != 0 {
			t.Errorf("%s: speed %v (want %v), on ground %v, vertical %v", tt.name, got, tt.want, s.OnGround, s.Vel.Y)
		}
		s = settle(&c, s, Input{}, 0.05, m, 20)
		if s.Vel != (geom.Vec3{}) {
			t.Errorf("%s: still moving at %v after letting go", tt.name, s.Vel)
		}
	}
}

// Standing still on flat ground changes nothing, bit for bit.
func TestStandStill(t *testing.T) {
	c := DefaultCharacter()
	m := world(t, floor(10))
	s := player(geom.V(1.5, 0, -2.25))
	start := s
	for i := range 100 {
		Move(&c, &s, Input{Yaw: 1}, 0.05, m, solid)
		if s.Pos != start.Pos || s.Vel != (geom.Vec3{}) || !s.OnGround || s.Ground != up {
			t.Fatalf("tick %d: %+v", i, s)
		}
	}
}

// A jump's highest position at a tick boundary is the jump height above
// the take-off, at every tick rate (the continuous apex would be up to
// g·dt²/8 higher: 6 mm at 20 Hz); the character lands back on the floor
// with no vertical speed; holding jump does not jump again, pressing it
// anew does.
func TestJumpPeak(t *testing.T) {
	c := DefaultCharacter()
	m := world(t, floor(10))
	for _, rate := range rates {
		dt := 1 / rate
		s := player(geom.V(0, 0, 0))
		Move(&c, &s, Input{}, dt, m, solid)
		take := s.Pos.Y
		peak, landed := math.Inf(-1), -1
		for i := 0; i < int(3*rate) && landed < 0; i++ {
			Move(&c, &s, Input{Jump: true}, dt, m, solid)
			peak = max(peak, s.Pos.Y)
			if i > 0 && s.OnGround {
				landed = i
			}
		}
		if got := peak - take; math.Abs(got-c.JumpHeight) > 1e-9 {
			t.Errorf("%v Hz: peak %.12f m above the take-off, want %v", rate, got, c.JumpHeight)
		}
		airtime := float64(landed) * dt
		if want := 2 * math.Sqrt(2*c.JumpHeight/c.Gravity); landed < 0 || math.Abs(airtime-want) > 2*dt {
			t.Errorf("%v Hz: landed after %v s, want about %v", rate, airtime, want)
		}
		if s.Vel.Y != 0 || math.Abs(s.Pos.Y-take) > 1e-12 {
			t.Errorf("%v Hz: landed at %v with vertical speed %v", rate, s.Pos.Y, s.Vel.Y)
		}
		// Still holding jump: no second jump.
		s = settle(&c, s, Input{Jump: true}, dt, m, int(rate))
		if !s.OnGround || math.Abs(s.Pos.Y-take) > 1e-12 {
			t.Errorf("%v Hz: holding jump jumped again: %+v", rate, s)
		}
		Move(&c, &s, Input{}, dt, m, solid)
		Move(&c, &s, Input{Jump: true}, dt, m, solid)
		if s.OnGround || s.Vel.Y <= 0 {
			t.Errorf("%v Hz: a new press did not jump: %+v", rate, s)
		}
	}
}

// jumpSpeed's sampled apex is the height exactly, where the continuous
// formula falls short.
func TestJumpSpeed(t *testing.T) {
	for _, h := range []float64{0.01, 0.3, 1, 1.25, 4} {
		for _, g := range []float64{9.81, 20, 30} {
			for _, rate := range append(rates, 1, 5, 1000) {
				dt := 1 / rate
				v := jumpSpeed(h, g, dt)
				peak := 0.0
				for n := 1; n < 100000; n++ {
					y := v*float64(n)*dt - g*float64(n)*dt*float64(n)*dt/2
					if y < peak {
						break
					}
					peak = y
				}
				if math.Abs(peak-h) > 1e-12*max(h, 1) {
					t.Errorf("h %v g %v %v Hz: peak %v", h, g, rate, peak)
				}
				if v < math.Sqrt(2*g*h) {
					t.Errorf("h %v g %v %v Hz: %v is below the continuous take-off speed", h, g, rate, v)
				}
			}
		}
	}
}

// Running diagonally into a wall: on the tick of contact the velocity along
// the wall is the wish velocity's projection on it, exactly (the same tick
// without the wall says what the wish velocity was); then the speed along
// the wall settles where Quake's friction and acceleration put it, the
// fixed point of friction, v ← max(v − max(v, stop)·f·dt, 0), then
// acceleration, v ← v + min(a·w·dt, w − v·cos θ)·cos θ: acceleration only
// counts the speed along the wish, so at shallow angles the slide is a
// little faster than the run (2% at most with the defaults), as in Quake
// and Source. Nothing ever gets into the wall.
func TestWallSlide(t *testing.T) {
	c := DefaultCharacter()
	wall := box(geom.V(3, 0, -50), geom.V(3.5, 3, 50))
	m, open := world(t, floor(60), wall), world(t, floor(60))
	const dt = 0.05
	for _, deg := range []float64{10, 30, 45, 60, 80} {
		theta := deg * math.Pi / 180 // between the wish and the wall
		in := Input{MoveZ: 1, Yaw: theta}
		s := player(geom.V(0, 0, -40))
		for i := 0; ; i++ {
			before := s
			Move(&c, &s, in, dt, m, solid)
			if s.Pos.X+c.Radius+c.Skin < 3-1e-9 { // not there yet
				continue
			}
			free := before
			Move(&c, &free, in, dt, open, solid)
			if s.Vel.Z != free.Vel.Z || math.Abs(s.Vel.X) > 1e-15 {
				t.Errorf("%v°: velocity at contact %v, want (0, 0, %v)", deg, s.Vel, free.Vel.Z)
			}
			if i > 200 {
				t.Fatalf("%v°: never reached the wall", deg)
			}
			break
		}
		w, a := c.RunSpeed, c.GroundAccel*c.RunSpeed*dt
		v := 0.0
		for range 10000 {
			v = max(v-max(v, c.StopSpeed)*c.Friction*dt, 0)
			v += min(a, w-v*math.Cos(theta)) * math.Cos(theta)
		}
		for range 200 {
			Move(&c, &s, in, dt, m, solid)
			checkClear(t, &c, &s, m, fmt.Sprintf("%v°", deg))
		}
		if math.Abs(s.Vel.Z-v) > 1e-9 || math.Abs(s.Vel.X) > 1e-15 || math.Abs(s.Pos.X-(3-c.Radius-c.Skin)) > 1e-12 {
			t.Errorf("%v°: sliding at %v (want (0, 0, %v)), x %v", deg, s.Vel, v, s.Pos.X)
		}
		if v > 1.02*w {
			t.Errorf("%v°: steady slide %v, over 2%% above the run speed %v", deg, v, w)
		}
	}
}

// Stairs with risers up to the step height are walked up at full speed,
// staying on the ground; a riser higher than the step height (and the
// skin) stops the walker; stairs are walked down on the ground, never
// rising.
func TestStairs(t *testing.T) {
	c := DefaultCharacter()
	for _, rate := range rates {
		dt := 1 / rate
		for _, tt := range []struct {
			rise, tread float64
			n           int
			climb       bool
		}{
			{0.15, 0.3, 10, true},
			{0.2, 0.3, 8, true},
			{0.3, 0.5, 5, true},
			{c.StepHeight, 1, 3, true},
			{c.StepHeight + c.Skin + 0.005, 1, 3, false},
			{0.6, 1, 2, false},
		} {
			what := fmt.Sprintf("%v Hz, %v × %v stairs", rate, tt.rise, tt.tread)
			top := tt.rise * float64(tt.n)
			end := 1 + tt.tread*float64(tt.n)
			m := world(t, floor(40), stairs(1, -3, 3, tt.rise, tt.tread, tt.n),
				box(geom.V(end, 0, -3), geom.V(end+30, top, 3)))
			s := player(geom.V(0, 0, 0))
			air := 0
			for range int(3 * rate) {
				Move(&c, &s, walking(east), dt, m, solid)
				checkClear(t, &c, &s, m, what)
				if !s.OnGround {
					air++
				}
			}
			switch {
			case tt.climb && (s.Pos.X < end || math.Abs(s.Pos.Y-top) > 1e-12 || air > 0):
				t.Errorf("%s: up to %v, %d ticks in the air", what, s.Pos, air)
			case !tt.climb && (s.Pos.X > 1-c.Radius || math.Abs(s.Pos.Y) > 1e-12):
				t.Errorf("%s: got onto them: %v", what, s.Pos)
			}
			if !tt.climb {
				continue
			}
			// Down again.
			s = settle(&c, s, Input{}, dt, m, int(rate))
			y := s.Pos.Y
			for i := range int(4 * rate) {
				Move(&c, &s, walking(-east), dt, m, solid)
				checkClear(t, &c, &s, m, what)
				if !s.OnGround || s.Pos.Y > y {
					t.Fatalf("%s, going down: tick %d at %v (from %v), on ground %v", what, i, s.Pos, y, s.OnGround)
				}
				y = s.Pos.Y
			}
			if math.Abs(s.Pos.Y) > 1e-12 || s.Pos.X > 0 {
				t.Errorf("%s: down to %v", what, s.Pos)
			}
		}
	}
}

// A slope under the limit is walked up and stood on without sliding; one
// over it is slid down and cannot be walked up.
func TestSlopes(t *testing.T) {
	c := DefaultCharacter()
	for _, rate := range rates {
		dt := 1 / rate
		// 30°: rises 4 m over 4√3.
		run := 4 * math.Sqrt(3)
		m := world(t, floor(40), wedge(2, 2+run, -5, 5, 4), box(geom.V(2+run, 0, -5), geom.V(20, 4, 5)))
		s := player(geom.V(0, 0, 0))
		for range int(rate) {
			Move(&c, &s, walking(east), dt, m, solid)
			if !s.OnGround {
				t.Fatalf("%v Hz, 30°: off the ground at %v", rate, s.Pos)
			}
		}
		if s.Pos.X <= 2.5 || s.Pos.X >= 2+run-1 {
			t.Fatalf("%v Hz, 30°: at %v after a second", rate, s.Pos)
		}
		if slope := math.Atan2(s.Ground.Y, math.Hypot(s.Ground.X, s.Ground.Z)); math.Abs(slope-math.Pi/3) > 1e-9 {
			t.Errorf("%v Hz, 30°: ground normal %v", rate, s.Ground)
		}
		if speed := s.Vel.Len(); math.Abs(speed-c.RunSpeed) > 1e-9 {
			t.Errorf("%v Hz, 30°: walking up at %v m/s", rate, speed)
		}
		s = settle(&c, s, Input{}, dt, m, int(rate))
		stop := s
		s = settle(&c, s, Input{}, dt, m, int(5*rate))
		if s.Pos != stop.Pos || s.Vel != (geom.Vec3{}) || !s.OnGround {
			t.Errorf("%v Hz, 30°: slid from %v to %v", rate, stop.Pos, s.Pos)
		}

		// 60°: rises 4 m over 4/√3.
		run = 4 / math.Sqrt(3)
		m = world(t, floor(40), wedge(2, 2+run, -5, 5, 4))
		s = player(geom.V(0, 0, 0))
		for range int(3 * rate) {
			Move(&c, &s, walking(east), dt, m, solid)
			checkClear(t, &c, &s, m, "60°")
			if s.Pos.Y > c.StepHeight {
				t.Fatalf("%v Hz, 60°: walked up to %v", rate, s.Pos)
			}
		}
		// Dropped onto its middle, the character slides down it.
		s = player(geom.V(2+run/2-0.2, 2.5, 0))
		y, slid := s.Pos.Y, false
		for range int(2 * rate) {
			Move(&c, &s, Input{}, dt, m, solid)
			checkClear(t, &c, &s, m, "60°, sliding")
			if s.Pos.Y > y+1e-12 {
				t.Fatalf("%v Hz, 60°: rose from %v to %v", rate, y, s.Pos.Y)
			}
			if s.Pos.Y < y && s.Pos.X < 2+run/2-0.2 {
				slid = true
			}
			y = s.Pos.Y
		}
		if !slid || math.Abs(s.Pos.Y) > 1e-12 || s.Pos.X > 2 || !s.OnGround {
			t.Errorf("%v Hz, 60°: ended at %v, on ground %v", rate, s.Pos, s.OnGround)
		}
	}
}

// Crouched, the character fits under a 1.2 m ceiling that stops it
// standing; there, letting go of crouch does not stand it up (it would not
// fit); out from under it, it stands at once.
func TestCrouchUnderCeiling(t *testing.T) {
	c := DefaultCharacter()
	slab := box(geom.V(2, 1.2, -3), geom.V(6, 1.5, 3))
	m := world(t, floor(20), slab)
	for _, rate := range rates {
		dt := 1 / rate
		s := settle(&c, player(geom.V(0, 0, 0)), walking(east), dt, m, int(2*rate))
		if s.Pos.X > 2-c.Radius || s.Crouched {
			t.Fatalf("%v Hz: standing, got under the slab: %v", rate, s.Pos)
		}
		crouched := Input{MoveZ: 1, Yaw: east, Crouch: true}
		s = settle(&c, s, crouched, dt, m, int(2*rate))
		if s.Pos.X < 3 || !s.Crouched || !s.OnGround {
			t.Fatalf("%v Hz: crouched, stuck at %v", rate, s.Pos)
		}
		if e := c.Eye(&s); e.Y != c.CrouchEyeHeight+s.Pos.Y {
			t.Errorf("%v Hz: crouched eye at %v", rate, e)
		}
		if cp := c.Capsule(&s); cp.B.Y+cp.Radius != s.Pos.Y+c.CrouchHeight {
			t.Errorf("%v Hz: crouched capsule %+v", rate, cp)
		}
		s = settle(&c, s, Input{}, dt, m, int(rate))
		if !s.Crouched {
			t.Fatalf("%v Hz: stood up under the slab at %v", rate, s.Pos)
		}
		// It stands on the first tick that starts with room to.
		for range int(3 * rate) {
			room := s.Pos.X-c.Radius > 6+minGap
			Move(&c, &s, walking(east), dt, m, solid)
			checkClear(t, &c, &s, m, "standing up")
			if s.Crouched == room {
				t.Fatalf("%v Hz: at %v crouched %v", rate, s.Pos, s.Crouched)
			}
		}
		if s.Crouched || s.Pos.X < 7 {
			t.Errorf("%v Hz: still crouched at %v", rate, s.Pos)
		}
	}
}

// Running at a crate and jumping: a plain jump gets onto a 0.9 m crate
// but not a 1.6 m one, which takes a crouch-jump (crouch pressed with the
// jump or just after: the legs tuck), as Counter-Strike's crouch-jump gets
// onto its 64-unit crates; 2.3 m is out of reach. Once on a crate, letting
// go of crouch stands up.
func TestCrouchJump(t *testing.T) {
	c := DefaultCharacter()
	for _, crate := range []float64{0.9, 1.6, 2.3} {
		m := world(t, floor(20), box(geom.V(1.5, 0, -2), geom.V(15, crate, 2)))
		for _, rate := range rates {
			dt := 1 / rate
			for _, crouch := range []int{-1, 0, 1} { // none, with the jump, the tick after
				want := crate < 1 || crate < 2 && crouch >= 0
				got := false
				for _, takeoff := range []float64{0.2, 0.6, 1} { // from the crate
					s := player(geom.V(-5, 0, 0))
					jumped := -1
					for i := range int(3 * rate) {
						in := walking(east)
						if jumped < 0 && s.Pos.X+c.Radius >= 1.5-takeoff {
							in.Jump, jumped = true, i
						}
						in.Crouch = crouch >= 0 && jumped >= 0 && i >= jumped+crouch
						Move(&c, &s, in, dt, m, solid)
						checkClear(t, &c, &s, m, "crouch-jump")
					}
					if math.Abs(s.Pos.Y-crate) > 1e-12 || !s.OnGround {
						continue
					}
					got = true
					s = settle(&c, s, Input{}, dt, m, 2)
					if s.Crouched || math.Abs(s.Pos.Y-crate) > 1e-12 {
						t.Errorf("%v Hz: did not stand up on the crate: %+v", rate, s)
					}
				}
				if got != want {
					t.Errorf("%v m crate, %v Hz, crouch %d: got on it %v", crate, rate, crouch, got)
				}
			}
		}
	}
}

// In the air, crouching raises the feet by Height − CrouchHeight and
// standing lowers them back, the head staying; standing up just off the
// ground, where the feet have no room to go down, raises the head instead.
func TestCrouchInAir(t *testing.T) {
	c := DefaultCharacter()
	m := world(t, floor(20))
	lift := c.Height - c.CrouchHeight
	const dt = 0.05
	plain := player(geom.V(0, 0, 0))
	tucked, late := plain, plain
	late.Crouched = true // crouched on the ground, lets go as it jumps
	for i := range 12 {
		Move(&c, &plain, Input{Jump: i == 0}, dt, m, solid)
		Move(&c, &tucked, Input{Jump: i == 0, Crouch: i >= 3 && i < 7}, dt, m, solid)
		Move(&c, &late, Input{Jump: i == 0}, dt, m, solid)
		want := plain.Pos.Y
		if i >= 3 && i < 7 {
			want += lift
		}
		if math.Abs(tucked.Pos.Y-want) > 1e-12 || tucked.Crouched != (i >= 3 && i < 7) {
			t.Errorf("tick %d: tucked at %v crouched %v, want %v", i, tucked.Pos.Y, tucked.Crouched, want)
		}
		if late.Pos.Y != plain.Pos.Y || late.Crouched {
			t.Errorf("tick %d: standing up off the ground: at %v crouched %v, want %v", i, late.Pos.Y, late.Crouched, plain.Pos.Y)
		}
	}
}

// At 60 m/s no wall 5 cm thick is crossed, at any angle, tick rate, on the
// ground or in the air, nor a floor 5 cm thick falling at 60 m/s.
func TestNoTunnelling(t *testing.T) {
	c := DefaultCharacter()
	m := world(t, floor(200), box(geom.V(4, 0, -100), geom.V(4.05, 5, 100)),
		box(geom.V(-100, 20, -100), geom.V(100, 20.05, 100)))
	for _, rate := range append(rates, 10, 5) {
		dt := 1 / rate
		for _, deg := range []float64{0, 30, 60, 85} {
			a := deg * math.Pi / 180
			for _, y := range []float64{0, 1} { // on the floor, in the air
				s := player(geom.V(0, y, 0))
				s.Vel = geom.V(60*math.Cos(a), 0, 60*math.Sin(a))
				for range int(rate) {
					Move(&c, &s, Input{}, dt, m, solid)
					if s.Pos.X+c.Radius > 4 || !s.Pos.IsFinite() {
						t.Fatalf("%v Hz, %v°, height %v: through the wall to %v", rate, deg, y, s.Pos)
					}
				}
			}
		}
		s := player(geom.V(0, 30, 0))
		s.Vel = geom.V(0, -60, 0)
		for range int(rate) {
			Move(&c, &s, Input{}, dt, m, solid)
			if s.Pos.Y < 20.05 {
				t.Fatalf("%v Hz: fell through the floor to %v", rate, s.Pos)
			}
		}
		if s.Pos.Y-20.05 > 1e-12 || !s.OnGround || s.Vel.Y != 0 {
			t.Errorf("%v Hz: did not land on the thin floor: %+v", rate, s)
		}
	}
}

// Walking off a ledge falls, following gravity, and lands: on the ground
// again with no vertical speed.
func TestLedge(t *testing.T) {
	c := DefaultCharacter()
	m := world(t, floor(40), box(geom.V(-10, 0, -5), geom.V(0, 2, 5)))
	for _, rate := range rates {
		dt := 1 / rate
		s := player(geom.V(-1, 2, 0))
		fell, prev := false, s
		for i := range int(3 * rate) {
			Move(&c, &s, walking(east), dt, m, solid)
			checkClear(t, &c, &s, m, "ledge")
			if !s.OnGround && s.Pos.Y > 0.5 {
				fell = true
				if !prev.OnGround && math.Abs(s.Vel.Y-(prev.Vel.Y-c.Gravity*dt)) > 1e-9 {
					t.Fatalf("%v Hz: tick %d: vertical speed %v after %v", rate, i, s.Vel.Y, prev.Vel.Y)
				}
			}
			prev = s
		}
		if !fell || !s.OnGround || s.Vel.Y != 0 || math.Abs(s.Pos.Y) > 1e-12 {
			t.Errorf("%v Hz: fell %v, ended %+v", rate, fell, s)
		}
	}
}

// Walking into the corner of two walls meeting at an acute angle stops the
// character: once stopped it stays still to the last bit, and it never gets
// into or through either wall.
func TestAcuteCorner(t *testing.T) {
	c := DefaultCharacter()
	for _, deg := range []float64{15, 30, 60} {
		half := deg / 2 * math.Pi / 180
		// Two thin walls along directions ±half from the +X axis, meeting at
		// x = 10: a wedge opening toward −X.
		wall := func(sign float64) []stresslevel.Triangle {
			dir := geom.V(-math.Cos(half), 0, sign*math.Sin(half))
			n := geom.V(-dir.Z, 0, dir.X).Scale(sign) // toward the inside
			a := geom.V(10, 0, 0).AddScaled(n, -0.01)
			b := a.AddScaled(dir, 20)
			q := func(p geom.Vec3, y float64) geom.Vec3 { return geom.V(p.X, y, p.Z) }
			return []stresslevel.Triangle{
				{A: q(a, 0), B: q(b, 0), C: q(b, 4), Mask: uint8(solid)},
				{A: q(a, 0), B: q(b, 4), C: q(a, 4), Mask: uint8(solid)},
			}
		}
		m := world(t, floor(40), wall(1), wall(-1))
		for _, rate := range rates {
			dt := 1 / rate
			for _, aim := range []float64{0, 0.05, -0.2} {
				s := player(geom.V(0, 0, 0))
				var still geom.Vec3
				for i := range int(4 * rate) {
					Move(&c, &s, walking(east+aim), dt, m, solid)
					checkClear(t, &c, &s, m, fmt.Sprintf("%v° corner", deg))
					inside := s.Pos.Sub(geom.V(10, 0, 0))
					if math.Abs(inside.Z) > -inside.X*math.Tan(half) {
						t.Fatalf("%v° corner, %v Hz: outside the walls at %v", deg, rate, s.Pos)
					}
					if i == int(3*rate) {
						still = s.Pos
					}
				}
				if s.Pos != still {
					t.Errorf("%v° corner, %v Hz, aim %v: moved from %v to %v in its last second", deg, rate, aim, still, s.Pos)
				}
			}
		}
	}
}

// A character that starts inside the floor or a wall (a spawn, a bad
// snapshot) is pushed out on its first tick.
func TestDepenetration(t *testing.T) {
	c := DefaultCharacter()
	m := world(t, floor(20), box(geom.V(2, 0, -5), geom.V(3, 3, 5)))
	for _, start := range []geom.Vec3{
		geom.V(0, -0.1, 0),
		geom.V(0, -0.3, 0),
		geom.V(1.8, 0, 0),
		geom.V(1.8, -0.1, 0),
	} {
		s := player(start)
		Move(&c, &s, Input{}, 0.05, m, solid)
		if d := clearance(&c, &s, m, 1); d < 0 {
			t.Errorf("from %v: still %v inside at %v", start, -d, s.Pos)
		}
		s = settle(&c, s, Input{}, 0.05, m, 20)
		if !s.OnGround || math.Abs(s.Pos.Y) > 1e-12 {
			t.Errorf("from %v: ended at %+v", start, s)
		}
	}
}

// Surfaces that only block shots do not block movement.
func TestMask(t *testing.T) {
	c := DefaultCharacter()
	fence := stresslevel.Box(geom.V(2, 0, -5), geom.V(2.1, 3, 5), uint8(shotOnly))
	m := world(t, floor(20), fence)
	s := settle(&c, player(geom.V(0, 0, 0)), walking(east), 0.05, m, 40)
	if s.Pos.X < 5 {
		t.Errorf("stopped by a shot-only fence at %v", s.Pos)
	}
}

// Bad numbers in the input, the state or the tick do no harm.
func TestBadNumbers(t *testing.T) {
	c := DefaultCharacter()
	m := world(t, floor(20))
	s := player(geom.V(0, 0, 0))
	Move(&c, &s, Input{MoveX: math.NaN(), MoveZ: math.Inf(1), Yaw: math.Inf(-1)}, 0.05, m, solid)
	if s.Pos != (geom.Vec3{}) || s.Vel != (geom.Vec3{}) || !s.OnGround {
		t.Errorf("non-finite input moved: %+v", s)
	}
	s.Vel = geom.V(math.NaN(), 0, 0)
	Move(&c, &s, Input{}, 0.05, m, solid)
	if !s.Vel.IsFinite() || !s.Pos.IsFinite() {
		t.Errorf("a NaN velocity stayed: %+v", s)
	}
	for _, dt := range []float64{0, -1, math.NaN(), math.Inf(1), 2} {
		before := s
		Move(&c, &s, walking(0), dt, m, solid)
		if s != before {
			t.Errorf("dt %v changed the state", dt)
		}
	}
	Move(&c, &s, walking(0), 0.05, nil, solid) // no world: falls
	if s.OnGround || s.Pos.Z <= 0 {
		t.Errorf("no world: %+v", s)
	}
}

// The derived fields are derived: a state without them moves the same.
func TestGroundIsDerived(t *testing.T) {
	c := DefaultCharacter()
	m := world(t, stresslevel.Level(3, 16, 12))
	s := player(spawnOn(m, 0, 0))
	rng := newInputs(5)
	for range 2000 {
		in := rng.next()
		bare := s
		bare.OnGround, bare.Ground = false, geom.Vec3{}
		Move(&c, &s, in, 0.05, m, solid)
		Move(&c, &bare, in, 0.05, m, solid)
		if !same(&s, &bare) {
			t.Fatalf("the derived fields changed the move: %+v and %+v", s, bare)
		}
	}
}

func TestLookAndAim(t *testing.T) {
	if y, p := Look(math.NaN(), 3); y != 0 || p != math.Pi/2 {
		t.Errorf("Look(NaN, 3) = %v, %v", y, p)
	}
	if y, p := Look(1, math.Inf(-1)); y != 1 || p != 0 {
		t.Errorf("Look(1, -Inf) = %v, %v", y, p)
	}
	if a := Aim(math.Pi/2, 0); !near(a, geom.V(1, 0, 0), 1e-12) {
		t.Errorf("aim at yaw 90°: %v", a)
	}
	if a := Aim(0, math.Pi/2); !near(a, geom.V(0, 1, 0), 1e-12) {
		t.Errorf("aim straight up: %v", a)
	}
}

// Params lists every field once, by its tag's key.
func TestParams(t *testing.T) {
	c := DefaultCharacter()
	ps := c.Params()
	if n := reflect.TypeOf(c).NumField(); len(ps) != n {
		t.Fatalf("%d params, %d fields", len(ps), n)
	}
	for i, p := range ps {
		f := reflect.TypeOf(c).Field(i)
		if f.Tag.Get("toml") != p.Key || reflect.ValueOf(&c).Elem().Field(i).Addr().Interface() != p.Value {
			t.Errorf("param %d is %s, field %s (%s)", i, p.Key, f.Name, f.Tag.Get("toml"))
		}
	}
}
