package gltf

import "math"

// Mat4 is a 4×4 matrix in glTF's order: column-major, so element (row r,
// column c) is m[c*4+r] and the translation is m[12], m[13], m[14].
type Mat4 [16]float64

// Identity is the identity matrix.
var Identity = Mat4{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}

// Mul returns m × o: o applied first, then m.
func (m Mat4) Mul(o Mat4) Mat4 {
	var r Mat4
	for c := 0; c < 4; c++ {
		for row := 0; row < 4; row++ {
			var s float64
			for k := 0; k < 4; k++ {
				s += m[k*4+row] * o[c*4+k]
			}
			r[c*4+row] = s
		}
	}
	return r
}

// Point returns m applied to the point (x, y, z).
func (m Mat4) Point(x, y, z float64) [3]float64 {
	return [3]float64{
		m[0]*x + m[4]*y + m[8]*z + m[12],
		m[1]*x + m[5]*y + m[9]*z + m[13],
		m[2]*x + m[6]*y + m[10]*z + m[14],
	}
}

// Dir returns m applied to the direction (x, y, z): no translation.
func (m Mat4) Dir(x, y, z float64) [3]float64 {
	return [3]float64{m[0]*x + m[4]*y + m[8]*z, m[1]*x + m[5]*y + m[9]*z, m[2]*x + m[6]*y + m[10]*z}
}

// Det3 returns the determinant of m's upper 3×3: negative for a mirroring
// transform (which turns counter-clockwise triangles clockwise), zero for
// a singular one (which flattens what it transforms).
func (m Mat4) Det3() float64 {
	return m[0]*(m[5]*m[10]-m[9]*m[6]) - m[4]*(m[1]*m[10]-m[9]*m[2]) + m[8]*(m[1]*m[6]-m[5]*m[2])
}

// trs returns translation × rotation × scale, glTF's local transform. The
// quaternion is (x, y, z, w) and is normalised here.
func trs(t, q, s [3]float64, qw float64) Mat4 {
	x, y, z, w := q[0], q[1], q[2], qw
	if n := math.Sqrt(x*x + y*y + z*z + w*w); n > 0 {
		x, y, z, w = x/n, y/n, z/n, w/n
	}
	r := Mat4{
		1 - 2*(y*y+z*z), 2 * (x*y + z*w), 2 * (x*z - y*w), 0,
		2 * (x*y - z*w), 1 - 2*(x*x+z*z), 2 * (y*z + x*w), 0,
		2 * (x*z + y*w), 2 * (y*z - x*w), 1 - 2*(x*x+y*y), 0,
		0, 0, 0, 1,
	}
	for c := 0; c < 3; c++ {
		for row := 0; row < 3; row++ {
			r[c*4+row] *= s[c]
		}
	}
	r[12], r[13], r[14] = t[0], t[1], t[2]
	return r
}
