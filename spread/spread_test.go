package spread

import (
	"math"
	"strconv"
	"testing"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/docvec"
)

func TestDirStaysInTheConeAndIsDeterministic(t *testing.T) {
	aim := geom.V(1, 0.2, -0.5).Normalize()
	half := 0.1
	var sum geom.Vec3
	for p := range 2000 {
		key := Key(7, 42, uint32(p/8))
		d := Dir(aim, half, key, p%8)
		if math.Abs(d.Len()-1) > 1e-12 {
			t.Fatalf("not a unit vector: %v", d)
		}
		if a := math.Acos(min(1, d.Dot(aim))); a > half+1e-12 {
			t.Fatalf("pellet %d at %v rad, outside the %v cone", p, a, half)
		}
		if d != Dir(aim, half, key, p%8) {
			t.Fatal("not deterministic")
		}
		sum = sum.Add(d)
	}
	// Uniform over the cone: the mean direction is the aim.
	if m := sum.Normalize(); math.Acos(min(1, m.Dot(aim))) > 0.005 {
		t.Errorf("pellets are biased: mean %v, aim %v", m, aim)
	}
	if Dir(aim, half, Key(7, 42, 1), 0) == Dir(aim, half, Key(7, 43, 1), 0) ||
		Dir(aim, half, Key(7, 42, 1), 0) == Dir(aim, half, Key(8, 42, 1), 0) ||
		Dir(aim, half, Key(7, 42, 1), 0) == Dir(aim, half, Key(7, 42, 1), 1) {
		t.Error("different seeds, shooters or pellets should differ")
	}
	if Dir(aim, 0, 1, 3) != aim {
		t.Error("no spread must return the aim")
	}
	if d := Dir(geom.V(0, 1, 0), half, 1, 3); math.Acos(d.Y) > half+1e-12 {
		t.Errorf("straight up: %v", d)
	}
}

// Pellets of one shot draw independent numbers: the second number of a
// pellet is never the first of the next (the version-1 formula's flaw).
func TestPelletsAreIndependent(t *testing.T) {
	key := Key(1, 2, 3)
	for p := range 8 {
		_, u2 := Uniforms(key, p)
		if u1next, _ := Uniforms(key, p+1); u2 == u1next {
			t.Fatalf("pellet %d's second number is pellet %d's first", p, p+1)
		}
	}
}

// The angle off the aim over many shots: the mean stays what the cone
// gives, whatever the shooter or seed (no sequence is systematically
// tighter).
func TestMeanAngle(t *testing.T) {
	aim := geom.V(0, 0, 1)
	const half, n = 0.004, 20000
	for _, seed := range []uint64{0, 1, 0xdeadbeef} {
		sum := 0.0
		for seq := range uint32(n) {
			sum += math.Acos(min(1, Dir(aim, half, Key(seed, 0x100005, seq), 0).Dot(aim)))
		}
		// Uniform over the cap: the mean angle is about 2/3 of the half-angle.
		if mean := sum / n; math.Abs(mean-half*2/3) > half*0.02 {
			t.Errorf("seed %#x: mean angle %.6f, want about %.6f", seed, mean, half*2/3)
		}
	}
}

// The vectors of docs/protocol.md, which other languages implement from:
// the key and both uniforms exactly, the direction to 1e-12 (sin and cos
// differ in their last bits between math libraries).
func TestDocsVectors(t *testing.T) {
	rows, err := docvec.Read("../docs/protocol.md", "spread")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 4 {
		t.Fatalf("%d spread vectors in the docs, want at least 4", len(rows))
	}
	for i, r := range rows {
		if len(r) != 14 {
			t.Fatalf("vector %d: %d fields, want 14", i, len(r))
		}
		u := func(j int, bits int) uint64 {
			v, err := strconv.ParseUint(r[j], 0, bits)
			if err != nil {
				t.Fatalf("vector %d field %d: %v", i, j, err)
			}
			return v
		}
		f := func(j int) float64 {
			v, err := strconv.ParseFloat(r[j], 64)
			if err != nil {
				t.Fatalf("vector %d field %d: %v", i, j, err)
			}
			return v
		}
		seed, shooter, seq, pellet := u(0, 64), uint32(u(1, 32)), uint32(u(2, 32)), int(u(3, 8))
		half, aim := f(4), geom.V(f(5), f(6), f(7))
		key := Key(seed, shooter, seq)
		if want := u(8, 64); key != want {
			t.Errorf("vector %d: key %#016x, the docs say %#016x", i, key, want)
		}
		u1, u2 := Uniforms(key, pellet)
		if u1 != f(9) || u2 != f(10) {
			t.Errorf("vector %d: uniforms %v %v, the docs say %v %v", i, u1, u2, f(9), f(10))
		}
		d := Dir(aim, half, key, pellet)
		if want := geom.V(f(11), f(12), f(13)); d.Sub(want).Len() > 1e-12 {
			t.Errorf("vector %d: direction %v, the docs say %v", i, d, want)
		}
	}
}
