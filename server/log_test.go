package server

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Log lines carry their time to the millisecond, in UTC.
func TestLogTimestampsHaveMilliseconds(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewLogger(LogConfig{Level: "info", Format: "json"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Info().Str("room", "r").Msg("hello")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("%q: %v", buf.String(), err)
	}
	ts, _ := line["time"].(string)
	if _, err := time.Parse(TimeFormat, ts); err != nil || !strings.HasSuffix(ts, "Z") || len(ts) != len("2006-01-02T15:04:05.000Z") {
		t.Errorf("time %q: want UTC with milliseconds (%v)", ts, err)
	}
	buf.Reset()
	if log, err = NewLogger(LogConfig{Level: "info", Format: "console"}, &buf); err != nil {
		t.Fatal(err)
	}
	log.Info().Msg("hello")
	if !regexp.MustCompile(`^\S*\d\d:\d\d:\d\d\.\d{3}\b`).MatchString(buf.String()) {
		t.Errorf("console line %q: want a time to the millisecond first", buf.String())
	}
}
