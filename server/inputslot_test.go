package server

import (
	"testing"
	"time"

	"github.com/rewind-gg/rewind/protocol"
)

// The input slot keeps the datagrams put between two takes, in order; one
// that does not decode takes no place; a full slot drops its oldest for the
// newest (room_busy); and what a take returned stays intact while the next
// datagrams come in.
func TestInputSlot(t *testing.T) {
	var s inputSlot
	put := func(newest uint32) string {
		return s.put(func(m *inputMsg) string {
			if newest == 0 {
				return "value"
			}
			m.input = protocol.InputPacket{Newest: newest, Count: 1}
			return ""
		})
	}
	for _, n := range []uint32{1, 2, 0, 3} {
		put(n)
	}
	got := s.take()
	if len(got) != 3 || got[0].input.Newest != 1 || got[2].input.Newest != 3 {
		t.Fatalf("took %d datagrams: %+v", len(got), got)
	}
	for n := range uint32(slotPackets) {
		if why := put(10 + n); why != "" {
			t.Fatalf("datagram %d of %d refused: %s", n+1, slotPackets, why)
		}
	}
	if why := put(99); why != dropInbox {
		t.Errorf("a datagram past a full slot: %q, want %q (its oldest dropped)", why, dropInbox)
	}
	if why := put(0); why != "value" {
		t.Errorf("a bad datagram past a full slot: %q, want its own reason", why)
	}
	if got[0].input.Newest != 1 || got[2].input.Newest != 3 {
		t.Errorf("the datagrams taken changed while the slot filled: %+v", got[:3])
	}
	got = s.take()
	if len(got) != slotPackets || got[0].input.Newest != 11 || got[slotPackets-2].input.Newest != 10+slotPackets-1 || got[slotPackets-1].input.Newest != 99 {
		t.Errorf("took %d datagrams, newest %d, %d … %d, %d; want %d: 11 … %d, 99", len(got), got[0].input.Newest, got[1].input.Newest,
			got[len(got)-2].input.Newest, got[len(got)-1].input.Newest, slotPackets, 10+slotPackets-1)
	}
	if got = s.take(); len(got) != 0 {
		t.Errorf("took %d datagrams from an empty slot", len(got))
	}
}

// A room has two batches of snapshots: while both are in flight (the
// socket stalls the sender), the room gets none and drops the tick's
// snapshots; a batch the sender wrote is free again, empty.
func TestSnapshotSenderGuard(t *testing.T) {
	s := newSnapshotSender(nil, nil)
	a, b := s.batch(), s.batch()
	if a == nil || b == nil {
		t.Fatal("a room starts without two batches")
	}
	if s.batch() != nil {
		t.Fatal("a third batch while two are in flight: the room would wait for the socket")
	}
	s.send(a)
	s.send(b) // never waits
	// The sender's loop, for an empty batch: what run does after a write.
	s.free <- <-s.full
	if c := s.batch(); c != a || c.Len() != 0 {
		t.Errorf("the batch written comes back as %p (len %d), want %p, empty", c, c.Len(), a)
	}
}

// The round trip a room measures follows RFC 6298: the first sample sets
// it, with half as deviation; later ones move it by an eighth and the
// deviation by a quarter of the difference.
func TestRoundTrip(t *testing.T) {
	var rt roundTrip
	rt.add(80 * time.Millisecond)
	if rt.srtt != 80*time.Millisecond || rt.rttvar != 40*time.Millisecond || rt.bound() != 160*time.Millisecond {
		t.Fatalf("after one sample: srtt %v, rttvar %v, bound %v", rt.srtt, rt.rttvar, rt.bound())
	}
	rt.add(160 * time.Millisecond)
	if rt.srtt != 90*time.Millisecond || rt.rttvar != 50*time.Millisecond {
		t.Errorf("after two samples: srtt %v, rttvar %v; want 90ms, 50ms", rt.srtt, rt.rttvar)
	}
	rt.add(-time.Millisecond) // a clock step: counts as 0
	if rt.srtt != 90*time.Millisecond*7/8 || rt.n != 3 {
		t.Errorf("after a negative sample: srtt %v (n %d)", rt.srtt, rt.n)
	}
}
