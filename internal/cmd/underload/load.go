package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procFiles names the files the load is read from, so tests can give their
// own.
type procFiles struct {
	loadavg string // /proc/loadavg
	stat    string // /proc/stat
}

var linuxProc = procFiles{loadavg: "/proc/loadavg", stat: "/proc/stat"}

// loadAvg1 reads the kernel's 1-minute load average.
func (p procFiles) loadAvg1() (float64, error) {
	b, err := os.ReadFile(p.loadavg)
	if err != nil {
		return 0, fmt.Errorf("load average: %w", err)
	}
	fields := strings.Fields(string(b))
	if len(fields) < 1 {
		return 0, fmt.Errorf("load average: %s is empty", p.loadavg)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return 0, fmt.Errorf("load average: %s's first field: %w", p.loadavg, err)
	}
	return v, nil
}

// runnable reads the tasks the load average counts now: those running or
// waiting for a CPU (procs_running) and those in uninterruptible sleep
// (procs_blocked).
func (p procFiles) runnable() (int, error) {
	b, err := os.ReadFile(p.stat)
	if err != nil {
		return 0, fmt.Errorf("runnable tasks: %w", err)
	}
	var running, blocked int
	var seen int
	for _, line := range strings.Split(string(b), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || (name != "procs_running" && name != "procs_blocked") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil {
			return 0, fmt.Errorf("runnable tasks: %s's %s: %w", p.stat, name, err)
		}
		if name == "procs_running" {
			running = n
		} else {
			blocked = n
		}
		seen++
	}
	if seen != 2 {
		return 0, fmt.Errorf("runnable tasks: %s has no procs_running and procs_blocked", p.stat)
	}
	return running + blocked, nil
}

// hogsFor is the number of hogs that holds the load average at target: the
// target less what the rest of the machine runs (others, averaged over the
// last seconds), plus twice the 1-minute average's shortfall (target -
// load1), so that an average still climbing (or falling) is pushed there
// faster, plus
// bias, the shortfall integrated over time, which takes out what the
// estimate of others gets wrong. The result is clamped to [0, max].
func hogsFor(target, others, load1, bias float64, max int) int {
	n := target - others + 2*(target-load1) + bias
	switch {
	case n < 0:
		return 0
	case n > float64(max):
		return max
	}
	return int(n + 0.5)
}

// stats is the minimum, mean and maximum of a series of samples.
type stats struct {
	n             int
	min, max, sum float64
}

func (s *stats) add(v float64) {
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.sum += v
	s.n++
}

func (s stats) mean() float64 {
	if s.n == 0 {
		return 0
	}
	return s.sum / float64(s.n)
}

func (s stats) String() string {
	if s.n == 0 {
		return "no samples"
	}
	return fmt.Sprintf("min %.2f, mean %.2f, max %.2f", s.min, s.mean(), s.max)
}
