package scenario

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/rewind-gg/rewind/geom"
)

// Error is an invalid scenario: Path names the field (shots[3].weapon), Msg
// says what is wrong with it.
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

func errf(path, format string, args ...any) error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// object is a JSON object being read field by field; fields not read by the
// time done is called are unknown and reported.
type object struct {
	path string
	m    map[string]any
	read map[string]bool
}

func asObject(v any, path string) (*object, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errf(path, "expected an object, got %s", describe(v))
	}
	return &object{path: path, m: m, read: make(map[string]bool, len(m))}, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// get returns the raw value of key and whether it is present (null counts as absent).
func (o *object) get(key string) (any, string, bool) {
	o.read[key] = true
	v, ok := o.m[key]
	return v, join(o.path, key), ok && v != nil
}

// done reports the first unknown field, in alphabetical order.
func (o *object) done() error {
	var unknown []string
	for k := range o.m {
		if !o.read[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return errf(join(o.path, unknown[0]), "unknown field")
}

func (o *object) number(key string, required bool, def float64) (float64, error) {
	v, path, ok := o.get(key)
	if !ok {
		if required {
			return 0, errf(path, "missing field")
		}
		return def, nil
	}
	return asNumber(v, path)
}

func (o *object) integer(key string, required bool, def, lo, hi int) (int, error) {
	v, path, ok := o.get(key)
	if !ok {
		if required {
			return 0, errf(path, "missing field")
		}
		return def, nil
	}
	return asInteger(v, path, lo, hi)
}

func (o *object) optInteger(key string, lo, hi int) (*int, error) {
	v, path, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	n, err := asInteger(v, path, lo, hi)
	return &n, err
}

func (o *object) boolean(key string, def bool) (bool, error) {
	v, path, ok := o.get(key)
	if !ok {
		return def, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, errf(path, "expected true or false, got %s", describe(v))
	}
	return b, nil
}

func (o *object) str(key string, required bool, def string) (string, error) {
	v, path, ok := o.get(key)
	if !ok {
		if required {
			return "", errf(path, "missing field")
		}
		return def, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", errf(path, "expected a string, got %s", describe(v))
	}
	return s, nil
}

func (o *object) vec3(key string) (geom.Vec3, error) {
	v, path, ok := o.get(key)
	if !ok {
		return geom.Vec3{}, errf(path, "missing field")
	}
	arr, isArr := v.([]any)
	if !isArr || len(arr) != 3 {
		return geom.Vec3{}, errf(path, "expected [x, y, z], got %s", describe(v))
	}
	var c [3]float64
	for i, x := range arr {
		f, err := asNumber(x, index(path, i))
		if err != nil {
			return geom.Vec3{}, err
		}
		if math.Abs(f) > maxCoord {
			return geom.Vec3{}, errf(index(path, i), "%v is outside ±%g metres", f, float64(maxCoord))
		}
		c[i] = f
	}
	return geom.V(c[0], c[1], c[2]), nil
}

func (o *object) array(key string, required bool) ([]any, string, error) {
	v, path, ok := o.get(key)
	if !ok {
		if required {
			return nil, path, errf(path, "missing field")
		}
		return nil, path, nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		return nil, path, errf(path, "expected an array, got %s", describe(v))
	}
	return arr, path, nil
}

func (o *object) object(key string, required bool) (*object, error) {
	v, path, ok := o.get(key)
	if !ok {
		if required {
			return nil, errf(path, "missing field")
		}
		return nil, nil
	}
	return asObject(v, path)
}

// maxCoord bounds coordinates: a scenario is a match, not a planet.
const maxCoord = 1e6

func asNumber(v any, path string) (float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, errf(path, "expected a number, got %s", describe(v))
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) {
		return 0, errf(path, "%s is not a usable number", n)
	}
	return f, nil
}

func asInteger(v any, path string, lo, hi int) (int, error) {
	f, err := asNumber(v, path)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) {
		return 0, errf(path, "expected a whole number, got %v", f)
	}
	if f < float64(lo) || f > float64(hi) {
		return 0, errf(path, "%v is outside %d..%d", f, lo, hi)
	}
	return int(f), nil
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "the number " + x.String()
	case string:
		return strconv.Quote(x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
