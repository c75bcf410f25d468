package lagcomp

import (
	"fmt"
	"math"

	"github.com/rewind-gg/rewind/ecs"
)

// Config tunes lag compensation for a room.
type Config struct {
	// WindowTicks is the deepest rewind: a view time older than present −
	// WindowTicks is clamped to it. Dino Squad used 30 ticks at 20 Hz.
	WindowTicks int
	// ViewResolution is how finely view times are bucketed: 0 keeps them
	// exact, N > 0 rounds them to the nearest 1/N tick (a half rounds up,
	// toward the present). Coarser buckets mean fewer rewinds per tick at the
	// cost of up to 1/(2N) tick of accuracy.
	ViewResolution int
	// Bucketing groups items with equal view times into one rewind. Turning it
	// off rewinds once per item: results are identical, only slower.
	Bucketing bool
	// CellSize is the broadphase grid's cell edge in metres.
	CellSize float64
	// MaxUnlagTicks is the deepest view lag a player's claim is granted
	// (Source's sv_maxunlag): the favour-the-shooter cap. 0: WindowTicks.
	// It never exceeds WindowTicks.
	MaxUnlagTicks float64
}

// MaxUnlag returns the deepest view lag a claim is granted, in ticks.
func (c Config) MaxUnlag() float64 {
	if c.MaxUnlagTicks > 0 {
		return min(c.MaxUnlagTicks, float64(c.WindowTicks))
	}
	return float64(c.WindowTicks)
}

// DefaultConfig returns Dino Squad's tuning: a 30-tick window, exact view
// times, bucketing on, and 4 m broadphase cells.
func DefaultConfig() Config {
	return Config{WindowTicks: 30, ViewResolution: 0, Bucketing: true, CellSize: 4}
}

// MaxWindowTicks bounds WindowTicks: the history keeps one frame per tick of
// the window, and a longer rewind than this is not lag compensation any more.
const MaxWindowTicks = 1024

// MaxViewResolution bounds ViewResolution: 1/65536 tick is the wire's
// precision of a view time's fraction.
const MaxViewResolution = 1 << 16

// Validate reports the first field that is out of range.
func (c Config) Validate() error {
	switch {
	case c.WindowTicks < 0 || c.WindowTicks > MaxWindowTicks:
		return fmt.Errorf("window_ticks: %d is outside 0..%d", c.WindowTicks, MaxWindowTicks)
	case c.ViewResolution < 0 || c.ViewResolution > MaxViewResolution:
		return fmt.Errorf("view_resolution: %d is outside 0..%d", c.ViewResolution, MaxViewResolution)
	case !(c.CellSize >= 0.25 && c.CellSize <= 1024):
		return fmt.Errorf("cell_size: %v is outside 0.25..1024 metres", c.CellSize)
	case !(c.MaxUnlagTicks >= 0 && c.MaxUnlagTicks <= float64(c.WindowTicks)):
		return fmt.Errorf("max_unlag: %v ticks is outside 0..window_ticks (%d)", c.MaxUnlagTicks, c.WindowTicks)
	}
	return nil
}

// ViewTimeAt returns the time at which, at tick present, an item whose owner
// sees lag ticks behind is resolved: present − lag, clamped to
// [max(oldest, present − WindowTicks), present], then rounded to the nearest
// 1/ViewResolution tick (a half rounds up). oldest is the oldest tick the
// history holds. A NaN lag counts as 0.
func (c Config) ViewTimeAt(present, oldest int64, lag float64) ecs.ViewTime {
	if math.IsNaN(lag) {
		lag = 0
	}
	lo := max(oldest, present-int64(c.WindowTicks))
	tau := float64(present) - lag
	tau = min(max(tau, float64(lo)), float64(present))
	if n := float64(c.ViewResolution); n > 0 {
		// lo and present are whole ticks, so rounding never leaves [lo, present].
		tau = math.Floor(tau*n+0.5) / n
	}
	return ecs.ViewTimeOf(tau)
}

// ViewTimes answers Config.ViewTimeAt for one tick (one present and oldest
// tick), remembering the answers: a room's lag-compensated entities share
// few distinct lags (a shooter's lag changes little between its shots), and
// each asks for its view time every tick. The zero value answers nothing
// until Reset.
type ViewTimes struct {
	cfg             Config
	present, oldest int64
	slots           [viewTimeSlots]viewTimeSlot
}

// ViewTimes remembers 1<<viewTimeBits lags; a lag whose slot another holds
// is computed again.
const (
	viewTimeBits  = 5
	viewTimeSlots = 1 << viewTimeBits
)

type viewTimeSlot struct {
	lag  uint64 // the lag's bits
	used bool
	t    ecs.ViewTime
}

// Reset makes v answer c.ViewTimeAt(present, oldest, ·), forgetting what it
// remembered.
func (v *ViewTimes) Reset(c Config, present, oldest int64) {
	v.cfg, v.present, v.oldest = c, present, oldest
	clear(v.slots[:])
}

// At returns c.ViewTimeAt(present, oldest, lag) of the last Reset, bit for
// bit.
func (v *ViewTimes) At(lag float64) ecs.ViewTime {
	bits := math.Float64bits(lag)
	s := &v.slots[bits*0x9e3779b97f4a7c15>>(64-viewTimeBits)]
	if !s.used || s.lag != bits {
		s.lag, s.used, s.t = bits, true, v.cfg.ViewTimeAt(v.present, v.oldest, lag)
	}
	return s.t
}
