package netshim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rewind-gg/rewind/internal/splitmix"
)

// Conditions impair one direction of traffic. The zero value relays packets
// immediately and unchanged.
//
// A packet that is not dropped is delivered at its read time plus its delay,
// but never before a packet read earlier in the same direction of the same
// connection: jitter varies the spacing of packets, not their order. Only a
// reordered packet leaves that order: it is held max(2*Jitter, 5ms) beyond
// its own delivery time, and packets read after it may overtake it.
type Conditions struct {
	Latency time.Duration // one-way base delay
	Jitter  time.Duration // each packet's delay is Latency + uniform(-Jitter, +Jitter), never below 0
	Loss    float64       // probability in [0,1] that a packet is dropped
	Reorder float64       // probability in [0,1] that a packet is held back by an extra delay so later packets overtake it
	// Burst loses packets in bursts, on top of Loss (zero: none).
	Burst Burst
	// Spike adds delay for a while at regular intervals: a mobile
	// handover (zero: none).
	Spike Spike
	// Rate caps the direction's bandwidth, in bits per second (0: none):
	// packets leave one after another at that rate, each after its
	// payload's time on the wire, and wait their turn in a drop-tail queue
	// of Queue packets (0 with a Rate: 10); one arriving to a full queue is
	// dropped. A thin uplink whose queue fills adds its own delay, as a
	// mobile network's buffers do.
	Rate  int
	Queue int
}

// Burst is the Gilbert–Elliott model of bursty loss (Gilbert, "Capacity of a
// burst-noise channel", 1960; Elliott, "Estimates of error rates for codes
// on burst-noise channels", 1963): the path is good or bad, and turns from
// one to the other with a probability per packet; a bad path loses each
// packet with probability Loss. Bursts last 1/Leave packets on average, and
// the mean loss is Loss·Enter/(Enter+Leave).
type Burst struct {
	Enter float64 // per packet, the probability in [0,1] that a good path turns bad
	Leave float64 // per packet, the probability in [0,1] that a bad path turns good
	Loss  float64 // the probability in [0,1] of losing a packet while the path is bad
}

// Spike adds Extra to every packet's delay during the first For of every
// Every, counted from the connection's first packet: a handover's stall.
// Packets keep their order, so those after a spike queue behind it.
type Spike struct {
	Every time.Duration
	For   time.Duration
	Extra time.Duration
}

// defaultQueue is a rate-capped direction's queue when Queue is 0.
const defaultQueue = 10

// minReorderHold is the smallest extra delay given to a reordered packet. It
// has to be large enough for a later packet to overtake it even when there
// is no jitter.
const minReorderHold = 5 * time.Millisecond

// validate reports the first invalid field of c; name is the direction
// ("up" or "down") used in the error.
func (c Conditions) validate(name string) error {
	if c.Latency < 0 {
		return fmt.Errorf("netshim: %s.latency: %v is negative", name, c.Latency)
	}
	if c.Jitter < 0 {
		return fmt.Errorf("netshim: %s.jitter: %v is negative", name, c.Jitter)
	}
	if !isProbability(c.Loss) {
		return fmt.Errorf("netshim: %s.loss: %v is outside [0, 1]", name, c.Loss)
	}
	if !isProbability(c.Reorder) {
		return fmt.Errorf("netshim: %s.reorder: %v is outside [0, 1]", name, c.Reorder)
	}
	for _, p := range []struct {
		field string
		v     float64
	}{{"burst.enter", c.Burst.Enter}, {"burst.leave", c.Burst.Leave}, {"burst.loss", c.Burst.Loss}} {
		if !isProbability(p.v) {
			return fmt.Errorf("netshim: %s.%s: %v is outside [0, 1]", name, p.field, p.v)
		}
	}
	if c.Burst.Enter > 0 && c.Burst.Leave == 0 {
		return fmt.Errorf("netshim: %s.burst.leave: 0 with burst.enter %v: a burst would never end", name, c.Burst.Enter)
	}
	switch sp := c.Spike; {
	case sp.Every < 0 || sp.For < 0 || sp.Extra < 0:
		return fmt.Errorf("netshim: %s.spike: %+v has a negative duration", name, sp)
	case sp.For > 0 && sp.Every == 0:
		return fmt.Errorf("netshim: %s.spike.every: 0 with spike.for %v", name, sp.For)
	case sp.For > sp.Every:
		return fmt.Errorf("netshim: %s.spike.for: %v is longer than spike.every %v", name, sp.For, sp.Every)
	}
	if c.Rate < 0 {
		return fmt.Errorf("netshim: %s.rate: %d is negative", name, c.Rate)
	}
	if c.Queue < 0 {
		return fmt.Errorf("netshim: %s.queue: %d is negative", name, c.Queue)
	}
	return nil
}

// isProbability is false for NaN, which fails both comparisons.
func isProbability(p float64) bool { return p >= 0 && p <= 1 }

// reorderHold is the extra delay of a reordered packet.
func (c Conditions) reorderHold() time.Duration {
	return max(2*c.Jitter, minReorderHold)
}

// decision is what the impairment model decided for one packet.
type decision struct {
	drop      bool
	overflow  bool // dropped by a full rate-capped queue
	reordered bool
	at        time.Time // delivery time; zero if dropped
}

// model holds the per-direction, per-connection state of the impairment
// model. It is owned by the single goroutine that reads packets for its
// direction, so neither the generator nor the FIFO floor needs a lock.
type model struct {
	rng   *rand.Rand
	floor time.Time // delivery time of the latest non-reordered packet

	// burst draws the Gilbert–Elliott path's turns from a stream of its
	// own, so that the rng's three draws a packet stay the same whatever
	// the conditions; bad is the path's state.
	burst *rand.Rand
	bad   bool
	// start is the first packet's time, which spikes count from.
	start time.Time
	// wire holds, oldest first, when each packet accepted by a rate cap
	// finishes leaving: those still ahead of now are on the wire or queued.
	wire []time.Time
}

func newModel(seed, stream uint64) *model {
	// Derive both PCG words through splitmix64 so that neighbouring streams
	// (connection 0 up, connection 0 down, connection 1 up, ...) start from
	// unrelated states instead of states that differ by one.
	s1 := splitmix.Mix(seed ^ splitmix.Mix(stream))
	s2 := splitmix.Mix(s1 ^ 0x6a09e667f3bcc909)
	s3 := splitmix.Mix(s2 ^ 0xbb67ae8584caa73b)
	return &model{rng: rand.New(rand.NewPCG(s1, s2)), burst: rand.New(rand.NewPCG(s3, splitmix.Mix(s3)))}
}

// decide applies c to a packet of size bytes read at now. It always draws
// exactly three numbers from rng, so packet i uses the same random numbers
// whatever the conditions are; changing Jitter does not change which
// packets are lost. The burst model draws two from a stream of its own.
func (m *model) decide(now time.Time, size int, c Conditions) decision {
	lossRoll := m.rng.Float64()
	jitterRoll := m.rng.Float64()
	reorderRoll := m.rng.Float64()
	turnRoll, burstRoll := m.burst.Float64(), m.burst.Float64()
	if m.start.IsZero() {
		m.start = now
	}

	if m.bad {
		m.bad = turnRoll >= c.Burst.Leave
	} else {
		m.bad = turnRoll < c.Burst.Enter
	}
	if lossRoll < c.Loss || (m.bad && burstRoll < c.Burst.Loss) {
		return decision{drop: true}
	}
	leaves := now // when the packet is off the rate cap's wire
	if c.Rate > 0 {
		for len(m.wire) > 0 && !m.wire[0].After(now) {
			m.wire = m.wire[1:]
		}
		queue := c.Queue
		if queue == 0 {
			queue = defaultQueue
		}
		if len(m.wire) > queue { // one on the wire, queue waiting
			return decision{drop: true, overflow: true}
		}
		if n := len(m.wire); n > 0 {
			leaves = m.wire[n-1]
		}
		leaves = leaves.Add(time.Duration(float64(size*8) / float64(c.Rate) * float64(time.Second)))
		m.wire = append(m.wire, leaves)
	}
	delay := c.Latency + time.Duration((2*jitterRoll-1)*float64(c.Jitter))
	if sp := c.Spike; sp.For > 0 && now.Sub(m.start)%sp.Every < sp.For {
		delay += sp.Extra
	}
	at := leaves.Add(max(delay, 0))
	if reorderRoll < c.Reorder {
		// Held back past its own slot without moving the floor, so packets
		// read after it may be delivered before it.
		return decision{reordered: true, at: at.Add(c.reorderHold())}
	}
	if at.Before(m.floor) {
		at = m.floor
	}
	m.floor = at
	return decision{at: at}
}
