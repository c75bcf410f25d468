package replication

import (
	"sync/atomic"

	"github.com/rewind-gg/rewind/channel"
	"github.com/rewind-gg/rewind/protocol"
)

// Channel is one client's datagram channel as its room sends snapshots on
// it: QUIC DATAGRAMs ([Queue]) or the sealed channel ([Sealed]). Its
// methods never wait for the network; the room's goroutine alone calls
// them.
type Channel interface {
	// Buffer returns an empty buffer, of capacity
	// protocol.SnapshotBufferSize, to encode the client's next snapshot
	// into; or nil and why there is none.
	Buffer() ([]byte, Drop)
	// Send sends d, a snapshot encoded into the latest Buffer's buffer;
	// DropNone when it is on its way.
	Send(d []byte) Drop
	// AppendClose adds to b the datagrams that tell the client its
	// connection closes, close being an encoded protocol.Close: the
	// sealed channel's CloseCopies (a client on it sends QUIC packets too
	// rarely for QUIC to repeat a lost CONNECTION_CLOSE); none on QUIC
	// DATAGRAMs, where CONNECTION_CLOSE says it.
	AppendClose(b *channel.Batch, close []byte)
}

// Drop is why a client's snapshot was not sent.
type Drop uint8

// Reasons a snapshot is not sent.
const (
	DropNone Drop = iota // it was sent
	// DropNotOpen: the client's channel is not open yet (the sealed
	// channel opens with the Welcome, just after the join); not a loss.
	DropNotOpen
	// DropNoBuffer: every buffer is in flight (the client's sender, or
	// the room's sealed batches, wait for the network).
	DropNoBuffer
	// DropQueueFull: the client's send queue is full.
	DropQueueFull
	// DropCount is the number of Drop values.
	DropCount
)

// String returns the reason's label.
func (d Drop) String() string {
	if d < DropCount {
		return dropLabels[d]
	}
	return "unknown"
}

var dropLabels = [DropCount]string{DropNone: "none", DropNotOpen: "not_open", DropNoBuffer: "no_buffer", DropQueueFull: "queue_full"}

// Lost reports whether d is a snapshot lost to the client: any reason but
// DropNone and DropNotOpen.
func (d Drop) Lost() bool { return d != DropNone && d != DropNotOpen }

// Queue is the QUIC DATAGRAM channel of one client: the room encodes
// snapshots into its buffers and queues them; the session's sender
// goroutine sends them (Out) and gives the buffers back (Return).
type Queue struct {
	out  chan []byte
	free chan []byte
}

// NewQueue returns a Queue of n snapshot buffers.
func NewQueue(n int) *Queue {
	q := &Queue{out: make(chan []byte, n), free: make(chan []byte, n)}
	for range n {
		q.free <- make([]byte, 0, protocol.SnapshotBufferSize)
	}
	return q
}

// Buffer returns a free buffer; DropNoBuffer when all are in flight.
func (q *Queue) Buffer() ([]byte, Drop) {
	select {
	case b := <-q.free:
		return b[:0], DropNone
	default:
		return nil, DropNoBuffer
	}
}

// Send queues d for the sender. (It cannot be full while d's buffer was
// free: the queue holds as many as there are buffers.)
func (q *Queue) Send(d []byte) Drop {
	select {
	case q.out <- d:
		return DropNone
	default:
		return DropQueueFull
	}
}

// AppendClose adds nothing: QUIC's CONNECTION_CLOSE tells the client.
func (q *Queue) AppendClose(*channel.Batch, []byte) {}

// Out is where the sender takes the snapshots to send.
func (q *Queue) Out() <-chan []byte { return q.out }

// Return gives a buffer from Out back once its snapshot is sent.
func (q *Queue) Return(b []byte) { q.free <- b }

// CloseCopies is how many sealed Close datagrams go before a connection's
// CONNECTION_CLOSE (docs/protocol.md, "Close").
const CloseCopies = 3

// BatchWriter writes a batch of sealed packets (channel.Writer): a packet
// the network refuses is skipped and counted in failed.
type BatchWriter interface {
	Write(b *channel.Batch) (failed int, err error)
}

// SealerBatches is how many ticks of sealed snapshots a room has in
// flight.
const SealerBatches = 2

// Sealer writes a room's sealed snapshots on the server's socket: each
// tick's in one batch (one sendmmsg on Linux), from a goroutine of the
// room's own (Run). The room seals a tick's snapshots into a free batch
// (Begin, its clients' [Sealed] channels, Flush) and hands it over
// without waiting; a write that waits for the socket (its buffer full)
// holds the Sealer's goroutine, never the tick: with both batches in
// flight the tick's sealed snapshots are dropped (DropNoBuffer), and the
// room plays on.
type Sealer struct {
	w      BatchWriter
	failed func(n int) // counts packets the network refused
	free   chan *channel.Batch
	full   chan *channel.Batch

	batch   *channel.Batch // the tick's, being filled; nil: none free
	encoded []byte         // where a sealed snapshot is encoded before it is sealed
}

// NewSealer returns a Sealer writing on w; failed counts the packets the
// network refused (nil: not counted).
func NewSealer(w BatchWriter, failed func(n int)) *Sealer {
	if failed == nil {
		failed = func(int) {}
	}
	s := &Sealer{w: w, failed: failed, free: make(chan *channel.Batch, SealerBatches), full: make(chan *channel.Batch, SealerBatches),
		encoded: make([]byte, 0, protocol.SnapshotBufferSize)}
	for range SealerBatches {
		s.free <- new(channel.Batch)
	}
	return s
}

// Begin starts a tick's snapshots: they go into a free batch, if any.
// A nil Sealer (a server without the sealed channel) does nothing.
func (s *Sealer) Begin() {
	if s == nil {
		return
	}
	select {
	case s.batch = <-s.free:
		s.batch.Reset()
	default:
		s.batch = nil // both in flight: the socket is stalled
	}
}

// Flush hands the tick's batch to Run; it never waits (no more batches
// exist than Run's queue holds). A nil Sealer does nothing.
func (s *Sealer) Flush() {
	if s == nil || s.batch == nil {
		return
	}
	s.full <- s.batch
	s.batch = nil
}

// Run writes the batches Flush hands over until Close.
func (s *Sealer) Run() {
	for b := range s.full {
		// A packet the network refuses (or all, once the socket closes at
		// shutdown) is lost as on a lossy path: the clients'
		// acknowledgements tell the room.
		if failed, _ := s.w.Write(b); failed > 0 {
			s.failed(failed)
		}
		s.free <- b
	}
}

// Close ends Run once it has written what it was handed.
func (s *Sealer) Close() { close(s.full) }

// For returns the sealed channel of a client whose end of it (nil until it
// opens) peer holds.
func (s *Sealer) For(peer *atomic.Pointer[channel.Peer]) *Sealed {
	return &Sealed{s: s, peer: peer}
}

// Sealed is one client's sealed channel: its snapshots go into its room's
// Sealer's batch of the tick.
type Sealed struct {
	s    *Sealer
	peer *atomic.Pointer[channel.Peer]
	to   *channel.Peer // Buffer's, for Send
}

// Buffer returns the room's encoding buffer: DropNotOpen before the
// client's channel opens, DropNoBuffer while the room's batches are all in
// flight.
func (c *Sealed) Buffer() ([]byte, Drop) {
	if c.to = c.peer.Load(); c.to == nil {
		return nil, DropNotOpen
	}
	if c.s.batch == nil {
		return nil, DropNoBuffer
	}
	return c.s.encoded[:0], DropNone
}

// Send seals d into the tick's batch.
func (c *Sealed) Send(d []byte) Drop {
	c.s.batch.Add(c.to, d)
	c.s.encoded = d
	return DropNone
}

// AppendClose seals close CloseCopies times into b, once the channel is
// open.
func (c *Sealed) AppendClose(b *channel.Batch, close []byte) {
	peer := c.peer.Load()
	if peer == nil {
		return
	}
	for range CloseCopies {
		b.Add(peer, close)
	}
}
