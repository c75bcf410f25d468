package movement

import (
	"fmt"
	"math"

	"github.com/rewind-gg/rewind/geom"
)

// Character is how a class of player moves, and the capsule it moves as. A
// config file carries one per class, with the snake_case keys of the tags;
// Validate names the key of a bad value. Lengths are in metres, speeds in
// metres per second, accelerations and friction per second (a fraction of a
// speed gained or lost each second, as in Quake and Source), angles in
// degrees. docs/movement.md gives each field's effect and where its default
// comes from.
type Character struct {
	RunSpeed    float64 `koanf:"run_speed" toml:"run_speed"`       // top speed on the ground at full stick
	SprintSpeed float64 `koanf:"sprint_speed" toml:"sprint_speed"` // top speed sprinting (stick forward, standing); at least RunSpeed
	CrouchSpeed float64 `koanf:"crouch_speed" toml:"crouch_speed"` // top speed crouched on the ground; at most RunSpeed

	// GroundAccel: on the ground, a tick adds up to GroundAccel × dt ×
	// max(wish speed, RunSpeed) along the wish direction, until the speed
	// along it reaches the wish speed (Quake's sv_accelerate).
	GroundAccel float64 `koanf:"ground_accel" toml:"ground_accel"`
	// AirAccel and AirWishSpeed: in the air, a tick adds up to AirAccel ×
	// wish speed × dt along the wish direction, until the speed along it
	// reaches AirWishSpeed (Quake's 30 units/s cap; Source's
	// sv_airaccelerate and sv_air_max_wishspeed). The low cap is air
	// control: it turns a jump's velocity without speeding it up, and is
	// what air strafing feeds on.
	AirAccel     float64 `koanf:"air_accel" toml:"air_accel"`
	AirWishSpeed float64 `koanf:"air_wish_speed" toml:"air_wish_speed"`
	// Friction and StopSpeed: on the ground, a tick takes max(speed,
	// StopSpeed) × Friction × dt off the speed (never below 0): above
	// StopSpeed the speed decays exponentially, below it it falls at
	// Friction × StopSpeed m/s² and stops within 1/Friction seconds.
	Friction  float64 `koanf:"friction" toml:"friction"`
	StopSpeed float64 `koanf:"stop_speed" toml:"stop_speed"`

	Gravity float64 `koanf:"gravity" toml:"gravity"` // m/s², down
	// JumpHeight is how high a jump lifts the feet: the highest position
	// at a tick boundary is this far above the take-off, whatever the tick
	// rate (Move derives the take-off speed). 0: no jumping.
	JumpHeight float64 `koanf:"jump_height" toml:"jump_height"`
	// StepHeight is the highest ledge walked onto without jumping, and the
	// furthest a walker is kept on the ground going down (stairs, slopes).
	StepHeight float64 `koanf:"step_height" toml:"step_height"`
	// MaxSlope is the steepest ground that can be stood on, in degrees from
	// horizontal: steeper ground is slid down, and a walker cannot climb it.
	MaxSlope float64 `koanf:"max_slope" toml:"max_slope"`

	Radius          float64 `koanf:"radius" toml:"radius"`                       // the capsule's
	Height          float64 `koanf:"height" toml:"height"`                       // feet to the top of the capsule, standing
	CrouchHeight    float64 `koanf:"crouch_height" toml:"crouch_height"`         // feet to the top, crouched
	EyeHeight       float64 `koanf:"eye_height" toml:"eye_height"`               // feet to the eye (shots start there), standing
	CrouchEyeHeight float64 `koanf:"crouch_eye_height" toml:"crouch_eye_height"` // feet to the eye, crouched
	// Skin is the gap the controller keeps between the capsule and the
	// level: the capsule's bottom is Skin above the feet, and every move
	// stops Skin short of what it hits (see docs/movement.md).
	Skin float64 `koanf:"skin" toml:"skin"`
}

// DefaultCharacter returns a character of a modern competitive shooter, in
// the lineage of Counter-Strike (Source) with Quake's air control:
// docs/movement.md justifies each value.
func DefaultCharacter() Character {
	return Character{
		RunSpeed:        6,
		SprintSpeed:     7.5,
		CrouchSpeed:     2,
		GroundAccel:     5.5,
		AirAccel:        12,
		AirWishSpeed:    0.76,
		Friction:        5.2,
		StopSpeed:       2,
		Gravity:         20,
		JumpHeight:      1,
		StepHeight:      0.45,
		MaxSlope:        45,
		Radius:          0.4,
		Height:          1.8,
		CrouchHeight:    1.1,
		EyeHeight:       1.6,
		CrouchEyeHeight: 0.9,
		Skin:            0.01,
	}
}

// FieldError is a Character value out of range: Key is its key, Msg what
// is wrong with it.
type FieldError struct {
	Key, Msg string
}

func (e *FieldError) Error() string { return "movement: " + e.Key + ": " + e.Msg }

// Param is one of a Character's values, by its key.
type Param struct {
	Key   string
	Value *float64
}

// Params returns c's values by key, in the order of the struct's fields.
func (c *Character) Params() []Param {
	return []Param{
		{"run_speed", &c.RunSpeed}, {"sprint_speed", &c.SprintSpeed}, {"crouch_speed", &c.CrouchSpeed},
		{"ground_accel", &c.GroundAccel}, {"air_accel", &c.AirAccel}, {"air_wish_speed", &c.AirWishSpeed},
		{"friction", &c.Friction}, {"stop_speed", &c.StopSpeed}, {"gravity", &c.Gravity},
		{"jump_height", &c.JumpHeight}, {"step_height", &c.StepHeight}, {"max_slope", &c.MaxSlope},
		{"radius", &c.Radius}, {"height", &c.Height}, {"crouch_height", &c.CrouchHeight},
		{"eye_height", &c.EyeHeight}, {"crouch_eye_height", &c.CrouchEyeHeight}, {"skin", &c.Skin},
	}
}

// IsCapsule reports whether key names a value of the capsule and the eyes
// (radius, height, crouch_height, eye_height, crouch_eye_height) rather
// than of how the character moves: a server gives every player one capsule
// (its hitbox), and a class only its movement.
func IsCapsule(key string) bool {
	switch key {
	case "radius", "height", "crouch_height", "eye_height", "crouch_eye_height":
		return true
	}
	return false
}

// Validate returns an error naming the key of the first value that is out
// of range: "movement: crouch_height: 2 is above height 1.8" (a
// *FieldError).
func (c *Character) Validate() error {
	bad := func(key, format string, args ...any) error {
		return &FieldError{Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	for _, f := range []struct {
		key  string
		v    float64
		zero bool // 0 allowed
	}{
		{"run_speed", c.RunSpeed, false},
		{"sprint_speed", c.SprintSpeed, false},
		{"crouch_speed", c.CrouchSpeed, false},
		{"ground_accel", c.GroundAccel, false},
		{"air_accel", c.AirAccel, true},
		{"air_wish_speed", c.AirWishSpeed, true},
		{"friction", c.Friction, true},
		{"stop_speed", c.StopSpeed, true},
		{"gravity", c.Gravity, false},
		{"jump_height", c.JumpHeight, true},
		{"step_height", c.StepHeight, true},
		{"max_slope", c.MaxSlope, false},
		{"radius", c.Radius, false},
		{"height", c.Height, false},
		{"crouch_height", c.CrouchHeight, false},
		{"eye_height", c.EyeHeight, false},
		{"crouch_eye_height", c.CrouchEyeHeight, false},
		{"skin", c.Skin, false},
	} {
		switch {
		case math.IsNaN(f.v) || math.IsInf(f.v, 0):
			return bad(f.key, "must be a finite number, got %v", f.v)
		case f.zero && f.v < 0:
			return bad(f.key, "must not be negative, got %v", f.v)
		case !f.zero && f.v <= 0:
			return bad(f.key, "must be a positive number, got %v", f.v)
		}
	}
	switch {
	case c.SprintSpeed < c.RunSpeed:
		return bad("sprint_speed", "%v is below run_speed %v", c.SprintSpeed, c.RunSpeed)
	case c.CrouchSpeed > c.RunSpeed:
		return bad("crouch_speed", "%v is above run_speed %v", c.CrouchSpeed, c.RunSpeed)
	case c.MaxSlope >= 90:
		return bad("max_slope", "%v degrees: must be below 90", c.MaxSlope)
	case c.Skin > c.Radius/4:
		return bad("skin", "%v is above radius/4 (%v)", c.Skin, c.Radius/4)
	case c.Skin < minSkin:
		return bad("skin", "%v is below %v m: rounding could close the gap", c.Skin, minSkin)
	case c.CrouchHeight < 2*c.Radius+c.Skin:
		return bad("crouch_height", "%v is below 2×radius + skin (%v): the capsule does not fit", c.CrouchHeight, 2*c.Radius+c.Skin)
	case c.Height < c.CrouchHeight:
		return bad("crouch_height", "%v is above height %v", c.CrouchHeight, c.Height)
	case c.EyeHeight > c.Height:
		return bad("eye_height", "%v is above height %v", c.EyeHeight, c.Height)
	case c.CrouchEyeHeight > c.CrouchHeight:
		return bad("crouch_eye_height", "%v is above crouch_height %v", c.CrouchEyeHeight, c.CrouchHeight)
	case c.StepHeight >= c.CrouchHeight:
		return bad("step_height", "%v is not below crouch_height %v", c.StepHeight, c.CrouchHeight)
	}
	return nil
}

// minSkin is the thinnest skin Validate accepts, in metres: the least gap
// the controller leaves (on a perch, minSkin × perchY) stays above the gap
// it takes for touching (minGap).
const minSkin = 1e-3

// height returns the capsule's height: feet to top.
func (c *Character) height(crouched bool) float64 {
	if crouched {
		return c.CrouchHeight
	}
	return c.Height
}

// segment returns the capsule's core for feet at pos: the capsule is the
// points within Radius of a–b, from Skin above the feet to the height.
func (c *Character) segment(pos geom.Vec3, crouched bool) (a, b geom.Vec3) {
	a = geom.V(pos.X, pos.Y+c.Skin+c.Radius, pos.Z)
	b = geom.V(pos.X, pos.Y+c.height(crouched)-c.Radius, pos.Z)
	return a, b
}

// Capsule returns the capsule s collides with the level as: Radius around
// a vertical segment, from Skin above the feet to Height (CrouchHeight when
// crouched) above them.
func (c *Character) Capsule(s *State) geom.Capsule {
	a, b := c.segment(s.Pos, s.Crouched)
	return geom.Capsule{A: a, B: b, Radius: c.Radius}
}

// Eye returns where s sees and shoots from: EyeHeight (CrouchEyeHeight when
// crouched) above the feet.
func (c *Character) Eye(s *State) geom.Vec3 {
	h := c.EyeHeight
	if s.Crouched {
		h = c.CrouchEyeHeight
	}
	return geom.V(s.Pos.X, s.Pos.Y+h, s.Pos.Z)
}
