package limits

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Config sets the caps per source.
type Config struct {
	// Handshakes caps the connections of one source that have not joined
	// yet (in their QUIC handshake, or before their Join was answered).
	Handshakes int
	// Players caps the joined players of one source.
	Players int
	// Rooms caps the rooms a source's joins created that are still open.
	Rooms int
	// JoinRate is how many joins a second one source may attempt in the
	// long run, JoinBurst how many at once.
	JoinRate  float64
	JoinBurst int
}

// Validate names the first field out of range.
func (c Config) Validate() error {
	switch {
	case c.Handshakes < 1:
		return fmt.Errorf("handshakes_per_source: %d is below 1", c.Handshakes)
	case c.Players < 1:
		return fmt.Errorf("players_per_source: %d is below 1", c.Players)
	case c.Rooms < 1:
		return fmt.Errorf("rooms_per_source: %d is below 1", c.Rooms)
	case !(c.JoinRate > 0):
		return fmt.Errorf("joins_per_second: %v must be positive", c.JoinRate)
	case c.JoinBurst < 1:
		return fmt.Errorf("join_burst: %d is below 1", c.JoinBurst)
	}
	return nil
}

// Limiter keeps the count of every source. It is safe for concurrent use.
type Limiter struct {
	cfg     Config
	mu      sync.Mutex
	sources map[netip.Addr]*source
	pending int // handshakes in flight, all sources
}

type source struct {
	handshakes int
	players    int
	rooms      int
	joins      *rate.Limiter
}

// New returns a limiter with the caps of cfg.
func New(cfg Config) (*Limiter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("limits: %w", err)
	}
	return &Limiter{cfg: cfg, sources: map[netip.Addr]*source{}}, nil
}

// Source returns the source of a network address: its IP, with IPv4-mapped
// IPv6 addresses unmapped.
func Source(addr net.Addr) netip.Addr {
	if ap, err := netip.ParseAddrPort(addr.String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// Handshake counts a new connection of src that has not joined yet; it
// reports false, counting nothing, when src is at its cap. Release it with
// the returned function (once is enough; later calls do nothing).
func (l *Limiter) Handshake(src netip.Addr) (release func(), ok bool) {
	return l.hold(src, func(s *source) *int { return &s.handshakes }, l.cfg.Handshakes, &l.pending)
}

// hold counts one more of a source's holdings (the field count selects),
// up to limit, and returns its release; total, if not nil, counts them for
// all sources.
func (l *Limiter) hold(src netip.Addr, count func(*source) *int, limit int, total *int) (release func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.source(src)
	if *count(s) >= limit {
		l.forget(src, s, time.Now())
		return nil, false
	}
	*count(s)++
	if total != nil {
		*total++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			s := l.sources[src]
			*count(s)--
			if total != nil {
				*total--
			}
			l.forget(src, s, time.Now())
		})
	}, true
}

// Pending returns how many handshakes are in flight, from all sources.
func (l *Limiter) Pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pending
}

// Join spends one of src's joins at now; false when it is over its rate.
func (l *Limiter) Join(src netip.Addr, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.source(src)
	ok := s.joins.AllowN(now, 1)
	l.forget(src, s, now)
	return ok
}

// Player counts a joined player of src; it reports false, counting
// nothing, when src is at its cap. Release it with the returned function
// when the player leaves (once is enough).
func (l *Limiter) Player(src netip.Addr) (release func(), ok bool) {
	return l.hold(src, func(s *source) *int { return &s.players }, l.cfg.Players, nil)
}

// Room counts a room that a join from src creates; it reports false,
// counting nothing, when src is at its cap. Release it with the returned
// function when the room closes (once is enough).
func (l *Limiter) Room(src netip.Addr) (release func(), ok bool) {
	return l.hold(src, func(s *source) *int { return &s.rooms }, l.cfg.Rooms, nil)
}

// Sources returns how many sources are tracked (for tests and metrics).
func (l *Limiter) Sources() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sources)
}

func (l *Limiter) source(src netip.Addr) *source {
	s := l.sources[src]
	if s == nil {
		s = &source{joins: rate.NewLimiter(rate.Limit(l.cfg.JoinRate), l.cfg.JoinBurst)}
		l.sources[src] = s
	}
	return s
}

// forget drops a source that holds nothing and whose join budget is full
// again: memory grows with the sources active now, not with all ever seen.
func (l *Limiter) forget(src netip.Addr, s *source, now time.Time) {
	if s.handshakes == 0 && s.players == 0 && s.rooms == 0 && s.joins.TokensAt(now) >= float64(l.cfg.JoinBurst) {
		delete(l.sources, src)
	}
}
