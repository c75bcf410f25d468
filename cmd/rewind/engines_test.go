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

// trackInputs reads the files the engines' tests hand to other programs
// (the Go tool, cc, mcs), so that go test knows them as the tests' inputs
// and does not answer from its cache after one of them changed.
func trackInputs(t *testing.T, globs ...string) {
	t.Helper()
	for _, g := range globs {
		files, err := filepath.Glob(g)
		if err != nil || len(files) == 0 {
			t.Fatalf("no files match %s: %v", g, err)
		}
		for _, f := range files {
			if _, err := os.ReadFile(f); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// requireCCEnv makes the engines' tests fail, rather than skip, where no C
// compiler is found: librewind is cgo, and its C test is compiled with the
// system's compiler. CI sets it; a machine with Go alone skips them.
const requireCCEnv = "REWIND_REQUIRE_CC"

// buildLibrewind builds librewind as a shared library (the command
// docs/engines.md gives) into a directory of its own, once per test binary.
func buildLibrewind(t *testing.T) string {
	t.Helper()
	_, errCC := exec.LookPath("cc")
	cgo, errGo := exec.Command("go", "env", "CGO_ENABLED").Output()
	if errCC != nil || errGo != nil || strings.TrimSpace(string(cgo)) != "1" {
		if os.Getenv(requireCCEnv) != "" {
			t.Fatalf("%s is set, but cgo is off or there is no C compiler (cc): CGO_ENABLED=%s, %v, %v", requireCCEnv, cgo, errCC, errGo)
		}
		t.Skip("cgo is off or there is no C compiler (cc): librewind is cgo")
	}
	trackInputs(t, "../librewind/*.go", "../librewind/*.[ch]", "../../session/*.go", "../../client/*.go")
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
	trackInputs(t, "../../examples/c/play.c")
	bin := filepath.Join(t.TempDir(), "play")
	cc := exec.Command("cc", "-O2", "-Wall", "-Wextra", "-Werror", "-std=c11", "-I../librewind", "-o", bin, "../../examples/c/play.c",
		"-L"+lib, "-lrewind", "-Wl,-rpath,"+lib, "-lm")
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	// The header is C++ too (Unreal, Godot's GDExtensions).
	cpp := writeFile(t, "header.cpp", "#include \"rewind.h\"\nint main() { rw_frame f = {}; return rw_result_string(RW_OK)[0] == 'o' && f.status == 0 ? 0 : 1; }\n")
	if out, err := exec.Command("c++", "-std=c++17", "-Wall", "-Werror", "-I../librewind", "-o", filepath.Join(t.TempDir(), "header"), cpp).CombinedOutput(); err != nil {
		t.Fatalf("c++: %v\n%s", err, out)
	}
	s := engineServer(t, "c")
	out := playEngine(t, s, exec.Command(bin, s.addr, hex.EncodeToString(s.cert), "c", "from-c", "2", "10", "60", "--wait-close"))
	checkEngineOutput(t, out)
}

// requireMonoEnv makes the C# test fail, rather than skip, where Mono is
// missing: CI installs Mono (Debian's mono-mcs, mono-runtime and
// mono-runtime-boehm) and sets it.
const requireMonoEnv = "REWIND_REQUIRE_MONO"

// The C# binding's console example, compiled with mcs and run under Mono
// (the runtime of Unity's scripting) with librewind loaded into its
// process, plays a real server: its hits are confirmed, its frame calls
// allocate nothing on the managed heap, and a server that goes away closes
// its session without blocking a frame. It runs under both of Mono's
// garbage collectors: SGen, Mono's own, and Boehm's, which Unity's Mono and
// IL2CPP use and which stops threads with signals that Go's runtime, once
// loaded, would have run on the threads' small alternate stacks
// (docs/engines.md, "Inside another runtime").
func TestLibrewindFromCSharpUnderMono(t *testing.T) {
	if testing.Short() {
		t.Skip("builds librewind and plays for seconds")
	}
	tools := map[string]string{}
	for _, name := range []string{"mcs", "mono", "mono-boehm"} {
		path, err := exec.LookPath(name)
		if err != nil {
			if os.Getenv(requireMonoEnv) != "" {
				t.Fatalf("%s is set, but %s is missing: %v", requireMonoEnv, name, err)
			}
			t.Skipf("Mono (%s) is not installed; .ci/run installs it", name)
		}
		tools[name] = path
	}
	t.Parallel()
	lib := buildLibrewind(t)
	trackInputs(t, "../../bindings/csharp/*.cs", "../../bindings/csharp/examples/*.cs")
	exe := filepath.Join(t.TempDir(), "play.exe")
	if out, err := exec.Command(tools["mcs"], "-warnaserror", "-out:"+exe, "../../bindings/csharp/Rewind.cs", "../../bindings/csharp/examples/Play.cs").CombinedOutput(); err != nil {
		t.Fatalf("mcs: %v\n%s", err, out)
	}
	for _, runtime := range []string{"mono", "mono-boehm"} {
		t.Run(runtime, func(t *testing.T) {
			t.Parallel()
			s := engineServer(t, runtime)
			cmd := exec.Command(tools[runtime], exe, s.addr, hex.EncodeToString(s.cert), runtime, "from-csharp", "2", "10", "60", "--wait-close")
			cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib)
			out := playEngine(t, s, cmd)
			checkEngineOutput(t, out)
		})
	}
}
