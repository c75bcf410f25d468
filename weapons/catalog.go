package weapons

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/rewind-gg/rewind/arsenal"
	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/movement"
)

// Catalog is a room's weapons, indexed by the uint16 ids shots carry, and
// its classes (loadouts).
type Catalog struct {
	defs    []Definition
	kinds   []uint8 // the registry index of each definition's kind
	index   map[string]uint16
	classes []Class
}

// Class is a kind of player: the weapons it carries (its loadout), by name,
// and how it moves.
type Class struct {
	Name    string
	Weapons []string
	// Movement is the character a player of the class moves as (package
	// movement); the zero value is movement.DefaultCharacter. A weapons
	// file sets its movement values and leaves the capsule (radius,
	// heights, eyes) to the server, which gives every player the match's.
	Movement movement.Character
}

// NewCatalog validates defs against the kinds of reg and indexes them in the
// given order, with the given classes (none: one class "default" carrying
// the first MaxLoadout weapons). Errors name the weapon and the field.
func NewCatalog(reg *Registry, defs []Definition, classes ...Class) (*Catalog, error) {
	if len(defs) > math.MaxUint16 {
		return nil, fmt.Errorf("weapons: %d definitions, at most %d", len(defs), math.MaxUint16)
	}
	c := &Catalog{index: make(map[string]uint16, len(defs))}
	for _, d := range defs {
		if d.Name == "" {
			return nil, errors.New("weapons: a weapon has no name")
		}
		if _, dup := c.index[d.Name]; dup {
			return nil, fmt.Errorf("weapons: %s: defined twice", d.Name)
		}
		k, ok := reg.Lookup(d.Kind)
		if !ok {
			return nil, fmt.Errorf("weapons: %s.kind: unknown kind %q (known: %s)", d.Name, d.Kind, reg.Names())
		}
		if err := d.Validate(); err != nil {
			return nil, fmt.Errorf("weapons: %s.%w", d.Name, err)
		}
		if err := reg.checkParams(&d); err != nil {
			return nil, fmt.Errorf("weapons: %s.%w", d.Name, err)
		}
		c.index[d.Name] = uint16(len(c.defs))
		c.defs = append(c.defs, d)
		c.kinds = append(c.kinds, k)
	}
	if len(classes) == 0 && len(defs) > 0 {
		all := Class{Name: DefaultClass}
		for i := 0; i < len(defs) && i < ecs.MaxLoadout; i++ {
			all.Weapons = append(all.Weapons, defs[i].Name)
		}
		classes = []Class{all}
	}
	classes = slices.Clone(classes) // the defaults go into the catalogue's copy
	seen := map[string]bool{}
	for i := range classes {
		cl := &classes[i]
		if cl.Movement == (movement.Character{}) {
			cl.Movement = movement.DefaultCharacter()
		}
		switch {
		case cl.Name == "":
			return nil, fmt.Errorf("weapons: classes[%d].name: missing", i)
		case seen[cl.Name]:
			return nil, fmt.Errorf("weapons: classes[%d].name: %q defined twice", i, cl.Name)
		case len(cl.Weapons) == 0 || len(cl.Weapons) > ecs.MaxLoadout:
			return nil, fmt.Errorf("weapons: class %s.weapons: carries %d weapons, 1..%d allowed", cl.Name, len(cl.Weapons), ecs.MaxLoadout)
		}
		seen[cl.Name] = true
		if err := cl.Movement.Validate(); err != nil {
			if fe, ok := err.(*movement.FieldError); ok {
				return nil, fmt.Errorf("weapons: class %s.movement.%s: %s", cl.Name, fe.Key, fe.Msg)
			}
			return nil, fmt.Errorf("weapons: class %s.%w", cl.Name, err)
		}
		for j, w := range cl.Weapons {
			if _, ok := c.index[w]; !ok {
				return nil, fmt.Errorf("weapons: class %s.weapons[%d]: unknown weapon %q", cl.Name, j, w)
			}
		}
	}
	c.classes = classes
	return c, nil
}

// DefaultClass names the class a catalogue without classes gets.
const DefaultClass = "default"

// Lookup returns the id of the weapon called name.
func (c *Catalog) Lookup(name string) (uint16, bool) {
	id, ok := c.index[name]
	return id, ok
}

// Len returns the number of weapons.
func (c *Catalog) Len() int { return len(c.defs) }

// At returns the definition of weapon id; id must be below Len.
func (c *Catalog) At(id uint16) *Definition { return &c.defs[id] }

// KindOf returns the registry index of weapon id's kind.
func (c *Catalog) KindOf(id uint16) uint8 { return c.kinds[id] }

// Names returns the weapon names in alphabetical order.
func (c *Catalog) Names() []string {
	names := make([]string, 0, len(c.defs))
	for _, d := range c.defs {
		names = append(names, d.Name)
	}
	sort.Strings(names)
	return names
}

// Classes returns the classes, the first being the default.
func (c *Catalog) Classes() []Class { return c.classes }

// Class returns the index in Classes of the class called name; an empty
// name means the first class.
func (c *Catalog) Class(name string) (int, error) {
	if len(c.classes) == 0 {
		return 0, errors.New("weapons: no classes")
	}
	if name == "" {
		return 0, nil
	}
	for i, x := range c.classes {
		if x.Name == name {
			return i, nil
		}
	}
	names := make([]string, len(c.classes))
	for i, x := range c.classes {
		names[i] = x.Name
	}
	return 0, fmt.Errorf("unknown class %q (known: %s)", name, strings.Join(names, ", "))
}

// Loadout returns the weapon ids a player of class carries; an empty class
// name means the first class.
func (c *Catalog) Loadout(class string) ([]uint16, error) {
	i, err := c.Class(class)
	if err != nil {
		return nil, err
	}
	cl := c.classes[i]
	ids := make([]uint16, len(cl.Weapons))
	for i, w := range cl.Weapons {
		ids[i] = c.index[w]
	}
	return ids, nil
}

// Arsenal returns a full arsenal for the weapons ids: every magazine full,
// everything ready.
func (c *Catalog) Arsenal(ids []uint16) ecs.Arsenal { return arsenal.Arm(ids, c.magazine) }

// Refill gives every weapon of the arsenal a full magazine: a fresh life.
func (c *Catalog) Refill(a *ecs.Arsenal) { arsenal.Refill(a, c.magazine) }

// magazine returns weapon id's magazine size.
func (c *Catalog) magazine(weapon uint16) int { return c.defs[weapon].Magazine }
