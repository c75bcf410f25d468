package netshim

import (
	"container/heap"
	"sync"
	"time"
)

// queued is a packet waiting for its delivery time.
type queued struct {
	at   time.Time
	seq  uint64 // breaks ties in arrival order, which keeps equal-time packets FIFO
	data []byte // a private copy; read buffers are reused
	lane *lane
}

// packetHeap is a min-heap of queued packets ordered by (at, seq).
type packetHeap []queued

func (h packetHeap) Len() int { return len(h) }
func (h packetHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h packetHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *packetHeap) Push(x any)   { *h = append(*h, x.(queued)) }
func (h *packetHeap) Pop() any {
	old := *h
	n := len(old) - 1
	p := old[n]
	old[n] = queued{} // drop references so delivered buffers can be collected
	*h = old[:n]
	return p
}

// scheduler delivers delayed packets of one direction, for all connections,
// from a single goroutine driven by a single timer.
type scheduler struct {
	wake chan struct{} // capacity 1: "the earliest deadline may have changed"

	mu    sync.Mutex
	queue packetHeap
	seq   uint64
}

func newScheduler() *scheduler {
	return &scheduler{wake: make(chan struct{}, 1)}
}

// push queues data (which the scheduler now owns) for delivery on l at at.
func (s *scheduler) push(at time.Time, data []byte, l *lane) {
	s.mu.Lock()
	s.seq++
	heap.Push(&s.queue, queued{at: at, seq: s.seq, data: data, lane: l})
	earliest := s.queue[0].seq == s.seq
	s.mu.Unlock()
	if earliest {
		select {
		case s.wake <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// next pops the first packet if it is due. Otherwise it reports how long
// until the first packet is due, or ok=false with wait<0 if the queue is
// empty.
func (s *scheduler) next(now time.Time) (p queued, ok bool, wait time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return queued{}, false, -1
	}
	if d := s.queue[0].at.Sub(now); d > 0 {
		return queued{}, false, d
	}
	return heap.Pop(&s.queue).(queued), true, 0
}

// run delivers packets until done is closed. Packets still queued then are
// discarded.
func (s *scheduler) run(done <-chan struct{}) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-done:
			return
		default:
		}
		p, ok, wait := s.next(time.Now())
		if ok {
			p.lane.deliver(p.data)
			// Only now may the reader write this lane's packets directly.
			p.lane.pending.Add(-1)
			continue
		}
		var timerC <-chan time.Time
		if wait >= 0 {
			// Since Go 1.23 Reset also discards any expiry not yet received,
			// so the timer never fires for a stale deadline.
			timer.Reset(wait)
			timerC = timer.C
		}
		select {
		case <-done:
			return
		case <-s.wake:
		case <-timerC:
		}
	}
}
