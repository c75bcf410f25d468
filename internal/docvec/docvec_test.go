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
