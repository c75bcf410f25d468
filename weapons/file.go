package weapons

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/parsers/yaml"

	"github.com/rewind-gg/rewind/internal/fields"
	"github.com/rewind-gg/rewind/movement"
)

// File is a weapons file: the weapons (in order: a weapon's position is its
// id on the wire) and the classes.
type File struct {
	Weapons []Definition
	Classes []Class
}

//go:embed default.toml
var defaultFile []byte

// Default returns the built-in weapons file (weapons/default.toml): a rifle,
// a shotgun, a rocket launcher, a bite, a tail strike and a shield, in three
// classes.
func Default() *File {
	f, err := Parse(defaultFile, "default.toml", NewRegistry())
	if err != nil {
		panic(err) // the tests load it
	}
	return f
}

// Load reads a weapons file, TOML or YAML by its extension, and validates it
// against the kinds of reg.
func Load(path string, reg *Registry) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("weapons: %w", err)
	}
	return Parse(data, path, reg)
}

// Parse reads a weapons file named name (its extension says TOML or YAML).
// Errors name the file, the weapon and the field:
// "weapons.toml: rocket.splash.radius: must be a positive number, got -1".
func Parse(data []byte, name string, reg *Registry) (*File, error) {
	fail := func(err error) error { return fmt.Errorf("%s: %w", name, err) }
	var raw map[string]any
	var err error
	switch strings.ToLower(filepath.Ext(name)) {
	case ".toml":
		raw, err = toml.Parser().Unmarshal(data)
	case ".yaml", ".yml":
		raw, err = yaml.Parser().Unmarshal(data)
	default:
		return nil, fail(fmt.Errorf("unknown format (use .toml, .yaml or .yml)"))
	}
	if err != nil {
		return nil, fail(err)
	}
	root, err := fields.AsObject(raw, "")
	if err != nil {
		return nil, fail(err)
	}
	f := &File{}
	list, path, err := root.Array("weapons", true)
	if err != nil {
		return nil, fail(err)
	}
	names := map[string]bool{}
	for i, v := range list {
		o, err := fields.AsObject(v, fields.Index(path, i))
		if err != nil {
			return nil, fail(err)
		}
		wn, err := o.Str("name", true, "")
		if err != nil {
			return nil, fail(err)
		}
		if wn == "" || names[wn] {
			return nil, fail(fields.Errorf(fields.Join(o.Path, "name"), "%q is empty or defined twice", wn))
		}
		names[wn] = true
		o.Path = wn // errors name the weapon: rocket.splash.radius
		d, err := DecodeDefinition(o, wn, reg)
		if err != nil {
			return nil, fail(err)
		}
		f.Weapons = append(f.Weapons, d)
	}
	classes, cpath, err := root.Array("classes", false)
	if err != nil {
		return nil, fail(err)
	}
	for i, v := range classes {
		o, err := fields.AsObject(v, fields.Index(cpath, i))
		if err != nil {
			return nil, fail(err)
		}
		var c Class
		if c.Name, err = o.Str("name", true, ""); err != nil {
			return nil, fail(err)
		}
		if c.Name != "" {
			o.Path = "classes[" + c.Name + "]" // errors name the class: classes[raptor].movement.jump_height
		}
		if c.Movement, err = decodeMovement(o); err != nil {
			return nil, fail(err)
		}
		ws, wpath, err := o.Array("weapons", true)
		if err != nil {
			return nil, fail(err)
		}
		for j, w := range ws {
			s, ok := w.(string)
			if !ok {
				return nil, fail(fields.Errorf(fields.Index(wpath, j), "expected a weapon name, got %s", fields.Describe(w)))
			}
			c.Weapons = append(c.Weapons, s)
		}
		if err := o.Done(); err != nil {
			return nil, fail(err)
		}
		f.Classes = append(f.Classes, c)
	}
	if err := root.Done(); err != nil {
		return nil, fail(err)
	}
	if _, err := f.Catalog(reg); err != nil {
		return nil, fail(err)
	}
	return f, nil
}

// Catalog builds the file's catalogue.
func (f *File) Catalog(reg *Registry) (*Catalog, error) {
	return NewCatalog(reg, f.Weapons, f.Classes...)
}

// decodeMovement reads a class's movement table: movement.Character's
// keys, each taking movement.DefaultCharacter's value when unset, except
// the capsule's (movement.IsCapsule), which the server gives every player
// alike. Errors name the key: classes[raptor].movement.jump_height.
func decodeMovement(o *fields.Object) (movement.Character, error) {
	c := movement.DefaultCharacter()
	t, err := o.Object("movement", false)
	if err != nil || t == nil {
		return c, err
	}
	for _, p := range c.Params() {
		if movement.IsCapsule(p.Key) {
			if t.Has(p.Key) {
				t.Get(p.Key)
				return c, fields.Errorf(fields.Join(t.Path, p.Key), "the capsule is the match's, the same for every class (the server's match.%s)", p.Key)
			}
			continue
		}
		if *p.Value, err = t.Number(p.Key, false, *p.Value); err != nil {
			return c, err
		}
	}
	if err := t.Done(); err != nil {
		return c, err
	}
	if err := c.Validate(); err != nil {
		if fe, ok := err.(*movement.FieldError); ok {
			return c, fields.Errorf(fields.Join(t.Path, fe.Key), "%s", fe.Msg)
		}
		return c, err
	}
	return c, nil
}
