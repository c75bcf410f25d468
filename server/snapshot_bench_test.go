package server

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/internal/buildinfo"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/replication"
	"github.com/rewind-gg/rewind/weapons"
)

// benchRoom is a room without a network: 12 members whose sessions are
// channels the benchmark drains, standing in for the QUIC senders.
type benchRoom struct {
	claim   float64 // the view lag every input claims, ticks (default 6)
	skip    int     // when > 0, a member sends no input one tick in skip (it is rooted)
	r       *room
	members []*member
	rng     *rand.Rand
	acks    [][ackDelay + 2][]uint32 // per member: acknowledgements in flight, by the tick they arrive, reused
	tick    int64
	bytes   uint64
	sent    uint64
	full    uint64
}

// ackDelay is how many ticks an acknowledgement takes to come back (200 ms
// at 20 Hz), and ackLoss the chance a snapshot or its ack is lost.
const (
	ackDelay = 4
	ackLoss  = 0.05
)

func newBenchRoom(tb testing.TB) *benchRoom { return newBenchRoomWith(tb, nil) }

// newBenchRoomWith is the benchmark room with its config changed first.
func newBenchRoomWith(tb testing.TB, change func(*Config)) *benchRoom {
	cfg := DefaultConfig()
	cfg.Match.Health = 1e9 // nobody dies: the load stays the same
	if change != nil {
		change(&cfg)
	}
	file := &weapons.File{Weapons: []weapons.Definition{{Name: "rocket", Kind: "projectile", Damage: 1, Speed: 25, Radius: 0.15, LifetimeTicks: 50}}}
	cat, err := file.Catalog(weapons.NewRegistry())
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{cfg: cfg, log: zerolog.Nop(), m: newMetrics(buildinfo.Info{}), rooms: map[string]*room{}, sessions: map[*session]struct{}{},
		weapons: file, catalog: cat, level: mustLevel(tb, &cfg)}
	s.welcome = welcomeTemplate(&s.cfg, cat, s.level)
	r, err := newRoom(s, "bench")
	if err != nil {
		tb.Fatal(err)
	}
	b := &benchRoom{r: r, rng: rand.New(rand.NewPCG(1, 2))}
	for i := range 12 {
		se := &session{ctrl: make(chan protocol.Event, ctrlQueue), queue: replication.NewQueue(sendBuffers), done: make(chan struct{})}
		se.snapshots = se.queue
		name := fmt.Sprint("p", i)
		rep := r.admit(se, &identity{user: name, name: name, room: "bench", team: uint8(1 + i%2)}, 100)
		if rep.reject != nil {
			tb.Fatal(rep.reject.Reason)
		}
		b.members = append(b.members, r.bySess[se])
	}
	b.acks = make([][ackDelay + 2][]uint32, 12)
	return b
}

// step feeds every player its input (running about, turning, one rocket
// every four ticks: 100 to 130 in flight), runs one room tick with its
// snapshots, "sends" them, and delivers the acknowledgements due.
func (b *benchRoom) step() {
	r := b.r
	now := r.sim.Now()
	for i, m := range b.members {
		if b.skip > 0 && (now+int64(i))%int64(b.skip) == 0 {
			continue
		}
		msg := replication.Packet{Input: protocol.InputPacket{Newest: uint32(now), SnapshotAck: protocol.NoTick, Count: 1},
			Arrival: replication.Arrival{QUIC: replication.RTT{SRTT: 200 * time.Millisecond, RTTVar: 10 * time.Millisecond}, QUICSampled: true, At: time.Now()}}
		in := &msg.Input
		q := &in.Inputs[0]
		phase := float64(now)*0.07 + float64(i)
		q.MoveX, q.MoveZ = protocol.QuantizeAxis(math.Sin(phase)), protocol.QuantizeAxis(math.Cos(phase*0.7))
		q.Yaw, q.Pitch = protocol.QuantizeYaw(phase), protocol.QuantizePitch(0.4)
		if (now+int64(i))%4 == 0 {
			q.Buttons = ecs.ButtonFire
		}
		q.ViewLag = protocol.QuantizeLag(cmp.Or(b.claim, 6))
		// Acknowledgements due now ride on the input, as a client's would.
		due := &b.acks[i][now%(ackDelay+2)]
		for _, a := range *due {
			if in.SnapshotAck == protocol.NoTick || a > in.SnapshotAck {
				in.SnapshotAck = a
			}
		}
		*due = (*due)[:0]
		r.applyInputs(m, &msg)
	}
	r.tick()
	for i, m := range b.members {
		for {
			select {
			case d := <-m.sess.queue.Out():
				b.bytes += uint64(len(d))
				b.sent++
				var h protocol.SnapshotHeader
				protocol.DecodeSnapshotHeader(d, &h)
				if h.Baseline == protocol.NoTick {
					b.full++
				}
				if b.rng.Float64() >= ackLoss {
					at := &b.acks[i][(int64(h.Tick)+ackDelay)%(ackDelay+2)]
					*at = append(*at, h.Tick)
				}
				m.sess.queue.Return(d)
				continue
			case <-m.sess.ctrl:
				continue
			default:
			}
			break
		}
	}
	b.tick++
}

func (b *benchRoom) liveProjectiles() int {
	n := 0
	for _, o := range b.r.world.Objects {
		if o.State.Kind == protocol.KindProjectile {
			n++
		}
	}
	return n
}

// BenchmarkSnapshots is one room tick with its 12 snapshots. It reports the
// snapshot bandwidth per client (target ≤ 64 kbit/s) and allocations
// (0 in steady state). The baseline in the same run is the bandwidth with
// every snapshot sent in full, as if no acknowledgement ever arrived.
func BenchmarkSnapshots(b *testing.B) {
	br := newBenchRoom(b)
	for range 200 {
		br.step()
	}
	br.bytes, br.sent, br.full = 0, 0, 0
	projectiles := 0
	b.ReportAllocs()
	for b.Loop() {
		br.step()
		projectiles += br.liveProjectiles()
	}
	n := float64(b.N)
	perClientPerSecond := float64(br.bytes) / n / 12 * float64(br.r.cfg.SnapshotRate)
	b.ReportMetric(perClientPerSecond, "B/client/s")
	b.ReportMetric(perClientPerSecond*8/1000, "kbit/s/client")
	b.ReportMetric(float64(br.bytes)/float64(br.sent), "B/snapshot")
	b.ReportMetric(float64(projectiles)/n, "projectiles")
	b.ReportMetric(100*float64(br.full)/float64(br.sent), "%full")

	// The baseline: the same world, every snapshot in full.
	var full int
	buf := make([]byte, 0, protocol.SnapshotBufferSize)
	var known, target protocol.State
	for _, m := range br.members {
		h := protocol.SnapshotHeader{Tick: uint32(br.r.sim.Now() - 1), Baseline: protocol.NoTick, Interval: 1}
		target = protocol.State{Tick: h.Tick, Players: target.Players[:0], Objects: br.r.world.Objects}
		for _, p := range br.r.world.Players {
			if p.ID != m.id {
				target.Players = append(target.Players, p)
			}
		}
		full += len(protocol.AppendSnapshot(buf[:0], &h, nil, &target, &known))
	}
	b.ReportMetric(float64(full)/12*float64(br.r.cfg.SnapshotRate)*8/1000, "full-kbit/s/client")
}

// The room's per-tick path, snapshots included, allocates nothing once warm.
func TestRoomTickAllocatesNothing(t *testing.T) {
	br := newBenchRoom(t)
	for range 300 {
		br.step()
	}
	n := 0
	for range 100 {
		br.step()
		n += br.liveProjectiles()
	}
	if avg := float64(n) / 100; avg < 90 || avg > 140 {
		t.Errorf("%.0f projectiles in flight on average, the benchmark wants 100 to 130", avg)
	}
	// The total of 200 ticks, not an average rounded down.
	if allocs := testing.AllocsPerRun(1, func() {
		for range 200 {
			br.step()
		}
	}); allocs != 0 {
		t.Errorf("200 room ticks with 12 snapshots allocate %v times", allocs)
	}
}

// The tick's rarer branches allocate nothing either: players dying and
// respawning (teleports in the history, NoDamage hits on the invulnerable),
// claims beyond the measured bound (clamps counted), rooted ticks.
func TestRoomTickAllocatesNothingWhenItGetsRough(t *testing.T) {
	br := newBenchRoomWith(t, func(c *Config) {
		c.Match.Health, c.Match.RespawnTicks, c.Match.InvulnerableTicks = 5, 10, 20
	})
	br.claim, br.skip = 30, 7
	for range 300 {
		br.step()
	}
	m := br.r.srv.m
	before := readCounter(m.clamped[ecs.ClampMeasured]) + readCounter(m.hits[ecs.NoDamageInvulnerable])
	if allocs := testing.AllocsPerRun(1, func() {
		for range 200 {
			br.step()
		}
	}); allocs != 0 {
		t.Errorf("200 rough room ticks allocate %v times", allocs)
	}
	var teleports uint32
	for _, mem := range br.members {
		_, _, life, _, _, _, _, _ := br.r.body.Get(mem.entity)
		teleports += life.Teleports
	}
	clamps := readCounter(m.clamped[ecs.ClampMeasured])
	if after := clamps + readCounter(m.hits[ecs.NoDamageInvulnerable]); after-before < 100 || clamps == 0 || teleports == 0 {
		t.Errorf("%v clamps and no-damage hits in 200 ticks, %d teleports: the test must take the rough branches", after-before, teleports)
	}
}

func readCounter(c prometheus.Counter) float64 {
	var m dto.Metric
	c.Write(&m)
	return m.GetCounter().GetValue()
}

// BenchmarkRoomTickRecording is the room benchmark's tick (12 players, about
// a hundred rockets in flight, every snapshot encoded) with the match
// recorded (record.dir) and without, the two rooms ticking in turn in the
// same run, each first every other time: it reports both tick times and
// their ratio (target: within 5%).
func BenchmarkRoomTickRecording(b *testing.B) {
	off := newBenchRoom(b)
	on := newBenchRoomWith(b, func(c *Config) { c.Record.Dir = b.TempDir() })
	if on.r.rec == nil {
		b.Fatal("the room does not record")
	}
	for range 300 {
		off.step()
		on.step()
	}
	var tOff, tOn time.Duration
	timed := func(br *benchRoom, total *time.Duration) {
		start := time.Now()
		br.step()
		*total += time.Since(start)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// Each room ticks first every other time: the second one finds the
		// caches warmer.
		if i++; i%2 == 0 {
			timed(off, &tOff)
			timed(on, &tOn)
		} else {
			timed(on, &tOn)
			timed(off, &tOff)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(tOff.Microseconds())/n, "off-µs/tick")
	b.ReportMetric(float64(tOn.Microseconds())/n, "on-µs/tick")
	b.ReportMetric(float64(tOn)/float64(tOff), "on/off")
	b.ReportMetric(float64(on.r.rec.Dropped()), "dropped-ticks")
	b.StopTimer()
	if err := on.r.rec.Close(); err != nil {
		b.Fatal(err)
	}
}

// Recording adds nothing to the per-tick allocations either: the room's
// and the writer's, which runs beside it (testing.AllocsPerRun would hold
// the process to one core, where the writer does not run).
func TestRoomTickWithRecordingAllocatesNothing(t *testing.T) {
	br := newBenchRoomWith(t, func(c *Config) { c.Record.Dir = t.TempDir() })
	// Polled: the writer says nothing when it has drained the queue.
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	drained := func() {
		for deadline := time.Now().Add(10 * time.Second); br.r.rec.Pending() > 0; <-poll.C {
			if time.Now().After(deadline) {
				t.Fatalf("the writer did not drain %d ticks in 10 s", br.r.rec.Pending())
			}
		}
	}
	// The recorder's buffers are made as the ticks in flight to its writer
	// first need them. Stepping at full speed, dozens of ticks queue between
	// the writer's wakes (at half its 256, or on its 100 ms timer), so the
	// pool grows to dozens of buffers.
	for range 1000 {
		br.step()
	}
	drained()
	// Bursts of 10 ticks, each drained before the next, then find every
	// buffer they need made (a hundred at full speed could outrun a pool
	// warmed beside a slow writer: under the race detector the timer drains
	// it every ~100 ticks). Counted over the bursts only: the wait between
	// them is the test's, and the runtime's timers and channel waits
	// allocate in it.
	// A collection empties the runtime's caches (of channel waiters, say),
	// which the next goroutine to block, the writer among them, refills by
	// allocating: none while counting, and five bursts uncounted first.
	// The count is the process's: a goroutine another test left winding
	// down (a closing connection's timers) can allocate during a burst.
	// So three rounds of 100 ticks, and the fewest counts: an allocation of
	// the room's own shows in every round.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	fewest := uint64(math.MaxUint64)
	for range 3 {
		var n uint64
		for i := range 15 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range 10 {
				br.step()
			}
			runtime.ReadMemStats(&after)
			if i >= 5 {
				n += after.Mallocs - before.Mallocs
			}
			drained()
		}
		fewest = min(fewest, n)
	}
	if fewest != 0 {
		t.Errorf("100 recorded room ticks allocate %d times (the fewest of three rounds)", fewest)
	}
	if err := br.r.rec.Close(); err != nil || br.r.rec.Dropped() != 0 {
		t.Errorf("recording: %v, %d ticks dropped", err, br.r.rec.Dropped())
	}
}
