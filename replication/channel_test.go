package replication

import (
	"sync/atomic"
	"testing"

	"github.com/rewind-gg/rewind/channel"
	"github.com/rewind-gg/rewind/protocol"
)

// A Queue has as many buffers as its sender's queue holds: with all in
// flight the room gets none (and drops the snapshot) rather than waiting;
// a buffer the sender returns is free again, empty.
func TestQueue(t *testing.T) {
	q := NewQueue(2)
	var ch Channel = q
	a, _ := ch.Buffer()
	b, _ := ch.Buffer()
	if cap(a) != protocol.SnapshotBufferSize || cap(b) != protocol.SnapshotBufferSize {
		t.Fatalf("buffers of %d and %d bytes", cap(a), cap(b))
	}
	if c, why := ch.Buffer(); c != nil || why != DropNoBuffer {
		t.Fatalf("a third buffer (%v) while two are in flight", why)
	}
	for _, d := range [][]byte{append(a, 1, 2), append(b, 3)} {
		if why := ch.Send(d); why != DropNone {
			t.Fatalf("send: %v", why)
		}
	}
	if d := <-q.Out(); len(d) != 2 || d[0] != 1 {
		t.Errorf("the sender got %v first, want [1 2]", d)
	} else {
		q.Return(d)
	}
	if c, why := ch.Buffer(); why != DropNone || len(c) != 0 {
		t.Errorf("a returned buffer: %v, length %d", why, len(c))
	}
	var batch channel.Batch
	ch.AppendClose(&batch, []byte{1})
	if batch.Len() != 0 {
		t.Error("QUIC DATAGRAMs sent a Close datagram: CONNECTION_CLOSE says it")
	}
}

// A room has two batches of sealed snapshots: while both are in flight
// (the socket stalls the Sealer's writes), a tick's snapshots find no
// buffer and are dropped; a batch written is free again, empty. A client
// whose sealed channel has not opened yet is skipped, not dropped.
func TestSealerGuard(t *testing.T) {
	s := NewSealer(nil, nil)
	var none atomic.Pointer[channel.Peer]
	c := s.For(&none)
	s.Begin()
	if _, why := c.Buffer(); why != DropNotOpen {
		t.Errorf("before the channel opens: %v, want %v", why, DropNotOpen)
	}
	a := s.batch
	s.Flush()
	s.Begin()
	b := s.batch
	s.Flush()
	if a == nil || b == nil || a == b {
		t.Fatal("a room starts without two batches")
	}
	s.Begin()
	if s.batch != nil {
		t.Fatal("a third batch while two are in flight: the room would wait for the socket")
	}
	s.Flush() // nothing to hand over
	// Run's loop, for an empty batch.
	s.free <- <-s.full
	s.Begin()
	if s.batch != a || a.Len() != 0 {
		t.Errorf("the batch written comes back as %p (len %d), want %p, empty", s.batch, s.batch.Len(), a)
	}
	var nilSealer *Sealer // a server without the sealed channel
	nilSealer.Begin()
	nilSealer.Flush()
}

type failingWriter struct{ failed int }

func (w failingWriter) Write(*channel.Batch) (int, error) { return w.failed, nil }

// Run writes what Flush hands over, counts the packets the network
// refused, frees the batches, and ends once closed.
func TestSealerRun(t *testing.T) {
	failed := 0
	s := NewSealer(failingWriter{failed: 2}, func(n int) { failed += n })
	for range 3 {
		s.Begin()
		s.Flush()
	}
	s.Close()
	s.Run()
	if failed != 4 { // the third tick found no batch: two written
		t.Errorf("%d packets counted as refused, want 4", failed)
	}
	if len(s.free) != SealerBatches {
		t.Errorf("%d batches free after the writes, want %d", len(s.free), SealerBatches)
	}
}
