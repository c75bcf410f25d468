package docvec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	doc := "# Doc\n\n```vectors a\n# comment\n1 2  3\n\nx y  # trailing comment\n  # indented comment\n```\n\n```vectors b\nz\n```\n```vectors open\n1\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := Read(path, "a")
	if err != nil || !reflect.DeepEqual(rows, [][]string{{"1", "2", "3"}, {"x", "y"}}) {
		t.Errorf("a: %q %v", rows, err)
	}
	if _, err := Read(path, "missing"); err == nil || !strings.Contains(err.Error(), `no block "vectors missing"`) {
		t.Errorf("missing: %v", err)
	}
	if _, err := Read(path, "open"); err == nil || !strings.Contains(err.Error(), "not closed") {
		t.Errorf("unclosed: %v", err)
	}
}

func TestReplace(t *testing.T) {
	doc := []byte("a\n```vectors x\nold 1\nold 2\n```\nb\n")
	got, err := Replace(doc, "x", []string{"new 1  "})
	if want := "a\n```vectors x\nnew 1\n```\nb\n"; err != nil || string(got) != want {
		t.Errorf("Replace: %q, %v; want %q", got, err, want)
	}
	if _, err := Replace(doc, "y", nil); err == nil {
		t.Error("Replace of a missing block: no error")
	}
	if _, err := Replace([]byte("```vectors x\nopen\n"), "x", nil); err == nil {
		t.Error("Replace of an unclosed block: no error")
	}
}
