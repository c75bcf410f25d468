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

// TimeFormat is the logs' timestamp: UTC, to the millisecond.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// msTime stamps every log line with the time to the millisecond (zerolog's
// own Timestamp would need its package-wide format changed).
type msTime struct{}

func (msTime) Run(e *zerolog.Event, _ zerolog.Level, _ string) {
	e.Str(zerolog.TimestampFieldName, time.Now().UTC().Format(TimeFormat))
}

// NewLogger returns the logger the config asks for, writing to w: JSON, or a
// human console format, or (auto) the console format when w is a terminal.
// Every line carries its time to the millisecond.
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
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05.000"}
	}
	return zerolog.New(w).Level(level).Hook(msTime{}), nil
}
