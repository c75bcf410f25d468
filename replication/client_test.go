package replication

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/channel"
	"github.com/rewind-gg/rewind/input"
	"github.com/rewind-gg/rewind/protocol"
)

// testConfig: 20 Hz, a snapshot every 2 ticks, a tolerance of 1 tick and
// an rtt margin of 2 (3 with the tick the Replicator adds): the slack is
// 2 + 1 + 1 = 4 ticks.
var testConfig = Config{TickRate: 20, Interval: 2, ViewLagTolerance: 50 * time.Millisecond,
	RTTMargin: 100 * time.Millisecond, MaxInterpDelay: 200 * time.Millisecond}

// quic150 is a QUIC estimate whose bound is 150 ms: 3 ticks.
var quic150 = RTT{SRTT: 100 * time.Millisecond, RTTVar: 25 * time.Millisecond}

const self = 1 // the client's own player

var t0 = time.Unix(1000, 0)

func newTestClient(t *testing.T, ch Channel) *Client {
	t.Helper()
	r, err := New(testConfig)
	if err != nil {
		t.Fatal(err)
	}
	return r.NewClient(self, r.Interp(100), 100, ch) // 2 ticks of interpolation
}

// fakeChannel keeps what is sent; it has a buffer unless none says why
// not, and Send fails with fail.
type fakeChannel struct {
	buf  []byte
	none Drop
	fail Drop
	sent [][]byte
}

func (f *fakeChannel) Buffer() ([]byte, Drop) {
	if f.none != DropNone {
		return nil, f.none
	}
	if f.buf == nil {
		f.buf = make([]byte, 0, protocol.SnapshotBufferSize)
	}
	return f.buf[:0], DropNone
}

func (f *fakeChannel) Send(d []byte) Drop {
	if f.fail != DropNone {
		return f.fail
	}
	f.sent = append(f.sent, append([]byte(nil), d...))
	return DropNone
}

func (f *fakeChannel) AppendClose(*channel.Batch, []byte) {}

// packet is an input packet of count inputs up to newest, acknowledging
// ack, arriving at at.
func packet(newest uint32, count int, ack uint32, at time.Time, quic RTT, sampled, halved bool) *Packet {
	return &Packet{Input: protocol.InputPacket{Newest: newest, Count: count, SnapshotAck: ack},
		Arrival: Arrival{At: at, QUIC: quic, QUICSampled: sampled, Halved: halved}}
}

// world is a tick's world of three players, the client's among them.
func world(tick uint32) *protocol.State {
	w := &protocol.State{Tick: tick}
	for id := uint32(1); id <= 3; id++ {
		w.Players = append(w.Players, protocol.Entity{ID: id, State: protocol.EntityState{Kind: protocol.KindPlayer, Team: 1,
			Pos: [3]int32{int32(id), int32(tick), 0}}})
	}
	return w
}

// snapshot sends the client its snapshot of tick at at and decodes the
// header of what went out.
func snapshot(t *testing.T, c *Client, ch *fakeChannel, tick uint32, at time.Time) (Sent, protocol.SnapshotHeader) {
	t.Helper()
	var hdr protocol.SnapshotHeader
	n := len(ch.sent)
	s := c.Snapshot(&protocol.SnapshotHeader{InputAck: protocol.NoTick}, world(tick), at)
	if s.Drop != DropNone {
		if len(ch.sent) != n {
			t.Fatalf("tick %d: dropped (%v), yet sent", tick, s.Drop)
		}
		return s, hdr
	}
	if len(ch.sent) != n+1 || len(ch.sent[n]) != s.Bytes {
		t.Fatalf("tick %d: %d sent, %d bytes reported", tick, len(ch.sent)-n, s.Bytes)
	}
	if err := protocol.DecodeSnapshotHeader(ch.sent[n], &hdr); err != nil {
		t.Fatal(err)
	}
	return s, hdr
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// The view lag an input may claim is bounded by what the server measured
// when its packet arrived: the round trip (QUIC's, and a tick it leaves
// out, before the first acknowledgement; then the acknowledgements'), the
// interpolation delay granted (capped at MaxInterpDelay), and the slack: a
// snapshot interval (two while halved), a tick, the tolerance.
func TestViewLagBound(t *testing.T) {
	ch := &fakeChannel{}
	c := newTestClient(t, ch)
	// No sample yet: QUIC's 3 ticks + interp 2 + slack 4 + 1.
	if a := c.OnInput(packet(101, 1, protocol.NoTick, t0, quic150, true, false), 100, t0); !near(a.Earliest, 100-3-2-5) {
		t.Errorf("before a sample: earliest %v, want %v", a.Earliest, 100-3-2-5)
	}
	if got := c.Stats().LagBound; !near(got, 10) {
		t.Errorf("lag bound %v, want 10 ticks", got)
	}
	// Halved: another snapshot interval.
	if a := c.OnInput(packet(102, 1, protocol.NoTick, t0, quic150, true, true), 100, t0); !near(a.Earliest, 100-3-2-5-2) {
		t.Errorf("halved, before a sample: earliest %v, want %v", a.Earliest, 100-3-2-5-2)
	}
	// A snapshot of tick 100 at t0, acknowledged 100 ms later: a round
	// trip of 100 ms, bounded at 100 + 2×50 = 200 ms, 4 ticks.
	snapshot(t, c, ch, 100, t0)
	a := c.OnInput(packet(103, 1, 100, t0.Add(100*time.Millisecond), quic150, true, false), 102, t0)
	if !near(a.Earliest, 102-4-2-4) || a.RTT != 100*time.Millisecond {
		t.Errorf("after a sample: earliest %v, want %v; rtt reported %v, want 100ms", a.Earliest, 102-4-2-4, a.RTT)
	}
	if st := c.Stats(); st.RTT != 100*time.Millisecond || st.RTTBound != 200*time.Millisecond || st.QUICRTT != quic150.SRTT ||
		st.QUICDev != quic150.RTTVar || !near(st.LagBound, 10) {
		t.Errorf("stats %+v", st)
	}
	// A client that declares more interpolation than allowed gets
	// MaxInterpDelay: 4 ticks.
	r, _ := New(testConfig)
	greedy := r.NewClient(self, r.Interp(500), 100, &fakeChannel{})
	if a := greedy.OnInput(packet(101, 1, protocol.NoTick, t0, quic150, true, false), 100, t0); !near(a.Earliest, 100-3-4-5) {
		t.Errorf("interpolation over the cap: earliest %v, want %v", a.Earliest, 100-3-4-5)
	}
}

// Acknowledgements that count: newer than the last, older than the
// present, of a snapshot the ring still has. A stale, repeated or future
// one takes no sample; the round trip is reported once a SampleInterval.
func TestRoundTripSamples(t *testing.T) {
	ch := &fakeChannel{}
	c := newTestClient(t, ch)
	for tick := uint32(100); tick <= 110; tick += 2 {
		snapshot(t, c, ch, tick, t0.Add(time.Duration(tick-100)*50*time.Millisecond))
	}
	at := t0.Add(200 * time.Millisecond)
	if a := c.OnInput(packet(105, 1, 102, at, quic150, true, false), 105, t0); a.RTT != 100*time.Millisecond {
		t.Errorf("first sample reported as %v, want 100ms", a.RTT)
	}
	for _, ack := range []uint32{102, 100, 120} { // repeated, older, not sent yet
		if a := c.OnInput(packet(106, 1, ack, at, quic150, true, false), 106, t0); a.RTT != 0 || c.rtt.Samples() != 1 {
			t.Errorf("ack %d took a sample (%d) or reported %v", ack, c.rtt.Samples(), a.RTT)
		}
	}
	// A second sample within the second is taken, not reported.
	if a := c.OnInput(packet(107, 1, 104, t0.Add(300*time.Millisecond), quic150, true, false), 107, t0); a.RTT != 0 || c.rtt.Samples() != 2 {
		t.Errorf("second sample: %d samples, reported %v", c.rtt.Samples(), a.RTT)
	}
	if a := c.OnInput(packet(108, 1, 106, t0.Add(1200*time.Millisecond), quic150, true, false), 108, t0); a.RTT == 0 {
		t.Error("a sample a second after the reported one is not reported")
	}
}

// The acknowledgements' round trip is granted up to QUIC's estimate plus
// the margin (when QUIC has a sample of its own). A run of capped packets
// 5 s long flags the client, once; the time capped adds up across runs.
func TestRTTCap(t *testing.T) {
	ch := &fakeChannel{}
	c := newTestClient(t, ch)
	snapshot(t, c, ch, 100, t0)
	// A 400 ms sample: bound 400 + 2×200 = 800 ms, 16 ticks; QUIC's limit
	// 150 + 150 = 300 ms, 6 ticks.
	tA := t0.Add(400 * time.Millisecond)
	if a := c.OnInput(packet(110, 1, 100, tA, quic150, true, false), 110, t0); !near(a.Earliest, 110-6-2-4) || a.Flagged {
		t.Errorf("capped: earliest %v, want %v (flagged %v)", a.Earliest, 110-6-2-4, a.Flagged)
	}
	// QUIC without a sample of its own: no cap (and the run breaks).
	if a := c.OnInput(packet(111, 1, protocol.NoTick, tA.Add(time.Second/2), quic150, false, false), 110, t0); !near(a.Earliest, 110-16-2-4) {
		t.Errorf("QUIC unsampled: earliest %v, want %v", a.Earliest, 110-16-2-4)
	}
	// Capped again from tB for 4 s, a break, then from tC on: flagged 5 s
	// after tC, once.
	tB := tA.Add(time.Second)
	flags := 0
	run := func(from time.Time, seconds int) {
		for i := 0; i <= seconds*20; i++ {
			at := from.Add(time.Duration(i) * 50 * time.Millisecond)
			if a := c.OnInput(packet(112, 1, protocol.NoTick, at, quic150, true, false), 110, t0); a.Flagged {
				flags++
				if want := tC(tB).Add(RTTDisagreement); !at.Equal(want) {
					t.Errorf("flagged at %v, want %v", at.Sub(t0), want.Sub(t0))
				}
			}
		}
	}
	run(tB, 4)
	if flags != 0 {
		t.Fatal("flagged after a run of 4 s")
	}
	c.OnInput(packet(112, 1, protocol.NoTick, tB.Add(4500*time.Millisecond), quic150, true, false), 110, t0)
	// The break: QUIC's own estimate grows to cover the acknowledgements'.
	c.OnInput(packet(112, 1, protocol.NoTick, tB.Add(4600*time.Millisecond), RTT{SRTT: time.Second}, true, false), 110, t0)
	run(tC(tB), 10)
	if flags != 1 {
		t.Errorf("flagged %d times, want once", flags)
	}
	// Capped: the first run's 4.5 s and the second's 10 s.
	if got, want := c.Stats().Capped, 4500*time.Millisecond+10*time.Second; got != want {
		t.Errorf("capped for %v, want %v", got, want)
	}
}

// tC is when the second run of TestRTTCap starts.
func tC(tB time.Time) time.Time { return tB.Add(5 * time.Second) }

// The margin a snapshot reports is the smallest, since the previous
// snapshot sent, of the first arrivals of new inputs before the server
// simulates their tick (in 1/256 ticks); a repeated input does not count,
// and a snapshot not sent does not reset it.
func TestMargins(t *testing.T) {
	ch := &fakeChannel{}
	c := newTestClient(t, ch)
	// Tick 100 is simulated at t0 + 50 ms. Input 101 arrives at t0 + 10 ms:
	// 1 tick + 40 ms (0.8 tick) early.
	c.OnInput(packet(101, 1, protocol.NoTick, t0.Add(10*time.Millisecond), quic150, true, false), 100, t0)
	// 101 again with 102: only 102 is new, 2 + 0.1 ticks early: larger.
	c.OnInput(packet(102, 2, protocol.NoTick, t0.Add(45*time.Millisecond), quic150, true, false), 100, t0)
	// 102 again, very late: repeated, not counted.
	c.OnInput(packet(102, 2, protocol.NoTick, t0.Add(time.Second), quic150, true, false), 100, t0)
	ch.fail = DropQueueFull
	if s, _ := snapshot(t, c, ch, 100, t0); s.Drop != DropQueueFull {
		t.Fatalf("drop %v", s.Drop)
	}
	ch.fail = DropNone
	_, h := snapshot(t, c, ch, 100, t0)
	if h.Margin != int16(math.Round(1.8*256)) || h.MarginTick != 101 || h.InputLead != 2 {
		t.Errorf("margin %d at tick %d, lead %d; want %d at 101, lead 2", h.Margin, h.MarginTick, h.InputLead, int16(math.Round(1.8*256)))
	}
	if _, h = snapshot(t, c, ch, 102, t0); h.Margin != protocol.NoMargin || h.InputLead != 0 {
		t.Errorf("no new input: margin %d, lead %d; want NoMargin, 0", h.Margin, h.InputLead)
	}
	// Input 103 arrives for tick 110, 40 ms into it: 7 ticks and 0.8 late.
	c.OnInput(packet(103, 1, protocol.NoTick, t0.Add(40*time.Millisecond), quic150, true, false), 110, t0.Add(-50*time.Millisecond))
	if _, h = snapshot(t, c, ch, 110, t0); h.Margin != int16(math.Round(-7.8*256)) || h.MarginTick != 103 || h.InputLead != -7 {
		t.Errorf("a late input: margin %d at tick %d, lead %d; want %d at 103, lead -7", h.Margin, h.MarginTick, h.InputLead, int16(math.Round(-7.8*256)))
	}
}

// Hit confirmations ride in every snapshot, the oldest MaxConfirms first,
// until a snapshot they went in is acknowledged; past MaxPendingConfirms
// the oldest give way. A NoDamage carries its reason, a Hit none.
func TestConfirmations(t *testing.T) {
	ch := &fakeChannel{}
	c := newTestClient(t, ch)
	for i := range 10 {
		e := protocol.Event{Kind: protocol.EventHit, Tick: uint32(90 + i), Other: 2, Shot: uint16(i), Damage: 10, Reason: 3}
		if i == 1 {
			e.Kind, e.Reason = protocol.EventNoDamage, 2
		}
		c.Confirm(&e)
	}
	shots := func(h *protocol.SnapshotHeader) []uint16 {
		var s []uint16
		for _, hc := range h.Confirms[:h.NConfirms] {
			s = append(s, hc.Shot)
		}
		return s
	}
	_, h := snapshot(t, c, ch, 100, t0)
	if h.NConfirms != protocol.MaxConfirms || h.Confirms[0].Shot != 0 || h.Confirms[7].Shot != 7 {
		t.Fatalf("first snapshot confirms %v", shots(&h))
	}
	if h.Confirms[0].Reason != 0 || h.Confirms[1].Reason != 2 || h.Confirms[1].Tick != 91 || h.Confirms[1].Target != 2 {
		t.Errorf("confirms %+v, %+v: a Hit has no reason, a NoDamage its own", h.Confirms[0], h.Confirms[1])
	}
	if _, h = snapshot(t, c, ch, 102, t0); h.NConfirms != 8 || h.Confirms[0].Shot != 0 {
		t.Errorf("unacknowledged: the same confirms again, got %v", shots(&h))
	}
	c.OnInput(packet(103, 1, 100, t0, quic150, true, false), 103, t0)
	if _, h = snapshot(t, c, ch, 104, t0); h.NConfirms != 2 || h.Confirms[0].Shot != 8 || h.Confirms[1].Shot != 9 {
		t.Errorf("after the ack of the first: %v, want [8 9]", shots(&h))
	}
	c.OnInput(packet(105, 1, 104, t0, quic150, true, false), 105, t0)
	if _, h = snapshot(t, c, ch, 106, t0); h.NConfirms != 0 {
		t.Errorf("all acknowledged, yet %v", shots(&h))
	}
	for i := range MaxPendingConfirms + 8 {
		c.Confirm(&protocol.Event{Kind: protocol.EventHit, Tick: 107, Shot: uint16(100 + i)})
	}
	if _, h = snapshot(t, c, ch, 108, t0); h.NConfirms != 8 || h.Confirms[0].Shot != 108 {
		t.Errorf("past %d pending: %v, want the oldest 8 gone", MaxPendingConfirms, shots(&h))
	}
}

// A snapshot deltas against the newest snapshot the client acknowledged,
// while the ring holds it; otherwise it goes in full. A snapshot that was
// not sent is no baseline. The client's own player is never in it.
func TestBaselines(t *testing.T) {
	ch := &fakeChannel{}
	c := newTestClient(t, ch)
	decoded := map[uint32]*protocol.State{}
	send := func(tick uint32) (Sent, protocol.SnapshotHeader) {
		t.Helper()
		s, h := snapshot(t, c, ch, tick, t0.Add(time.Duration(tick)*time.Millisecond))
		if s.Drop != DropNone {
			return s, h
		}
		var out protocol.State
		if err := protocol.DecodeSnapshot(ch.sent[len(ch.sent)-1], decoded[h.Baseline], &h, &out); err != nil {
			t.Fatalf("tick %d: %v", tick, err)
		}
		if len(out.Players) != 2 || out.Players[0].ID != 2 || out.Players[1].ID != 3 || out.Players[0].State.Pos[1] != int32(tick) {
			t.Errorf("tick %d decodes to %+v: want players 2 and 3 of its tick", tick, out.Players)
		}
		decoded[tick] = &out
		return s, h
	}
	ack := func(a uint32, now int64) {
		c.OnInput(packet(uint32(now), 1, a, t0.Add(time.Duration(now)*time.Millisecond), quic150, true, false), now, t0)
	}
	if s, h := send(100); !s.Full || h.Baseline != protocol.NoTick || h.Interval != 2 {
		t.Errorf("first snapshot: full %v, baseline %d, interval %d", s.Full, h.Baseline, h.Interval)
	}
	if s, _ := send(102); !s.Full {
		t.Error("nothing acknowledged, yet a delta")
	}
	ack(100, 103)
	if s, h := send(104); s.Full || h.Baseline != 100 {
		t.Errorf("after ack 100: full %v, baseline %d", s.Full, h.Baseline)
	}
	ch.fail = DropQueueFull
	if s, _ := send(106); s.Drop != DropQueueFull {
		t.Fatalf("drop %v", s.Drop)
	}
	ch.fail = DropNone
	samples := c.rtt.Samples()
	ack(106, 107) // acknowledges what was never sent
	if s, _ := send(108); !s.Full || c.rtt.Samples() != samples {
		t.Errorf("against a snapshot not sent: full %v, samples %d → %d", s.Full, samples, c.rtt.Samples())
	}
	// Ack 108, then nothing more: it serves until the ring wraps round to
	// its slot, Baselines snapshots later.
	ack(108, 109)
	last := uint32(108 + 2*protocol.Baselines)
	for tick := uint32(110); tick < last; tick += 2 {
		if s, h := send(tick); s.Full || h.Baseline != 108 {
			t.Fatalf("tick %d: full %v, baseline %d; want 108", tick, s.Full, h.Baseline)
		}
	}
	if s, _ := send(last); !s.Full {
		t.Errorf("tick %d: a delta against 108, whose slot it takes", last)
	}
}

// While flow control halves the rate, the client gets every other
// snapshot, each saying the interval is twice the room's, and its inputs'
// bound allows the snapshot interval more.
func TestHalved(t *testing.T) {
	ch := &fakeChannel{}
	c := newTestClient(t, ch)
	c.OnInput(packet(101, 1, protocol.NoTick, t0, quic150, true, false), 100, t0)
	for tick := int64(100); tick < 110; tick += 2 {
		if !c.Due(tick) {
			t.Errorf("full rate: tick %d not due", tick)
		}
	}
	a := c.OnInput(packet(102, 1, protocol.NoTick, t0, quic150, true, true), 100, t0)
	if !near(a.Earliest, 100-3-2-5-2) {
		t.Errorf("halved: earliest %v, want %v", a.Earliest, 100-3-2-5-2)
	}
	var due []int64
	for tick := int64(100); tick < 110; tick += 2 {
		if c.Due(tick) {
			due = append(due, tick)
		}
	}
	if len(due) != 3 || due[0] != 100 || due[1] != 104 || due[2] != 108 {
		t.Errorf("halved: due %v, want [100 104 108]", due)
	}
	if _, h := snapshot(t, c, ch, 100, t0); h.Interval != 4 {
		t.Errorf("halved: interval %d, want 4", h.Interval)
	}
	c.OnInput(packet(103, 1, protocol.NoTick, t0, quic150, true, false), 100, t0)
	if _, h := snapshot(t, c, ch, 102, t0); h.Interval != 2 || !c.Due(102) {
		t.Errorf("restored: interval %d (want 2), due %v", h.Interval, c.Due(102))
	}
}

// A snapshot with no buffer goes nowhere and changes nothing: neither the
// margin nor the confirmations.
func TestNoBuffer(t *testing.T) {
	ch := &fakeChannel{none: DropNoBuffer}
	c := newTestClient(t, ch)
	c.OnInput(packet(101, 1, protocol.NoTick, t0, quic150, true, false), 100, t0)
	c.Confirm(&protocol.Event{Kind: protocol.EventHit, Shot: 7})
	if s := c.Snapshot(&protocol.SnapshotHeader{}, world(100), t0); s.Drop != DropNoBuffer || !s.Drop.Lost() {
		t.Fatalf("sent %+v", s)
	}
	ch.none = DropNotOpen
	if s := c.Snapshot(&protocol.SnapshotHeader{}, world(100), t0); s.Drop != DropNotOpen || s.Drop.Lost() {
		t.Fatalf("sent %+v: not open is no loss", s)
	}
	ch.none = DropNone
	if _, h := snapshot(t, c, ch, 100, t0); h.Margin == protocol.NoMargin || h.NConfirms != 1 || h.Confirms[0].Shot != 7 {
		t.Errorf("after the drops: margin %d, %d confirms", h.Margin, h.NConfirms)
	}
}

// Every Drop has a label of its own.
func TestDropLabels(t *testing.T) {
	seen := map[string]Drop{}
	for d := range DropCount {
		l := d.String()
		if l == "" || l == "unknown" {
			t.Errorf("drop %d has no label", d)
		}
		if o, ok := seen[l]; ok {
			t.Errorf("drops %d and %d share the label %q", o, d, l)
		}
		seen[l] = d
	}
	if DropCount.String() != "unknown" {
		t.Errorf("DropCount labelled %q", DropCount.String())
	}
}

// New names the setting it refuses.
func TestNewRefuses(t *testing.T) {
	for field, change := range map[string]func(*Config){
		"TickRate":         func(c *Config) { c.TickRate = 0 },
		"Interval":         func(c *Config) { c.Interval = 0 },
		"ViewLagTolerance": func(c *Config) { c.ViewLagTolerance = -1 },
		"RTTMargin":        func(c *Config) { c.RTTMargin = -1 },
		"MaxInterpDelay":   func(c *Config) { c.MaxInterpDelay = -1 },
	} {
		c := testConfig
		change(&c)
		if _, err := New(c); err == nil || !contains(err.Error(), field) {
			t.Errorf("%s: %v", field, err)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// A stall: the packets that follow the first sample still acknowledge the
// same snapshot, later and later (no newer one came, or they were held up
// on the way). Each is bounded by its own age, the time since that snapshot
// left, where the smoothed round trip would follow over several packets;
// QUIC's estimate plus the margin still caps it.
func TestStallBoundsByThePacketsOwnAge(t *testing.T) {
	ch := &fakeChannel{}
	c := newTestClient(t, ch)
	snapshot(t, c, ch, 100, t0)
	c.OnInput(packet(103, 1, 100, t0.Add(100*time.Millisecond), quic150, true, false), 102, t0) // 200 ms bound: 4 ticks
	// 400 ms after snapshot 100 left: 8 ticks, beyond the smoothed 4.
	slow := RTT{SRTT: 500 * time.Millisecond}
	if a := c.OnInput(packet(104, 1, 100, t0.Add(400*time.Millisecond), slow, true, false), 104, t0); !near(a.Earliest, 104-8-2-4) {
		t.Errorf("the packet's own age: earliest %v, want %v", a.Earliest, 104-8-2-4)
	}
	// Capped at QUIC's 150 ms + the margin (a tick and RTTMargin's 100 ms):
	// 6 ticks.
	if a := c.OnInput(packet(105, 1, 100, t0.Add(700*time.Millisecond), quic150, true, false), 105, t0); !near(a.Earliest, 105-6-2-4) {
		t.Errorf("capped: earliest %v, want %v", a.Earliest, 105-6-2-4)
	}
	// A packet that acknowledges no snapshot says nothing of its age.
	if a := c.OnInput(packet(106, 1, protocol.NoTick, t0.Add(900*time.Millisecond), slow, true, false), 106, t0); !near(a.Earliest, 106-4-2-4) {
		t.Errorf("no acknowledgement: earliest %v, want %v (the smoothed 4 ticks)", a.Earliest, 106-4-2-4)
	}
}

// SnapshotsAround names the snapshots a client drew a view time between:
// the newest sent at or before it and the next sent, when they are more
// than a tick apart (testConfig's interval is 2 ticks).
func TestSnapshotsAround(t *testing.T) {
	ch := &fakeChannel{}
	c := newTestClient(t, ch)
	// A room's first ticks: nothing was sent before the first snapshot.
	young := newTestClient(t, &fakeChannel{})
	snapshot(t, young, young.out.(*fakeChannel), 4, t0)
	snapshot(t, young, young.out.(*fakeChannel), 6, t0)
	if back, span := young.SnapshotsAround(input.ViewTimeOf(2.5)); back != 0 || span != 0 {
		t.Errorf("before the first snapshot: back %d span %d, want 0 and 0", back, span)
	}
	for tick := uint32(100); tick <= 110; tick += 2 {
		snapshot(t, c, ch, tick, t0)
	}
	for _, tc := range []struct {
		t          float64
		back, span uint8
	}{
		{103.5, 1, 2},  // between 102 and 104, 1.5 ticks after 102
		{104.25, 0, 2}, // between 104 and 106
		{104, 0, 0},    // 104's own time: no line drawn
		{110, 0, 0},    // the newest: nothing after it yet
		{110.5, 0, 0},  // after the newest (a client holds it)
		{99.5, 0, 0},   // before the first snapshot sent
	} {
		back, span := c.SnapshotsAround(input.ViewTimeOf(tc.t))
		if back != tc.back || span != tc.span {
			t.Errorf("%v: back %d span %d, want %d and %d", tc.t, back, span, tc.back, tc.span)
		}
	}
	// A snapshot lost on the way out (no buffer) is no endpoint: the
	// client that lost 112 drew nothing between 110 and 114 (it showed
	// 110), but the server names the pair the sent ones make.
	ch.none = DropNoBuffer
	snapshot(t, c, ch, 112, t0)
	ch.none = DropNone
	snapshot(t, c, ch, 114, t0)
	if back, span := c.SnapshotsAround(input.ViewTimeOf(111)); back != 1 || span != 4 {
		t.Errorf("across a snapshot not sent: back %d span %d, want 1 and 4", back, span)
	}
	// Snapshots older than the ring remembers name nothing.
	for tick := uint32(116); tick <= 220; tick += 2 {
		snapshot(t, c, ch, tick, t0)
	}
	if back, span := c.SnapshotsAround(input.ViewTimeOf(103.5)); back != 0 || span != 0 {
		t.Errorf("long ago: back %d span %d, want 0 and 0", back, span)
	}
	if back, span := c.SnapshotsAround(input.ViewTimeOf(219)); back != 1 || span != 2 {
		t.Errorf("recent: back %d span %d, want 1 and 2", back, span)
	}
}
