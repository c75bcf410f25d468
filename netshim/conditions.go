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
}

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
	reordered bool
	at        time.Time // delivery time; zero if dropped
}

// model holds the per-direction, per-connection state of the impairment
// model. It is owned by the single goroutine that reads packets for its
// direction, so neither the generator nor the FIFO floor needs a lock.
type model struct {
	rng   *rand.Rand
	floor time.Time // delivery time of the latest non-reordered packet
}

func newModel(seed, stream uint64) *model {
	// Derive both PCG words through splitmix64 so that neighbouring streams
	// (connection 0 up, connection 0 down, connection 1 up, ...) start from
	// unrelated states instead of states that differ by one.
	s1 := splitmix.Mix(seed ^ splitmix.Mix(stream))
	s2 := splitmix.Mix(s1 ^ 0x6a09e667f3bcc909)
	return &model{rng: rand.New(rand.NewPCG(s1, s2))}
}

// decide applies c to a packet read at now. It always draws exactly three
// numbers, so packet i uses the same random numbers whatever the conditions
// are; changing Jitter does not change which packets are lost.
func (m *model) decide(now time.Time, c Conditions) decision {
	lossRoll := m.rng.Float64()
	jitterRoll := m.rng.Float64()
	reorderRoll := m.rng.Float64()

	if lossRoll < c.Loss {
		return decision{drop: true}
	}
	delay := c.Latency + time.Duration((2*jitterRoll-1)*float64(c.Jitter))
	at := now.Add(max(delay, 0))
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
