package view

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/weapons"
)

// Source is a match for the page to draw.
type Source interface {
	// Match returns the match from tick from on: its frames and the shots
	// decided from then (all of it for from ≤ 0). The result is the
	// caller's.
	Match(from int64) (*Match, error)
}

// File is a whole recording, replayed once.
type File struct {
	m *Match
}

// Load replays the recording at path (LoadWith with the kinds only).
func Load(path string, kinds *weapons.Registry) (*File, error) {
	return LoadWith(path, Config{Kinds: kinds})
}

// LoadWith replays the recording at path as cfg says (its Keep aside). A
// recording it cannot read at all is an error; one damaged or cut short
// further on gives the match up to there, with Match.Error saying where it
// stopped.
func LoadWith(path string, cfg Config) (*File, error) {
	f, rd, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cfg.Keep = 0
	b, err := NewBuilder(rd.Setup(), cfg)
	if err != nil {
		return nil, err
	}
	res, err := replay.Run(rd, b.ReplayConfig(rd.Setup(), cfg.Kinds))
	b.m.End = res.End
	if err != nil {
		if res.Ticks == 0 {
			return nil, fmt.Errorf("view: %s: %w", path, err)
		}
		b.m.Error = err.Error()
	}
	return &File{m: &b.m}, nil
}

// Match returns the recording from tick from on.
func (f *File) Match(from int64) (*Match, error) { return f.m.since(from), nil }

// Follower replays a recording as it is written (a running room's): every
// call to Match first reads what the file holds beyond the last call.
type Follower struct {
	mu     sync.Mutex
	path   string
	rd     *replay.Reader
	runner *replay.Runner
	b      *Builder
	done   bool // the recording ended, or cannot be read further
}

// Follow starts following the recording at path, keeping its newest keep
// ticks (0: all).
func Follow(path string, kinds *weapons.Registry, keep int64) (*Follower, error) {
	f, rd, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := NewBuilder(rd.Setup(), Config{Kinds: kinds, Keep: keep})
	if err != nil {
		return nil, err
	}
	b.m.Live = true
	runner, err := replay.NewRunner(rd.Setup(), b.ReplayConfig(rd.Setup(), kinds))
	if err != nil {
		return nil, fmt.Errorf("view: %s: %w", path, err)
	}
	fw := &Follower{path: path, rd: rd, runner: runner, b: b}
	fw.read()
	return fw, nil
}

// Match reads what was written since the last call, and returns the match
// from tick from on.
func (fw *Follower) Match(from int64) (*Match, error) {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if !fw.done {
		f, err := os.Open(fw.path)
		if err != nil {
			return nil, fmt.Errorf("view: %w", err)
		}
		if _, err := f.Seek(fw.rd.Offset(), io.SeekStart); err == nil && fw.rd.Resume(f) == nil {
			fw.read()
		}
		f.Close()
	}
	m := fw.b.m.since(from)
	m.Players, m.Frames, m.Shots = slices.Clone(m.Players), slices.Clone(m.Frames), slices.Clone(m.Shots)
	return m, nil
}

// read applies every whole record the reader can read now.
func (fw *Follower) read() {
	m := &fw.b.m
	for {
		rec, err := fw.rd.Next()
		if err == io.EOF || replay.Truncated(err) {
			return // the writer has not written more yet
		}
		if err == nil {
			if rec.Type == replay.RecordEnd {
				m.End, m.Live, fw.done = rec.Reason, false, true
			}
			err = fw.runner.Apply(rec)
		}
		if err != nil {
			var de *replay.DivergenceError
			if errors.As(err, &de) || !replay.Truncated(err) {
				m.Error, m.Live, fw.done = err.Error(), false, true
			}
			return
		}
	}
}

// open opens a recording and reads its header.
func open(path string) (*os.File, *replay.Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("view: %w", err)
	}
	rd, err := replay.NewReader(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("view: %s: %w", path, err)
	}
	return f, rd, nil
}
