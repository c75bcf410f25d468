package splitmix

import "testing"

// The reference values of SplitMix64 (Steele, Lea, Flood 2014) from state 0:
// its first output is Mix(0).
func TestMixPinned(t *testing.T) {
	for _, tt := range []struct{ in, want uint64 }{
		{0, 0xe220a8397b1dcdaf},
		{0x9e3779b97f4a7c15, 0x6e789e6aa1b965f4},
	} {
		if got := Mix(tt.in); got != tt.want {
			t.Errorf("Mix(%#x) = %#x, want %#x", tt.in, got, tt.want)
		}
	}
}
