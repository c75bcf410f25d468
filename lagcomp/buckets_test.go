package lagcomp

import (
	"testing"

	"github.com/rewind-gg/rewind/ecs"
)

func vt(t float64) ecs.ViewTime { return ecs.ViewTimeOf(t) }

func TestBucketsGroupByTimeInTimeOrder(t *testing.T) {
	e := entities(7)
	items := []Item{
		{e[0], 1, vt(96.5)},
		{e[1], 0, vt(97)},
		{e[2], 0, vt(96.5)},
		{e[3], 2, vt(100)},
		{e[4], 1, vt(97)},
		{e[5], 0, vt(96.5)},
		{e[6], 1, vt(96.5)},
	}
	var b Buckets
	got := b.Fill(items)
	want := []struct {
		time float64
		ents []int // by kind, then as given
	}{
		{96.5, []int{2, 5, 0, 6}},
		{97, []int{1, 4}},
		{100, []int{3}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d buckets, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Time.Ticks() != w.time {
			t.Errorf("bucket %d at %v, want %v", i, got[i].Time.Ticks(), w.time)
		}
		if len(got[i].Items) != len(w.ents) {
			t.Fatalf("bucket %d has %d items, want %d", i, len(got[i].Items), len(w.ents))
		}
		for j, k := range w.ents {
			if it := got[i].Items[j]; it.Entity != e[k] || it.Time != got[i].Time {
				t.Errorf("bucket %d item %d = %+v, want entity %d", i, j, it, k)
			}
		}
	}
}

func TestBucketsReuseStorage(t *testing.T) {
	e := entities(500)
	items := make([]Item, 500)
	for i := range items {
		items[i] = Item{Entity: e[i], Kind: uint8(i % 3), Time: vt(90 + float64(i%12)*0.5)}
	}
	var b Buckets
	if n := len(b.Fill(items)); n != 12 {
		t.Fatalf("%d buckets, want 12", n)
	}
	if allocs := testing.AllocsPerRun(100, func() { b.Fill(items) }); allocs != 0 {
		t.Errorf("Fill allocates %v times in steady state", allocs)
	}
	if n := len(b.Fill(nil)); n != 0 {
		t.Errorf("no items gave %d buckets", n)
	}
}

// recorder is a resolver that remembers, for every call, the time, the items
// and where a watched entity's hitbox stood.
type recorder struct {
	w      *CollisionWorld
	watch  ecs.Entity
	calls  []call
	kindOf uint8
}

type call struct {
	at    ecs.ViewTime
	items []Item
	feet  float64 // watched entity's x, or −1 if absent
}

func (r *recorder) Resolve(at ecs.ViewTime, items []Item) {
	x := -1.0
	if c, ok := r.w.Hitbox(r.watch); ok {
		x = c.Capsule.A.X
	}
	for _, it := range items {
		if it.Kind != r.kindOf || it.Time != at {
			panic("resolver got a foreign item")
		}
	}
	r.calls = append(r.calls, call{at: at, items: append([]Item(nil), items...), feet: x})
}

func TestCompensatorRewindsOncePerBucketAndRestores(t *testing.T) {
	tm, w, e := threePlayers(t) // present is tick 10; e0 stands at x = tick
	r0 := &recorder{w: w, watch: e[0], kindOf: 0}
	r1 := &recorder{w: w, watch: e[0], kindOf: 1}
	items := []Item{
		{e[1], 0, vt(7)},
		{e[2], 1, vt(7)},
		{e[3], 0, vt(10)}, // the present: not a rewind
		{e[4], 0, vt(8.5)},
		{e[1], 1, vt(8.5)},
		{e[2], 0, vt(7)},
	}
	c := NewCompensator(tm, []Resolver{r0, r1}, true)
	st := c.Run(10, items)
	if st != (TickStats{Items: 6, Buckets: 3, Rewinds: 2}) {
		t.Errorf("bucketed stats %+v, want 6 items, 3 buckets, 2 rewinds", st)
	}
	// Each resolver saw the world at its bucket's time.
	for _, r := range []*recorder{r0, r1} {
		for _, cl := range r.calls {
			if cl.feet != cl.at.Ticks() {
				t.Errorf("resolver called at %v saw e0 at x=%v", cl.at.Ticks(), cl.feet)
			}
		}
	}
	if len(r0.calls) != 3 || len(r1.calls) != 2 {
		t.Errorf("calls: kind 0 %d (want 3), kind 1 %d (want 2)", len(r0.calls), len(r1.calls))
	}
	if p, _ := feetOf(t, w, e[0]); p.X != 10 {
		t.Errorf("present not restored: e0 at %v", p)
	}

	// The baseline: one rewind per past item, the same world for each.
	r0.calls, r1.calls = nil, nil
	c.SetBucketing(false)
	st = c.Run(10, items)
	if st != (TickStats{Items: 6, Buckets: 3, Rewinds: 5}) {
		t.Errorf("per-item stats %+v, want 6 items, 3 buckets, 5 rewinds", st)
	}
	for _, r := range []*recorder{r0, r1} {
		for _, cl := range r.calls {
			if len(cl.items) != 1 || cl.feet != cl.at.Ticks() {
				t.Errorf("per-item call %+v", cl)
			}
		}
	}
	if len(r0.calls)+len(r1.calls) != 6 {
		t.Errorf("%d calls, want one per item", len(r0.calls)+len(r1.calls))
	}
	if p, _ := feetOf(t, w, e[0]); p.X != 10 {
		t.Errorf("present not restored after the baseline: e0 at %v", p)
	}
}

func TestCompensatorPresentOnlyNeverTravels(t *testing.T) {
	tm, w, e := threePlayers(t)
	r := &recorder{w: w, watch: e[0]}
	c := NewCompensator(tm, []Resolver{r}, true)
	before := w.epoch // counts placements
	st := c.Run(10, []Item{{e[1], 0, vt(10)}, {e[2], 0, vt(10)}})
	if st.Rewinds != 0 || st.Buckets != 1 || len(r.calls) != 1 {
		t.Errorf("stats %+v, calls %d", st, len(r.calls))
	}
	if w.epoch != before {
		t.Error("resolving at the present must not travel")
	}
}
