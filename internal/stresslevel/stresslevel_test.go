package stresslevel

import (
	"testing"

	"github.com/rewind-gg/rewind/geom"
)

// A box's 12 triangles face outward: each normal points away from the
// centre.
func TestBoxOutward(t *testing.T) {
	lo, hi := geom.V(-1, 0, 2), geom.V(3, 0.5, 2.25)
	tris := Box(lo, hi, 1)
	if len(tris) != 12 {
		t.Fatalf("%d triangles", len(tris))
	}
	c := lo.Add(hi).Scale(0.5)
	for i, tr := range tris {
		n := tr.B.Sub(tr.A).Cross(tr.C.Sub(tr.A))
		if n.Dot(tr.A.Sub(c)) <= 0 || tr.Mask != 1 {
			t.Errorf("triangle %d faces inward or lost its mask: %+v", i, tr)
		}
	}
}

// The stress level has the size its comment gives, the same triangles for
// the same seed, and others for another.
func TestLevel(t *testing.T) {
	a, b := Level(7, 90, 320), Level(7, 90, 320)
	if len(a) != 20040 || len(b) != len(a) {
		t.Fatalf("%d and %d triangles, want 20040", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("triangle %d differs between two builds", i)
		}
	}
	c := Level(8, 90, 320)
	same := 0
	for i := range min(len(a), len(c)) {
		if a[i] == c[i] {
			same++
		}
	}
	if same == len(a) {
		t.Error("seed 8 built seed 7's level")
	}
	masks := map[uint8]int{}
	for _, tr := range a {
		masks[tr.Mask]++
	}
	if masks[1] == 0 || masks[2] == 0 || masks[3] == 0 {
		t.Errorf("masks %v: want some of 1, 2 and 3", masks)
	}
}
