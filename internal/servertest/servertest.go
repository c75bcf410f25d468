// Package servertest starts Rewind servers for tests: on a free loopback
// port, in open development mode, shut down (cleanly, or the test fails)
// when the test ends.
package servertest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/server"
)

// Start starts a server with the default configuration, changed by change
// (if not nil), listening on 127.0.0.1 with no admin port. It logs errors
// (everything with go test -v) to stderr.
func Start(tb testing.TB, change func(*server.Config)) *server.Server {
	tb.Helper()
	cfg := server.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Admin.Listen = ""
	if change != nil {
		change(&cfg)
	}
	level := zerolog.ErrorLevel // (open development mode warns at every start)
	if testing.Verbose() {
		level = zerolog.InfoLevel
	}
	srv, err := server.New(cfg, zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).Level(level).With().Timestamp().Logger())
	if err != nil {
		tb.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			tb.Errorf("shutdown: %v", err)
		}
	})
	return srv
}
