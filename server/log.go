package server

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

func logLevel(s string) (zerolog.Level, error) {
	l, err := zerolog.ParseLevel(s)
	if err != nil || s == "" {
		return zerolog.InfoLevel, fmt.Errorf("%q is not trace, debug, info, warn or error", s)
	}
	return l, nil
}

// NewLogger returns the logger the config asks for, writing to w: JSON, or a
// human console format, or (auto) the console format when w is a terminal.
func NewLogger(c LogConfig, w io.Writer) (zerolog.Logger, error) {
	level, err := logLevel(c.Level)
	if err != nil {
		return zerolog.Nop(), fmt.Errorf("config: log.level: %w", err)
	}
	console := c.Format == "console"
	if c.Format == "auto" {
		if f, ok := w.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
			console = true
		}
	}
	if console {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger(), nil
}
