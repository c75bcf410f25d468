package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// controller keeps the hogs at the number that holds the target load, and
// records the load while the command runs.
type controller struct {
	cfg  config
	hogs *hogs
	warm chan struct{} // closed once the 1-minute average is near the target

	mu        sync.Mutex
	recording bool
	load      stats // the 1-minute average, a sample a second while recording
	hogCount  stats
	load1     float64
}

func newController(cfg config, h *hogs) *controller {
	return &controller{cfg: cfg, hogs: h, warm: make(chan struct{})}
}

func (c *controller) record(on bool) {
	c.mu.Lock()
	c.recording = on
	c.mu.Unlock()
}

func (c *controller) seen() (load, hogCount stats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.load, c.hogCount
}

func (c *controller) lastLoad1() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.load1
}

// run samples and adjusts until ctx ends; it returns an error only when the
// load cannot be read or a hog cannot be started.
// The hogs are stopped when it returns.
func (c *controller) run(ctx context.Context) error {
	defer c.hogs.stopAll()
	if c.cfg.fixed >= 0 {
		if err := c.hogs.set(c.cfg.fixed); err != nil {
			return err
		}
	}
	sample := time.NewTicker(sampleEvery)
	defer sample.Stop()
	var others [window]float64
	var n, ticks int
	warm := false
	var bias float64
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sample.C:
		}
		r, err := c.cfg.proc.runnable()
		if err != nil {
			return err
		}
		// The hogs are always runnable, and this process is while it
		// reads.
		others[n%window] = float64(r - c.hogs.len() - 1)
		n++
		ticks++
		if ticks*int(sampleEvery) < int(adjustEvery) {
			continue
		}
		ticks = 0
		load1, err := c.cfg.proc.loadAvg1()
		if err != nil {
			return err
		}
		if c.cfg.fixed < 0 {
			var sum float64
			k := min(n, window)
			for _, o := range others[:k] {
				sum += o
			}
			// A shortfall of 1 held for 20 s adds a hog; the bias stays
			// within the target either way. With the 1-minute average's
			// 60 s time constant, these gains settle in about 3 minutes
			// with little overshoot (damping ratio near 0.9).
			bias = max(-c.cfg.target, min(c.cfg.target, bias+(c.cfg.target-load1)/20))
			if err := c.hogs.set(hogsFor(c.cfg.target, sum/float64(k), load1, bias, c.cfg.maxHogs)); err != nil {
				return fmt.Errorf("setting the hogs: %w", err)
			}
		}
		if !warm && load1 >= 0.95*c.cfg.target {
			warm = true
			close(c.warm)
		}
		c.mu.Lock()
		c.load1 = load1
		if c.recording {
			c.load.add(load1)
			c.hogCount.add(float64(c.hogs.len()))
		}
		c.mu.Unlock()
	}
}
