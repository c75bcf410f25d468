package weapons

import (
	"fmt"
	"math"
	"time"

	"github.com/rewind-gg/rewind/arsenal"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/ticks"
)

// Definition is one weapon or ability: its kind (which Go code resolves it)
// and the numbers that tune it. Which fields matter depends on the kind;
// docs/weapons.md is the reference.
type Definition struct {
	Name string
	Kind string // a registered kind: hitscan, projectile, melee, placeable, or a custom one

	// Every kind.
	Damage         float64 // per hit
	FireInterval   int     // ticks between two uses (a cooldown, for abilities); 0: every tick
	Magazine       int     // rounds per magazine; 0: unlimited
	ReloadTicks    int     // ticks to refill an empty magazine
	HeadMultiplier float64 // damage factor of a hit on the head (default 1)
	Streak         Streak  // a bonus for hits in quick succession (none when Hits is 0)
	// MaxRewind is the deepest view lag this weapon's shots are granted
	// (0: the room's lagcomp.max_unlag): a sniper rifle may favour its
	// shooter less than a shotgun.
	MaxRewind time.Duration
	// MaxRewindTicks gives the cap in ticks instead, the key of earlier
	// versions (0: MaxRewind); it changes length with the tick rate. The two
	// together are an error.
	MaxRewindTicks float64

	// hitscan
	Range   float64 // metres
	Pellets int     // rays per shot, all resolved in one rewind (default 1)
	Spread  float64 // half-angle of the cone pellets are spread over, radians
	Falloff Falloff // damage falloff with distance (none when End is 0)

	// projectile
	Speed         float64 // metres per second
	Gravity       float64 // downward acceleration, m/s² (0: straight line)
	Radius        float64 // the projectile's sphere; also a melee sphere or capsule's radius
	LifetimeTicks int     // steps before it expires as a miss
	Splash        Splash  // an explosion at contact (none when Radius is 0)
	Mode          string  // ModeShooterTime (default) or ModeCatchUp

	// melee
	Shape       string  // ShapeSphere (default), ShapeCapsule or ShapeArc
	Reach       float64 // metres from the attacker along its aim
	Angle       float64 // an arc's half-angle, radians
	WindupTicks int     // ticks from the start of the strike to the tick it lands

	// placeable
	Size          [3]float64 // width (across the aim), height, depth (along the aim)
	Distance      float64    // metres in front of the placer
	DurationTicks int        // ticks it stands; 0: until replaced
	Blocks        string     // BlocksEnemies (default) or BlocksEveryone
	MaxActive     int        // how many one player may have standing (default 1)

	// Params are a custom kind's own numbers, declared when it registers.
	Params map[string]float64
}

// Falloff scales damage with distance: full up to Start metres, then down in
// a straight line to Min (a fraction) at End, and Min beyond.
type Falloff struct {
	Start, End, Min float64
}

// Factor returns the damage factor at distance d.
func (f Falloff) Factor(d float64) float64 {
	if f.End <= 0 || d <= f.Start {
		return 1
	}
	if d >= f.End {
		return f.Min
	}
	return 1 - (1-f.Min)*(d-f.Start)/(f.End-f.Start)
}

// Splash is a projectile's explosion where it makes contact: every enemy
// within Radius of the contact point (and in its line of sight), except the
// one hit directly, takes Damage scaled down in a straight line to Min (a
// fraction) at the edge. It is checked in the same rewound world as the
// contact.
type Splash struct {
	Radius, Damage, Min float64
}

// Factor returns the damage factor at distance d from the centre.
func (s Splash) Factor(d float64) float64 {
	return 1 - (1-s.Min)*min(max(d/s.Radius, 0), 1)
}

// Streak rewards hits in quick succession: a hit that makes Hits hits with
// this weapon within WindowTicks, counted in view time (when the shooter saw
// them land, not when the server resolved them), deals Bonus more damage
// (0.5: +50%).
type Streak struct {
	Hits        int
	WindowTicks float64
	Bonus       float64
}

// Projectile modes (Dino Squad's two options).
const (
	// ModeShooterTime: one step per server tick, in the shooter's view time
	// (option 1). Hit times are the shooter's, which timed mechanics need.
	ModeShooterTime = "shooter_time"
	// ModeCatchUp: in its first tick it steps through its shooter's view time
	// up to the present, then flies in the present (option 2).
	ModeCatchUp = "catch_up"
)

// Melee shapes.
const (
	ShapeSphere  = "sphere"  // a sphere of Radius, Reach ahead
	ShapeCapsule = "capsule" // a capsule of Radius from the attacker to Reach ahead (a tail sweep)
	ShapeArc     = "arc"     // everything within Reach and Angle of the aim, horizontally
)

// Who a placeable blocks.
const (
	BlocksEnemies  = "enemies"  // the other teams' shots; its own team shoots through
	BlocksEveryone = "everyone" // every shot, the placer's included
)

// MaxRewind bounds a weapon's max_rewind: beyond any room's window (the
// room's max_unlag cuts every shot first anyway).
const MaxRewind = time.Minute

// MaxPellets bounds Pellets.
const MaxPellets = 64

// Bounds of distances (metres) and speeds (m/s) in definitions: far beyond
// any match, and keeping every query's cost bounded.
const (
	MaxDistance = 10_000
	MaxSpeed    = 100_000
)

// Rules returns the numbers that decide when the weapon fires, for package
// arsenal.
func (d *Definition) Rules() arsenal.Rules {
	return arsenal.Rules{FireInterval: d.FireInterval, Magazine: d.Magazine, ReloadTicks: d.ReloadTicks}
}

// RewindCap returns the weapon's cap on view lag in ticks at tickRate
// (fractions kept); 0: none.
func (d *Definition) RewindCap(tickRate int) float64 {
	if d.MaxRewindTicks > 0 {
		return d.MaxRewindTicks
	}
	return ticks.Of(d.MaxRewind, tickRate)
}

// Rewind returns the view lag, in ticks, a shot of this weapon is granted
// in a room of tickRate when its shooter was granted lag, and whether the
// weapon's own cap cut it.
func (d *Definition) Rewind(lag float64, tickRate int) (float64, bool) {
	if c := d.RewindCap(tickRate); c > 0 && lag > c {
		return c, true
	}
	return lag, false
}

// OnHead is damage as dealt where it landed: times HeadMultiplier on the
// head.
func (d *Definition) OnHead(damage float64, head bool) float64 {
	if head {
		return damage * d.HeadMultiplier
	}
	return damage
}

// withDefaults fills the fields whose zero value is not the default.
func (d *Definition) withDefaults() {
	if d.HeadMultiplier == 0 {
		d.HeadMultiplier = 1
	}
	if d.Pellets == 0 {
		d.Pellets = 1
	}
	if d.Mode == "" {
		d.Mode = ModeShooterTime
	}
	if d.Shape == "" {
		d.Shape = ShapeSphere
	}
	if d.Blocks == "" {
		d.Blocks = BlocksEnemies
	}
	if d.MaxActive == 0 {
		d.MaxActive = 1
	}
}

// Validate checks the fields the definition's kind uses. The error names the
// field, in the definition file's spelling.
func (d *Definition) Validate() error {
	d.withDefaults()
	var v validator
	v.nonneg("damage", d.Damage)
	v.intRange("fire_interval_ticks", d.FireInterval, 0, math.MaxUint16)
	v.intRange("magazine", d.Magazine, 0, math.MaxUint16)
	v.intRange("reload_ticks", d.ReloadTicks, 0, math.MaxUint16)
	v.nonneg("head_multiplier", d.HeadMultiplier)
	v.between("max_rewind_ticks", d.MaxRewindTicks, 0, lagcomp.MaxWindowTicks)
	switch {
	case d.MaxRewind < 0 || d.MaxRewind > MaxRewind:
		v.fail("max_rewind", "%v is outside 0..%v", d.MaxRewind, MaxRewind)
	case d.MaxRewind != 0 && d.MaxRewindTicks != 0:
		v.fail("max_rewind", "%v and max_rewind_ticks %v are both set: give one (max_rewind_ticks counts ticks, as earlier versions did)",
			d.MaxRewind, d.MaxRewindTicks)
	}
	if d.Streak != (Streak{}) {
		v.intRange("streak.hits", d.Streak.Hits, 2, 1000)
		v.positive("streak.window_ticks", d.Streak.WindowTicks)
		v.nonneg("streak.bonus", d.Streak.Bonus)
	}
	switch d.Kind {
	case KindHitscan:
		v.positive("range", d.Range)
		v.between("range", d.Range, 0, MaxDistance)
		v.intRange("pellets", d.Pellets, 1, MaxPellets)
		v.between("spread", d.Spread, 0, math.Pi/2)
		if d.Falloff != (Falloff{}) {
			v.nonneg("falloff.start", d.Falloff.Start)
			v.positive("falloff.end", d.Falloff.End)
			if v.err == nil && d.Falloff.End <= d.Falloff.Start {
				v.fail("falloff.end", "%v must be beyond falloff.start %v", d.Falloff.End, d.Falloff.Start)
			}
			v.between("falloff.min", d.Falloff.Min, 0, 1)
		}
	case KindProjectile:
		v.between("speed", d.Speed, 0, MaxSpeed)
		v.between("radius", d.Radius, 0, MaxDistance)
		v.intRange("lifetime_ticks", d.LifetimeTicks, 1, math.MaxUint16)
		v.between("gravity", d.Gravity, -MaxSpeed, MaxSpeed)
		if d.Splash != (Splash{}) {
			v.positive("splash.radius", d.Splash.Radius)
			v.between("splash.radius", d.Splash.Radius, 0, MaxDistance)
			v.nonneg("splash.damage", d.Splash.Damage)
			v.between("splash.min", d.Splash.Min, 0, 1)
		}
		v.oneOf("mode", d.Mode, ModeShooterTime, ModeCatchUp)
	case KindMelee:
		v.oneOf("shape", d.Shape, ShapeSphere, ShapeCapsule, ShapeArc)
		v.between("reach", d.Reach, 0, MaxDistance)
		if d.Shape == ShapeArc {
			v.positive("reach", d.Reach)
			v.between("angle", d.Angle, 1e-6, math.Pi)
		} else {
			v.positive("radius", d.Radius)
			v.between("radius", d.Radius, 0, MaxDistance)
		}
		v.intRange("windup_ticks", d.WindupTicks, 0, math.MaxUint16)
	default: // a custom kind: its generic numbers are distances, speeds and counts
		v.between("range", d.Range, 0, MaxDistance)
		v.between("speed", d.Speed, 0, MaxSpeed)
		v.between("radius", d.Radius, 0, MaxDistance)
		v.between("reach", d.Reach, 0, MaxDistance)
		v.intRange("lifetime_ticks", d.LifetimeTicks, 0, math.MaxUint16)
	case KindPlaceable:
		for i, name := range [3]string{"size[0]", "size[1]", "size[2]"} {
			v.positive(name, d.Size[i])
			v.between(name, d.Size[i], 0, MaxDistance)
		}
		v.between("distance", d.Distance, 0, MaxDistance)
		v.intRange("duration_ticks", d.DurationTicks, 0, math.MaxInt32)
		v.oneOf("blocks", d.Blocks, BlocksEnemies, BlocksEveryone)
		v.intRange("max_active", d.MaxActive, 1, 64)
	}
	return v.err
}

// FieldError is an invalid field of a definition.
type FieldError struct {
	Field string // as spelt in definition files: splash.radius
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// validator keeps the first failure.
type validator struct{ err error }

func (v *validator) fail(field, format string, args ...any) {
	if v.err == nil {
		v.err = &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
}

func (v *validator) positive(field string, f float64) {
	if !(f > 0) || math.IsInf(f, 0) {
		v.fail(field, "must be a positive number, got %v", f)
	}
}

func (v *validator) nonneg(field string, f float64) {
	if !(f >= 0) || math.IsInf(f, 0) {
		v.fail(field, "must be a number ≥ 0, got %v", f)
	}
}

func (v *validator) between(field string, f, lo, hi float64) {
	if !(f >= lo && f <= hi) {
		v.fail(field, "%v is outside %v..%v", f, lo, hi)
	}
}

func (v *validator) intRange(field string, n, lo, hi int) {
	if n < lo || n > hi {
		v.fail(field, "%d is outside %d..%d", n, lo, hi)
	}
}

func (v *validator) oneOf(field, s string, allowed ...string) {
	for _, a := range allowed {
		if s == a {
			return
		}
	}
	v.fail(field, "%q is not one of %v", s, allowed)
}
