package main

import (
	"fmt"
	"strings"
)

type vec = [3]float64

func sub(a, b vec) vec { return vec{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func cross(a, b vec) vec {
	return vec{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}
func dot(a, b vec) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

// face appends the convex polygon ps (3 or 4 corners, in order around it)
// as triangles counter-clockwise seen from the side out points to.
func face(tris [][3]vec, out vec, ps ...vec) [][3]vec {
	if dot(cross(sub(ps[1], ps[0]), sub(ps[2], ps[0])), out) < 0 {
		for i, j := 0, len(ps)-1; i < j; i, j = i+1, j-1 {
			ps[i], ps[j] = ps[j], ps[i]
		}
	}
	for i := 1; i+1 < len(ps); i++ {
		tris = append(tris, [3]vec{ps[0], ps[i], ps[i+1]})
	}
	return tris
}

// corner is the corner of the box lo–hi taking hi on the axes whose bit is
// set in n (bit 0 x, bit 1 y, bit 2 z).
func corner(lo, hi vec, n int) vec {
	c := lo
	for a := range 3 {
		if n&(1<<a) != 0 {
			c[a] = hi[a]
		}
	}
	return c
}

// cuboid is the box lo–hi: 12 triangles, facing out.
func cuboid(lo, hi vec) [][3]vec {
	var tris [][3]vec
	for a := range 3 {
		for _, side := range []int{0, 1} {
			// The four corners with axis a at this side, in order around
			// the face (the other two axes' bits: 00, 01, 11, 10).
			b, c := 1<<((a+1)%3), 1<<((a+2)%3)
			s := side << a
			var out vec
			out[a] = float64(2*side - 1)
			tris = face(tris, out, corner(lo, hi, s), corner(lo, hi, s|b), corner(lo, hi, s|b|c), corner(lo, hi, s|c))
		}
	}
	return tris
}

// slope returns the horizontal axis (0 x, 2 z) and the side (0 min, 1
// max) that a ramp's or stairs' high names.
func slope(b box) (axis, side int, err error) {
	switch strings.ToLower(b.High) {
	case "+x":
		return 0, 1, nil
	case "-x":
		return 0, 0, nil
	case "+z":
		return 2, 1, nil
	case "-z":
		return 2, 0, nil
	}
	return 0, 0, fmt.Errorf("%s: high %q is not +x, -x, +z or -z", b.Name, b.High)
}

// wedge is a ramp: the box's floor, its wall on the high side, and a top
// sloping from the high side's top edge down to the opposite bottom edge.
func wedge(b box) ([][3]vec, error) {
	if err := checkBox(b); err != nil {
		return nil, err
	}
	axis, side, err := slope(b)
	if err != nil {
		return nil, err
	}
	other := 2 - axis // the horizontal axis across the ramp
	lo, hi := b.Min, b.Max
	at := func(along, up, across int) vec { // 0: min, 1: max on each
		v := lo
		if along == 1 {
			v[axis] = hi[axis]
		}
		if up == 1 {
			v[1] = hi[1]
		}
		if across == 1 {
			v[other] = hi[other]
		}
		return v
	}
	h, l := side, 1-side // the high and the low side along the axis
	var outHigh, outAcross0, outAcross1, up vec
	outHigh[axis] = float64(2*side - 1)
	outAcross0[other], outAcross1[other] = -1, 1
	up[axis], up[1] = -outHigh[axis], 1
	var tris [][3]vec
	tris = face(tris, vec{0, -1, 0}, at(0, 0, 0), at(1, 0, 0), at(1, 0, 1), at(0, 0, 1))
	tris = face(tris, outHigh, at(h, 0, 0), at(h, 1, 0), at(h, 1, 1), at(h, 0, 1))
	tris = face(tris, outAcross0, at(h, 0, 0), at(h, 1, 0), at(l, 0, 0))
	tris = face(tris, outAcross1, at(h, 0, 1), at(h, 1, 1), at(l, 0, 1))
	tris = face(tris, up, at(h, 1, 0), at(h, 1, 1), at(l, 0, 1), at(l, 0, 0))
	return tris, nil
}

// stairs are steps boxes, each from the floor to its tread, rising evenly
// from the low side to the high side's top.
func stairs(b box) ([][3]vec, error) {
	if err := checkBox(b); err != nil {
		return nil, err
	}
	axis, side, err := slope(b)
	if err != nil {
		return nil, err
	}
	if b.Steps < 1 {
		return nil, fmt.Errorf("%s: steps %d: at least one", b.Name, b.Steps)
	}
	n := float64(b.Steps)
	length, rise := b.Max[axis]-b.Min[axis], b.Max[1]-b.Min[1]
	var tris [][3]vec
	for i := range b.Steps {
		lo, hi := b.Min, b.Max
		hi[1] = b.Min[1] + rise*float64(i+1)/n
		// Step 0 is at the low side.
		from, to := length*float64(i)/n, length*float64(i+1)/n
		if side == 1 {
			lo[axis], hi[axis] = b.Min[axis]+from, b.Min[axis]+to
		} else {
			lo[axis], hi[axis] = b.Max[axis]-to, b.Max[axis]-from
		}
		tris = append(tris, cuboid(lo, hi)...)
	}
	return tris, nil
}
