package lagcomp

import (
	"math"
	"math/bits"
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
	perKey  []int32        // items per key, then the next free place of its bucket
	sorted  []Item
	buckets []Bucket

	// The keys' hash table (open addressing): key + 1, 0 when free; a
	// power of two slots, at most half of them used. hashTime's shift
	// makes its slots.
	slots []int32
	shift uint
}

// Fill groups items by time and returns the buckets in increasing time.
// Within a bucket items are ordered by kind, then as given. The returned
// slices are valid until the next Fill.
func (b *Buckets) Fill(items []Item) []Bucket {
	b.keys = b.keys[:0]
	b.clearSlots(16)
	// Locals, stored back at the end: appending to a field would store the
	// slice's pointer into the heap (a write barrier's check) per item.
	of := resize(b.of, len(items))
	mixed, kind0 := uint8(0), uint8(0) // mixed not 0: the items are of more than one kind
	if len(items) > 0 {
		kind0 = items[0].Kind
	}
	for i := range items {
		of[i] = b.key(&items[i].Time)
		mixed |= items[i].Kind ^ kind0
	}
	b.of = of
	keys := b.keys
	perKey := resize(b.perKey, len(keys))
	clear(perKey)
	for _, k := range of {
		perKey[k]++
	}
	b.perKey = perKey
	order := b.order[:0]
	for k := range keys {
		order = append(order, int32(k))
	}
	slices.SortFunc(order, func(x, y int32) int {
		tx, ty := keys[x], keys[y]
		switch {
		case tx.Less(ty):
			return -1
		case ty.Less(tx):
			return 1
		}
		return 0
	})
	b.order = order
	// Grown with headroom (not to the exact size), so a count that creeps up
	// tick by tick does not reallocate each time it sets a record.
	sorted := slices.Grow(b.sorted[:0], len(items))[:len(items)]
	b.sorted = sorted
	buckets := b.buckets[:0]
	if mixed == 0 { // one kind (or none): the items of a time, as given
		start := int32(0)
		for _, k := range order {
			end := start + perKey[k]
			buckets = append(buckets, Bucket{Time: keys[k], Items: sorted[start:end]})
			perKey[k] = start
			start = end
		}
		for i, k := range of {
			p := &perKey[k]
			sorted[*p] = items[i]
			*p++
		}
		b.buckets = buckets
		return buckets
	}
	maxKind := uint8(0)
	for i := range items {
		maxKind = max(maxKind, items[i].Kind)
	}
	nk := int(maxKind) + 1
	rank := resize(b.rank, len(keys))
	for r, k := range order {
		rank[k] = int32(r)
	}
	b.rank = rank
	// Counting sort by (rank, kind): stable, so items keep their given order.
	groups := len(keys) * nk
	counts := resize(b.counts, groups+1)
	clear(counts)
	for i, k := range of {
		counts[int(rank[k])*nk+int(items[i].Kind)+1]++
	}
	for g := 1; g <= groups; g++ {
		counts[g] += counts[g-1]
	}
	for i, k := range of {
		g := int(rank[k])*nk + int(items[i].Kind)
		sorted[counts[g]] = items[i]
		counts[g]++
	}
	b.counts = counts
	// counts[g] is now the end of group g; bucket r spans groups r*nk..r*nk+nk-1.
	start := int32(0)
	for r, k := range order {
		end := counts[r*nk+nk-1]
		buckets = append(buckets, Bucket{Time: keys[k], Items: sorted[start:end]})
		start = end
	}
	b.buckets = buckets
	return buckets
}

// key returns the index of time t in b.keys, adding it if it is new.
func (b *Buckets) key(t *ecs.ViewTime) int32 {
	mask := uint64(len(b.slots) - 1)
	for h := hashTime(*t, b.shift); ; h = (h + 1) & mask {
		s := b.slots[h]
		if s == 0 { // a new time
			b.keys = append(b.keys, *t)
			k := int32(len(b.keys))
			b.slots[h] = k
			if 2*len(b.keys) > len(b.slots) {
				b.rehash(2 * len(b.slots))
			}
			return k - 1
		}
		if k := &b.keys[s-1]; k.Tick == t.Tick && k.Frac == t.Frac && k.Back == t.Back && k.Span == t.Span {
			return s - 1
		}
	}
}

// clearSlots empties the keys' hash table and gives it at least n slots (a
// power of two).
func (b *Buckets) clearSlots(n int) {
	if len(b.slots) < n {
		b.slots = make([]int32, n)
	}
	clear(b.slots)
	b.shift = uint(64 - bits.TrailingZeros(uint(len(b.slots))))
}

// rehash grows the keys' hash table to n slots and enters b.keys again.
func (b *Buckets) rehash(n int) {
	b.clearSlots(n)
	mask := uint64(len(b.slots) - 1)
	for k, t := range b.keys {
		h := hashTime(t, b.shift)
		for b.slots[h] != 0 {
			h = (h + 1) & mask
		}
		b.slots[h] = int32(k + 1)
	}
}

// hashTime returns the slot of view time t in a table of 1<<(64−shift)
// slots: times that are == share it (a fraction of −0 as one of 0).
func hashTime(t ecs.ViewTime, shift uint) uint64 {
	frac := t.Frac
	if frac == 0 {
		frac = 0
	}
	x := uint64(t.Tick) ^ math.Float64bits(frac) ^ uint64(t.Back)<<40 ^ uint64(t.Span)<<48
	return x * 0x9e3779b97f4a7c15 >> shift
}

func resize(s []int32, n int) []int32 { return slices.Grow(s[:0], n)[:n] }
