// Package docvec reads test vectors out of the project's documentation, so
// that the pages other languages implement from (docs/protocol.md) are the
// single truth and the tests check them: a vector block is a fenced code
// block whose info string is "vectors NAME"; each line is one vector, its
// fields separated by white space. A field that starts with '#' starts a
// comment, which runs to the end of the line; a line with no field before
// its comment (a blank line, a comment line) is no vector.
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
		case in:
			if f := fields(line); len(f) > 0 {
				rows = append(rows, f)
			}
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

// fields returns the fields of a line before its comment, if any.
func fields(line string) []string {
	f := strings.Fields(line)
	for i, w := range f {
		if strings.HasPrefix(w, "#") {
			return f[:i]
		}
	}
	return f
}

// Replace returns doc with the lines of its block "```vectors name"
// replaced (trailing spaces trimmed): how a test's -update flag rewrites
// the vectors it computes.
func Replace(doc []byte, name string, lines []string) ([]byte, error) {
	in := strings.SplitAfter(string(doc), "\n")
	open := -1
	for i, l := range in {
		switch {
		case open < 0 && strings.TrimSpace(l) == "```vectors "+name:
			open = i
		case open >= 0 && strings.TrimSpace(l) == "```":
			var out strings.Builder
			for _, l := range in[:open+1] {
				out.WriteString(l)
			}
			for _, l := range lines {
				out.WriteString(strings.TrimRight(l, " ") + "\n")
			}
			for _, l := range in[i:] {
				out.WriteString(l)
			}
			return []byte(out.String()), nil
		}
	}
	if open < 0 {
		return nil, fmt.Errorf("docvec: no block \"vectors %s\": add an empty one where it belongs", name)
	}
	return nil, fmt.Errorf("docvec: block %q is not closed", name)
}
