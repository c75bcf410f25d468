package channel

import (
	"crypto/rand"
	"crypto/subtle"
	"net"
	"time"

	"github.com/rewind-gg/rewind/protocol"
)

// A client's new address is validated before the server sends it snapshots,
// in the spirit of QUIC's path validation (RFC 9000, sections 8.2 and 9):
// the client holds its session's keys, so an authentic packet proves who
// sent it but not where from, and a client could otherwise aim its
// snapshots at a third party by sealing packets for its own session with
// that party's source address. When an authentic packet, the newest yet,
// comes from an address other than the validated one, the server sends a
// path challenge (8 random bytes, sealed) to that address and keeps sending
// snapshots to the validated one; the address is adopted once a path
// response echoing the bytes comes from it. Until then the server sends the
// address at most AmplificationFactor times the bytes it received from it:
// only challenges, once per challengeInterval at most, while its packets
// keep coming.

// PathEvent is a step in the validation of a client's new address.
type PathEvent uint8

// Steps of a validation.
const (
	// PathChallenged: a challenge went to the new address.
	PathChallenged PathEvent = iota + 1
	// PathWithheld: a challenge was due, but would have sent the address
	// more than AmplificationFactor times the bytes that came from it.
	PathWithheld
	// PathValidated: the address answered; snapshots go there now.
	PathValidated
	// PathAbandoned: the address did not answer within the timeout, or a
	// packet from yet another address took its place.
	PathAbandoned
)

// String is the event's label in metrics.
func (e PathEvent) String() string {
	switch e {
	case PathChallenged:
		return "challenged"
	case PathWithheld:
		return "withheld"
	case PathValidated:
		return "validated"
	case PathAbandoned:
		return "abandoned"
	}
	return "unknown"
}

const (
	// AmplificationFactor bounds what the server sends to an address it has
	// not validated, as a multiple of the bytes it received from it (RFC
	// 9000, section 8).
	AmplificationFactor = 3
	// DefaultPathTimeout is how long a new address has to answer its
	// challenge: many round trips of any path a game is played on.
	DefaultPathTimeout = 3 * time.Second
	// challengeInterval is how soon a challenge is sent again while packets
	// keep coming from the address: a lost challenge or response costs
	// this, not a timeout.
	challengeInterval = 100 * time.Millisecond
)

// probe is the validation of one address a peer's packets came from, on the
// Demux's goroutine.
type probe struct {
	addr     net.Addr // nil: none under way
	data     protocol.PathData
	received int       // bytes of the authentic packets from addr
	sent     int       // bytes sent to addr
	started  time.Time // the first packet from addr
	last     time.Time // the last challenge sent; zero: none yet
	payload  [2 + protocol.PathDataSize]byte
}

// fromElsewhere takes an authentic packet of n bytes from another address
// than the validated one: it starts or goes on with that address's
// validation.
func (p *Peer) fromElsewhere(from net.Addr, n int, newest bool) {
	pr := &p.probe
	now := time.Now()
	if pr.addr != nil && now.Sub(pr.started) >= p.d.cfg.PathTimeout {
		p.abandon()
	}
	if pr.addr == nil || !sameAddr(from, pr.addr) {
		// Only the newest packet yet starts a validation: a late packet
		// from an address the client left draws no challenge there.
		if !newest {
			return
		}
		if pr.addr != nil {
			p.abandon()
		}
		to := from // only a new address goes to the heap
		*pr = probe{addr: to, started: now}
		rand.Read(pr.data[:])
	}
	pr.received += n
	if pr.last.IsZero() || now.Sub(pr.last) >= challengeInterval {
		p.challenge(now)
	}
}

// challenge sends the probed address its challenge, within the
// amplification limit.
func (p *Peer) challenge(now time.Time) {
	pr := &p.probe
	payload := protocol.AppendPathChallenge(pr.payload[:0], pr.data)
	if pr.sent+len(payload)+Overhead > AmplificationFactor*pr.received {
		p.event(PathWithheld)
		return
	}
	pr.sent += len(payload) + Overhead
	pr.last = now
	p.sealing.Lock()
	p.sendTo(payload, pr.addr) // a lost challenge is sent again with the next packets
	p.sealing.Unlock()
	p.event(PathChallenged)
}

// responded takes a path response: from the probed address with its
// challenge's data, it validates the address, which the server sends to
// from now on.
func (p *Peer) responded(from net.Addr, data protocol.PathData) {
	pr := &p.probe
	if pr.addr == nil || !sameAddr(from, pr.addr) || subtle.ConstantTimeCompare(data[:], pr.data[:]) != 1 {
		return // a stale response, or one not from the challenged address
	}
	old, to := p.Addr(), pr.addr
	p.addr.Store(&to)
	p.migrations.Add(1)
	*pr = probe{}
	p.event(PathValidated)
	if p.d.cfg.Migrate != nil {
		p.d.cfg.Migrate(old, to)
	}
}

// abandon ends the validation under way, unanswered.
func (p *Peer) abandon() {
	p.probe = probe{}
	p.event(PathAbandoned)
}

func (p *Peer) event(e PathEvent) {
	if p.d.cfg.Path != nil {
		p.d.cfg.Path(e)
	}
}
