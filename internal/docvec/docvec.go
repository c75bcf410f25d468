// Package docvec reads test vectors out of the project's documentation, so
// that the pages other languages implement from (docs/protocol.md) are the
// single truth and the tests check them: a vector block is a fenced code
// block whose info string is "vectors NAME"; each non-empty line that does
// not start with '#' is one vector, its fields separated by spaces.
package docvec

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Read returns the vectors of the block called name in the Markdown file at
// path, one slice of fields per line.
func Read(path, name string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("docvec: %w", err)
	}
	defer f.Close()
	var rows [][]string
	in, found := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case !in && line == "```vectors "+name:
			in, found = true, true
		case in && line == "```":
			in = false
		case in && line != "" && !strings.HasPrefix(line, "#"):
			rows = append(rows, strings.Fields(line))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("docvec: %s: %w", path, err)
	}
	if !found {
		return nil, fmt.Errorf("docvec: %s: no block \"vectors %s\"", path, name)
	}
	if in {
		return nil, fmt.Errorf("docvec: %s: block %q is not closed", path, name)
	}
	return rows, nil
}
