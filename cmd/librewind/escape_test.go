package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// The calls an engine makes every frame allocate nothing on Go's heap: the
// compiler's escape analysis finds nothing in them that escapes (a buffer
// grows only when a frame asks for more than before, in grow). A test
// cannot count the library's allocations from C while its network
// goroutines allocate, so it asks the compiler, which decides them.
func TestFrameCallsDoNotEscape(t *testing.T) {
	perFrame := map[string]bool{"rw_set_intent": true, "rw_read_frame": true, "rw_poll_events": true, "rw_read_stats": true,
		"call": true, "vec3": true, "flag": true, "writeString": true}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "main.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	type span struct {
		name     string
		from, to int
	}
	var spans []span
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && perFrame[fd.Name.Name] {
			spans = append(spans, span{fd.Name.Name, fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line})
			delete(perFrame, fd.Name.Name)
		}
	}
	if len(perFrame) != 0 {
		t.Fatalf("functions not found in main.go: %v", perFrame)
	}
	out, err := exec.Command("go", "build", "-gcflags=-m", "-o", t.TempDir()+"/lib", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	escape := regexp.MustCompile(`(?m)^\./main\.go:(\d+):\d+: (.*(escapes to heap|moved to heap).*)$`)
	found := 0
	for _, m := range escape.FindAllStringSubmatch(string(out), -1) {
		found++
		line, _ := strconv.Atoi(m[1])
		for _, s := range spans {
			if line >= s.from && line <= s.to {
				t.Errorf("%s, main.go:%d: %s", s.name, line, m[2])
			}
		}
	}
	if found == 0 {
		t.Fatalf("the compiler reported no escapes at all: the test reads the wrong output\n%s", out)
	}
}
