package weapons

import (
	"math"

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
	if err == nil && o.Has("streak") {
		var s *fields.Object
		if s, err = o.Object("streak", true); err == nil {
			d.Streak.Hits, err = s.Integer("hits", true, 0, 0, math.MaxInt32)
			if err == nil {
				d.Streak.WindowTicks, err = s.Number("window_ticks", true, 0)
			}
			if err == nil {
				d.Streak.Bonus, err = s.Number("bonus", true, 0)
			}
			if err == nil {
				err = s.Done()
			}
		}
	}
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
					d.Size = [3]float64{v.X, v.Y, v.Z}
				}
			}
		case "falloff":
			if err == nil && o.Has(key) {
				var f *fields.Object
				if f, err = o.Object(key, true); err == nil {
					d.Falloff.Start, err = f.Number("start", false, 0)
					if err == nil {
						d.Falloff.End, err = f.Number("end", true, 0)
					}
					if err == nil {
						d.Falloff.Min, err = f.Number("min", true, 0)
					}
					if err == nil {
						err = f.Done()
					}
				}
			}
		case "splash":
			if err == nil && o.Has(key) {
				var s *fields.Object
				if s, err = o.Object(key, true); err == nil {
					d.Splash.Radius, err = s.Number("radius", true, 0)
					if err == nil {
						d.Splash.Damage, err = s.Number("damage", true, 0)
					}
					if err == nil {
						d.Splash.Min, err = s.Number("min", false, 0)
					}
					if err == nil {
						err = s.Done()
					}
				}
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
		if v < decl.Min || v > decl.Max {
			path := fields.Join(fields.Join(o.Path, "params"), decl.Name)
			return fields.Errorf(path, "%v is outside %v..%v", v, decl.Min, decl.Max)
		}
		d.Params[decl.Name] = v
	}
	if p != nil {
		return p.Done()
	}
	return nil
}
