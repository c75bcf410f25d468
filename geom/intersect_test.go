package geom

import (
	"math"
	"math/rand/v2"
	"testing"
)

const eps = 1e-9

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestRaySphere(t *testing.T) {
	c := V(0, 0, 10)
	tests := []struct {
		name   string
		o, d   Vec3
		maxT   float64
		wantT  float64
		wantOK bool
	}{
		{"head on", V(0, 0, 0), V(0, 0, 1), 100, 9, true},
		{"inside", V(0, 0, 10.5), V(0, 0, 1), 100, 0, true},
		{"behind", V(0, 0, 20), V(0, 0, 1), 100, 0, false},
		{"too short", V(0, 0, 0), V(0, 0, 1), 8.9, 0, false},
		{"tangent", V(1, 0, 0), V(0, 0, 1), 100, 10, true},
		{"wide", V(1.01, 0, 0), V(0, 0, 1), 100, 0, false},
	}
	for _, tt := range tests {
		got, ok := RaySphere(tt.o, tt.d, tt.maxT, c, 1)
		if ok != tt.wantOK || (ok && !near(got, tt.wantT, eps)) {
			t.Errorf("%s: got (%v, %v), want (%v, %v)", tt.name, got, ok, tt.wantT, tt.wantOK)
		}
	}
}

func TestRayCapsule(t *testing.T) {
	// A standing player: feet at the origin, radius 0.4, height 1.8.
	c := Capsule{A: V(0, 0.4, 0), B: V(0, 1.4, 0), Radius: 0.4}
	tests := []struct {
		name   string
		o, d   Vec3
		maxT   float64
		wantT  float64
		wantOK bool
	}{
		{"side of cylinder", V(-10, 1, 0), V(1, 0, 0), 100, 9.6, true},
		{"top cap", V(0, 10, 0), V(0, -1, 0), 100, 10 - 1.8, true},
		{"bottom cap", V(0, -5, 0), V(0, 1, 0), 100, 5, true},
		{"over the head", V(-10, 1.81, 0), V(1, 0, 0), 100, 0, false},
		{"beside", V(-10, 1, 0.41), V(1, 0, 0), 100, 0, false},
		{"out of range", V(-10, 1, 0), V(1, 0, 0), 9.5, 0, false},
		{"inside", V(0.1, 1, 0), V(1, 0, 0), 100, 0, true},
		{"pointing away", V(-10, 1, 0), V(-1, 0, 0), 100, 0, false},
		{"grazing the shoulder sphere", V(-10, 1.4+0.4*math.Sqrt2/2, 0), V(1, 0, 0), 100, 10 - 0.4*math.Sqrt2/2, true},
	}
	for _, tt := range tests {
		got, ok := RayCapsule(tt.o, tt.d, tt.maxT, c)
		if ok != tt.wantOK || (ok && !near(got, tt.wantT, 1e-9)) {
			t.Errorf("%s: got (%v, %v), want (%v, %v)", tt.name, got, ok, tt.wantT, tt.wantOK)
		}
	}
}

func TestRayAABB(t *testing.T) {
	b := AABB{Min: V(5, 0, 5), Max: V(6, 3, 9)}
	tests := []struct {
		name   string
		o, d   Vec3
		maxT   float64
		wantT  float64
		wantOK bool
	}{
		{"face", V(0, 1, 7), V(1, 0, 0), 100, 5, true},
		{"parallel outside", V(0, 4, 7), V(1, 0, 0), 100, 0, false},
		{"parallel on face", V(0, 3, 7), V(1, 0, 0), 100, 5, true},
		{"inside", V(5.5, 1, 6), V(0, 0, 1), 100, 0, true},
		{"short", V(0, 1, 7), V(1, 0, 0), 4.99, 0, false},
		{"diagonal", V(4, 1, 4), Vec3{1, 0, 1}.Normalize(), 100, math.Sqrt2, true},
		{"away", V(0, 1, 7), V(-1, 0, 0), 100, 0, false},
	}
	for _, tt := range tests {
		got, ok := RayAABB(tt.o, tt.d, tt.maxT, b)
		if ok != tt.wantOK || (ok && !near(got, tt.wantT, eps)) {
			t.Errorf("%s: got (%v, %v), want (%v, %v)", tt.name, got, ok, tt.wantT, tt.wantOK)
		}
	}
}

func TestSweepSphereAABBRoundedEdges(t *testing.T) {
	b := AABB{Min: V(0, 0, 0), Max: V(1, 1, 1)}
	r := 0.5
	// Face: the grown box is flat.
	if got, ok := SweepSphereAABB(V(-3, 0.5, 0.5), V(1, 0, 0), 10, r, b); !ok || !near(got, 2.5, eps) {
		t.Errorf("face: got %v %v", got, ok)
	}
	// Past the edge x=0,y=1 along a line that would clip the square corner of
	// the grown box but passes the rounded edge: it must miss.
	// The line passes 0.52 m from the edge x=0,y=1 (more than r), through the
	// square corner of the box grown by r.
	out := V(-1, 1, 0).Normalize()
	d := V(1, 1, 0).Normalize()
	closest := V(0, 1, 0.5).AddScaled(out, 0.52)
	if !b.Expand(r).Contains(closest) {
		t.Fatal("test line should cross the square grown box")
	}
	o := closest.AddScaled(d, -3)
	if got, ok := SweepSphereAABB(o, d, 10, r, b); ok {
		t.Errorf("rounded edge at 0.52 m: got hit at %v, want miss", got)
	}
	closest = V(0, 1, 0.5).AddScaled(out, 0.48)
	if got, ok := SweepSphereAABB(closest.AddScaled(d, -3), d, 10, r, b); !ok || got >= 3 {
		t.Errorf("rounded edge at 0.48 m: got (%v, %v), want a hit before the closest approach", got, ok)
	}
	// Toward the corner (0,0,0) exactly along the diagonal: first contact when
	// the centre is r away from the corner.
	dd := V(1, 1, 1).Normalize()
	start := V(-2, -2, -2)
	want := start.Len() - r
	if got, ok := SweepSphereAABB(start, dd, 10, r, b); !ok || !near(got, want, 1e-9) {
		t.Errorf("corner: got %v %v, want %v", got, ok, want)
	}
	// Starting in contact.
	if got, ok := SweepSphereAABB(V(-0.4, 0.5, 0.5), V(-1, 0, 0), 10, r, b); !ok || got != 0 {
		t.Errorf("start in contact: got %v %v", got, ok)
	}
}

func TestOverlaps(t *testing.T) {
	c := Capsule{A: V(0, 0.4, 0), B: V(0, 1.4, 0), Radius: 0.4}
	if !SphereOverlapsCapsule(Sphere{V(1.0, 1, 0), 0.6}, c) {
		t.Error("touching sphere should overlap capsule")
	}
	if SphereOverlapsCapsule(Sphere{V(1.01, 1, 0), 0.6}, c) {
		t.Error("sphere 1cm away should not overlap capsule")
	}
	if !SphereOverlapsCapsule(Sphere{V(0, 2.3, 0), 0.5}, c) || SphereOverlapsCapsule(Sphere{V(0, 2.31, 0), 0.5}, c) {
		t.Error("sphere over the top cap: wrong overlap")
	}
	b := AABB{Min: V(0, 0, 0), Max: V(1, 1, 1)}
	if !SphereOverlapsAABB(Sphere{V(1.5, 0.5, 0.5), 0.5}, b) || SphereOverlapsAABB(Sphere{V(1.5, 1.5, 0.5), 0.7}, b) {
		t.Error("sphere/box overlap wrong (the corner is round: 0.707 > 0.7)")
	}
	c2 := Capsule{A: V(0.8, 1, -1), B: V(0.8, 1, 1), Radius: 0.4}
	if !CapsuleOverlapsCapsule(c, c2) {
		t.Error("crossing capsules 0.8 apart with radii 0.4+0.4 should touch")
	}
	c2.A.X, c2.B.X = 0.81, 0.81
	if CapsuleOverlapsCapsule(c, c2) {
		t.Error("capsules 0.81 apart should not touch")
	}
}

func TestSegmentDistSq(t *testing.T) {
	tests := []struct {
		p1, q1, p2, q2 Vec3
		want           float64
	}{
		{V(0, 0, 0), V(1, 0, 0), V(0, 1, 0), V(1, 1, 0), 1},            // parallel
		{V(0, 0, 0), V(1, 0, 0), V(0.5, 1, -1), V(0.5, 1, 1), 1},       // crossing above
		{V(0, 0, 0), V(0, 0, 0), V(3, 4, 0), V(3, 4, 0), 25},           // points
		{V(0, 0, 0), V(1, 0, 0), V(3, 0, 0), V(4, 0, 0), 4},            // collinear apart
		{V(0, 0, 0), V(1, 0, 0), V(2, 1, 0), V(2, 1, 0), 2},            // point beyond end
		{V(-1, 0, 0), V(1, 0, 0), V(0, -1, 0), V(0, 1, 0), 0},          // intersecting
		{V(0, 0, 0), V(1, 0, 0), V(-2, 0, 3), V(-1, 0, 3), 9 + 1},      // end to end
		{V(0, 0, 0), V(2, 0, 0), V(1, 0, 0.5), V(1, 0, 0.5), 0.25},     // point over middle
		{V(0, 0, 0), V(0, 0, 0), V(-1, 2, 0), V(1, 2, 0), 4},           // degenerate first
		{V(5, 5, 5), V(5, 5, 6), V(5, 5, 5.5), V(5, 5, 5.5), 0},        // point on segment
		{V(0, 0, 0), V(1, 1, 0), V(1, 0, 0), V(2, 1, 0), 0.5},          // parallel diagonal
		{V(0, 0, 0), V(10, 0, 0), V(20, 0, 0), V(10.5, 0, 0), 0.25},    // reversed, near end
		{V(0, 1, 0), V(0, 1, 0), V(0, 0, 0), V(0, 0, 0), 1},            // two points
		{V(0, 0, 0), V(1, 0, 0), V(0.5, 0, 1), V(0.5, 0, 1), 1},        // point beside
		{V(0, 0, 0), V(1, 0, 0), V(1.5, 0.5, 0), V(1.5, 0.5, 0), 0.5},  // point off end
		{V(0, 0, 0), V(1, 0, 0), V(-3, 0, -4), V(-3, 0, -4), 25},       // point behind start
		{V(0, 0, 0), V(1, 0, 0), V(0.25, 2, 0), V(0.75, 2, 0), 4},      // short parallel above
		{V(0, 0, 0), V(4, 0, 0), V(2, -1, 1), V(2, 1, 1), 1},           // skew, perpendicular
		{V(0, 0, 0), V(4, 0, 0), V(6, -1, 1), V(6, 1, 1), 4 + 1},       // skew beyond end
		{V(1, 1, 1), V(1, 1, 1), V(1, 1, 1), V(1, 1, 1), 0},            // identical points
		{V(0, 0, 0), V(0, 3, 0), V(1, 1, 0), V(1, 2, 0), 1},            // parallel overlapping span
		{V(0, 0, 0), V(0, 3, 0), V(1, 4, 0), V(1, 5, 0), 2},            // parallel disjoint span
		{V(0, 0, 0), V(3, 0, 0), V(3, 0, 0), V(3, 3, 0), 0},            // sharing an endpoint
		{V(0, 0, 0), V(1, 0, 0), V(0, 0, 0), V(0, 0, 0), 0},            // degenerate second at start
		{V(2, 0, 0), V(-2, 0, 0), V(0, 3, 0), V(0, 3, 0), 9},           // reversed first
		{V(0, 0, 0), V(0, 0, 1), V(1, 0, 2), V(1, 0, 2), 2},            // point past end diagonal
		{V(0, 0, 0), V(10, 10, 10), V(0, 0, 1), V(0, 0, 1), 2.0 / 3.0}, // point to diagonal line
	}
	for i, tt := range tests {
		if got := SegmentDistSq(tt.p1, tt.q1, tt.p2, tt.q2); !near(got, tt.want, 1e-9) {
			t.Errorf("case %d: got %v, want %v", i, got, tt.want)
		}
		if got := SegmentDistSq(tt.p2, tt.q2, tt.p1, tt.q1); !near(got, tt.want, 1e-9) {
			t.Errorf("case %d swapped: got %v, want %v", i, got, tt.want)
		}
	}
}

// marchDist is a reference for the sweep functions: it walks the centre in
// small steps and returns the first distance at which dist(p) <= 0.
func marchDist(o, d Vec3, maxT float64, dist func(Vec3) float64) (float64, bool) {
	const step = 1e-3
	for t := 0.0; t <= maxT; t += step {
		if dist(o.AddScaled(d, t)) <= 0 {
			return t, true
		}
	}
	return 0, false
}

// TestSweepsAgainstMarching checks the analytic sweeps against a brute-force
// walk for thousands of random sweeps (fixed seed). Cases where the walk and
// the analytic answer disagree only because the sweep grazes a surface within
// the walk's step are excluded by requiring a clear margin.
func TestSweepsAgainstMarching(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rnd := func(lo, hi float64) float64 { return lo + rng.Float64()*(hi-lo) }
	rv := func(lo, hi float64) Vec3 { return V(rnd(lo, hi), rnd(lo, hi), rnd(lo, hi)) }
	checked := 0
	for i := 0; i < 3000; i++ {
		o := rv(-4, 4)
		d := rv(-1, 1).Normalize()
		if d == (Vec3{}) {
			continue
		}
		maxT := rnd(0.5, 8)
		r := rnd(0, 0.8)
		var got float64
		var ok bool
		var dist func(Vec3) float64
		if i%2 == 0 {
			b := Box(rv(-1.5, 1.5), rv(-1.5, 1.5))
			got, ok = SweepSphereAABB(o, d, maxT, r, b)
			dist = func(p Vec3) float64 { return p.Sub(b.ClosestPoint(p)).Len() - r }
		} else {
			c := Capsule{A: rv(-1.5, 1.5), B: rv(-1.5, 1.5), Radius: rnd(0.1, 0.8)}
			got, ok = SweepSphereCapsule(o, d, maxT, r, c)
			dist = func(p Vec3) float64 { return p.Sub(ClosestOnSegment(p, c.A, c.B)).Len() - c.Radius - r }
		}
		want, wantOK := marchDist(o, d, maxT, dist)
		// Skip grazing cases: the closest approach is within 2 mm of contact.
		minDist := math.Inf(1)
		for s := 0.0; s <= maxT; s += 1e-3 {
			minDist = min(minDist, math.Abs(dist(o.AddScaled(d, s))))
		}
		if !wantOK && minDist < 2e-3 {
			continue
		}
		if ok != wantOK {
			t.Fatalf("sweep %d: analytic hit=%v t=%v, marching hit=%v t=%v", i, ok, got, wantOK, want)
		}
		if ok && math.Abs(got-want) > 2e-3 {
			t.Fatalf("sweep %d: analytic t=%v, marching t=%v", i, got, want)
		}
		checked++
	}
	if checked < 2500 {
		t.Fatalf("only %d sweeps checked", checked)
	}
}

func BenchmarkSweepSphereCapsule(b *testing.B) {
	c := Capsule{A: V(0, 0.4, 0), B: V(0, 1.4, 0), Radius: 0.4}
	o, d := V(-3, 1, 0.2), V(1, 0, 0)
	for b.Loop() {
		SweepSphereCapsule(o, d, 5, 0.1, c)
	}
}

func BenchmarkSweepSphereAABB(b *testing.B) {
	box := AABB{Min: V(0, 0, 0), Max: V(1, 3, 4)}
	o, d := V(-3, 1, 0.2), V(1, 0.1, 0).Normalize()
	for b.Loop() {
		SweepSphereAABB(o, d, 5, 0.1, box)
	}
}

func TestSegmentClosest(t *testing.T) {
	tests := []struct {
		name           string
		p1, q1, p2, q2 Vec3
		s, t           float64
	}{
		{"crossing", V(-1, 0, 0), V(1, 0, 0), V(0, -1, 0), V(0, 1, 0), 0.5, 0.5},
		{"skew, perpendicular", V(0, 0, 0), V(4, 0, 0), V(2, -1, 1), V(2, 1, 1), 0.5, 0.5},
		{"skew beyond the end", V(0, 0, 0), V(4, 0, 0), V(6, -1, 1), V(6, 1, 1), 1, 0.5},
		{"point over the middle", V(0, 0, 0), V(2, 0, 0), V(1, 0, 0.5), V(1, 0, 0.5), 0.5, 0},
		{"first a point", V(0, 0, 0), V(0, 0, 0), V(-1, 2, 0), V(1, 2, 0), 0, 0.5},
		{"both points", V(0, 1, 0), V(0, 1, 0), V(0, 0, 0), V(0, 0, 0), 0, 0},
		{"end to end", V(0, 0, 0), V(1, 0, 0), V(-2, 0, 3), V(-1, 0, 3), 0, 1},
		{"second reversed", V(0, 0, 0), V(1, 0, 0), V(0.25, 1, 4), V(0.25, 1, -4), 0.25, 0.5},
	}
	for _, tt := range tests {
		s, u := SegmentClosest(tt.p1, tt.q1, tt.p2, tt.q2)
		if s != tt.s || u != tt.t {
			t.Errorf("%s: got (%v, %v), want (%v, %v)", tt.name, s, u, tt.s, tt.t)
		}
	}
	// No pair of sampled points is closer than the pair it returns.
	rng := rand.New(rand.NewPCG(3, 4))
	rv := func() Vec3 { return V(rng.Float64()*4-2, rng.Float64()*4-2, rng.Float64()*4-2) }
	for i := 0; i < 500; i++ {
		p1, q1, p2, q2 := rv(), rv(), rv(), rv()
		if i%5 == 0 {
			q2 = p2.Add(q1.Sub(p1).Scale(rng.Float64())) // parallel
		}
		s, u := SegmentClosest(p1, q1, p2, q2)
		if s < 0 || s > 1 || u < 0 || u > 1 {
			t.Fatalf("case %d: parameters (%v, %v) outside [0, 1]", i, s, u)
		}
		got := p1.Lerp(q1, s).Sub(p2.Lerp(q2, u)).LenSq()
		for a := 0.0; a <= 1; a += 1.0 / 64 {
			for b := 0.0; b <= 1; b += 1.0 / 64 {
				if d := p1.Lerp(q1, a).Sub(p2.Lerp(q2, b)).LenSq(); d < got-1e-12 {
					t.Fatalf("case %d: (%v, %v) gives %v but (%v, %v) gives %v", i, s, u, got, a, b, d)
				}
			}
		}
	}
}

// referenceRaySpan is RaySpan as first written, a loop over the axes: the
// answers the written-out one must give, bit for bit.
func referenceRaySpan(o, d Vec3, maxT float64, b AABB) (float64, float64, bool) {
	tmin, tmax := 0.0, maxT
	for axis := range 3 {
		oi, di, lo, hi := comp(o, axis), comp(d, axis), comp(b.Min, axis), comp(b.Max, axis)
		if di == 0 {
			if oi < lo || oi > hi {
				return 0, 0, false
			}
			continue
		}
		inv := 1 / di
		t1, t2 := (lo-oi)*inv, (hi-oi)*inv
		if t1 > t2 {
			t1, t2 = t2, t1
		}
		tmin, tmax = max(tmin, t1), min(tmax, t2)
		if tmin > tmax {
			return 0, 0, false
		}
	}
	return tmin, tmax, true
}

// TestRaySpanMatchesReference casts rays from inside, outside and on the
// faces of boxes, along axes (zero components of either sign), at random,
// with NaN and infinite lengths, and compares both answers bit for bit.
func TestRaySpanMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 90))
	pick := func() float64 {
		switch rng.IntN(8) {
		case 0:
			return 0
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return float64(rng.IntN(5) - 2)
		}
		return rng.Float64()*20 - 10
	}
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) || (x != x && y != y) }
	for i := range 200000 {
		lo := V(pick(), pick(), pick())
		b := AABB{Min: lo, Max: lo.Add(V(math.Abs(pick()), math.Abs(pick()), math.Abs(pick())))}
		o, d := V(pick(), pick(), pick()), V(pick(), pick(), pick())
		maxT := []float64{math.Abs(pick()), math.Inf(1), math.NaN(), 5}[rng.IntN(4)]
		t0, t1, ok := RaySpan(o, d, maxT, b)
		r0, r1, rok := referenceRaySpan(o, d, maxT, b)
		if ok != rok || !same(t0, r0) || !same(t1, r1) {
			t.Fatalf("case %d: RaySpan(%v, %v, %v, %v) = %v, %v, %v; the reference gives %v, %v, %v", i, o, d, maxT, b, t0, t1, ok, r0, r1, rok)
		}
	}
}
