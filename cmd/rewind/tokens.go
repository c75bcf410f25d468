package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/rewind-gg/rewind/token"
)

// tokenPool is connect tokens a matchmaker minted for the bots, taken in
// order: one per dial, as a token admits one join.
type tokenPool struct {
	mu     sync.Mutex
	tokens []pooledToken
	next   int
}

type pooledToken struct {
	text   string
	claims token.Claims
}

// readTokens reads tokens, one a line in their text form (base64url, as
// `rewind token` prints them); blank lines and lines starting with # are
// skipped. A line that is not a well-formed token is an error naming it.
// The signatures are the server's to check.
func readTokens(r io.Reader, name string) (*tokenPool, error) {
	p := &tokenPool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		b, err := token.Decode(s)
		if err == nil {
			var c token.Claims
			if c, err = token.Parse(b); err == nil {
				p.tokens = append(p.tokens, pooledToken{text: s, claims: c})
				continue
			}
		}
		return nil, fmt.Errorf("%s:%d: %w", name, line, err)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(p.tokens) == 0 {
		return nil, fmt.Errorf("%s: no tokens", name)
	}
	return p, nil
}

// take returns the next unused token, or an error when all are used.
func (p *tokenPool) take() (pooledToken, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next == len(p.tokens) {
		return pooledToken{}, fmt.Errorf("all %d tokens are used (a token admits one join; a bot that dials again needs another)", len(p.tokens))
	}
	t := p.tokens[p.next]
	p.next++
	return t, nil
}

func (p *tokenPool) len() int { return len(p.tokens) }

// loadTokens reads the tokens of the file at path, or of in for "-".
func loadTokens(path string, in io.Reader) (*tokenPool, error) {
	if path == "-" {
		return readTokens(in, "standard input")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readTokens(f, path)
}
