package lagcomp

import (
	"slices"

	"github.com/rewind-gg/rewind/ecs"
)

// Item is one lag-compensated entity to resolve this tick.
type Item struct {
	Entity ecs.Entity
	Kind   uint8        // which resolver handles it
	Time   ecs.ViewTime // the time it is resolved at
}

// Bucket is the items that share one view time, and so one rewind.
type Bucket struct {
	Time  ecs.ViewTime
	Items []Item // ordered by Kind, then in the order they were given
}

// Buckets groups items by view time (Dino Squad's TimeTravelMap). It keeps its
// storage between ticks, so refilling it allocates nothing in steady state.
type Buckets struct {
	keys    []ecs.ViewTime // distinct times, in order of first appearance
	of      []int32        // item → key
	rank    []int32        // key → position in time order
	order   []int32        // time order → key
	counts  []int32        // per (rank, kind) group, then its start offset
	sorted  []Item
	buckets []Bucket
}

// Fill groups items by time and returns the buckets in increasing time.
// Within a bucket items are ordered by kind, then as given. The returned
// slices are valid until the next Fill.
func (b *Buckets) Fill(items []Item) []Bucket {
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

func resize(s []int32, n int) []int32 { return slices.Grow(s[:0], n)[:n] }
