package weapons

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Definition is one weapon or ability. Which fields matter depends on Kind.
type Definition struct {
	Name string
	Kind string // a registered kind: "hitscan", "projectile", "melee", ...

	Damage float64 // per hit; 0 deals none (scripted scenarios)

	// hitscan
	Range float64 // metres

	// projectile
	Speed         float64 // metres per second
	LifetimeTicks int     // steps before it expires as a miss

	// projectile (the sphere's radius) and melee (the overlap sphere's radius)
	Radius float64

	// melee
	Reach float64 // metres from the origin along the aim to the sphere's centre
}

// Validate checks the fields the definition's kind uses. The error names the
// field (in the definition file's spelling) and says what is wrong.
func (d *Definition) Validate() error {
	pos := func(name string, v float64) error {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: must be a positive number, got %v", name, v)
		}
		return nil
	}
	nonneg := func(name string, v float64) error {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: must be a number ≥ 0, got %v", name, v)
		}
		return nil
	}
	if err := nonneg("damage", d.Damage); err != nil {
		return err
	}
	switch d.Kind {
	case KindHitscan:
		return pos("range", d.Range)
	case KindProjectile:
		if err := nonneg("speed", d.Speed); err != nil {
			return err
		}
		if err := nonneg("radius", d.Radius); err != nil {
			return err
		}
		if d.LifetimeTicks < 1 {
			return fmt.Errorf("lifetime_ticks: must be at least 1, got %d", d.LifetimeTicks)
		}
	case KindMelee:
		if err := nonneg("reach", d.Reach); err != nil {
			return err
		}
		return pos("radius", d.Radius)
	}
	return nil
}

// Catalog is a room's weapons, indexed by the uint16 ids shots carry.
type Catalog struct {
	defs  []Definition
	kinds []uint8 // the registry index of each definition's kind
	index map[string]uint16
}

// NewCatalog validates defs against the kinds of reg and indexes them in the
// given order. Errors name the weapon and the field.
func NewCatalog(reg *Registry, defs []Definition) (*Catalog, error) {
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
		c.index[d.Name] = uint16(len(c.defs))
		c.defs = append(c.defs, d)
		c.kinds = append(c.kinds, k)
	}
	return c, nil
}

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
