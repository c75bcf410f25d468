package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rewind-gg/rewind/internal/browsertest"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/tune"
	"github.com/rewind-gg/rewind/view"
)

// The README's loop: a demo recorded, replayed, tuned and viewed.
func TestDemoRecordReplayTuneView(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a real match")
	}
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec")
	code, stdout, stderr := runCmd(t, "demo", "--duration", "10s", "--record", rec, "--log-level", "error", "--seed", "3")
	demoOut := stdout
	if code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", code, stdout, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(rec, "*"+replay.Extension))
	if len(files) != 1 || !strings.Contains(stdout, "recorded: "+files[0]) {
		t.Fatalf("recordings %v; the demo says:\n%s", files, stdout)
	}
	file := files[0]

	t.Run("replay", func(t *testing.T) {
		code, out, errOut := runCmd(t, "replay", file)
		if code != 0 || !strings.Contains(out, "every event reproduced exactly") || !regexp.MustCompile(`12 players, \d+ inputs`).MatchString(out) {
			t.Fatalf("replay: exit %d\n%s%s", code, out, errOut)
		}
		code, out, errOut = runCmd(t, "replay", file, "--bucketing=false")
		if code != 0 || !strings.Contains(out, "every event reproduced exactly") {
			t.Fatalf("replay --bucketing=false: exit %d\n%s%s", code, out, errOut)
		}
		code, out, errOut = runCmd(t, "replay", file, "--window", "0")
		if code != 0 || !regexp.MustCompile(`under window=0 max_unlag=0 resolution=0: \d+ hits \(recorded \d+\)`).MatchString(out) {
			t.Fatalf("replay --window 0: exit %d\n%s%s", code, out, errOut)
		}
		// The other lag-compensation settings, a weapon's cap among them, as
		// durations (at the recording's 20 Hz) and as ticks alike; the
		// window is the demo's 2 s.
		for _, args := range [][]string{{"--max-unlag", "300ms", "--resolution", "4", "--max-rewind", "rifle=100ms"},
			{"--max-unlag", "6", "--resolution", "4", "--max-rewind", "rifle=2"}} {
			code, out, errOut = runCmd(t, append([]string{"replay", file}, args...)...)
			if code != 0 || !regexp.MustCompile(`under window=40 max_unlag=6 resolution=4 rifle.max_rewind=2: \d+ hits \(recorded \d+\)`).MatchString(out) {
				t.Fatalf("replay %v: exit %d\n%s%s", args, code, out, errOut)
			}
		}
		// A weapon the match did not have is a usage error, before any replay.
		code, out, errOut = runCmd(t, "replay", file, "--max-rewind", "railgun=2")
		if code != 2 || out != "" || !strings.Contains(errOut, `no weapon "railgun" in the recording (its weapons: rifle, `) {
			t.Fatalf("replay --max-rewind railgun=2: exit %d, want 2 and the recorded weapons named\n%s%s", code, out, errOut)
		}
	})

	t.Run("replay a setup this build cannot simulate", func(t *testing.T) {
		// The demo's setup with its hitscan kind renamed: a kind registered
		// in code, for this build.
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := replay.NewReader(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		setup := rd.Setup()
		setup.Kinds = slices.Clone(setup.Kinds)
		setup.Weapons = slices.Clone(setup.Weapons)
		for i, k := range setup.Kinds {
			if k == "hitscan" {
				setup.Kinds[i] = "laser"
			}
		}
		for i := range setup.Weapons {
			if setup.Weapons[i].Kind == "hitscan" {
				setup.Weapons[i].Kind = "laser"
			}
		}
		path := filepath.Join(dir, "laser"+replay.Extension)
		rec, err := replay.NewRecorder(replay.RecorderConfig{Path: path, Setup: setup})
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		// The error, and no summary of a replay that never started.
		code, out, errOut := runCmd(t, "replay", path)
		if code != 1 || out != "" || !strings.Contains(errOut, `weapon kind "laser" is not registered`) {
			t.Fatalf("replay of a laser: exit %d, want 1 and the kind named\n%s%s", code, out, errOut)
		}
	})

	t.Run("replay a damaged file", func(t *testing.T) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			data []byte
			msg  *regexp.Regexp
		}{
			{"truncated", data[:len(data)*2/3], regexp.MustCompile(`record at byte (\d+) \([a-z_]+\): truncated`)},
			{"corrupt", flip(data, len(data)/2), regexp.MustCompile(`record at byte (\d+) \(.*\): (checksum mismatch|payload|length)`)},
		} {
			path := filepath.Join(dir, tc.name+replay.Extension)
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runCmd(t, "replay", path)
			m := tc.msg.FindStringSubmatch(errOut)
			if code != 1 || m == nil {
				t.Fatalf("%s: exit %d, want 1 and the offset named:\n%s%s", tc.name, code, out, errOut)
			}
			// What is intact replayed, and matched.
			ticks := regexp.MustCompile(`replayed (\d+) ticks .* every event reproduced exactly`).FindStringSubmatch(out)
			if off, _ := strconv.Atoi(m[1]); ticks == nil || ticks[1] == "0" || off <= 0 || off >= len(data) {
				t.Errorf("%s: the intact part did not replay:\n%s%s", tc.name, out, errOut)
			}
		}
	})

	t.Run("tune", func(t *testing.T) {
		out := filepath.Join(dir, "tune")
		code, stdout, stderr := runCmd(t, "tune", rec, "--out", out, "--list", "disputed", "--breakdown")
		if code != 0 {
			t.Fatalf("tune: exit %d\n%s%s", code, stdout, stderr)
		}
		rows := readCSV(t, filepath.Join(out, "tune.csv"))
		var conf []float64
		var seenHits []int
		var recorded map[string]string
		for _, r := range rows {
			if r["by"] != "all" {
				continue
			}
			w, _ := strconv.Atoi(r["window_ticks"])
			ms, _ := strconv.ParseFloat(r["window_ms"], 64)
			c, _ := strconv.ParseFloat(r["confirmed_pct"], 64)
			seen, _ := strconv.Atoi(r["seen_hits"])
			if w != 2*len(conf) || ms != float64(100*len(conf)) || r["tick_rate"] != "20" || seen < 20 {
				t.Fatalf("row %v: want windows 0, 100, 200… ms (0, 2, 4… ticks at 20 Hz) and hits seen", r)
			}
			if w == 0 && r["disputed"] != "0" {
				t.Errorf("window 0: %s disputed hits, want 0: every hit is in the victim's present", r["disputed"])
			}
			if w == 40 {
				recorded = r
			}
			conf = append(conf, c)
			seenHits = append(seenHits, seen)
		}
		if len(conf) != 21 {
			t.Fatalf("%d windows in tune.csv, want 0..2000 ms", len(conf))
		}
		// Confirmation rises with the window, to about all at the demo's own
		// 40. Not strictly: a window of a tick or two moves a target off a
		// shot that its present position happened to meet, so a step may
		// lose a hit or two (on the sample map, of some 40: 5 points).
		for i := 1; i < len(conf); i++ {
			if slack := 2 * 100 / float64(seenHits[i]); conf[i] < conf[i-1]-slack {
				t.Errorf("confirmation falls from %.1f%% to %.1f%% at window %d: more than 2 of %d hits", conf[i-1], conf[i], 2*i, seenHits[i])
			}
		}
		if conf[0] > 50 || conf[len(conf)-1] < 98 {
			t.Errorf("confirmation %.1f%% at window 0, %.1f%% at 40: want little without lag compensation, all of it with", conf[0], conf[len(conf)-1])
		}
		// The demo's counts are tune's at the recorded window (2 s, the
		// demo's; no max_unlag).
		m := regexp.MustCompile(`match counts \(as rewind tune and view count them, docs/tuning.md\): (\d+) shots \((\d+) shot decisions\), (\d+) seen hits, (\d+) confirmed \([\d.]+%\), (\d+) server hits \((\d+) unseen\), (\d+) disputed of (\d+) damaging \([\d.-]+%?\), (\d+) clamped`).FindStringSubmatch(demoOut)
		if m == nil {
			t.Fatalf("no match counts in the demo's report:\n%s", demoOut)
		}
		for i, col := range []string{"shots", "shot_decisions", "seen_hits", "confirmed", "server_hits", "unseen_hits", "disputed", "damaging_hits", "clamped_shots"} {
			if recorded[col] != m[i+1] {
				t.Errorf("%s: the demo says %s, tune at the recorded window %s", col, m[i+1], recorded[col])
			}
		}
		if !regexp.MustCompile(`(?m)^recommendation: window \d+ ms \(\d+ ticks\), the smallest that confirms at least 99.0%`).MatchString(stdout) {
			t.Errorf("no recommendation:\n%s", stdout)
		}
		if !regexp.MustCompile(`(?m)^\d+ disputed hit\(s\) at the recorded window:$`).MatchString(stdout) || !strings.Contains(stdout, "breakdown at window 2000 ms (40)") {
			t.Errorf("no disputed listing or breakdown:\n%s", stdout)
		}
		if recorded["disputed"] != "0" {
			n := 0
			for _, d := range readCSV(t, filepath.Join(out, "disputed.csv")) {
				if d["window_ticks"] == "40" {
					n++
				}
			}
			if strconv.Itoa(n) != recorded["disputed"] {
				t.Errorf("disputed.csv: %d rows at the recorded window, tune.csv %s", n, recorded["disputed"])
			}
		}
		for _, p := range []string{"viewlag.csv", "recommendation.txt", tune.PlotConfirmation + ".png", tune.PlotDisputed + ".png", tune.PlotTradeoff + ".png", tune.PlotViewLag + ".png"} {
			if st, err := os.Stat(filepath.Join(out, p)); err != nil || st.Size() < 100 {
				t.Errorf("%s: %v", p, err)
			}
		}
		t.Logf("tune:\n%s", stdout)
	})

	t.Run("view", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		addr := make(chan string, 1)
		done := make(chan error, 1)
		var out bytes.Buffer
		go func() { done <- runView(ctx, file, "127.0.0.1:0", view.Config{}, &out, func(a string) { addr <- a }) }()
		var url string
		select {
		case url = <-addr:
		case err := <-done:
			t.Fatalf("view: %v\n%s", err, out.String())
		}
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("view: %v", err)
			}
		}()
		// The first hit of the match, from the page's own data.
		res, err := http.Get(url + "match.json")
		if err != nil {
			t.Fatal(err)
		}
		var m view.Match
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		// The view's counts are tune's (docs/tuning.md, "Counts"): a shot
		// decision per entry, the disputed ones flagged.
		counts, err := tune.CountFile(ctx, file, nil)
		if err != nil {
			t.Fatal(err)
		}
		disputed := 0
		for _, s := range m.Shots {
			if s.Disputed {
				disputed++
			}
		}
		if int64(len(m.Shots)) != counts.Decisions || int64(disputed) != counts.Disputed {
			t.Errorf("the view: %d shot decisions, %d disputed; tune: %d and %d", len(m.Shots), disputed, counts.Decisions, counts.Disputed)
		}
		// The rewound hitscan hit at the closest range (the zoom frames it
		// closely; a projectile's splash radius widens the frame).
		k, closest := -1, math.Inf(1)
		for i, s := range m.Shots {
			if d := math.Hypot(float64(s.Point[0]-s.Origin[0]), float64(s.Point[2]-s.Origin[2])); s.Result == "hit" && s.Kind == "hitscan" && s.Lag > 2 && d < closest {
				k, closest = i, d
			}
		}
		if k < 0 {
			t.Fatal("no hit in the demo")
		}
		want := m.Shots[k]
		bctx := browsertest.New(t)
		tctx, tcancel := context.WithTimeout(bctx, 60*time.Second)
		defer tcancel()
		if err := chromedp.Do(tctx, chromedp.Navigate(url), chromedp.Click(chromedp.CSS("#hits-only"))); err != nil {
			t.Fatal(err)
		}
		// Step shot by shot, hits only, up to it.
		for i := 0; ; i++ {
			if err := chromedp.Do(tctx, chromedp.Click(chromedp.CSS("#next-shot"))); err != nil {
				t.Fatal(err)
			}
			shot, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById("shot").dataset.shot`))
			if err != nil {
				t.Fatal(err)
			}
			if shot == strconv.Itoa(k) {
				break
			}
			if i > k {
				t.Fatalf("stepping hits only never reached shot %d (at %q)", k, shot)
			}
		}
		who := m.Players[want.Shooter].Name + " → " + m.Players[want.Target].Name
		for id, w := range map[string]string{
			"shot-who":    who,
			"shot-weapon": want.Weapon + " (" + want.Kind + ")",
			"shot-title":  fmt.Sprintf("shot %d of %d · tick %d", k+1, len(m.Shots), want.Tick),
		} {
			got, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById("`+id+`").textContent`))
			if err != nil || !strings.HasPrefix(got, w) {
				t.Errorf("#%s: %q (%v), want %q", id, got, err, w)
			}
		}
		// Zoomed to the shot, the rewound hitboxes are apart from the present ones.
		whole, err := chromedp.Run(tctx, chromedp.Evaluate[float64](`window.rewindView.scale`))
		if err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(tctx, chromedp.Click(chromedp.CSS("#zoom-shot"))); err != nil {
			t.Fatal(err)
		}
		if s, err := chromedp.Run(tctx, chromedp.Evaluate[float64](`window.rewindView.scale`)); err != nil || s < 1.5*whole {
			t.Errorf("zoomed to the shot (%.0f m): %v pixels a metre (%v), the whole map %v: want a close-up", closest, s, err, whole)
		}
		browsertest.Screenshot(t, tctx, "view-demo.png")
	})
}

func flip(data []byte, at int) []byte {
	b := bytes.Clone(data)
	b[at] ^= 0x5a
	return b
}

// readCSV reads a CSV file with a header into maps by column.
func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("%s: %v", path, err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}
