package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/client"
)

// librewind is the C library, built once for the tests that load it.
var librewind struct {
	once sync.Once
	dir  string // holds librewind.so
	err  error
}

// buildLibrewind builds librewind as a shared library (the command
// docs/engines.md gives) into a directory of its own, once per test binary.
func buildLibrewind(t *testing.T) string {
	t.Helper()
	librewind.once.Do(func() {
		dir, err := os.MkdirTemp("", "librewind")
		if err != nil {
			librewind.err = err
			return
		}
		librewind.dir = dir
		out, err := exec.Command("go", "build", "-buildmode=c-shared", "-o", filepath.Join(dir, "librewind.so"), "../librewind").CombinedOutput()
		if err != nil {
			librewind.err = fmt.Errorf("go build -buildmode=c-shared: %v\n%s", err, out)
		}
	})
	if librewind.err != nil {
		t.Fatal(librewind.err)
	}
	return librewind.dir
}

// engineServer starts "rewind serve" in open development mode on loopback,
// in a process of its own, with a target strafing in room: what an engine's
// player shoots at.
func engineServer(t *testing.T, room string) *served {
	t.Helper()
	config := writeFile(t, "rewind.toml", `listen = "127.0.0.1:0"
[match]
health = 1e9
[admin]
listen = "127.0.0.1:0"
[log]
format = "json"
`)
	s := serve(t, config)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	target, err := client.Dial(ctx, client.Config{Addr: s.addr, Room: room, Name: "target", Team: 1, ServerCertSHA256: s.cert,
		Input: strafe{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Close() })
	go target.Run(context.Background())
	return s
}

// strafe walks left and right, a second each way.
type strafe struct{}

func (strafe) Intent(v *client.View) client.Intent {
	if (v.Tick/20)%2 == 0 {
		return client.Intent{MoveX: 1}
	}
	return client.Intent{MoveX: -1}
}

// playEngine runs an engine's program (the C example, or the C# one under
// Mono) against s until it prints its wait for the server to go away, then
// kills the server, and returns the program's output once it has exited.
func playEngine(t *testing.T, s *served, cmd *exec.Cmd) string {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var out strings.Builder
	lines := bufio.NewScanner(io.TeeReader(stdout, &out))
	waiting := make(chan struct{})
	go func() {
		signalled := false
		for lines.Scan() {
			if strings.HasPrefix(lines.Text(), "waiting for the server to go away") && !signalled {
				signalled = true
				close(waiting)
			}
		}
		exited <- cmd.Wait()
	}()
	timeout := time.After(120 * time.Second)
	select {
	case <-waiting:
		s.cmd.Process.Kill() // the server goes away without a word
	case err := <-exited:
		t.Fatalf("%s exited before it played: %v\nstdout:\n%s\nstderr:\n%s", cmd.Path, err, out.String(), stderr.String())
	case <-timeout:
		cmd.Process.Kill()
		t.Fatalf("%s did not play within 120 s\nstdout:\n%s\nstderr:\n%s", cmd.Path, out.String(), stderr.String())
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("%s: %v\nstderr:\n%s", cmd.Path, err, stderr.String())
		}
	case <-timeout:
		cmd.Process.Kill()
		t.Fatalf("%s did not notice the server going away\nstdout:\n%s\nstderr:\n%s", cmd.Path, out.String(), stderr.String())
	}
	t.Logf("%s:\n%s", filepath.Base(cmd.Path), out.String())
	return out.String()
}

var slowestFrame = regexp.MustCompile(`the slowest frame meanwhile ([0-9.]+) ms`)

// checkEngineOutput checks what an engine's program printed: it played,
// its hits were confirmed, the server going away closed the session, and
// its frame calls stayed quick while the network was gone.
func checkEngineOutput(t *testing.T, out string) {
	t.Helper()
	if !strings.Contains(out, "\nok\n") {
		t.Errorf("the program did not finish with ok")
	}
	m := slowestFrame.FindStringSubmatch(out)
	if m == nil {
		t.Fatal("the program did not report its frames after the server went away")
	}
	// Never blocked on the network: a blocked call would take the QUIC
	// idle timeout (seconds); this bound holds on a busy machine.
	if ms, _ := strconv.ParseFloat(m[1], 64); ms > 250 {
		t.Errorf("a frame took %.1f ms while the server was gone", ms)
	}
}

// The C example, built with the system's compiler against rewind.h and
// librewind.so, plays a real server from its frame loop: its hits are
// confirmed, misuse of the API gives error codes, and a server that goes
// away closes its session without blocking a frame.
func TestLibrewindFromC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds librewind and plays for seconds")
	}
	t.Parallel()
	lib := buildLibrewind(t)
	bin := filepath.Join(t.TempDir(), "play")
	cc := exec.Command("cc", "-O2", "-Wall", "-Wextra", "-Werror", "-std=c11", "-I../librewind", "-o", bin, "../../examples/c/play.c",
		"-L"+lib, "-lrewind", "-Wl,-rpath,"+lib, "-lm")
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	s := engineServer(t, "c")
	out := playEngine(t, s, exec.Command(bin, s.addr, hex.EncodeToString(s.cert), "c", "from-c", "2", "10", "60"))
	checkEngineOutput(t, out)
}

// requireMonoEnv makes the C# test fail, rather than skip, where Mono is
// missing: CI installs Mono (Debian's mono-mcs and mono-runtime) and sets it.
const requireMonoEnv = "REWIND_REQUIRE_MONO"

// The C# binding's console example, compiled with mcs and run under Mono
// (the runtime of Unity's scripting) with librewind loaded into its
// process, plays a real server: its hits are confirmed, its frame calls
// allocate nothing on the managed heap, and a server that goes away closes
// its session without blocking a frame.
func TestLibrewindFromCSharpUnderMono(t *testing.T) {
	if testing.Short() {
		t.Skip("builds librewind and plays for seconds")
	}
	mcs, errMcs := exec.LookPath("mcs")
	mono, errMono := exec.LookPath("mono")
	if errMcs != nil || errMono != nil {
		if os.Getenv(requireMonoEnv) != "" {
			t.Fatalf("%s is set, but Mono is missing: %v %v", requireMonoEnv, errMcs, errMono)
		}
		t.Skip("Mono (mcs, mono) is not installed; .ci/run installs it")
	}
	t.Parallel()
	lib := buildLibrewind(t)
	exe := filepath.Join(t.TempDir(), "play.exe")
	if out, err := exec.Command(mcs, "-warnaserror", "-out:"+exe, "../../bindings/csharp/Rewind.cs", "../../bindings/csharp/examples/Play.cs").CombinedOutput(); err != nil {
		t.Fatalf("mcs: %v\n%s", err, out)
	}
	s := engineServer(t, "cs")
	cmd := exec.Command(mono, exe, s.addr, hex.EncodeToString(s.cert), "cs", "from-csharp", "2", "10", "60")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib)
	out := playEngine(t, s, cmd)
	checkEngineOutput(t, out)
}
