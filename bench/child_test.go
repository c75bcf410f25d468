package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if r := os.Getenv(envRole); r != "" {
		os.Exit(role(r))
	}
	os.Exit(m.Run())
}

// child is a part of the benchmark running in a process of its own.
type child struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
	addr  string
	mu    sync.Mutex
}

// startChild starts the test binary as a part of the benchmark and waits
// for its ready line.
func startChild(tb testing.TB, name string, env ...string) *child {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	c := &child{name: name, cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	c.out.Buffer(make([]byte, 1<<16), 1<<20)
	tb.Cleanup(c.stop)
	if !c.out.Scan() {
		tb.Fatalf("%s: exited before it was ready", name)
	}
	line := c.out.Text()
	addr, ok := strings.CutPrefix(line, "ready ")
	if !ok {
		tb.Fatalf("%s: %q, not a ready line", name, line)
	}
	c.addr = addr
	return c
}

// stop ends the child: it exits when its stdin closes.
func (c *child) stop() {
	if c.stdin == nil {
		return
	}
	c.stdin.Close()
	c.stdin = nil
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

// ask sends a command and returns the child's answer.
func (c *child) ask(tb testing.TB, cmd string) string {
	tb.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := fmt.Fprintln(c.stdin, cmd); err != nil {
		tb.Fatalf("%s: %s: %v", c.name, cmd, err)
	}
	if !c.out.Scan() {
		tb.Fatalf("%s: %s: no answer (exited?)", c.name, cmd)
	}
	a := c.out.Text()
	if strings.HasPrefix(a, "error: ") {
		tb.Fatalf("%s: %s: %s", c.name, cmd, a)
	}
	return a
}

// cpu is the child's CPU time so far.
func (c *child) cpu(tb testing.TB) time.Duration {
	tb.Helper()
	n, err := strconv.ParseInt(c.ask(tb, "cpu"), 10, 64)
	if err != nil {
		tb.Fatalf("%s: cpu: %v", c.name, err)
	}
	return time.Duration(n)
}

// stats decodes the child's stats into v.
func (c *child) stats(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal([]byte(c.ask(tb, "stats")), v); err != nil {
		tb.Fatalf("%s: stats: %v", c.name, err)
	}
}
