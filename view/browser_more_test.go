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

// page opens the view of f in a real browser, ready, at addr's hash.
func page(t *testing.T, f *File, hash string) context.Context {
	t.Helper()
	srv := httptest.NewServer(Handler(f))
	t.Cleanup(srv.Close)
	ctx := browsertest.New(t)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"+hash)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool]("window.rewindView && window.rewindView.ready")); err != nil {
		t.Fatalf("the page never got ready: %v", err)
	}
	return ctx
}

// eval evaluates a JavaScript expression on the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// pixelAt is the colour of the arena's (or another canvas's) pixel.
func pixelAt(t *testing.T, ctx context.Context, canvas string, x, y float64) [3]int {
	t.Helper()
	return eval[[3]int](t, ctx, fmt.Sprintf(`(() => { const d = document.getElementById(%q).getContext("2d").getImageData(%d, %d, 1, 1).data; return [d[0], d[1], d[2]]; })()`,
		canvas, int(x), int(y)))
}

// The page's parts around a shot: the side elevation (the rifle hit is a
// body hit: the contact below bob's head), the view-lag table (alice's 150
// ms at the hit), the timeline's marks, the kill-cam (bob where alice saw
// him beside bob at the server tick, with alice's sightline), the rocket's
// splash radius, zoom to the shot on the miss, labels apart when the
// players crowd.
func TestPageShotPartsInBrowser(t *testing.T) {
	s := recordScript(t)
	f, err := Load(writeRecording(t, s.data), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := page(t, f, "#shot=1")
	// The title: the window in ms and ticks.
	if got := eval[string](t, ctx, `document.getElementById("match-title").textContent`); !strings.Contains(got, "window 1500 ms (30 ticks)") {
		t.Errorf("the title %q does not give the window in ms and ticks", got)
	}
	// The side elevation: bob's rewound hitbox and his present one, the
	// contact on his body.
	side := eval[struct {
		Victim  string  `json:"victim"`
		Part    string  `json:"part"`
		Contact float64 `json:"contact"`
		Bodies  int     `json:"bodies"`
	}](t, ctx, `window.rewindView.side`)
	bob := f.m.Players[1]
	if side.Victim != "bob" || side.Part != "body" || side.Bodies != 2 || side.Contact <= 0 || side.Contact >= float64(bob.Height-bob.Head) {
		t.Errorf("the side view: %+v; want bob's body hit below his head (%.2f m up)", side, bob.Height-bob.Head)
	}
	if hidden := eval[bool](t, ctx, `document.getElementById("side").hidden`); hidden {
		t.Error("the side view is hidden at a hit")
	}
	// The view-lag table: a row a player, alice's view lag at the hit.
	rows := eval[[][]string](t, ctx, `[...document.querySelectorAll("#lags tbody tr")].map(r => [...r.cells].map(c => c.textContent))`)
	if len(rows) != 2 || rows[0][0] != "alice" || rows[0][1] != "150" || rows[1][0] != "bob" {
		t.Errorf("the view-lag table: %v; want alice at 150 ms now, and bob", rows)
	}
	// The timeline's marks: every hit, no kill, no disputed hit.
	hits := 0
	for _, sh := range f.m.Shots {
		if sh.Result == "hit" {
			hits++
		}
	}
	marks := eval[map[string]int](t, ctx, `window.rewindView.marks`)
	if marks["hits"] != hits || marks["kills"] != 0 || marks["disputed"] != 0 {
		t.Errorf("marks %v; want %d hits, no kill, none disputed", marks, hits)
	}
	mx := eval[float64](t, ctx, fmt.Sprintf(`window.rewindView.markX(%d)`, hitTick))
	if p := pixelAt(t, ctx, "marks", mx, 12); !(p[0] > 200 && p[1] > 170 && p[2] < 90) {
		t.Errorf("the hit's mark at x %.0f is %v, want the hits' yellow", mx, p)
	}
	// The kill-cam, by its key: bob where alice saw him, and bob at the
	// server tick with alice's sightline to him.
	if err := chromedp.Do(ctx, chromedp.KeyEvent("k")); err != nil {
		t.Fatal(err)
	}
	kc := eval[struct {
		Rewound struct {
			Rewound []string `json:"rewound"`
			Players []string `json:"players"`
		} `json:"rewound"`
		Present struct {
			Players   []string `json:"players"`
			Sightline *struct {
				Disputed bool `json:"disputed"`
			} `json:"sightline"`
		} `json:"present"`
	}](t, ctx, `window.rewindView.killcam`)
	if strings.Join(kc.Rewound.Rewound, ",") != "bob" || strings.Join(kc.Rewound.Players, ",") != "alice" ||
		strings.Join(kc.Present.Players, ",") != "alice,bob" || kc.Present.Sightline == nil || kc.Present.Sightline.Disputed {
		t.Errorf("the kill-cam: %+v; want bob rewound beside alice, both in the present, an undisputed sightline", kc)
	}
	if hidden := eval[bool](t, ctx, `document.getElementById("killcam").hidden`); hidden {
		t.Error("the kill-cam is hidden")
	}
	browsertest.Screenshot(t, ctx, "view-killcam.png")
	if err := chromedp.Do(ctx, chromedp.KeyEvent("k")); err != nil {
		t.Fatal(err)
	}
	// The miss, zoomed to: framed on alice and bob, not on the ray's end
	// 100 m away.
	if err := chromedp.Do(ctx, chromedp.KeyEvent("]"), chromedp.KeyEvent("z")); err != nil {
		t.Fatal(err)
	}
	if r := eval[string](t, ctx, `document.getElementById("shot").dataset.result`); r != "miss" {
		t.Fatalf("the second shot is a %q", r)
	}
	w := eval[float64](t, ctx, `document.getElementById("arena").width / window.rewindView.scale`)
	if w > 45 {
		t.Errorf("zoomed to the miss, the arena's canvas spans %.0f m: want alice and bob framed (about 20 m apart)", w)
	}
	// The rocket: its splash radius, 3 m.
	if err := chromedp.Do(ctx, chromedp.KeyEvent("]")); err != nil {
		t.Fatal(err)
	}
	splash := eval[*struct {
		Radius float64 `json:"radius"`
		Px     float64 `json:"px"`
	}](t, ctx, `window.rewindView.drawn.splash`)
	if weapon := eval[string](t, ctx, `document.getElementById("shot-weapon").textContent`); !strings.HasPrefix(weapon, "rocket") || splash == nil || splash.Radius != 3 {
		t.Errorf("the rocket (%q): splash %+v, want its 3 m radius drawn", weapon, splash)
	}
	// Crowded: zoomed far out, the players' labels do not cover each other.
	if err := chromedp.Do(ctx, chromedp.KeyEvent("z")); err != nil {
		t.Fatal(err)
	}
	for range 12 {
		eval[bool](t, ctx, `document.getElementById("arena").dispatchEvent(new WheelEvent("wheel", {deltaY: 100, clientX: 300, clientY: 300, cancelable: true}))`)
	}
	labels := eval[[]struct{ X, Y, W, H float64 }](t, ctx, `window.rewindView.drawn.labels`)
	if len(labels) == 0 {
		t.Fatal("no label drawn")
	}
	for i, a := range labels {
		for _, b := range labels[i+1:] {
			if a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H {
				t.Errorf("labels %+v and %+v overlap", a, b)
			}
		}
	}
}

// A disputed hit in the browser: the "disputed only" filter steps to it,
// the panel says why, its mark is on the timeline, and the victim's
// present sightline (through the box) is drawn in the disputed colour.
func TestPageDisputedInBrowser(t *testing.T) {
	data, tick := disputedScript(t)
	f, err := Load(writeRecording(t, data), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := page(t, f, "")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#disputed-only")), chromedp.Click(chromedp.CSS("#next-shot"))); err != nil {
		t.Fatal(err)
	}
	ds := eval[map[string]string](t, ctx, `Object.assign({}, document.getElementById("shot").dataset)`)
	if ds["tick"] != fmt.Sprint(tick) || ds["disputed"] != "true" || ds["shooter"] != "carol" || ds["target"] != "dave" {
		t.Fatalf("the disputed filter's first shot: %v; want carol's hit on dave at tick %d", ds, tick)
	}
	if got := eval[string](t, ctx, `document.getElementById("shot-disputed").textContent`); !strings.HasPrefix(got, "disputed: in dave's present") {
		t.Errorf("#shot-disputed: %q", got)
	}
	if marks := eval[map[string]int](t, ctx, `window.rewindView.marks`); marks["disputed"] != 1 {
		t.Errorf("marks %v; want one disputed", marks)
	}
	line := eval[*struct {
		From     [2]float64 `json:"from"`
		To       [2]float64 `json:"to"`
		Disputed bool       `json:"disputed"`
	}](t, ctx, `window.rewindView.drawn.sightline`)
	if line == nil || !line.Disputed {
		t.Fatalf("the sightline: %+v", line)
	}
	// A third of the way from carol to dave: on the sightline, over the box.
	x, y := line.From[0]+(line.To[0]-line.From[0])*0.45, line.From[1]+(line.To[1]-line.From[1])*0.45
	found := false
	for dx := -2.0; dx <= 2 && !found; dx++ {
		for dy := -2.0; dy <= 2 && !found; dy++ {
			p := pixelAt(t, ctx, "arena", x+dx, y+dy)
			found = p[0] > 180 && p[1] < 150 && p[2] > 180
		}
	}
	if !found {
		t.Errorf("no disputed colour on the sightline near (%.0f, %.0f)", x, y)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#killcam-on"))); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, ctx, `document.getElementById("kc-present-title").textContent`); !strings.Contains(got, "disputed") {
		t.Errorf("the kill-cam's present: %q", got)
	}
	browsertest.Screenshot(t, ctx, "view-disputed-killcam.png")
}
