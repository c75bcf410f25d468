package replication

import (
	"sync"
	"time"

	"github.com/rewind-gg/rewind/protocol"
)

// Packet is one input datagram, decoded, with what its arrival said.
type Packet struct {
	Input protocol.InputPacket
	Arrival
}

// Arrival is what the session knew when an input datagram arrived.
type Arrival struct {
	At time.Time // when it arrived
	// QUIC is QUIC's own estimate of the round trip (sampled once a
	// second); QUICSampled says QUIC had taken a sample (before, quic-go
	// reports its initial guess).
	QUIC        RTT
	QUICSampled bool
	Halved      bool // flow control finds the path bad: halve the snapshot rate
}

// SlotPackets is how many input datagrams a session holds between two of
// its room's ticks. A client sends one a tick; a burst after a network
// stall brings a few more, a room that fell behind (a starved process)
// finds more. Past this the oldest is dropped (and counted): each datagram
// repeats the inputs the server has not acknowledged, so the newest hold
// what the oldest did, and their arrival times (the margins the client's
// clock steers by) stay true.
const SlotPackets = 16

// Slot is where a session's receiver puts the input datagrams it decodes
// and where the room takes them, once a tick: an input wakes no goroutine
// on its way in. Two buffers: the receiver fills one while the room reads
// the other. The zero Slot is empty and ready.
type Slot struct {
	mu    sync.Mutex
	bufs  [2]slotBuf
	fill  int    // the receiver's
	spare Packet // where a datagram past a full buffer is decoded
}

type slotBuf struct {
	n    int
	msgs [SlotPackets]Packet
}

// Put decodes an input datagram into the slot: decode fills the packet in
// place, and its error drops the datagram (and takes no place). When the
// slot was full, the datagram took the place of the oldest, and dropped
// says so.
func (s *Slot) Put(decode func(*Packet) error) (dropped bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &s.bufs[s.fill]
	if b.n < SlotPackets {
		if err := decode(&b.msgs[b.n]); err != nil {
			return false, err
		}
		b.n++
		return false, nil
	}
	if err := decode(&s.spare); err != nil {
		return false, err
	}
	copy(b.msgs[:], b.msgs[1:])
	b.msgs[SlotPackets-1] = s.spare
	return true, nil
}

// Take returns the datagrams put since the last Take, oldest first, valid
// until the next Take (one goroutine, the room's, calls it).
func (s *Slot) Take() []Packet {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &s.bufs[s.fill]
	s.fill ^= 1
	s.bufs[s.fill].n = 0
	return b.msgs[:b.n]
}
