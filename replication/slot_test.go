package replication

import (
	"errors"
	"testing"

	"github.com/rewind-gg/rewind/protocol"
)

// The input slot keeps the datagrams put between two takes, in order; one
// that does not decode takes no place; a full slot drops its oldest for the
// newest; and what a take returned stays intact while the next datagrams
// come in.
func TestSlot(t *testing.T) {
	var s Slot
	bad := errors.New("value")
	put := func(newest uint32) (bool, error) {
		return s.Put(func(p *Packet) error {
			if newest == 0 {
				return bad
			}
			p.Input = protocol.InputPacket{Newest: newest, Count: 1}
			return nil
		})
	}
	for _, n := range []uint32{1, 2, 0, 3} {
		put(n)
	}
	got := s.Take()
	if len(got) != 3 || got[0].Input.Newest != 1 || got[2].Input.Newest != 3 {
		t.Fatalf("took %d datagrams: %+v", len(got), got)
	}
	for n := range uint32(SlotPackets) {
		if dropped, err := put(10 + n); dropped || err != nil {
			t.Fatalf("datagram %d of %d: dropped %v, %v", n+1, SlotPackets, dropped, err)
		}
	}
	if dropped, err := put(99); !dropped || err != nil {
		t.Errorf("a datagram past a full slot: dropped %v, %v; want its oldest dropped", dropped, err)
	}
	if dropped, err := put(0); dropped || err != bad {
		t.Errorf("a bad datagram past a full slot: dropped %v, %v; want its own error, nothing dropped", dropped, err)
	}
	if got[0].Input.Newest != 1 || got[2].Input.Newest != 3 {
		t.Errorf("the datagrams taken changed while the slot filled: %+v", got[:3])
	}
	got = s.Take()
	if len(got) != SlotPackets || got[0].Input.Newest != 11 || got[SlotPackets-2].Input.Newest != 10+SlotPackets-1 || got[SlotPackets-1].Input.Newest != 99 {
		t.Errorf("took %d datagrams, newest %d, %d … %d, %d; want %d: 11 … %d, 99", len(got), got[0].Input.Newest, got[1].Input.Newest,
			got[len(got)-2].Input.Newest, got[len(got)-1].Input.Newest, SlotPackets, 10+SlotPackets-1)
	}
	if got = s.Take(); len(got) != 0 {
		t.Errorf("took %d datagrams from an empty slot", len(got))
	}
}
