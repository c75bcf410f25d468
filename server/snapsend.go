package server

import "github.com/rewind-gg/rewind/channel"

// snapshotSender writes a room's sealed snapshots on the server's socket:
// each tick's in one batch (one sendmmsg on Linux), from a goroutine of the
// room's own. The room seals a tick's snapshots into a free batch and hands
// it over without waiting; a write that waits for the socket (its buffer
// full) holds the sender, never the tick: with both batches in flight the
// room drops the tick's sealed snapshots, counted, and plays on.
type snapshotSender struct {
	w    *channel.Writer
	free chan *channel.Batch
	full chan *channel.Batch
	m    *metrics
}

// senderBatches is how many ticks of snapshots a room has in flight.
const senderBatches = 2

func newSnapshotSender(w *channel.Writer, m *metrics) *snapshotSender {
	s := &snapshotSender{w: w, m: m, free: make(chan *channel.Batch, senderBatches), full: make(chan *channel.Batch, senderBatches)}
	for range senderBatches {
		s.free <- new(channel.Batch)
	}
	return s
}

// batch returns an empty batch, or nil when none is free.
func (s *snapshotSender) batch() *channel.Batch {
	select {
	case b := <-s.free:
		b.Reset()
		return b
	default:
		return nil
	}
}

// send hands a batch from batch to the sender; it never waits (no more
// batches exist than full holds).
func (s *snapshotSender) send(b *channel.Batch) { s.full <- b }

// close ends the sender once it has written what it was handed.
func (s *snapshotSender) close() { close(s.full) }

// run writes batches until close.
func (s *snapshotSender) run() {
	for b := range s.full {
		// A packet the network refuses (or all, once the socket closes at
		// shutdown) is lost as on a lossy path: the clients'
		// acknowledgements tell the room.
		failed, _ := s.w.Write(b)
		for range failed {
			s.m.drop(dropSendFailed)
		}
		s.free <- b
	}
}
