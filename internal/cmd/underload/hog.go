package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
)

// hogFlag, as the only argument, makes the binary a hog.
const hogFlag = "-hog"

// hog spins one goroutine on one thread until its standard input ends: when
// underload closes the pipe, or goes away by any means.
func hog() {
	runtime.GOMAXPROCS(1)
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	for x := uint64(1); ; x = x*6364136223846793005 + 1442695040888963407 {
	}
}

// hogs are the running hog processes.
type hogs struct {
	exe   string // this binary
	procs []hogProc
}

type hogProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// set starts or stops hogs until n run.
func (h *hogs) set(n int) error {
	for len(h.procs) > n {
		last := h.procs[len(h.procs)-1]
		h.procs = h.procs[:len(h.procs)-1]
		last.stop()
	}
	for len(h.procs) < n {
		cmd := exec.Command(h.exe, hogFlag)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return fmt.Errorf("hog: %w", err)
		}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("hog: starting %s: %w", h.exe, err)
		}
		h.procs = append(h.procs, hogProc{cmd: cmd, stdin: stdin})
	}
	return nil
}

func (h *hogs) len() int { return len(h.procs) }

// stopAll stops every hog and waits for it.
func (h *hogs) stopAll() { h.set(0) }

func (p hogProc) stop() {
	p.stdin.Close()
	p.cmd.Process.Kill()
	p.cmd.Wait()
}
