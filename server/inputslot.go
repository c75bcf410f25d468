package server

import (
	"sync"
	"time"

	"github.com/rewind-gg/rewind/protocol"
)

// inputMsg is one input datagram, decoded, with what its arrival said.
type inputMsg struct {
	input       protocol.InputPacket
	quicRTT     roundTrip // QUIC's estimate of the round trip (quicRTT), sampled once a second
	quicSampled bool      // QUIC had a sample of the round trip
	at          time.Time // when it arrived
	halved      bool      // the path is bad: halve the snapshot rate
}

// slotPackets is how many input datagrams a session holds between two of
// its room's ticks. A client sends one a tick; a burst after a network
// stall brings a few more, a room that fell behind (a starved process)
// finds more. Past this the oldest is dropped (and counted): each datagram
// repeats the inputs the server has not acknowledged, so the newest hold
// what the oldest did, and their arrival times (the margins the client's
// clock steers by) stay true.
const slotPackets = 16

// inputSlot is where a session's receiver puts the input datagrams it
// decodes and where the room takes them, once a tick: an input wakes no
// goroutine on its way in. Two buffers: the receiver fills one while the
// room reads the other.
type inputSlot struct {
	mu    sync.Mutex
	bufs  [2]inputBuf
	fill  int      // the receiver's
	spare inputMsg // where a datagram past a full buffer is decoded
}

type inputBuf struct {
	n    int
	msgs [slotPackets]inputMsg
}

// put decodes an input datagram into the slot and returns why it, or the
// oldest datagram of a full slot, was dropped ("" when none was). decode
// fills the message in place.
func (s *inputSlot) put(decode func(*inputMsg) string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &s.bufs[s.fill]
	if b.n < slotPackets {
		if why := decode(&b.msgs[b.n]); why != "" {
			return why
		}
		b.n++
		return ""
	}
	if why := decode(&s.spare); why != "" {
		return why
	}
	copy(b.msgs[:], b.msgs[1:])
	b.msgs[slotPackets-1] = s.spare
	return dropInbox
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
