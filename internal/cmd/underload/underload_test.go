package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain makes the test binary a hog when underload starts it as one.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == hogFlag {
		hog()
	}
	os.Exit(m.Run())
}

func TestHogsFor(t *testing.T) {
	for _, c := range []struct {
		target, others, load1, bias float64
		max, want                   int
	}{
		{8, 0, 8, 0, 16, 8},    // steady, an idle machine: the hogs are the load
		{8, 3, 8, 0, 16, 5},    // the rest of the machine runs 3
		{8, 0, 2, 0, 16, 16},   // the average far below: as many as allowed
		{8, 10, 8, 0, 16, 0},   // the machine is busier than the target alone
		{8, 2, 7, 0, 16, 8},    // 6 plus twice the shortfall of 1
		{8, 2, 8, 1.4, 16, 7},  // the integrated shortfall: 7.4
		{8, 2, 8.5, 0, 16, 5},  // above the target: fewer
		{4, 0, 4, -0.6, 16, 3}, // 3.4 rounds down
	} {
		if got := hogsFor(c.target, c.others, c.load1, c.bias, c.max); got != c.want {
			t.Errorf("hogsFor(target %g, others %g, load1 %g, bias %g, max %d) = %d, want %d", c.target, c.others, c.load1, c.bias, c.max, got, c.want)
		}
	}
}

func TestProcFiles(t *testing.T) {
	dir := t.TempDir()
	p := procFiles{loadavg: filepath.Join(dir, "loadavg"), stat: filepath.Join(dir, "stat")}
	os.WriteFile(p.loadavg, []byte("7.93 5.10 3.20 11/156 31353\n"), 0o644)
	os.WriteFile(p.stat, []byte("cpu  1 2 3\nctxt 99\nprocs_running 9\nprocs_blocked 2\nsoftirq 0\n"), 0o644)
	if v, err := p.loadAvg1(); err != nil || v != 7.93 {
		t.Errorf("loadAvg1 = %v, %v; want 7.93", v, err)
	}
	if n, err := p.runnable(); err != nil || n != 11 {
		t.Errorf("runnable = %v, %v; want 11", n, err)
	}
	os.WriteFile(p.stat, []byte("cpu  1 2 3\nprocs_running 9\n"), 0o644)
	if _, err := p.runnable(); err == nil || !strings.Contains(err.Error(), "procs_blocked") {
		t.Errorf("runnable without procs_blocked: %v", err)
	}
	os.WriteFile(p.loadavg, []byte("high 5.10 3.20 11/156 31353\n"), 0o644)
	if _, err := p.loadAvg1(); err == nil || !strings.Contains(err.Error(), "first field") {
		t.Errorf("loadAvg1 of a bad file: %v", err)
	}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// Hogs run until stopped, and a hog whose underload has gone away (its
// standard input ends) stops on its own.
func TestHogsStop(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs Linux's /proc")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := &hogs{exe: exe}
	defer h.stopAll()
	if err := h.set(3); err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range h.procs {
		pids = append(pids, p.cmd.Process.Pid)
	}
	for _, pid := range pids {
		if !alive(pid) {
			t.Errorf("hog %d is not running", pid)
		}
	}
	// The last hog's underload goes away: only its standard input ends.
	last := h.procs[2]
	h.procs = h.procs[:2]
	last.stdin.Close()
	if err := last.cmd.Wait(); err != nil {
		t.Errorf("a hog whose input ended: %v, want a clean exit", err)
	}
	h.stopAll()
	for _, p := range h.procs {
		t.Errorf("hog %d still held", p.cmd.Process.Pid)
	}
	for _, pid := range pids {
		if alive(pid) { // reaped by Wait: the pid is free
			t.Errorf("hog %d still running after stopAll", pid)
		}
	}
}

// underload runs the command with the hogs beside it, passes on its exit
// status, says what load it saw, and leaves no hog behind.
func TestUnderload(t *testing.T) {
	if _, err := os.Stat(linuxProc.loadavg); err != nil {
		t.Skip("needs Linux's /proc")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The command counts the hogs (this test binary, run with -hog) while
	// they run, then fails with status 3.
	script := `sleep 2; n=0; for p in /proc/[0-9]*; do [ "$(tr '\0' ' ' < $p/cmdline 2>/dev/null)" = "` + exe + ` -hog " ] && n=$((n+1)); done; echo hogs $n; exit 3`
	cfg := config{target: 8, fixed: 2, maxHogs: 16, command: []string{"sh", "-c", script}, proc: linuxProc, exe: exe}
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code, err := underload(cfg, &stdout, &stderr)
	if err != nil || code != 3 {
		t.Fatalf("underload: status %d, %v; want 3 (the command's)\n%s", code, err, stderr.String())
	}
	if got := strings.TrimSpace(stdout.String()); got != "hogs 2" {
		t.Errorf("the command saw %q, want hogs 2", got)
	}
	if !regexp.MustCompile(`underload: sh ran \d+s; 1-minute load average min [\d.]+, mean [\d.]+, max [\d.]+ \(target 8.0, \d+ samples\)`).MatchString(stderr.String()) ||
		!strings.Contains(stderr.String(), "hogs min 2.00, mean 2.00, max 2.00") {
		t.Errorf("no load line:\n%s", stderr.String())
	}
	out, _ := exec.Command("sh", "-c", `for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline 2>/dev/null; echo; done`).Output()
	if strings.Contains(string(out), exe+" -hog") {
		t.Errorf("a hog is still running %v after underload returned", time.Since(start))
	}
}
