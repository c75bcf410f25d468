package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/internal/matchtest"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/ticks"
	"github.com/rewind-gg/rewind/view"
)

// rewind view --window: the shots judged under another window, a duration
// converted at the recording's tick rate (rounded up), named beside the
// recorded one; a window that is no whole number of ticks is refused.
func TestViewWindow(t *testing.T) {
	file := writeFile(t, "m"+replay.Extension, string(matchtest.Record(t, 4, 60)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan string, 1)
	done := make(chan error, 1)
	var out bytes.Buffer
	cfg := view.Config{Window: &ticks.Span{D: 120 * time.Millisecond}} // 2.4 ticks at 20 Hz: 3
	go func() { done <- runView(ctx, file, "127.0.0.1:0", cfg, &out, func(a string) { addr <- a }) }()
	var url string
	select {
	case url = <-addr:
	case err := <-done:
		t.Fatalf("view: %v\n%s", err, out.String())
	}
	res, err := http.Get(url + "match.json")
	if err != nil {
		t.Fatal(err)
	}
	var m view.Match
	err = json.NewDecoder(res.Body).Decode(&m)
	res.Body.Close()
	if err != nil || m.Window != 3 || m.Recorded == nil || *m.Recorded == 3 {
		t.Errorf("match.json: window %d, recorded %v (%v); want 3 ticks, and the recorded window beside", m.Window, m.Recorded, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("view: %v", err)
	}
	if !strings.Contains(out.String(), "the shots judged under a window of 3 ticks (150ms at 20 Hz; recorded: ") {
		t.Errorf("the view says:\n%s", out.String())
	}
	code, _, errOut := runCmd(t, "view", filepath.Clean(file), "--window", "2.5")
	if code != 1 || !strings.Contains(errOut, "window: 2.5 ticks is not a whole number of ticks") {
		t.Errorf("--window 2.5: exit %d, %q", code, errOut)
	}
}
