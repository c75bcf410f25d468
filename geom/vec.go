package geom

import "math"

// Vec3 is a point or direction in metres.
type Vec3 struct{ X, Y, Z float64 }

// V returns the vector (x, y, z).
func V(x, y, z float64) Vec3 { return Vec3{x, y, z} }

// FromArray returns the vector (a[0], a[1], a[2]): configuration and wire
// formats carry vectors as arrays.
func FromArray(a [3]float64) Vec3 { return Vec3{a[0], a[1], a[2]} }

// Array returns v as [x, y, z].
func (v Vec3) Array() [3]float64 { return [3]float64{v.X, v.Y, v.Z} }

// Add returns v+w.
func (v Vec3) Add(w Vec3) Vec3 { return Vec3{v.X + w.X, v.Y + w.Y, v.Z + w.Z} }

// Sub returns v-w.
func (v Vec3) Sub(w Vec3) Vec3 { return Vec3{v.X - w.X, v.Y - w.Y, v.Z - w.Z} }

// Scale returns v*s.
func (v Vec3) Scale(s float64) Vec3 { return Vec3{v.X * s, v.Y * s, v.Z * s} }

// AddScaled returns v + w*s, the point reached from v after s along w.
func (v Vec3) AddScaled(w Vec3, s float64) Vec3 {
	return Vec3{v.X + w.X*s, v.Y + w.Y*s, v.Z + w.Z*s}
}

// Dot returns the dot product of v and w.
func (v Vec3) Dot(w Vec3) float64 { return v.X*w.X + v.Y*w.Y + v.Z*w.Z }

// Cross returns the cross product v×w.
func (v Vec3) Cross(w Vec3) Vec3 {
	return Vec3{v.Y*w.Z - v.Z*w.Y, v.Z*w.X - v.X*w.Z, v.X*w.Y - v.Y*w.X}
}

// LenSq returns the squared length of v.
func (v Vec3) LenSq() float64 { return v.Dot(v) }

// Len returns the length of v.
func (v Vec3) Len() float64 { return math.Sqrt(v.Dot(v)) }

// Normalize returns v scaled to unit length, or the zero vector if v has no
// length (a zero direction never hits anything, rather than producing NaNs).
func (v Vec3) Normalize() Vec3 {
	l := v.Len()
	if l == 0 {
		return Vec3{}
	}
	return v.Scale(1 / l)
}

// Round returns v with each coordinate rounded to the nearest multiple of
// 1/scale (halves away from zero), as a wire quantum of 1/scale rounds it.
func (v Vec3) Round(scale float64) Vec3 {
	return Vec3{math.Round(v.X*scale) / scale, math.Round(v.Y*scale) / scale, math.Round(v.Z*scale) / scale}
}

// Lerp returns the point a fraction t of the way from v to w.
func (v Vec3) Lerp(w Vec3, t float64) Vec3 {
	return Vec3{v.X + (w.X-v.X)*t, v.Y + (w.Y-v.Y)*t, v.Z + (w.Z-v.Z)*t}
}

// Min returns the component-wise minimum of v and w.
func (v Vec3) Min(w Vec3) Vec3 {
	return Vec3{min(v.X, w.X), min(v.Y, w.Y), min(v.Z, w.Z)}
}

// Max returns the component-wise maximum of v and w.
func (v Vec3) Max(w Vec3) Vec3 {
	return Vec3{max(v.X, w.X), max(v.Y, w.Y), max(v.Z, w.Z)}
}

// IsFinite reports whether every component of v is a finite number.
func (v Vec3) IsFinite() bool {
	return isFinite(v.X) && isFinite(v.Y) && isFinite(v.Z)
}

// isFinite is false for NaN and ±Inf, for which f−f is NaN.
func isFinite(f float64) bool { return f-f == 0 }

// LerpAngle returns the angle t of the way from a to b, in radians, turning
// the short way round (across ±π when that is shorter).
func LerpAngle(a, b, t float64) float64 {
	return a + math.Remainder(b-a, 2*math.Pi)*t
}
