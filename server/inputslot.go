package server

import (
	"sync"
	"time"

	"github.com/rewind-gg/rewind/protocol"
)

// inputMsg is one input datagram, decoded, with what its arrival said.
type inputMsg struct {
	input  protocol.InputPacket
	rtt    time.Duration // the round trip QUIC measured, plus twice its deviation
	at     time.Time     // when it arrived
	halved bool          // the path is bad: halve the snapshot rate
}

// slotPackets is how many input datagrams a session holds between two of
// its room's ticks. A client sends one a tick; a burst after a stall brings
// a few more, and each repeats the inputs the server has not acknowledged,
// so the ones past this are dropped (and counted) at no loss.
const slotPackets = 8

// inputSlot is where a session's receiver puts the input datagrams it
// decodes and where the room takes them, once a tick: an input wakes no
// goroutine on its way in. Two buffers: the receiver fills one while the
// room reads the other.
type inputSlot struct {
	mu   sync.Mutex
	bufs [2]inputBuf
	fill int // the receiver's
}

type inputBuf struct {
	n    int
	msgs [slotPackets]inputMsg
}

// put decodes an input datagram into the slot and returns why it was
// dropped ("" when kept). decode fills the message in place.
func (s *inputSlot) put(decode func(*inputMsg) string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &s.bufs[s.fill]
	if b.n == slotPackets {
		return dropInbox
	}
	if why := decode(&b.msgs[b.n]); why != "" {
		return why
	}
	b.n++
	return ""
}

// take returns the datagrams put since the last take, oldest first, valid
// until the next take (the room's goroutine alone calls it).
func (s *inputSlot) take() []inputMsg {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &s.bufs[s.fill]
	s.fill ^= 1
	s.bufs[s.fill].n = 0
	return b.msgs[:b.n]
}
