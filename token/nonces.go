package token

import (
	"encoding/hex"
	"sync"
	"time"
)

// nonceCache remembers the nonces of accepted tokens until the tokens expire.
// It holds at most capacity nonces, refusing more rather than forgetting one
// early, which would let its token be replayed. There is no goroutine:
// expired nonces are dropped as the cache is used, found in O(log n) by a
// min-heap ordered by expiry.
type nonceCache struct {
	mu       sync.Mutex
	capacity int
	held     map[[16]byte]struct{}
	byExpiry []nonceEntry // a min-heap on until, holding the nonces of held
	horizon  time.Time    // the latest now seen; nonces until it are dropped
}

type nonceEntry struct {
	until time.Time // when the nonce's token expires, skew included
	nonce [16]byte
}

func (c *nonceCache) init(capacity int) {
	c.capacity = capacity
	c.held = make(map[[16]byte]struct{})
}

func (c *nonceCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.held)
}

// add records nonce until the given time, at now. It refuses a nonce it
// holds (Replayed) and one more than capacity (CacheFull), and a token that
// expired by the latest now it was given (Expired), whose nonce it may have
// dropped already.
func (c *nonceCache) add(nonce [16]byte, until, now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.After(c.horizon) {
		c.horizon = now
		for len(c.byExpiry) > 0 && !c.byExpiry[0].until.After(now) {
			delete(c.held, c.pop().nonce)
		}
	}
	if !until.After(c.horizon) {
		return reject(Expired, "expired by %s, the latest time this verifier was given (now is %s)",
			c.horizon.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if _, ok := c.held[nonce]; ok {
		return reject(Replayed, "nonce %s already used", hex.EncodeToString(nonce[:]))
	}
	if len(c.held) >= c.capacity {
		return reject(CacheFull, "%d unexpired nonces held, the verifier's capacity", len(c.held))
	}
	c.held[nonce] = struct{}{}
	c.push(nonceEntry{until: until, nonce: nonce})
	return nil
}

// push adds e to the heap.
func (c *nonceCache) push(e nonceEntry) {
	h := append(c.byExpiry, e)
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h[i].until.Before(h[parent].until) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
	c.byExpiry = h
}

// pop removes and returns the entry that expires first.
func (c *nonceCache) pop() nonceEntry {
	h := c.byExpiry
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		least := i
		if l := 2*i + 1; l < len(h) && h[l].until.Before(h[least].until) {
			least = l
		}
		if r := 2*i + 2; r < len(h) && h[r].until.Before(h[least].until) {
			least = r
		}
		if least == i {
			break
		}
		h[i], h[least] = h[least], h[i]
		i = least
	}
	c.byExpiry = h
	return top
}
