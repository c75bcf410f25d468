// Package fields reads decoded JSON, TOML or YAML documents (maps, slices,
// numbers, strings, booleans) field by field, so that every error names the
// field at fault by its path, such as shots[3].weapon or rocket.splash.radius,
// and every field nobody read is reported as unknown.
package fields

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"

	"github.com/rewind-gg/rewind/geom"
)

// Error is an invalid field: Path names it (shots[3].weapon), Msg says what
// is wrong with it.
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

func Errorf(path, format string, args ...any) error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// Object is an object (a JSON object, a TOML table, a YAML mapping) being
// read field by field; fields not read by the time Done is called are
// unknown and reported.
type Object struct {
	Path string
	m    map[string]any
	read map[string]bool
}

func AsObject(v any, path string) (*Object, error) {
	m, ok := asMap(v)
	if !ok {
		return nil, Errorf(path, "expected an object, got %s", Describe(v))
	}
	return &Object{Path: path, m: m, read: make(map[string]bool, len(m))}, nil
}

func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// get returns the raw value of key and whether it is present (null counts as absent).
func (o *Object) Get(key string) (any, string, bool) {
	o.read[key] = true
	v, ok := o.m[key]
	return v, Join(o.Path, key), ok && v != nil
}

// done reports the first unknown field, in alphabetical order.
func (o *Object) Done() error {
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
	return Errorf(Join(o.Path, unknown[0]), "unknown field")
}

func (o *Object) Number(key string, required bool, def float64) (float64, error) {
	v, path, ok := o.Get(key)
	if !ok {
		if required {
			return 0, Errorf(path, "missing field")
		}
		return def, nil
	}
	return AsNumber(v, path)
}

func (o *Object) Integer(key string, required bool, def, lo, hi int) (int, error) {
	v, path, ok := o.Get(key)
	if !ok {
		if required {
			return 0, Errorf(path, "missing field")
		}
		return def, nil
	}
	return AsInteger(v, path, lo, hi)
}

func (o *Object) OptInteger(key string, lo, hi int) (*int, error) {
	v, path, ok := o.Get(key)
	if !ok {
		return nil, nil
	}
	n, err := AsInteger(v, path, lo, hi)
	return &n, err
}

func (o *Object) Boolean(key string, def bool) (bool, error) {
	v, path, ok := o.Get(key)
	if !ok {
		return def, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, Errorf(path, "expected true or false, got %s", Describe(v))
	}
	return b, nil
}

func (o *Object) Str(key string, required bool, def string) (string, error) {
	v, path, ok := o.Get(key)
	if !ok {
		if required {
			return "", Errorf(path, "missing field")
		}
		return def, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", Errorf(path, "expected a string, got %s", Describe(v))
	}
	return s, nil
}

func (o *Object) Vec3(key string) (geom.Vec3, error) {
	v, path, ok := o.Get(key)
	if !ok {
		return geom.Vec3{}, Errorf(path, "missing field")
	}
	arr, isArr := AsArray(v)
	if !isArr || len(arr) != 3 {
		return geom.Vec3{}, Errorf(path, "expected [x, y, z], got %s", Describe(v))
	}
	var c [3]float64
	for i, x := range arr {
		f, err := AsNumber(x, Index(path, i))
		if err != nil {
			return geom.Vec3{}, err
		}
		if math.Abs(f) > maxCoord {
			return geom.Vec3{}, Errorf(Index(path, i), "%v is outside ±%g metres", f, float64(maxCoord))
		}
		c[i] = f
	}
	return geom.FromArray(c), nil
}

func (o *Object) Array(key string, required bool) ([]any, string, error) {
	v, path, ok := o.Get(key)
	if !ok {
		if required {
			return nil, path, Errorf(path, "missing field")
		}
		return nil, path, nil
	}
	arr, ok := AsArray(v)
	if !ok {
		return nil, path, Errorf(path, "expected an array, got %s", Describe(v))
	}
	return arr, path, nil
}

func (o *Object) Object(key string, required bool) (*Object, error) {
	v, path, ok := o.Get(key)
	if !ok {
		if required {
			return nil, Errorf(path, "missing field")
		}
		return nil, nil
	}
	return AsObject(v, path)
}

// AsArray returns v as a slice of values, whatever the decoder's slice type.
func AsArray(v any) ([]any, bool) {
	if a, ok := v.([]any); ok {
		return a, true
	}
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Kind() != reflect.Slice {
		return nil, false
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}

// Has reports whether the object has key (not null), without reading it.
func (o *Object) Has(key string) bool {
	v, ok := o.m[key]
	return ok && v != nil
}

// Keys returns the object's keys, sorted.
func (o *Object) Keys() []string {
	keys := make([]string, 0, len(o.m))
	for k := range o.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// maxCoord bounds coordinates: a match, not a planet.
const maxCoord = 1e6

func AsNumber(v any, path string) (float64, error) {
	var f float64
	switch n := v.(type) {
	case json.Number:
		var err error
		if f, err = n.Float64(); err != nil {
			return 0, Errorf(path, "%s is not a usable number", n)
		}
	case float64:
		f = n
	case float32:
		f = float64(n)
	case int:
		f = float64(n)
	case int64:
		f = float64(n)
	case uint64:
		f = float64(n)
	default:
		return 0, Errorf(path, "expected a number, got %s", Describe(v))
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, Errorf(path, "%v is not a usable number", v)
	}
	return f, nil
}

func AsInteger(v any, path string, lo, hi int) (int, error) {
	f, err := AsNumber(v, path)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) {
		return 0, Errorf(path, "expected a whole number, got %v", f)
	}
	if f < float64(lo) || f > float64(hi) {
		return 0, Errorf(path, "%v is outside %d..%d", f, lo, hi)
	}
	return int(f), nil
}

func Describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "the number " + x.String()
	case float64, float32, int, int64, uint64:
		return fmt.Sprintf("the number %v", x)
	case string:
		return strconv.Quote(x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	if reflect.TypeOf(v).Kind() == reflect.Slice {
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

// asMap accepts the map types decoders produce.
func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any: // some YAML decoders
		out := make(map[string]any, len(m))
		for k, v := range m {
			ks, ok := k.(string)
			if !ok {
				return nil, false
			}
			out[ks] = v
		}
		return out, true
	}
	return nil, false
}
