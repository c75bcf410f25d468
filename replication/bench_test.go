package replication

import (
	"testing"
	"time"

	"github.com/rewind-gg/rewind/protocol"
)

// benchWorld is a busy tick's world: 12 players and 100 projectiles, all
// moving.
func benchWorld(tick uint32) *protocol.State {
	w := &protocol.State{Tick: tick}
	for id := uint32(1); id <= 12; id++ {
		w.Players = append(w.Players, protocol.Entity{ID: id, State: protocol.EntityState{Kind: protocol.KindPlayer, Team: uint8(1 + id%2),
			Flags: protocol.FlagAlive, Health: 100, Yaw: uint16(tick * id), Pos: [3]int32{int32(id * 1000), 0, int32(tick * 20)}}})
	}
	for id := uint32(1 << 24); id < 1<<24+100; id++ {
		w.Objects = append(w.Objects, protocol.Entity{ID: id, State: protocol.EntityState{Kind: protocol.KindProjectile, Team: 1,
			Owner: 1 + id%12, Start: tick - id%50, Pos: [3]int32{int32(id % 977), 100, int32(id % 613)}, Vel: [3]int32{0, 0, 2500}}})
	}
	return w
}

// replicate runs ticks of a client at 20 Hz, a snapshot a tick, its
// acknowledgements 4 ticks late.
func replicate(c *Client, ch *fakeChannel, w *protocol.State, from, ticks uint32) {
	var hdr protocol.SnapshotHeader
	pkt := packet(0, 1, protocol.NoTick, t0, quic150, true, false)
	for tick := from; tick < from+ticks; tick++ {
		at := t0.Add(time.Duration(tick) * 50 * time.Millisecond)
		pkt.Input.Newest, pkt.Input.SnapshotAck, pkt.At = tick+1, tick-4, at
		c.OnInput(pkt, int64(tick), at)
		w.Tick = tick
		for i := range w.Players {
			w.Players[i].State.Pos[2] += 20
		}
		hdr = protocol.SnapshotHeader{InputAck: protocol.NoTick}
		c.Snapshot(&hdr, w, at)
		ch.sent = ch.sent[:0]
	}
}

// benchClient is a client of a snapshot every tick.
func benchClient(b testing.TB) (*Client, *fakeChannel) {
	cfg := testConfig
	cfg.Interval = 1
	r, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ch := &fakeChannel{sent: make([][]byte, 0, 1)}
	return r.NewClient(self, r.Interp(100), 100, ch), ch
}

// A client's per-tick path (an input packet, a snapshot) allocates
// nothing once warm.
func TestClientAllocatesNothing(t *testing.T) {
	c, ch := benchClient(t)
	w := benchWorld(100)
	replicate(c, ch, w, 100, 100)
	ch.sent = nil
	discard := &discardChannel{}
	c.out = discard
	tick := uint32(200)
	if allocs := testing.AllocsPerRun(10, func() {
		replicate(c, ch, w, tick, 20)
		tick += 20
	}); allocs != 0 {
		t.Errorf("20 ticks of a client allocate %v times", allocs)
	}
	if discard.n == 0 {
		t.Fatal("nothing sent")
	}
}

// discardChannel has one buffer and sends nothing.
type discardChannel struct {
	fakeChannel
	n int
}

func (d *discardChannel) Send(p []byte) Drop { d.n += len(p); return DropNone }

// BenchmarkSnapshot is one client's tick: its input packet and its delta
// snapshot of a world of 12 players and 100 projectiles. The baseline in
// the same run encodes the same snapshots in full, with no replication
// around them; it reports both and their ratio.
func BenchmarkSnapshot(b *testing.B) {
	c, _ := benchClient(b)
	discard := &discardChannel{}
	c.out = discard
	w := benchWorld(100)
	replicate(c, &discard.fakeChannel, w, 100, 100)
	full := make([]byte, 0, protocol.SnapshotBufferSize)
	var known protocol.State
	var tRepl, tFull time.Duration
	var bytesRepl, bytesFull int
	tick := uint32(200)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		discard.n = 0
		replicate(c, &discard.fakeChannel, w, tick, 1)
		tRepl += time.Since(start)
		bytesRepl += discard.n
		start = time.Now()
		h := protocol.SnapshotHeader{Tick: tick, Baseline: protocol.NoTick, InputAck: protocol.NoTick, Interval: 1}
		bytesFull += len(protocol.AppendSnapshot(full[:0], &h, nil, w, &known))
		tFull += time.Since(start)
		tick++
	}
	n := float64(b.N)
	b.ReportMetric(float64(tRepl.Nanoseconds())/n, "client-ns/tick")
	b.ReportMetric(float64(tFull.Nanoseconds())/n, "full-ns/tick")
	b.ReportMetric(float64(tRepl)/float64(tFull), "client/full")
	b.ReportMetric(float64(bytesRepl)/n, "B/snapshot")
	b.ReportMetric(float64(bytesFull)/n, "full-B/snapshot")
}
