package lagcomp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

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

// referenceBuckets is Fill as it was first written (a linear search for
// each item's time, then a counting sort by time and kind): the contract
// the faster Fill must keep, item for item.
type referenceBuckets struct {
	keys    []ecs.ViewTime
	of      []int32
	rank    []int32
	order   []int32
	counts  []int32
	sorted  []Item
	buckets []Bucket
}

func (b *referenceBuckets) Fill(items []Item) []Bucket {
	b.keys, b.of = b.keys[:0], b.of[:0]
	maxKind := 0
	last := -1
	for _, it := range items {
		k := last
		if k < 0 || b.keys[k] != it.Time {
			k = slices.Index(b.keys, it.Time)
			if k < 0 {
				b.keys = append(b.keys, it.Time)
				k = len(b.keys) - 1
			}
			last = k
		}
		b.of = append(b.of, int32(k))
		maxKind = max(maxKind, int(it.Kind))
	}
	nk := maxKind + 1
	b.order = b.order[:0]
	for k := range b.keys {
		b.order = append(b.order, int32(k))
	}
	slices.SortFunc(b.order, func(x, y int32) int {
		tx, ty := b.keys[x], b.keys[y]
		switch {
		case tx.Less(ty):
			return -1
		case ty.Less(tx):
			return 1
		}
		return 0
	})
	b.rank = resize(b.rank, len(b.keys))
	for r, k := range b.order {
		b.rank[k] = int32(r)
	}
	// Counting sort by (rank, kind): stable, so items keep their given order.
	groups := len(b.keys) * nk
	b.counts = resize(b.counts, groups+1)
	clear(b.counts)
	for i, it := range items {
		b.counts[int(b.rank[b.of[i]])*nk+int(it.Kind)+1]++
	}
	for g := 1; g <= groups; g++ {
		b.counts[g] += b.counts[g-1]
	}
	// Grown with headroom (not to the exact size), so a count that creeps up
	// tick by tick does not reallocate each time it sets a record.
	b.sorted = slices.Grow(b.sorted[:0], len(items))[:len(items)]
	for i, it := range items {
		g := int(b.rank[b.of[i]])*nk + int(it.Kind)
		b.sorted[b.counts[g]] = it
		b.counts[g]++
	}
	// counts[g] is now the end of group g; bucket r spans groups r*nk..r*nk+nk-1.
	b.buckets = b.buckets[:0]
	start := int32(0)
	for r, k := range b.order {
		end := b.counts[r*nk+nk-1]
		b.buckets = append(b.buckets, Bucket{Time: b.keys[k], Items: b.sorted[start:end]})
		start = end
	}
	return b.buckets
}

// TestBucketsMatchReference fills random items, of one kind or several,
// with times repeated, spanned, of a −0 fraction and NaN, and compares every
// bucket with the reference's.
func TestBucketsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 30))
	e := entities(600)
	var fast Buckets
	var ref referenceBuckets
	for round := range 400 {
		n := rng.IntN(600)
		kinds := 1 + rng.IntN(4)
		times := 1 + rng.IntN(40)
		items := make([]Item, n)
		for i := range items {
			tm := ecs.ViewTime{Tick: 100 - int64(rng.IntN(times)), Frac: float64(rng.IntN(4)) / 4}
			switch rng.IntN(20) {
			case 0:
				tm.Back, tm.Span = uint8(rng.IntN(2)), 2
			case 1:
				tm.Frac = math.Copysign(0, -1)
			case 2:
				tm.Frac = math.NaN()
			}
			items[i] = Item{Entity: e[rng.IntN(len(e))], Kind: uint8(2 * rng.IntN(kinds)), Time: tm}
		}
		got, want := fast.Fill(items), ref.Fill(items)
		if len(got) != len(want) {
			t.Fatalf("round %d: %d buckets, want %d", round, len(got), len(want))
		}
		for i := range want {
			if !sameTime(got[i].Time, want[i].Time) || len(got[i].Items) != len(want[i].Items) {
				t.Fatalf("round %d: bucket %d at %+v with %d items, want %+v with %d", round, i,
					got[i].Time, len(got[i].Items), want[i].Time, len(want[i].Items))
			}
			for j, w := range want[i].Items {
				if g := got[i].Items[j]; g.Entity != w.Entity || g.Kind != w.Kind || !sameTime(g.Time, w.Time) {
					t.Fatalf("round %d: bucket %d item %d = %+v, want %+v", round, i, j, g, w)
				}
			}
		}
	}
}

// sameTime compares view times bit for bit.
func sameTime(a, b ecs.ViewTime) bool {
	return a.Tick == b.Tick && math.Float64bits(a.Frac) == math.Float64bits(b.Frac) && a.Back == b.Back && a.Span == b.Span
}

// BenchmarkBucketsFill fills the benchmark room's items (500, 12 times,
// in the order a tick gives them) with Fill and with the reference, in the
// same loop, and reports both and the ratio.
func BenchmarkBucketsFill(b *testing.B) {
	for _, kinds := range []int{1, 3} {
		b.Run(fmt.Sprintf("kinds-%d", kinds), func(b *testing.B) {
			e := entities(500)
			items := make([]Item, 500)
			for i := range items {
				items[i] = Item{Entity: e[i], Kind: uint8(1 + i%kinds), Time: vt(90 + float64(i%12)*0.5)}
			}
			var fast Buckets
			var ref referenceBuckets
			var tf, tr time.Duration
			for b.Loop() {
				t0 := time.Now()
				fast.Fill(items)
				t1 := time.Now()
				ref.Fill(items)
				tf, tr = tf+t1.Sub(t0), tr+time.Since(t1)
			}
			n := float64(b.N)
			b.ReportMetric(float64(tf.Nanoseconds())/n, "fill-ns")
			b.ReportMetric(float64(tr.Nanoseconds())/n, "reference-ns")
			b.ReportMetric(float64(tr)/float64(tf), "speedup")
		})
	}
}
