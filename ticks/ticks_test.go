package ticks

import (
	"testing"
	"time"
)

func TestCeilAndDuration(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		rate int
		want int64
	}{
		{1750 * time.Millisecond, 20, 35},
		{1750 * time.Millisecond, 60, 105},
		{1750 * time.Millisecond, 128, 224},
		{time.Second, 60, 60},
		{time.Second + 1, 60, 61}, // never shorter than asked
		{10 * time.Millisecond, 128, 2},
		{7812500 * time.Nanosecond, 128, 1}, // exactly one tick
		{0, 60, 0},
		{-time.Second, 60, 0},
	} {
		if got := Ceil(tt.d, tt.rate); got != tt.want {
			t.Errorf("Ceil(%v, %d) = %d, want %d", tt.d, tt.rate, got, tt.want)
		}
	}
	// Whole ticks survive the round trip through a duration at every rate.
	for _, rate := range []int{1, 20, 30, 60, 64, 128, 144, 1000} {
		for n := range int64(1025) {
			if got := Ceil(Duration(float64(n), rate), rate); got != n {
				t.Fatalf("Ceil(Duration(%d, %d)) = %d", n, rate, got)
			}
		}
	}
	if got := Of(700*time.Millisecond, 60); got != 42 {
		t.Errorf("Of(700ms, 60) = %v, want 42", got)
	}
	if got := Duration(30, 20); got != 1500*time.Millisecond {
		t.Errorf("Duration(30, 20) = %v", got)
	}
}

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in    string
		want  Span
		ticks float64 // at 60 Hz
		str   string
	}{
		{"30", Span{N: 30, InTicks: true}, 30, "30"},
		{"12.5", Span{N: 12.5, InTicks: true}, 12.5, "12.5"},
		{"0", Span{N: 0, InTicks: true}, 0, "0"},
		{"750ms", Span{D: 750 * time.Millisecond}, 45, "750ms"},
		{"1.5s", Span{D: 1500 * time.Millisecond}, 90, "1.5s"},
		{"0s", Span{}, 0, "0s"},
	} {
		got, err := Parse(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			continue
		}
		if got.Ticks(60) != tt.ticks || got.String() != tt.str {
			t.Errorf("Parse(%q): %v ticks at 60 Hz, %q; want %v, %q", tt.in, got.Ticks(60), got.String(), tt.ticks, tt.str)
		}
	}
	for _, bad := range []string{"", "-1", "-5ms", "1 s", "thirty", "NaN", "Inf"} {
		if s, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", bad, s)
		}
	}
}

func TestWholeTicks(t *testing.T) {
	s, _ := Parse("1s")
	if n, err := s.WholeTicks(128); n != 128 || err != nil {
		t.Errorf("1s at 128 Hz: %d, %v", n, err)
	}
	s, _ = Parse("10ms")
	if n, err := s.WholeTicks(60); n != 1 || err != nil { // rounded up
		t.Errorf("10ms at 60 Hz: %d, %v", n, err)
	}
	s, _ = Parse("30")
	if n, err := s.WholeTicks(128); n != 30 || err != nil {
		t.Errorf("30 ticks: %d, %v", n, err)
	}
	s, _ = Parse("2.5")
	if _, err := s.WholeTicks(20); err == nil || err.Error() != "2.5 ticks is not a whole number of ticks" {
		t.Errorf("2.5 ticks: %v", err)
	}
	if got := (Span{N: 30, InTicks: true}).Describe(60); got != "30 ticks (500ms at 60 Hz)" {
		t.Errorf("Describe = %q", got)
	}
	if got := (Span{D: 750 * time.Millisecond}).Describe(20); got != "750ms (15 ticks at 20 Hz)" {
		t.Errorf("Describe = %q", got)
	}
}
