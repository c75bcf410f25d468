package weapons

import (
	"math"
	"time"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/fields"
)

// kindFields lists the fields each built-in kind reads besides the common
// ones; any other field of a definition is unknown.
var kindFields = map[string][]string{
	KindHitscan:    {"range", "pellets", "spread", "falloff"},
	KindProjectile: {"speed", "gravity", "radius", "lifetime_ticks", "splash", "mode"},
	KindMelee:      {"shape", "reach", "radius", "angle", "windup_ticks"},
	KindPlaceable:  {"size", "distance", "duration_ticks", "blocks", "max_active"},
}

// customFields are the fields a custom kind's definitions may use besides
// the common ones and its params: generic numbers its code reads as it
// likes.
var customFields = []string{"range", "speed", "radius", "reach", "lifetime_ticks"}

// required lists the fields a kind cannot do without.
var required = map[string][]string{
	KindHitscan:    {"range"},
	KindProjectile: {"speed", "radius", "lifetime_ticks"},
	KindMelee:      {"reach"},
	KindPlaceable:  {"size"},
}

// duration reads an optional duration written as a string ("150ms"); 0 when
// absent.
func duration(o *fields.Object, key string) (time.Duration, error) {
	v, path, ok := o.Get(key)
	if !ok {
		return 0, nil
	}
	s, isString := v.(string)
	if !isString {
		return 0, fields.Errorf(path, "expected a duration such as \"150ms\" (a string), got %s", fields.Describe(v))
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fields.Errorf(path, "%q is not a duration such as \"150ms\"", s)
	}
	return d, nil
}

// DecodeDefinition reads the definition called name from a decoded object
// (JSON, TOML or YAML), checks it against the registry's kinds and validates
// it. Errors name the field by its path under o.Path: rocket.splash.radius.
func DecodeDefinition(o *fields.Object, name string, reg *Registry) (Definition, error) {
	d := Definition{Name: name}
	var err error
	if d.Kind, err = o.Str("kind", true, ""); err != nil {
		return d, err
	}
	spec, ok := reg.spec(d.Kind)
	if !ok {
		return d, fields.Errorf(fields.Join(o.Path, "kind"), "unknown kind %q (known: %s)", d.Kind, reg.Names())
	}
	num := func(key string, dst *float64) {
		if err == nil {
			*dst, err = o.Number(key, isRequired(d.Kind, key), *dst)
		}
	}
	integer := func(key string, dst *int) {
		if err == nil {
			*dst, err = o.Integer(key, isRequired(d.Kind, key), *dst, math.MinInt32, math.MaxInt32)
		}
	}
	str := func(key string, dst *string) {
		if err == nil {
			*dst, err = o.Str(key, false, *dst)
		}
	}
	num("damage", &d.Damage)
	integer("fire_interval_ticks", &d.FireInterval)
	integer("magazine", &d.Magazine)
	integer("reload_ticks", &d.ReloadTicks)
	num("head_multiplier", &d.HeadMultiplier)
	num("max_rewind_ticks", &d.MaxRewindTicks)
	if err == nil {
		d.MaxRewind, err = duration(o, "max_rewind")
	}
	if err == nil && o.Has("max_rewind") && o.Has("max_rewind_ticks") {
		err = fields.Errorf(fields.Join(o.Path, "max_rewind"), "both max_rewind and max_rewind_ticks are set: give one (max_rewind is a duration such as \"150ms\"; max_rewind_ticks counts ticks, as earlier versions did)")
	}
	var hits float64
	if err == nil {
		err = readTable(o, "streak", tableNum{"hits", true, &hits}, tableNum{"window_ticks", true, &d.Streak.WindowTicks}, tableNum{"bonus", true, &d.Streak.Bonus})
	}
	if err == nil && hits != math.Trunc(hits) {
		err = fields.Errorf(fields.Join(o.Path, "streak.hits"), "expected a whole number, got %v", hits)
	}
	d.Streak.Hits = int(hits)
	if err != nil {
		return d, err
	}
	own, builtin := kindFields[d.Kind]
	if !builtin {
		own = customFields
	}
	for _, key := range own {
		switch key {
		case "range":
			num(key, &d.Range)
		case "pellets":
			integer(key, &d.Pellets)
		case "spread":
			num(key, &d.Spread)
		case "speed":
			num(key, &d.Speed)
		case "gravity":
			num(key, &d.Gravity)
		case "radius":
			num(key, &d.Radius)
		case "lifetime_ticks":
			integer(key, &d.LifetimeTicks)
		case "mode":
			str(key, &d.Mode)
		case "shape":
			str(key, &d.Shape)
		case "reach":
			num(key, &d.Reach)
		case "angle":
			num(key, &d.Angle)
		case "windup_ticks":
			integer(key, &d.WindupTicks)
		case "distance":
			num(key, &d.Distance)
		case "duration_ticks":
			integer(key, &d.DurationTicks)
		case "blocks":
			str(key, &d.Blocks)
		case "max_active":
			integer(key, &d.MaxActive)
		case "size":
			if err == nil {
				var v geom.Vec3
				if v, err = o.Vec3(key); err == nil {
					d.Size = v.Array()
				}
			}
		case "falloff":
			if err == nil {
				err = readTable(o, key, tableNum{"start", false, &d.Falloff.Start}, tableNum{"end", true, &d.Falloff.End}, tableNum{"min", true, &d.Falloff.Min})
			}
		case "splash":
			if err == nil {
				err = readTable(o, key, tableNum{"radius", true, &d.Splash.Radius}, tableNum{"damage", true, &d.Splash.Damage}, tableNum{"min", false, &d.Splash.Min})
			}
		}
	}
	if err != nil {
		return d, err
	}
	if len(spec.params) > 0 {
		if err := decodeParams(o, &d, spec); err != nil {
			return d, err
		}
	}
	if err := o.Done(); err != nil {
		return d, err
	}
	if err := d.Validate(); err != nil {
		if fe, ok := err.(*FieldError); ok {
			return d, fields.Errorf(fields.Join(o.Path, fe.Field), "%s", fe.Msg)
		}
		return d, err
	}
	return d, nil
}

// tableNum is a number field of a table: falloff = { start = 8, end = 30, min = 0.2 }.
type tableNum struct {
	key      string
	required bool
	dst      *float64
}

// readTable reads the table at key, if present, field by field.
func readTable(o *fields.Object, key string, nums ...tableNum) error {
	if !o.Has(key) {
		return nil
	}
	t, err := o.Object(key, true)
	if err != nil {
		return err
	}
	for _, n := range nums {
		if *n.dst, err = t.Number(n.key, n.required, 0); err != nil {
			return err
		}
	}
	return t.Done()
}

func isRequired(kind, key string) bool {
	for _, k := range required[kind] {
		if k == key {
			return true
		}
	}
	return false
}

// decodeParams reads a custom kind's params table against its declaration.
func decodeParams(o *fields.Object, d *Definition, spec *kindSpec) error {
	p, err := o.Object("params", false)
	if err != nil {
		return err
	}
	d.Params = make(map[string]float64, len(spec.params))
	for _, decl := range spec.params {
		v := decl.Default
		if p != nil {
			if v, err = p.Number(decl.Name, decl.Required, decl.Default); err != nil {
				return err
			}
		} else if decl.Required {
			return fields.Errorf(fields.Join(o.Path, "params."+decl.Name), "missing field")
		}
		if msg := decl.check(v); msg != "" {
			return fields.Errorf(fields.Join(fields.Join(o.Path, "params"), decl.Name), "%s", msg)
		}
		d.Params[decl.Name] = v
	}
	if p != nil {
		return p.Done()
	}
	return nil
}
