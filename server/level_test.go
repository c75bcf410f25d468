package server

import "testing"

// mustLevel loads cfg's level, as New does.
func mustLevel(tb testing.TB, cfg *Config) *playedLevel {
	tb.Helper()
	l, _, err := cfg.loadLevel()
	if err != nil {
		tb.Fatal(err)
	}
	return l
}
