package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/bots"
	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/results"
	"github.com/rewind-gg/rewind/token"
)

// runMainEnv makes the test binary run the rewind command line itself (its
// arguments after the binary's name): the drain tests send a real SIGTERM
// to a real process.
const runMainEnv = "REWIND_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// served is a rewind serve process and what its log said at start.
type served struct {
	cmd    *exec.Cmd
	addr   string // the QUIC address
	admin  string // the admin HTTP address
	cert   []byte
	exited chan struct{} // closed when the process has exited
	err    error         // how it exited, once exited is closed
	// lines are its JSON log lines after it listened (dropped while the
	// channel is full: the process never waits for a test to read).
	lines chan map[string]any
}

// serve starts "rewind serve --config config" in a process of its own and
// waits until it listens (read from its JSON log).
func serve(t *testing.T, config string) *served {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--config", config)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan map[string]any, 256)
	s := &served{cmd: cmd, exited: make(chan struct{}), lines: lines}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil {
				select {
				case lines <- line:
				default:
				}
			}
		}
		close(lines)
		s.err = cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-s.exited
	})
	deadline := time.After(30 * time.Second)
	for s.addr == "" || s.admin == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the server exited before it listened")
			}
			switch line["message"] {
			case "listening":
				s.addr, _ = line["addr"].(string)
				s.cert, _ = hex.DecodeString(fmt.Sprint(line["cert_sha256"]))
			case "http listening":
				if line["listener"] == "admin" {
					s.admin, _ = line["addr"].(string)
				}
			}
		case <-deadline:
			t.Fatal("the server did not listen within 30 s")
		}
	}
	return s
}

// logged waits up to d for the log line whose message is msg.
func (s *served) logged(t *testing.T, msg string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				t.Fatalf("the server exited before it logged %q", msg)
			}
			if line["message"] == msg {
				return
			}
		case <-deadline:
			t.Fatalf("the server did not log %q within %v", msg, d)
		}
	}
}

// wait waits for the process to exit cleanly within d.
func (s *served) wait(t *testing.T, d time.Duration, when string) {
	t.Helper()
	select {
	case <-s.exited:
		if s.err != nil {
			t.Errorf("exit: %v", s.err)
		}
	case <-time.After(d):
		t.Fatal("the process did not exit " + when)
	}
}

// drainSetup writes a key pair and a config (tokens, a results file, the
// given match duration and drain timeout) into a temporary directory.
func drainSetup(t *testing.T, duration, drain string) (config, results string, key []byte) {
	t.Helper()
	dir := t.TempDir()
	if code, out, errs := runCmd(t, "keygen", "--dir", dir, "--name", "mm"); code != 0 {
		t.Fatalf("keygen: %d %s %s", code, out, errs)
	}
	results = filepath.Join(dir, "results.jsonl")
	config = writeFile(t, "rewind.toml", fmt.Sprintf(`listen = "127.0.0.1:0"
drain_timeout = %q
[match]
duration = %q
[auth]
public_keys = [%q]
[results]
file = %q
[admin]
listen = "127.0.0.1:0"
[log]
format = "json"
`, drain, duration, filepath.Join(dir, "mm.pub"), results))
	return config, results, []byte(filepath.Join(dir, "mm.key"))
}

// players joins alice (team 1) and bob (team 2) to room "final" and plays
// them in the background; the returned channel yields their Run errors.
func players(t *testing.T, s *served, keyPath string) ([]*client.Client, chan error) {
	t.Helper()
	priv, err := token.LoadPrivateKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	var cs []*client.Client
	errs := make(chan error, 2)
	for i, user := range []string{"alice", "bob"} {
		tok, err := mint(priv, "final", user, user, uint8(1+i), "", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := client.Dial(ctx, client.Config{Addr: s.addr, Token: tok, ServerCertSHA256: s.cert,
			Input: bots.NewBot(bots.BotConfig{Seed: uint64(i)})})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		cs = append(cs, c)
		go func() { errs <- c.Run(context.Background()) }()
	}
	return cs, errs
}

func status(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// readResults reads the results file: one JSON object a line.
func readResults(t *testing.T, path string) []results.Match {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []results.Match
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m results.Match
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("results line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func closeCode(t *testing.T, err error) (uint64, string) {
	t.Helper()
	var ce *client.CloseError
	if !errors.As(err, &ce) {
		t.Fatalf("Run returned %v, want the server's close", err)
	}
	return ce.Code, ce.Reason
}

// SIGTERM during a match: the server admits nobody (/readyz fails, a join
// is refused with code 4) and lets the match finish, a second SIGTERM
// notwithstanding (Kubernetes sends one after Agones' Shutdown); its
// players are told "match over", its result line is in the file, and the
// process exits soon after.
func TestSIGTERMLetsTheMatchFinish(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server process")
	}
	t.Parallel()
	config, resultsPath, key := drainSetup(t, "5s", "30s")
	s := serve(t, config)
	_, errs := players(t, s, string(key))
	if code := status(t, "http://"+s.admin+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz before the drain: %d", code)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	s.logged(t, "draining; Ctrl-C again stops at once", 10*time.Second)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Polled: an HTTP endpoint has no event to wait on.
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for status(t, "http://"+s.admin+"/readyz") != http.StatusServiceUnavailable {
		if time.Now().After(deadline) {
			t.Fatal("/readyz still ready 10 s after SIGTERM")
		}
		<-poll.C
	}
	priv, _ := token.LoadPrivateKey(string(key))
	late, _ := mint(priv, "final", "carol", "carol", 1, "", time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_, err := client.Dial(ctx, client.Config{Addr: s.addr, Token: late, ServerCertSHA256: s.cert, Input: bots.NewBot(bots.BotConfig{})})
	cancel()
	var rj *client.RejectError
	if !errors.As(err, &rj) || rj.Code != protocol.RejectShutdown {
		t.Errorf("a join while draining: %v, want reject %d", err, protocol.RejectShutdown)
	}
	for range 2 {
		if code, reason := closeCode(t, <-errs); code != protocol.CloseMatchOver || reason != "match over" {
			t.Errorf("closed with %d %q, want %d \"match over\"", code, reason, protocol.CloseMatchOver)
		}
	}
	s.wait(t, 15*time.Second, "after its match finished")
	t.Logf("exited %v after SIGTERM", time.Since(sent).Round(time.Millisecond))
	res := readResults(t, resultsPath)
	if len(res) != 1 || res[0].MatchID != "final" || res[0].Reason != "finished" || len(res[0].Players) != 2 ||
		res[0].Players[0].UserID != "alice" || res[0].Players[0].Team != 1 || res[0].Players[1].UserID != "bob" || res[0].Players[1].Team != 2 {
		t.Errorf("results %+v", res)
	}
	if lc := res[0].LagComp; lc.WindowTicks != 40 || lc.WindowSeconds != 2 || lc.MaxUnlag != 40 || lc.MaxUnlagSeconds != 2 || res[0].TickRate != 20 || res[0].Ticks < 90 {
		t.Errorf("result settings %+v", res[0])
	}
}

// SIGTERM with a match that does not end: after drain_timeout the match is
// closed with its reason, the result is written, and the process exits
// within the timeout plus a bound.
func TestSIGTERMDrainTimesOut(t *testing.T) {
	took := cutDrain(t, "1s", syscall.SIGTERM, "server shutting down: the match did not finish within drain_timeout", "drain_timeout")
	if took < time.Second {
		t.Errorf("exited after %v, before drain_timeout", took)
	}
}

// A second Ctrl-C stops at once: the match that would not end closes with
// its own reason (interrupted, not drain_timeout), its result is written,
// and the process exits long before drain_timeout (10 minutes).
func TestSecondInterruptStopsAtOnce(t *testing.T) {
	cutDrain(t, "10m", os.Interrupt, "server shutting down: stopped by its operator", "interrupted")
}

// cutDrain runs a match that does not end in a server with the given
// drain_timeout, sends it sig (for an interrupt, twice: the second once
// the first is taken), and checks that both players are closed with
// closeReason, that the process exits within drain_timeout (for SIGTERM)
// and the shutdown bound, and that the result's reason is resultReason. It
// returns how long the process took to exit after the (last) signal.
func cutDrain(t *testing.T, drain string, sig os.Signal, closeReason, resultReason string) time.Duration {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a server process")
	}
	t.Parallel()
	config, resultsPath, key := drainSetup(t, "0s", drain)
	s := serve(t, config)
	_, errs := players(t, s, string(key))
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	bound := shutdownBound
	if sig == os.Interrupt {
		// The second only once the first is taken: two pending signals
		// of one kind may be delivered as one.
		s.logged(t, "draining; Ctrl-C again stops at once", 10*time.Second)
		if err := s.cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	} else {
		d, err := time.ParseDuration(drain)
		if err != nil {
			t.Fatal(err)
		}
		bound += d
	}
	sent := time.Now()
	for range 2 {
		if code, reason := closeCode(t, <-errs); code != protocol.CloseShutdown || reason != closeReason {
			t.Errorf("closed with %d %q, want %d %q", code, reason, protocol.CloseShutdown, closeReason)
		}
	}
	s.wait(t, bound, fmt.Sprintf("within %v of %v", bound, sig))
	took := time.Since(sent)
	t.Logf("exited %v after %v", took.Round(time.Millisecond), sig)
	res := readResults(t, resultsPath)
	if len(res) != 1 || res[0].Reason != resultReason || len(res[0].Players) != 2 {
		t.Errorf("results %+v, want one of reason %s", res, resultReason)
	}
	return took
}
