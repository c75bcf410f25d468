package ticks

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Of returns d in ticks at rate ticks per second, with the fraction.
func Of(d time.Duration, rate int) float64 {
	// In nanoseconds, then divided once: 700ms at 60 Hz is exactly 42.
	return float64(d) * float64(rate) / float64(time.Second)
}

// Ceil returns d in whole ticks at rate ticks per second, rounded up: a
// history of Ceil(d, rate) ticks never holds less than d. It computes in
// integers, so a duration made from whole ticks (Duration) comes back as
// exactly those ticks.
func Ceil(d time.Duration, rate int) int64 {
	if d <= 0 || rate <= 0 {
		return 0
	}
	const s = int64(time.Second)
	r := int64(rate)
	// d·rate/s rounded up, without overflowing for any d: split d into
	// whole seconds and the rest.
	whole, rest := int64(d)/s, int64(d)%s
	return whole*r + (rest*r+s-1)/s
}

// Duration returns n ticks at rate ticks per second as a duration,
// truncated to the nanosecond (Ceil of it is n again for whole n).
func Duration(n float64, rate int) time.Duration {
	if rate <= 0 {
		return 0
	}
	return time.Duration(math.Trunc(n * float64(time.Second) / float64(rate)))
}

// Span is a span of time as a command line or an environment variable
// gives it: a duration ("750ms", "1.5s") or a bare number of ticks ("30",
// "12.5"), the form of settings counted in ticks before. The zero Span is
// a duration of 0. It is a pflag.Value.
type Span struct {
	D       time.Duration // the duration, when given as one
	N       float64       // the ticks, when given as a bare number
	InTicks bool          // given as ticks
}

// Parse reads a span: a bare number is ticks (not negative, finite),
// anything else a duration in time.ParseDuration's syntax.
func Parse(s string) (Span, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		switch {
		case n < 0:
			return Span{}, fmt.Errorf("%q is negative", s)
		case math.IsNaN(n) || math.IsInf(n, 0):
			return Span{}, fmt.Errorf("%q is not a number of ticks", s)
		}
		return Span{N: n, InTicks: true}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return Span{}, fmt.Errorf("%q is neither a duration such as \"750ms\" nor a number of ticks", s)
	}
	if d < 0 {
		return Span{}, fmt.Errorf("%q is negative", s)
	}
	return Span{D: d}, nil
}

// Ticks returns the span in ticks at rate, with the fraction.
func (s Span) Ticks(rate int) float64 {
	if s.InTicks {
		return s.N
	}
	return Of(s.D, rate)
}

// WholeTicks returns the span in whole ticks at rate: a duration rounded up
// (Ceil), and an error if it was given as a fractional number of ticks.
func (s Span) WholeTicks(rate int) (int, error) {
	if !s.InTicks {
		return int(min(Ceil(s.D, rate), math.MaxInt32)), nil
	}
	if s.N != math.Trunc(s.N) || s.N > math.MaxInt32 {
		return 0, fmt.Errorf("%v ticks is not a whole number of ticks", s.N)
	}
	return int(s.N), nil
}

// Duration returns the span as a duration at rate.
func (s Span) Duration(rate int) time.Duration {
	if s.InTicks {
		return Duration(s.N, rate)
	}
	return s.D
}

// String returns the span as it was given: "750ms", or "30" for ticks.
func (s Span) String() string {
	if s.InTicks {
		return strconv.FormatFloat(s.N, 'f', -1, 64)
	}
	return s.D.String()
}

// Describe returns the span with its other form at rate: "750ms (15
// ticks at 20 Hz)", "30 ticks (1.5s at 20 Hz)".
func (s Span) Describe(rate int) string {
	if s.InTicks {
		return fmt.Sprintf("%s ticks (%v at %d Hz)", s, s.Duration(rate), rate)
	}
	return fmt.Sprintf("%v (%s ticks at %d Hz)", s.D, strconv.FormatFloat(s.Ticks(rate), 'f', -1, 64), rate)
}

// Set parses v into s (pflag.Value).
func (s *Span) Set(v string) error {
	p, err := Parse(v)
	if err != nil {
		return err
	}
	*s = p
	return nil
}

// Type names the flag's value in help (pflag.Value).
func (s *Span) Type() string { return "duration|ticks" }
