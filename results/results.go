// Package results records how matches ended: one JSON object per match,
// appended as a line to a file and synced to disk before Write returns, so
// that a result written is a result kept, even if the process is killed
// right after (a crash loses at most the line being written).
package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Match is one match's result.
type Match struct {
	MatchID  string    `json:"match_id"`
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended"`
	Duration float64   `json:"duration_seconds"`
	// Reason is why it ended: "finished" (its duration ran out), "empty"
	// (everybody left), "drain_timeout" (the server was draining and the
	// match did not finish in time), "shutdown" (the server stopped),
	// "unplayed" (a room a join created, left before anybody played in it:
	// no match, and the room may open again under the same id),
	// "interrupted" (the server was draining and its operator stopped it
	// at once).
	Reason   string   `json:"reason"`
	Ticks    int64    `json:"ticks"`
	TickRate int      `json:"tick_rate"`
	LagComp  LagComp  `json:"lagcomp"`
	Players  []Player `json:"players"`
	// Hits are the players' hits that dealt damage, and Disputed those of
	// them that were disputed: they dealt damage to a victim that, in its
	// own present at the server tick, was out of the shooter's line of
	// sight or the weapon's reach, and the shot would not have hit it
	// without rewinding (docs/tuning.md). The sums of the players'.
	Hits     uint64 `json:"hits"`
	Disputed uint64 `json:"disputed_hits"`
}

// LagComp is the lag-compensation tuning the match ran with: the window
// and max_unlag in the match's ticks, as the simulation used them, and the
// same in seconds.
type LagComp struct {
	WindowTicks      int     `json:"window_ticks"`
	MaxUnlag         float64 `json:"max_unlag_ticks"`
	WindowSeconds    float64 `json:"window_seconds"`
	MaxUnlagSeconds  float64 `json:"max_unlag_seconds"`
	ViewLagTolerance float64 `json:"view_lag_tolerance_seconds"`
	MaxInterpDelay   float64 `json:"max_interp_delay_seconds"`
	ViewResolution   int     `json:"view_resolution"`
	Bucketing        bool    `json:"bucketing"`
}

// Player is one player's part in a match, over all its connections.
type Player struct {
	UserID string `json:"user_id"`
	Name   string `json:"name"`
	Team   uint8  `json:"team"`
	Kills  uint64 `json:"kills"`
	Deaths uint64 `json:"deaths"`
	// Hits are hits that dealt damage; NoDamage hits registered on targets
	// that took none (invulnerable, already dead).
	Hits     uint64 `json:"hits"`
	NoDamage uint64 `json:"no_damage_hits"`
	// Disputed counts its hits that were disputed (Match.Disputed), and
	// DisputedTaken the disputed hits it took: the first is what the
	// window granted it at others' expense, the second what it paid.
	Disputed      uint64 `json:"disputed_hits"`
	DisputedTaken uint64 `json:"disputed_hits_taken"`
	// Clamped counts its shots resolved with less view lag than it claimed.
	Clamped uint64 `json:"clamped_shots"`
	// RTTCapped is how long, in seconds, the round trip of its
	// acknowledgements exceeded QUIC's own estimate plus the margin, and
	// the view lag it was granted followed QUIC's; RTTDisagreements counts
	// its connections on which that reached 3 s (a fake-lag signature).
	RTTCapped        float64 `json:"rtt_capped_seconds"`
	RTTDisagreements uint64  `json:"rtt_disagreements"`
}

// Writer appends results to a file. It is safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// Open opens the file at path for appending, creating it, and the
// directories it is in, if needed.
func Open(path string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("results: %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	return &Writer{f: f, path: path}, nil
}

// Path returns the file's path.
func (w *Writer) Path() string { return w.path }

// Write appends m as one line and syncs the file.
func (w *Writer) Write(m *Match) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("results: %s: %w", m.MatchID, err)
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return fmt.Errorf("results: %s: %s is closed", m.MatchID, w.path)
	}
	if _, err := w.f.Write(b); err != nil {
		return fmt.Errorf("results: %s: %w", w.path, err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("results: %s: %w", w.path, err)
	}
	return nil
}

// Close closes the file; later writes fail.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
