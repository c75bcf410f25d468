package view

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rewind-gg/rewind/internal/browsertest"
)

// drawn is what the page says it drew (window.rewindView.drawn).
type drawn struct {
	Tick    int64       `json:"tick"`
	Players []string    `json:"players"`
	Rewound []string    `json:"rewound"`
	Point   [2]float64  `json:"point"`
	Ray     [][]float64 `json:"ray"`
}

// The page in a real browser: it opens the scripted match, steps to the
// first shot with the "shot ▶" button, and shows the rewind: who shot whom
// with what, the result, how far the server rewound, bob's hitbox where the
// server put it (3 ticks back) and where he is, and the shot's point.
func TestPageInBrowser(t *testing.T) {
	s := recordScript(t)
	f, err := Load(writeRecording(t, s.data), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(f))
	defer srv.Close()
	ctx := browsertest.New(t)
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	ctx = tctx
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool]("window.rewindView && window.rewindView.ready")); err != nil {
		t.Fatalf("the page never got ready: %v", err)
	}
	text := func(id string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("`+id+`").textContent`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	pixel := func(x, y float64) [3]int {
		t.Helper()
		p, err := chromedp.Run(ctx, chromedp.Evaluate[[3]int](fmt.Sprintf(
			`(() => { const d = document.getElementById("arena").getContext("2d").getImageData(%d, %d, 1, 1).data; return [d[0], d[1], d[2]]; })()`,
			int(x), int(y))))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if got := text("tick-title"); got != "tick 0 of 0–119" {
		t.Errorf("the page opens at %q, want the first tick", got)
	}
	if got := text("match-title"); !strings.Contains(got, "level arena (") {
		t.Errorf("the title %q does not name the level", got)
	}
	// The level from above: its 22 triangles; the box (x 8..10, z −2..2,
	// 3 m high) lighter than the floor around it, the floor lighter than
	// the ground beyond the level.
	lv, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
		Name      string `json:"name"`
		Triangles int    `json:"triangles"`
	}](`window.rewindView.drawn.level`))
	if err != nil || lv.Name != "arena" || lv.Triangles != 22 {
		t.Errorf("the level drawn: %+v %v, want the arena's 22 triangles", lv, err)
	}
	at := func(x, z float64) [3]int {
		t.Helper()
		p, err := chromedp.Run(ctx, chromedp.Evaluate[[2]float64](fmt.Sprintf(`window.rewindView.toCanvas(%v, %v)`, x, z)))
		if err != nil {
			t.Fatal(err)
		}
		return pixel(p[0], p[1])
	}
	sum := func(p [3]int) int { return p[0] + p[1] + p[2] }
	top, floor, beyond := at(9, 0.5), at(-20, -4), at(-31.5, -31.5)
	if !(sum(top) > sum(floor)+30 && sum(floor) > sum(beyond)+30) {
		t.Errorf("the box's top %v, the floor %v, beyond the level %v: want each lighter than the next", top, floor, beyond)
	}
	browsertest.Screenshot(t, ctx, "view-level.png")
	if got := text("shot-title"); got != "no shot selected" {
		t.Errorf("at tick 0: %q", got)
	}
	// Step to the first shot with the button, as a user would.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#next-shot"))); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		"tick-title":  fmt.Sprintf("tick %d of 0–119", hitTick),
		"tick-info":   fmt.Sprintf("%.2f s · 2 players alive · 1 shot decision this tick", float64(hitTick)/20),
		"shot-title":  fmt.Sprintf("shot 1 of %d · tick %d", len(f.m.Shots), hitTick),
		"shot-who":    "alice → bob",
		"shot-weapon": "rifle (hitscan)",
		"shot-rewind": "rewound 3.00 ticks (150 ms), to tick 17.00",
	} {
		if got := text(id); got != want {
			t.Errorf("#%s: %q, want %q", id, got, want)
		}
	}
	if got := text("shot-result"); !strings.HasPrefix(got, "hit · ") || !strings.Contains(got, "damage") {
		t.Errorf("#shot-result: %q, want a hit and its damage", got)
	}
	if href, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash`)); href != "#shot=1" {
		t.Errorf("the address says %q, want #shot=1 (shot 1 of the panel)", href)
	}
	var d drawn
	if d, err = chromedp.Run(ctx, chromedp.Evaluate[drawn](`window.rewindView.drawn`)); err != nil {
		t.Fatal(err)
	}
	if d.Tick != hitTick || strings.Join(d.Players, ",") != "alice,bob" || !strings.Contains(strings.Join(d.Rewound, ","), "bob") || len(d.Ray) != 2 {
		t.Errorf("drawn: %+v; want both players, bob rewound, a ray", d)
	}
	// The pixels: the shot's point is yellow; bob's present hitbox is team 2's red.
	if p := pixel(d.Point[0], d.Point[1]); !(p[0] > 200 && p[1] > 170 && p[2] < 90) {
		t.Errorf("the shot's point at %v is %v, want the ray's yellow", d.Point, p)
	}
	bob, err := chromedp.Run(ctx, chromedp.Evaluate[[2]float64](fmt.Sprintf(`window.rewindView.toCanvas(%v, %v)`, s.bob20.X, s.bob20.Z)))
	if err != nil {
		t.Fatal(err)
	}
	if p := pixel(bob[0], bob[1]+3); !(p[0] > 200 && p[1] < 110 && p[2] < 110) { // below the centre: his aim line points up
		t.Errorf("bob's present hitbox at %v is %v, want team 2's red", bob, p)
	}
	browsertest.Screenshot(t, ctx, "view-hit.png")

	// The next shot, by the key: the miss, rewound 10 ticks.
	if err := chromedp.Do(ctx, chromedp.KeyEvent("]")); err != nil {
		t.Fatal(err)
	}
	if got := text("shot-result"); got != "miss" {
		t.Errorf("the second shot: %q, want a miss", got)
	}
	if got := text("shot-rewind"); got != "rewound 10.00 ticks (500 ms), to tick 30.00" {
		t.Errorf("the second shot: %q", got)
	}
	// An address with a shot opens it: #shot=2 the panel's shot 2, the miss.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/#shot=2")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.rewindView && window.rewindView.ready && document.getElementById("shot").dataset.result !== ""`)); err != nil {
		t.Fatalf("#shot=2 opens no shot: %v", err)
	}
	if got := text("shot-title"); got != fmt.Sprintf("shot 2 of %d · tick %d", len(f.m.Shots), missTick) || text("shot-result") != "miss" {
		t.Errorf("#shot=2 opens %q (%s), want shot 2, the miss", got, text("shot-result"))
	}
}
