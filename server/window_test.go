package server

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/systems"
	"github.com/rewind-gg/rewind/ticks"
)

// The window is a duration, rounded up to whole ticks at the tick rate; the
// ticks of earlier versions (window_ticks, a bare --window N) still work,
// in the file, the environment and the flags alike.
func TestWindowForms(t *testing.T) {
	tests := []struct {
		name  string
		rate  int
		body  string   // [lagcomp] keys of the file
		env   []string // REWIND_* variables
		args  []string // flags
		ticks int      // the window in effect
		says  string   // DescribeWindow
	}{
		{"default 20 Hz", 20, "", nil, nil, 40, "lagcomp.window 2s, 40 ticks at 20 Hz"},
		{"default 60 Hz", 60, "", nil, nil, 120, "lagcomp.window 2s, 120 ticks at 60 Hz"},
		{"default 128 Hz", 128, "", nil, nil, 256, "lagcomp.window 2s, 256 ticks at 128 Hz"},
		{"duration 20 Hz", 20, `window = "750ms"`, nil, nil, 15, "lagcomp.window 750ms, 15 ticks at 20 Hz"},
		{"duration 60 Hz", 60, `window = "750ms"`, nil, nil, 45, "lagcomp.window 750ms, 45 ticks at 60 Hz"},
		{"duration 128 Hz", 128, `window = "750ms"`, nil, nil, 96, "lagcomp.window 750ms, 96 ticks at 128 Hz"},
		{"rounded up", 60, `window = "10ms"`, nil, nil, 1, "lagcomp.window 10ms, 1 ticks at 60 Hz"},
		{"off", 60, `window = "0s"`, nil, nil, 0, "lagcomp.window 0s, 0 ticks at 60 Hz"},
		{"ticks 20 Hz", 20, "window_ticks = 30", nil, nil, 30, "lagcomp.window_ticks 30, 1.5s at 20 Hz"},
		{"ticks 60 Hz", 60, "window_ticks = 30", nil, nil, 30, "lagcomp.window_ticks 30, 500ms at 60 Hz"},
		{"ticks 128 Hz", 128, "window_ticks = 30", nil, nil, 30, "lagcomp.window_ticks 30, 234.375ms at 128 Hz"},
		{"ticks off", 60, "window_ticks = 0", nil, nil, 0, "lagcomp.window 0s, 0 ticks at 60 Hz"},
		{"env duration", 60, "", []string{"REWIND_LAGCOMP__WINDOW=1s"}, nil, 60, "lagcomp.window 1s, 60 ticks at 60 Hz"},
		{"env ticks", 60, "", []string{"REWIND_LAGCOMP__WINDOW_TICKS=12"}, nil, 12, "lagcomp.window_ticks 12, 200ms at 60 Hz"},
		{"flag duration", 128, "", nil, []string{"--window", "1s"}, 128, "lagcomp.window 1s, 128 ticks at 128 Hz"},
		{"flag ticks", 128, "", nil, []string{"--window", "64"}, 64, "lagcomp.window_ticks 64, 500ms at 128 Hz"},
		// A later layer's form replaces an earlier layer's other form.
		{"flag duration over file ticks", 60, "window_ticks = 30", nil, []string{"--window", "1s"}, 60, "lagcomp.window 1s, 60 ticks at 60 Hz"},
		{"env ticks over file duration", 60, `window = "1s"`, []string{"REWIND_LAGCOMP__WINDOW_TICKS=12"}, nil, 12, "lagcomp.window_ticks 12, 200ms at 60 Hz"},
		{"flag ticks over env duration", 20, "", []string{"REWIND_LAGCOMP__WINDOW=1s"}, []string{"--window", "8"}, 8, "lagcomp.window_ticks 8, 400ms at 20 Hz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := "tick_rate = " + strconv.Itoa(tt.rate) + "\nsnapshot_rate = " + strconv.Itoa(tt.rate) + "\nmax_datagram_rate = 1000\n"
			if tt.body != "" {
				body += "[lagcomp]\n" + tt.body + "\n"
			}
			cfg, _, err := LoadConfig(writeConfig(t, "c.toml", body), tt.env, flags(t, tt.args...))
			if err != nil {
				t.Fatal(err)
			}
			lc := cfg.LagCompConfig()
			if lc.WindowTicks != tt.ticks || cfg.DescribeWindow() != tt.says {
				t.Errorf("window %d ticks, %q; want %d, %q", lc.WindowTicks, cfg.DescribeWindow(), tt.ticks, tt.says)
			}
			// max_unlag 0 is the window, whichever form it came in.
			if lc.MaxUnlag() != float64(tt.ticks) {
				t.Errorf("max_unlag %v ticks, want the window's %d", lc.MaxUnlag(), tt.ticks)
			}
			// The wire still says ticks.
			if w := welcomeTemplate(&cfg, mustCatalog(t, &cfg), mustLevel(t, &cfg)); int(w.WindowTicks) != tt.ticks || w.MaxUnlag != float64(tt.ticks) {
				t.Errorf("Welcome: window_ticks %d, max_unlag %v; want %d", w.WindowTicks, w.MaxUnlag, tt.ticks)
			}
		})
	}
}

// Both forms of the window in one place are an error naming both keys; a
// bad value is an error naming the key it was given in.
func TestWindowErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		env  []string
		args []string
		want string
	}{
		{"both in the file", "[lagcomp]\nwindow = \"1s\"\nwindow_ticks = 30\n", nil, nil,
			"lagcomp.window and lagcomp.window_ticks are both set: give one"},
		{"both in the environment", "", []string{"REWIND_LAGCOMP__WINDOW=1s", "REWIND_LAGCOMP__WINDOW_TICKS=30"}, nil,
			"config: environment: lagcomp.window and lagcomp.window_ticks are both set"},
		{"negative", "[lagcomp]\nwindow = \"-1s\"\n", nil, nil, "config: lagcomp.window: -1s is negative"},
		{"too long", "[lagcomp]\nwindow = \"1m\"\n", nil, nil, "config: lagcomp.window: 1m0s is 1200 ticks at 20 Hz, more than the history's 1024"},
		{"a number for the duration", "[lagcomp]\nwindow = 30\n", nil, nil, "lagcomp.window"},
		{"not a duration", "", []string{"REWIND_LAGCOMP__WINDOW=long"}, nil, "lagcomp.window"},
		{"ticks out of range", "[lagcomp]\nwindow_ticks = 2000\n", nil, nil, "config: lagcomp.window_ticks: 2000 is outside 0..1024"},
		{"fractional ticks flag", "", nil, []string{"--window", "2.5"}, "lagcomp.window_ticks"},
		{"max_unlag beyond a window in ticks", "[lagcomp]\nwindow_ticks = 30\nmax_unlag = \"2s\"\n", nil, nil,
			"config: lagcomp.max_unlag: 2s is outside 0..the window (lagcomp.window_ticks 30, 1.5s at 20 Hz)"},
		{"max_unlag beyond a window in time", "[lagcomp]\nwindow = \"1s\"\nmax_unlag = \"1.5s\"\n", nil, nil,
			"config: lagcomp.max_unlag: 1.5s is outside 0..the window (lagcomp.window 1s, 20 ticks at 20 Hz)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := LoadConfig(writeConfig(t, "c.toml", tt.body), tt.env, flags(t, tt.args...))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	// In code, too: the default window and window_ticks together.
	cfg := DefaultConfig()
	cfg.LagComp.WindowTicks = 30
	if err := cfg.validate(false); err == nil || !strings.Contains(err.Error(), "config: lagcomp.window: 2s and lagcomp.window_ticks 30 are both set") {
		t.Errorf("both in code: %v", err)
	}
	// A max_unlag within the window after rounding up is not beyond it:
	// 20 ms at 60 Hz is 2 ticks, 33.3 ms.
	cfg = DefaultConfig()
	cfg.TickRate, cfg.SnapshotRate, cfg.MaxDatagramRate = 60, 60, 1000
	cfg.LagComp.Window, cfg.LagComp.MaxUnlag = 20*time.Millisecond, 30*time.Millisecond
	if err := cfg.validate(false); err != nil {
		t.Errorf("max_unlag within the rounded window: %v", err)
	}
}

// --print-config prints the window in the form it was given, and what it
// prints loads back.
func TestPrintedWindowForm(t *testing.T) {
	for _, tt := range []struct{ body, has, lacks string }{
		{"[lagcomp]\nwindow_ticks = 12\n", "window_ticks = 12", "\nwindow = "},
		{"[lagcomp]\nwindow = \"800ms\"\n", "window = '800ms'", "window_ticks"},
		{"", "window = '2s'", "window_ticks"},
	} {
		cfg, _, err := LoadConfig(writeConfig(t, "c.toml", tt.body), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := cfg.TOML()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), tt.has) || strings.Contains(string(out), tt.lacks) {
			t.Errorf("%s: printed\n%s\nwant %q and no %q", tt.body, out, tt.has, tt.lacks)
		}
		again, _, err := LoadConfig(writeConfig(t, "printed.toml", string(out)), nil, nil)
		if err != nil || again.LagCompConfig() != cfg.LagCompConfig() {
			t.Errorf("%s: loaded back %+v, %v; want %+v", tt.body, again.LagCompConfig(), err, cfg.LagCompConfig())
		}
	}
}

// The default window (and so max_unlag) grants an honest client on a 1 s
// round trip all the view lag it has, at 20, 60 and 128 Hz: its round trip,
// the longest interpolation delay a client may declare, a snapshot
// interval, two ticks of input lead and jitter up to the tolerance. The
// server's measured bound for that client (the room's arithmetic in
// applyInputs) holds it too. The old default of 30 ticks cut it at 60 Hz.
func TestDefaultWindowHoldsHonestClients(t *testing.T) {
	const rtt = time.Second
	for _, rates := range [][2]int{{20, 20}, {20, 10}, {60, 20}, {60, 60}, {128, 32}, {128, 16}} {
		cfg := DefaultConfig()
		cfg.TickRate, cfg.SnapshotRate, cfg.MaxDatagramRate = rates[0], rates[1], 1000
		if err := cfg.validate(false); err != nil {
			t.Fatal(err)
		}
		lc := &cfg.LagComp
		snapshot := time.Second / time.Duration(cfg.SnapshotRate)
		lead := 2 * time.Second / time.Duration(cfg.TickRate)
		view := rtt + lc.MaxInterpDelay + snapshot + lead + lc.ViewLagTolerance

		const now = 10_000 // the input's tick; it arrived lead earlier
		arrived := float64(now) - ticks.Of(lead, cfg.TickRate)
		slack := float64(cfg.TickRate/cfg.SnapshotRate) + 1 + ticks.Of(lc.ViewLagTolerance, cfg.TickRate) // room.lagSlack
		in := ecs.Input{Tick: now, ViewTime: ecs.ViewTimeOf(float64(now) - ticks.Of(view, cfg.TickRate)),
			Earliest: arrived - ticks.Of(rtt, cfg.TickRate) - ticks.Of(lc.MaxInterpDelay, cfg.TickRate) - slack}
		got := systems.GrantViewLag(now, &in, cfg.LagCompConfig().MaxUnlag())
		if got.Clamp != 0 {
			t.Errorf("%d Hz, snapshots at %d Hz: an honest client %v behind (%.1f ticks) is cut to %.1f ticks by %s (max_unlag %s)",
				rates[0], rates[1], view, ticks.Of(view, cfg.TickRate), got.Ticks, got.Clamp, cfg.DescribeMaxUnlag())
		}
		if rates[0] == 60 {
			cfg.LagComp.Window, cfg.LagComp.WindowTicks = 0, 30
			if got := systems.GrantViewLag(now, &in, cfg.LagCompConfig().MaxUnlag()); got.Clamp != ecs.ClampMaxUnlag {
				t.Errorf("60 Hz, the old 30 ticks: %+v, want the client cut by max_unlag", got)
			}
		}
	}
}
