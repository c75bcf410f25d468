package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/bots"
	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/internal/browsertest"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/results"
	"github.com/rewind-gg/rewind/server"
)

// recordedMatch plays a short 3v3 match of bots through lossy shims on a
// server that records into a directory, shuts the server down once the
// match is over (or at once, when cut), and returns the recording's path
// and the match's result from the results file.
func recordedMatch(t *testing.T, bucketing, cut bool) (string, results.Match) {
	t.Helper()
	dir := t.TempDir()
	resultsFile := filepath.Join(dir, "results.jsonl")
	srv := startServer(t, func(c *server.Config) {
		c.Record.Dir = filepath.Join(dir, "rec")
		c.Results.File = resultsFile
		c.LagComp.Bucketing = bucketing
		c.Match.Duration = 6 * time.Second
		c.Match.RespawnTicks, c.Match.InvulnerableTicks = 20, 10
	})
	var clients []*client.Client
	for i := range 6 {
		addr := shim(t, srv, time.Duration(60+30*i)*time.Millisecond, 5*time.Millisecond, 0.03, uint64(i+1))
		clients = append(clients, dial(t, srv, client.Config{Addr: addr, Room: "rec", Name: fmt.Sprint("bot", i), Team: uint8(1 + i%2),
			Input: bots.NewBot(bots.BotConfig{Seed: uint64(i), AimError: 0.02})}))
	}
	stop := start(clients...)
	if cut {
		waitTicks(t, srv, "rec", 60)
	} else {
		// The match ends by itself: every client is told "match over".
		until(t, 30*time.Second, "the match did not end", func() bool { _, open := findRoom(t, srv, "rec"); return !open })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil { // waits for the recording to be closed
		t.Fatal(err)
	}
	stop()
	files, err := filepath.Glob(filepath.Join(dir, "rec", "rec-*"+replay.Extension))
	if err != nil || len(files) != 1 {
		t.Fatalf("recordings: %v %v; want one", files, err)
	}
	f, err := os.Open(resultsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var res results.Match
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &res) != nil {
		t.Fatalf("no match result in %s", resultsFile)
	}
	return files[0], res
}

func replayFile(t *testing.T, path string, cfg replay.Config) (replay.Result, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := replay.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	return replay.Run(rd, cfg)
}

// A networked match, recorded by its room, replays exactly: every tick's
// events, with bucketing on and off, whichever the match was played with.
func TestRecordedMatchReplaysExactly(t *testing.T) {
	if testing.Short() {
		t.Skip("plays two real matches")
	}
	for _, bucketing := range []bool{true, false} {
		t.Run(fmt.Sprintf("bucketing=%v", bucketing), func(t *testing.T) {
			path, want := recordedMatch(t, bucketing, false)
			var hits, kills int64
			for _, p := range want.Players {
				hits += int64(p.Hits + p.NoDamage)
				kills += int64(p.Kills)
			}
			for _, replayBucketing := range []bool{true, false} {
				res, err := replayFile(t, path, replay.Config{Bucketing: &replayBucketing})
				if err != nil {
					t.Fatalf("replay with bucketing %v: %v", replayBucketing, err)
				}
				if !res.Verified || res.Incomplete || res.Ticks != want.Ticks || res.Players != 6 || res.End != "finished" {
					t.Fatalf("replay with bucketing %v: %+v; want %d ticks verified, 6 players, finished", replayBucketing, res, want.Ticks)
				}
				// Every hit the room counted is a hit event of the replay.
				if res.Hits != hits || res.Kills != kills || hits == 0 {
					t.Errorf("replay: %d hits, %d kills; the match's result says %d and %d", res.Hits, res.Kills, hits, kills)
				}
				var got results.Match
				if err := json.Unmarshal(res.MatchResult, &got); err != nil || got.MatchID != "rec" || got.Ticks != want.Ticks {
					t.Errorf("the recording's result: %s (%v); want the results file's", res.MatchResult, err)
				}
				t.Logf("played with bucketing %v, replayed with %v: %d ticks, %d inputs, %d hits, %d kills, %d rewinds, verified",
					bucketing, replayBucketing, res.Ticks, res.Inputs, res.Hits, res.Kills, res.Rewinds)
			}
		})
	}
}

// A server shut down in the middle of a match still closes the recording
// whole, with the match's result in it.
func TestRecordingSurvivesShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a real match")
	}
	path, want := recordedMatch(t, true, true)
	res, err := replayFile(t, path, replay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || res.Ticks != want.Ticks || res.Ticks < 60 || res.End != "shutdown" || want.Reason != "shutdown" {
		t.Fatalf("replay: %+v; want the %d ticks the match had, ended by shutdown", res, want.Ticks)
	}
	var got results.Match
	if err := json.Unmarshal(res.MatchResult, &got); err != nil || got.Reason != "shutdown" || len(got.Players) != 6 {
		t.Errorf("the recording's result: %s (%v)", res.MatchResult, err)
	}
}

// Each match of a room gets a file of its own: two matches of room "rot",
// one after the other, are two recordings, each replaying its own match.
func TestRecordingsRotatePerMatch(t *testing.T) {
	if testing.Short() {
		t.Skip("plays two real matches")
	}
	dir := t.TempDir()
	srv := startServer(t, func(c *server.Config) {
		c.Record.Dir = dir
		c.Match.Duration = 2 * time.Second
	})
	for i := range 2 {
		a := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "rot", Name: fmt.Sprint("a", i), Team: 1, Input: bots.NewBot(bots.BotConfig{Seed: 1})})
		b := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "rot", Name: fmt.Sprint("b", i), Team: 2, Input: bots.NewBot(bots.BotConfig{Seed: 2})})
		stop := start(a, b)
		until(t, 20*time.Second, "the match did not end", func() bool { _, open := findRoom(t, srv, "rot"); return !open })
		stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "rot-*"+replay.Extension))
	if len(files) != 2 {
		t.Fatalf("recordings %v, want two", files)
	}
	for _, f := range files {
		res, err := replayFile(t, f, replay.Config{})
		if err != nil || !res.Verified || res.End != "finished" || res.Players != 2 || res.Ticks != 40 {
			t.Errorf("%s: %+v, %v; want a 40-tick match of 2 players, finished", f, res, err)
		}
	}
	if n := counter(t, srv, "rewind_recordings_total", "outcome", "complete"); n != 2 {
		t.Errorf("rewind_recordings_total{outcome=complete} = %v, want 2", n)
	}
}

// A recording that cannot be created (its directory is gone) costs the
// match nothing: it plays, ends, and its result is written; the failure is
// counted.
func TestRecordingFailureDoesNotStopTheMatch(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a real match")
	}
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec")
	resultsFile := filepath.Join(dir, "results.jsonl")
	srv := startServer(t, func(c *server.Config) {
		c.Record.Dir = rec
		c.Results.File = resultsFile
		c.Match.Duration = 2 * time.Second
	})
	if err := os.RemoveAll(rec); err != nil { // the disk goes away under the server
		t.Fatal(err)
	}
	a := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "nodisk", Name: "a", Team: 1, Input: bots.NewBot(bots.BotConfig{Seed: 1})})
	b := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "nodisk", Name: "b", Team: 2, Input: bots.NewBot(bots.BotConfig{Seed: 2})})
	stop := start(a, b)
	until(t, 20*time.Second, "the match did not end", func() bool { _, open := findRoom(t, srv, "nodisk"); return !open })
	stop()
	data, err := os.ReadFile(resultsFile)
	var res results.Match
	if err != nil || json.Unmarshal(data, &res) != nil || res.MatchID != "nodisk" || res.Reason != "finished" || res.Ticks != 40 {
		t.Errorf("the match's result: %s (%v)", data, err)
	}
	if n := counter(t, srv, "rewind_recordings_total", "outcome", "failed"); n != 1 {
		t.Errorf("rewind_recordings_total{outcome=failed} = %v, want 1", n)
	}
}

// A server whose record.dir cannot take a file refuses to start, naming
// the key: better than a fleet of matches silently not recorded.
func TestUnwritableRecordDirRefusesToStart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := server.DefaultConfig()
	cfg.Listen, cfg.Admin.Listen = "127.0.0.1:0", ""
	cfg.Record.Dir = filepath.Join(file, "rec") // under a file: no directory can be made there
	srv, err := server.New(cfg, zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), "record.dir") {
		if srv != nil {
			srv.Shutdown(context.Background())
		}
		t.Fatalf("server.New with record.dir under a file: %v; want an error naming record.dir", err)
	}
}

// The admin port's live view, in a real browser: it lists the recorded
// room, and its page follows the match as the room plays.
func TestLiveViewInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a real match")
	}
	srv := startServer(t, func(c *server.Config) {
		c.Record.Dir = t.TempDir()
		c.Record.FlushInterval = 100 * time.Millisecond
		c.Admin.Listen = "127.0.0.1:0"
	})
	a := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "live", Name: "alice", Team: 1, Input: bots.NewBot(bots.BotConfig{Seed: 1})})
	b := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "live", Name: "bob", Team: 2, Input: bots.NewBot(bots.BotConfig{Seed: 2})})
	stop := start(a, b)
	defer stop()
	waitTicks(t, srv, "live", 20)
	ctx := browsertest.New(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+srv.AdminAddr().String()+"/view/")); err != nil {
		t.Fatal(err)
	}
	link, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('a[href="rooms/live/"]').href`))
	if err != nil {
		t.Fatalf("the live view's index has no link to room live: %v", err)
	}
	// The index names the room's players and its tick.
	row, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
		Tick    string `json:"tick"`
		Players string `json:"players"`
		Text    string `json:"text"`
	}](`(() => { const r = document.querySelector('tr[data-room="live"]'); return {tick: r.dataset.tick, players: r.dataset.players, text: r.textContent}; })()`))
	if tick, _ := strconv.Atoi(row.Tick); err != nil || tick < 20 || row.Players != "2" ||
		!strings.Contains(row.Text, "team 1: alice") || !strings.Contains(row.Text, "team 2: bob") {
		t.Errorf("the index's row of room live: %+v (%v); want its tick (20 or more) and alice and bob by team", row, err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.rewindView && window.rewindView.ready`)); err != nil {
		t.Fatalf("the live page never got ready: %v", err)
	}
	live, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!document.getElementById("live").hidden && window.rewindView.match.live`))
	if err != nil || !live {
		t.Fatalf("the page does not say it is live (%v)", err)
	}
	t0, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`window.rewindView.tick`))
	if err != nil {
		t.Fatal(err)
	}
	// It follows the room: its tick moves on as the room's does.
	waitTicks(t, srv, "live", 40)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`window.rewindView.tick >= %d`, t0+30))); err != nil {
		t.Fatalf("the live page stayed near tick %d: %v", t0, err)
	}
	players, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.rewindView.match.players.map(p => p.name).sort()`))
	if err != nil || strings.Join(players, ",") != "alice,bob" {
		t.Errorf("players %v (%v)", players, err)
	}
	browsertest.Screenshot(t, ctx, "view-live.png")
}
