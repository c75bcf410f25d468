package lagcomp

import "github.com/rewind-gg/rewind/ecs"

// A Resolver is a lag-compensation system: it resolves its items against the
// collision world as the [TimeMachine] has placed it, at time at (Dino
// Squad's LagCompensationSystem). Items all have the resolver's kind and the
// same time. A resolver queues its side effects (events, despawns); it must
// not add or remove entities, since the world is between two travels.
type Resolver interface {
	Resolve(at ecs.ViewTime, items []Item)
}

// TickStats is what one tick of lag compensation did.
type TickStats struct {
	Items   int // items resolved
	Buckets int // distinct view times among them
	Rewinds int // travels to a past time
}

// Compensator runs the lag-compensation step of a tick (Dino Squad's
// LagCompensationSystemGroup): it groups items by view time, travels once per
// group, runs the resolvers over the group, and restores the present.
type Compensator struct {
	tm        *TimeMachine
	resolvers []Resolver // by kind
	bucketing bool
	buckets   Buckets
	one       [1]Item
}

// NewCompensator returns a compensator that travels with tm and resolves an
// item of kind k with resolvers[k]. With bucketing false it rewinds once per
// item instead of once per view time (the baseline).
func NewCompensator(tm *TimeMachine, resolvers []Resolver, bucketing bool) *Compensator {
	return &Compensator{tm: tm, resolvers: resolvers, bucketing: bucketing}
}

// SetBucketing switches bucketing on or off.
func (c *Compensator) SetBucketing(on bool) { c.bucketing = on }

// Run resolves items at present tick present. The collision world must hold
// the present when Run starts; it holds it again when Run returns.
func (c *Compensator) Run(present int64, items []Item) TickStats {
	now := ecs.ViewTime{Tick: present}
	buckets := c.buckets.Fill(items)
	st := TickStats{Items: len(items), Buckets: len(buckets)}
	if !c.bucketing {
		for _, it := range items {
			past := it.Time.Less(now)
			if past {
				c.tm.TravelTo(it.Time)
				st.Rewinds++
			}
			c.one[0] = it
			c.resolvers[it.Kind].Resolve(it.Time, c.one[:])
			if past {
				c.tm.TravelToPresent()
			}
		}
		return st
	}
	away := false
	for _, b := range buckets {
		if b.Time.Less(now) {
			c.tm.TravelTo(b.Time)
			st.Rewinds++
			away = true
		} else if away { // the present's bucket comes last
			c.tm.TravelToPresent()
			away = false
		}
		c.resolveBucket(b)
	}
	if away {
		c.tm.TravelToPresent()
	}
	return st
}

// resolveBucket hands each kind's run of the bucket to its resolver.
func (c *Compensator) resolveBucket(b Bucket) {
	items := b.Items
	for len(items) > 0 {
		k := items[0].Kind
		n := 1
		for n < len(items) && items[n].Kind == k {
			n++
		}
		c.resolvers[k].Resolve(b.Time, items[:n])
		items = items[n:]
	}
}
