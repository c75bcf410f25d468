package geom

// AABB is an axis-aligned box from Min to Max (inclusive).
type AABB struct{ Min, Max Vec3 }

// Box returns the box spanning the two corners, in any order.
func Box(a, b Vec3) AABB { return AABB{Min: a.Min(b), Max: a.Max(b)} }

// Expand returns the box grown by r on every side.
func (b AABB) Expand(r float64) AABB {
	d := Vec3{r, r, r}
	return AABB{Min: b.Min.Sub(d), Max: b.Max.Add(d)}
}

// Union returns the smallest box containing b and o.
func (b AABB) Union(o AABB) AABB { return AABB{Min: b.Min.Min(o.Min), Max: b.Max.Max(o.Max)} }

// Overlaps reports whether b and o share at least one point.
func (b AABB) Overlaps(o AABB) bool {
	return b.Min.X <= o.Max.X && b.Max.X >= o.Min.X &&
		b.Min.Y <= o.Max.Y && b.Max.Y >= o.Min.Y &&
		b.Min.Z <= o.Max.Z && b.Max.Z >= o.Min.Z
}

// Contains reports whether p lies in b (boundary included).
func (b AABB) Contains(p Vec3) bool {
	return p.X >= b.Min.X && p.X <= b.Max.X &&
		p.Y >= b.Min.Y && p.Y <= b.Max.Y &&
		p.Z >= b.Min.Z && p.Z <= b.Max.Z
}

// ClosestPoint returns the point of b nearest to p.
func (b AABB) ClosestPoint(p Vec3) Vec3 {
	return Vec3{
		min(max(p.X, b.Min.X), b.Max.X),
		min(max(p.Y, b.Min.Y), b.Max.Y),
		min(max(p.Z, b.Min.Z), b.Max.Z),
	}
}

// Corner returns the corner of b that takes Max on the axes whose bit is
// set in n (bit 0 x, bit 1 y, bit 2 z) and Min on the others.
func (b AABB) Corner(n int) Vec3 {
	c := b.Min
	if n&1 != 0 {
		c.X = b.Max.X
	}
	if n&2 != 0 {
		c.Y = b.Max.Y
	}
	if n&4 != 0 {
		c.Z = b.Max.Z
	}
	return c
}

// Center returns the centre of b.
func (b AABB) Center() Vec3 { return b.Min.Add(b.Max).Scale(0.5) }

// Capsule is the set of points within Radius of the segment A–B.
type Capsule struct {
	A, B   Vec3
	Radius float64
}

// Bounds returns the capsule's bounding box.
func (c Capsule) Bounds() AABB { return SegmentBounds(c.A, c.B, c.Radius) }

// Sphere is the set of points within Radius of Center.
type Sphere struct {
	Center Vec3
	Radius float64
}

// Bounds returns the sphere's bounding box.
func (s Sphere) Bounds() AABB { return AABB{Min: s.Center, Max: s.Center}.Expand(s.Radius) }

// SegmentBounds returns the bounding box of the segment from a to b grown by r:
// everything a sphere of radius r sweeping from a to b can touch. It is on
// every query's path, so it compares directly rather than through min and
// max, whose NaN and signed-zero rules cost branches; a and b must be finite.
func SegmentBounds(a, b Vec3, r float64) AABB {
	lo, hi := a, b
	if b.X < a.X {
		lo.X, hi.X = b.X, a.X
	}
	if b.Y < a.Y {
		lo.Y, hi.Y = b.Y, a.Y
	}
	if b.Z < a.Z {
		lo.Z, hi.Z = b.Z, a.Z
	}
	return AABB{Min: Vec3{lo.X - r, lo.Y - r, lo.Z - r}, Max: Vec3{hi.X + r, hi.Y + r, hi.Z + r}}
}

// Hitbox is a player's collider for shots: a vertical capsule standing on
// the feet, of Radius and total Height (CrouchHeight while crouched).
// HeadHeight > 0 marks the top HeadHeight metres as the head (for headshot
// multipliers), standing or crouched.
type Hitbox struct {
	Radius, Height, HeadHeight float64
	// CrouchHeight is the capsule's height while the player is crouched;
	// 0: Height (a player that never crouches).
	CrouchHeight float64
}

// Top returns how far above the feet the hitbox reaches, crouched or not.
func (h Hitbox) Top(crouched bool) float64 {
	if crouched && h.CrouchHeight > 0 {
		return h.CrouchHeight
	}
	return h.Height
}

// Capsule returns the hitbox's capsule when its feet are at pos.
func (h Hitbox) Capsule(pos Vec3, crouched bool) Capsule {
	return Capsule{
		A:      Vec3{X: pos.X, Y: pos.Y + h.Radius, Z: pos.Z},
		B:      Vec3{X: pos.X, Y: pos.Y + h.Top(crouched) - h.Radius, Z: pos.Z},
		Radius: h.Radius,
	}
}
