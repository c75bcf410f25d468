package bench

import (
	"cmp"
	"flag"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/internal/loadgen"
)

var (
	maxRooms = flag.Int("capacity.max", 512, "the most rooms the capacity benchmark adds")
	settle   = flag.Duration("capacity.settle", 2*time.Second, "how long the capacity benchmark lets a step settle before measuring it")
	window   = flag.Duration("capacity.window", 5*time.Second, "how long the capacity benchmark measures each step")
	profile  = flag.String("capacity.cpuprofile", "", "write the Rewind server's CPU profile to this file")
	// roundsAt8: an odd number, so that the median is a round.
	roundsAt8 = flag.Int("capacity.rounds", 3, "how many rounds of Rewind and the UDP floor at 8 rooms the capacity benchmark measures")
	// layoutRooms: below the saturation BenchmarkCapacity finds, so that
	// every layout keeps up and the CPU compares.
	layoutRooms = flag.Int("layout.rooms", 128, "how many rooms BenchmarkLayout runs in each layout")
)

const (
	players  = 12 // a 6v6 room
	tickRate = 20 // the default server's
	// lateBound and lateShare: a server keeps up while at most lateShare of
	// its rooms' ticks start more than lateBound late (p99 ≤ 5 ms).
	lateBound = 0.005
	lateShare = 0.01
	// minApplied: the share of inputs due that must be applied in time.
	minApplied = 0.99
)

// say prints a line of the benchmark's progress: go test shows a
// benchmark's standard output whole, where it cuts its log.
func say(format string, args ...any) { fmt.Printf(format+"\n", args...) }

// step is one measurement: the server holding rooms rooms of clients.
type step struct {
	rooms   int
	seconds float64
	// cpu is the server process's CPU per room-second, room the room
	// goroutines' own (ticks and snapshots), µs.
	cpu, room float64
	late      float64 // the share of ticks that started more than 5 ms late
	overruns  uint64
	ticks     float64 // ticks simulated / ticks due
	applied   float64 // inputs applied / inputs due
	fleetLate float64 // the share of the fleet's send slots served late
	fleetCPU  float64 // the fleets' CPU, in cores (each fleet has one)
	// up and down are the average packet sizes (bytes) and rates (packets a
	// second per client) the clients saw.
	upSize, downSize float64
	upRate, downRate float64
	// What went wrong on the way (Rewind): datagrams dropped and inputs
	// not applied in time, by reason, and clients whose snapshot rate flow
	// control halved.
	drops, inputs map[string]uint64
	halved        uint64
}

// keptUp says whether the server kept up with the step's rooms: its ticks
// on time, and its players served (99% of the inputs due applied in time:
// ticks on time alone do not say the packets around them were).
func (s step) keptUp() bool {
	return s.late <= lateShare && s.overruns == 0 && s.ticks >= 0.97 && s.applied >= minApplied
}

func (s step) String() string {
	var trouble strings.Builder
	for _, m := range []struct {
		name string
		by   map[string]uint64
	}{{"dropped", s.drops}, {"inputs", s.inputs}} {
		for _, k := range slices.Sorted(maps.Keys(m.by)) {
			fmt.Fprintf(&trouble, "  %s %s %d", m.name, k, m.by[k])
		}
	}
	if s.halved > 0 {
		fmt.Fprintf(&trouble, "  halved %d", s.halved)
	}
	return fmt.Sprintf("%4d rooms  cpu %7.0f µs/room-s  room %5.0f µs/room-s  late>5ms %5.2f%%  overruns %d  ticks %5.3f  applied %5.3f  fleet late %5.2f%% cpu %3.0f%%  up %3.0f B × %4.1f/s  down %3.0f B × %4.1f/s%s",
		s.rooms, s.cpu, s.room, 100*s.late, s.overruns, s.ticks, s.applied, 100*s.fleetLate, 100*s.fleetCPU, s.upSize, s.upRate, s.downSize, s.downRate, trouble.String())
}

// rig is servers (Rewind's or a floor's), each in its own process, and a
// fleet of clients for each.
type rig struct {
	servers, fleets []*child
	isRewind        bool
	rooms           int
}

// layout is how a rig's servers run: how many processes, each one's
// GOMAXPROCS, and its GOGC ("": the default, 100).
type layout struct {
	procs, gomaxprocs int
	gogc              string
}

var single = layout{procs: 1, gomaxprocs: 1}

// newRig starts the server processes of the kind ("server", "echo-udp",
// "echo-quic") and a fleet of the mode for each; up and down are a floor's
// packet sizes.
func newRig(tb testing.TB, kind string, mode loadgen.Mode, up, down int, l layout) *rig {
	tb.Helper()
	scpu, fcpu := cpus()
	r := &rig{isRewind: mode == loadgen.Rewind}
	for i := range l.procs {
		env := []string{envRole + "=" + kind, envCPU + "=" + scpu, "GOMAXPROCS=" + strconv.Itoa(l.gomaxprocs), envSize + "=" + strconv.Itoa(down)}
		if l.gogc != "" {
			env = append(env, "GOGC="+l.gogc)
		}
		if kind == "server" && *profile != "" && i == 0 {
			env = append(env, envProfile+"="+*profile)
		}
		srv := startChild(tb, kind, env...)
		fl := startChild(tb, "fleet "+string(mode), envRole+"=fleet", envCPU+"="+fcpu, "GOMAXPROCS=1", envAddr+"="+srv.addr,
			envMode+"="+string(mode), envSize+"="+strconv.Itoa(up), envSeed+"="+strconv.Itoa(1+i))
		r.servers, r.fleets = append(r.servers, srv), append(r.fleets, fl)
	}
	return r
}

func (r *rig) stop() {
	for i := range r.servers {
		r.fleets[i].stop()
		r.servers[i].stop()
	}
}

// grow adds rooms, in turn to each server, until the rig holds n.
func (r *rig) grow(tb testing.TB, n int) {
	tb.Helper()
	for ; r.rooms < n; r.rooms++ {
		r.fleets[r.rooms%len(r.fleets)].ask(tb, fmt.Sprintf("room r%03d", r.rooms))
	}
}

// sample is a rig's counters at one instant, summed over its processes.
type sample struct {
	at       time.Time
	cpu      time.Duration
	fleetCPU time.Duration
	srv      serverStats
	fleet    loadgen.Stats
}

func (r *rig) sample(tb testing.TB) sample {
	tb.Helper()
	var s sample
	for _, c := range r.servers {
		s.cpu += c.cpu(tb)
	}
	for _, c := range r.fleets {
		s.fleetCPU += c.cpu(tb)
	}
	s.at = time.Now()
	for i := range r.servers {
		if r.isRewind {
			var st serverStats
			r.servers[i].stats(tb, &st)
			s.srv.add(&st)
		}
		var fs loadgen.Stats
		r.fleets[i].stats(tb, &fs)
		addFleet(&s.fleet, &fs)
	}
	return s
}

// add sums another server's stats into s.
func (s *serverStats) add(o *serverStats) {
	s.Rooms += o.Rooms
	s.Players += o.Players
	s.Ticks += o.Ticks
	s.TickTotal += o.TickTotal
	s.Applied += o.Applied
	s.Overruns += o.Overruns
	s.Snapshots += o.Snapshots
	s.SnapshotBytes += o.SnapshotBytes
	s.Halved += o.Halved
	for _, m := range []struct{ into, from *map[string]uint64 }{{&s.Drops, &o.Drops}, {&s.Inputs, &o.Inputs}} {
		if *m.into == nil {
			*m.into = map[string]uint64{}
		}
		for k, v := range *m.from {
			(*m.into)[k] += v
		}
	}
	if s.Lateness == nil {
		s.LatenessBounds = o.LatenessBounds
		s.Lateness = make([]uint64, len(o.Lateness))
	}
	for i := range min(len(s.Lateness), len(o.Lateness)) {
		s.Lateness[i] += o.Lateness[i]
	}
}

func addFleet(s, o *loadgen.Stats) {
	s.Clients += o.Clients
	s.Sent += o.Sent
	s.Recv += o.Recv
	s.SentBytes += o.SentBytes
	s.RecvBytes += o.RecvBytes
	s.Dropped += o.Dropped
	s.LateSlots += o.LateSlots
	s.Slots += o.Slots
	s.Disconnected += o.Disconnected
	s.SnapshotTicks += o.SnapshotTicks
}

// measure lets the rig settle, then measures it for a window.
func (r *rig) measure(tb testing.TB, settle, window time.Duration) step {
	tb.Helper()
	<-time.After(settle)
	a := r.sample(tb)
	<-time.After(window)
	b := r.sample(tb)
	secs := b.at.Sub(a.at).Seconds()
	roomSecs := float64(r.rooms) * secs
	clientSecs := roomSecs * players
	s := step{rooms: r.rooms, seconds: secs, cpu: float64((b.cpu - a.cpu).Microseconds()) / roomSecs,
		fleetCPU: (b.fleetCPU - a.fleetCPU).Seconds() / secs / float64(len(r.fleets))}
	up, down := b.fleet.Sent-a.fleet.Sent, b.fleet.Recv-a.fleet.Recv
	s.upRate, s.downRate = float64(up)/clientSecs, float64(down)/clientSecs
	if up > 0 {
		s.upSize = float64(b.fleet.SentBytes-a.fleet.SentBytes) / float64(up)
	}
	if down > 0 {
		s.downSize = float64(b.fleet.RecvBytes-a.fleet.RecvBytes) / float64(down)
	}
	if slots := b.fleet.Slots - a.fleet.Slots; slots > 0 {
		s.fleetLate = float64(b.fleet.LateSlots-a.fleet.LateSlots) / float64(slots)
	}
	if r.isRewind {
		s.room = float64((b.srv.TickTotal - a.srv.TickTotal).Microseconds()) / roomSecs
		s.overruns = b.srv.Overruns - a.srv.Overruns
		s.ticks = float64(b.srv.Ticks-a.srv.Ticks) / (roomSecs * tickRate)
		s.applied = float64(b.srv.Applied-a.srv.Applied) / (clientSecs * tickRate)
		s.late = lateShareOf(a.srv, b.srv)
		s.drops, s.inputs = diff(a.srv.Drops, b.srv.Drops), diff(a.srv.Inputs, b.srv.Inputs)
		delete(s.inputs, "queued")    // in time
		delete(s.inputs, "duplicate") // the redundant copies every packet carries
		s.halved = b.srv.Halved - a.srv.Halved
	}
	return s
}

// diff is b − a, by key, the keys that grew.
func diff(a, b map[string]uint64) map[string]uint64 {
	d := map[string]uint64{}
	for k, v := range b {
		if v > a[k] {
			d[k] = v - a[k]
		}
	}
	return d
}

// lateShareOf is the share of the ticks between a and b that started more
// than lateBound late.
func lateShareOf(a, b serverStats) float64 {
	n := len(b.Lateness) - 1
	if n < 0 || len(a.Lateness) != len(b.Lateness) {
		return math.NaN()
	}
	total := b.Lateness[n] - a.Lateness[n]
	if total == 0 {
		return 0
	}
	for i, bound := range b.LatenessBounds {
		if bound >= lateBound {
			return 1 - float64(b.Lateness[i]-a.Lateness[i])/float64(total)
		}
	}
	return math.NaN()
}

// nextRooms is the benchmark's schedule: 1, 8, then 8 more a step, 16
// more past 128.
func nextRooms(n int) int {
	switch {
	case n < 8:
		return 8
	case n < 128:
		return n + 8
	}
	return n + 16
}

// BenchmarkCapacity finds how many 6v6 rooms one core of a Rewind server
// holds with independent clients, and what a room-second costs, against the
// floors of the same traffic measured in the same run. Run it once:
//
//	go test ./bench -run '^$' -bench Capacity -benchtime 1x
//
// The server runs alone on CPU 0 with GOMAXPROCS=1, the clients (12 a room,
// 20 inputs a second each on a random phase, reading 20 snapshots a second)
// on CPU 1.
//
// First, rounds at 8 rooms (-capacity.rounds, 3): Rewind's server, then a
// plain UDP echo serving the same clients with packets of the sizes
// Rewind's had; and once a minimal quic-go DATAGRAM echo. Each round's
// ratio compares two neighbouring measurements: the machine's speed drifts
// over minutes, more than the ratio's own spread. The median round is
// reported: the server's CPU per room-second at 8 rooms, the room
// goroutines' own share, the floors', and Rewind's ratio to each floor and
// to the UDP floor plus the room goroutines' own cost.
//
// Then rooms are added to one server (1, 8, 16, …, 8 at a time, 16 past
// 128) until it no longer keeps up: more than 1% of ticks start over 5 ms
// late, any tick overruns, ticks are skipped, or under 99% of the clients'
// inputs are applied in time. It reports rooms/core (the most rooms it kept
// up with) and the CPU per room-second at 1 room and at that number.
func BenchmarkCapacity(b *testing.B) {
	if testing.Short() {
		b.Skip("runs servers and fleets of clients for minutes")
	}
	for range b.N {
		capacity(b)
	}
}

// round is one round at 8 rooms: Rewind and the UDP floor.
type round struct{ rewind, udp step }

// ratio is Rewind's CPU over the UDP floor's plus the room goroutines' own.
func (r round) ratio() float64 { return r.rewind.cpu / (r.udp.cpu + r.rewind.room) }

func capacity(b *testing.B) {
	var rounds []round
	var quic step
	for i := range *roundsAt8 {
		r := newRig(b, "server", loadgen.Rewind, 0, 0, single)
		r.grow(b, 8)
		s := r.measure(b, *settle, *window)
		r.stop()
		say("round %d, rewind: %s", i+1, s)
		if !s.keptUp() {
			b.Fatalf("the server did not keep up with 8 rooms")
		}
		up, down := int(math.Round(s.upSize)), int(math.Round(s.downSize))
		rd := round{rewind: s, udp: floor(b, "echo-udp", loadgen.FloorUDP, up, down)}
		say("round %d, echo-udp: %s  (rewind/(udp+room) %.3f)", i+1, rd.udp, rd.ratio())
		rounds = append(rounds, rd)
		if i == 0 {
			quic = floor(b, "echo-quic", loadgen.FloorQUIC, up, down)
			say("echo-quic: %s", quic)
		}
	}
	slices.SortFunc(rounds, func(a, b round) int { return cmp.Compare(a.ratio(), b.ratio()) })
	at8 := rounds[len(rounds)/2]

	r := newRig(b, "server", loadgen.Rewind, 0, 0, single)
	var first, kept step
	for n := 1; n <= *maxRooms; n = nextRooms(n) {
		r.grow(b, n)
		s := r.measure(b, *settle, *window)
		say("rewind: %s", s)
		if n == 1 {
			first = s
			if s.applied < 0.9 {
				b.Fatalf("1 room: %.0f%% of the inputs due were applied: the clients are not playing", 100*s.applied)
			}
		}
		if s.fleetLate > lateShare {
			say("the clients' process fell behind at %d rooms (%.1f%% of send slots late): rooms/core is at least %d", n, 100*s.fleetLate, kept.rooms)
			break
		}
		if !s.keptUp() {
			break
		}
		kept = s
	}
	r.stop()
	if kept.rooms == 0 {
		b.Fatal("the server did not keep up with one room")
	}
	b.ReportMetric(float64(kept.rooms), "rooms/core")
	b.ReportMetric(first.cpu, "cpu-µs/room-s@1")
	b.ReportMetric(at8.rewind.cpu, "cpu-µs/room-s@8")
	b.ReportMetric(kept.cpu, fmt.Sprintf("cpu-µs/room-s@%d", kept.rooms))
	b.ReportMetric(at8.rewind.room, "room-µs/room-s@8")
	b.ReportMetric(at8.udp.cpu, "udp-µs/room-s@8")
	b.ReportMetric(quic.cpu, "quic-µs/room-s@8")
	b.ReportMetric(at8.rewind.cpu/at8.udp.cpu, "rewind/udp@8")
	b.ReportMetric(at8.rewind.cpu/quic.cpu, "rewind/quic@8")
	b.ReportMetric(at8.ratio(), "rewind/(udp+room)@8")
	b.ReportMetric(at8.rewind.downSize*at8.rewind.downRate*8/1000, "down-kbit/s/client")
}

// floor measures a floor's server serving 8 rooms of clients that send up
// bytes and get down bytes back.
func floor(b *testing.B, kind string, mode loadgen.Mode, up, down int) step {
	fr := newRig(b, kind, mode, up, down, single)
	fr.grow(b, 8)
	s := fr.measure(b, *settle, *window)
	fr.stop()
	if s.downRate < 0.9*float64(tickRate) {
		b.Fatalf("%s: %.1f replies a second per client, %d due", kind, s.downRate, tickRate)
	}
	return s
}

// TestCapacityRig checks the benchmark's parts on one room: Rewind clients
// in their own process play (their inputs are applied, their snapshots
// open) against a server in its own, and the UDP floor echoes.
func TestCapacityRig(t *testing.T) {
	r := newRig(t, "server", loadgen.Rewind, 0, 0, single)
	r.grow(t, 1)
	s := r.measure(t, time.Second, 2*time.Second)
	r.stop()
	t.Log(s)
	if s.applied < 0.8 || s.ticks < 0.9 {
		t.Errorf("inputs applied %.2f, ticks %.2f of those due", s.applied, s.ticks)
	}
	if s.downRate < 0.8*tickRate || s.upRate < 0.8*tickRate {
		t.Errorf("%.1f snapshots and %.1f input packets a second per client, %d due", s.downRate, s.upRate, tickRate)
	}
	if s.upSize < 20 || s.downSize < 20 {
		t.Errorf("packets of %.0f B up and %.0f B down", s.upSize, s.downSize)
	}
	f := newRig(t, "echo-udp", loadgen.FloorUDP, 60, 200, single)
	f.grow(t, 1)
	e := f.measure(t, 500*time.Millisecond, time.Second)
	f.stop()
	t.Log(e)
	if e.upSize != 60 || e.downSize != 200 || e.downRate < 0.8*tickRate {
		t.Errorf("UDP echo: up %.0f B, down %.0f B at %.1f/s; want 60 B, 200 B, about %d/s", e.upSize, e.downSize, e.downRate, tickRate)
	}
}

// BenchmarkLayout compares ways to run a server's rooms on one core, with
// the same rooms and clients as BenchmarkCapacity: one process with
// GOMAXPROCS=1 (the baseline, in the same run), the rooms split over two
// processes, one process with GOMAXPROCS=2 on the one core, and one with
// GOGC=400 (fewer collections of a small heap). It reports
// each layout's CPU per room-second, its ratio to the baseline, and the
// share of ticks that started over 5 ms late.
//
//	go test ./bench -run '^$' -bench Layout -benchtime 1x
func BenchmarkLayout(b *testing.B) {
	if testing.Short() {
		b.Skip("runs servers and fleets of clients for minutes")
	}
	for range b.N {
		var base float64
		for _, l := range []struct {
			name string
			layout
		}{{"1proc", single}, {"2procs", layout{procs: 2, gomaxprocs: 1}}, {"gomaxprocs2", layout{procs: 1, gomaxprocs: 2}},
			{"gogc400", layout{procs: 1, gomaxprocs: 1, gogc: "400"}}} {
			r := newRig(b, "server", loadgen.Rewind, 0, 0, l.layout)
			r.grow(b, *layoutRooms)
			s := r.measure(b, *settle, *window)
			r.stop()
			say("%s: %s", l.name, s)
			if base == 0 {
				base = s.cpu
			}
			b.ReportMetric(s.cpu, l.name+"-cpu-µs/room-s")
			b.ReportMetric(s.cpu/base, l.name+"/1proc")
			b.ReportMetric(100*s.late, l.name+"-late-%")
		}
	}
}

// BenchmarkDensity measures what Agones' high-density layout saves
// (docs/deploy.md, "High density"): the server CPU per room-second of 1, 8,
// 16 (deploy/agones/fleet-density.yaml's) and 64 matches in one process, against 8 matches in 8 processes of one
// match each (agones.retire_after_matches = 1, one GameServer a match),
// every process on the same core, in one run. Its ratios are each layout's
// CPU over the one-process one at the same number of matches.
func BenchmarkDensity(b *testing.B) {
	if testing.Short() {
		b.Skip("runs servers and fleets of clients for minutes")
	}
	for range b.N {
		cpu := map[string]float64{}
		for _, c := range []struct {
			name         string
			procs, rooms int
		}{{"1match-1proc", 1, 1}, {"8matches-1proc", 1, 8}, {"8matches-8procs", 8, 8}, {"16matches-1proc", 1, 16}, {"64matches-1proc", 1, 64}} {
			r := newRig(b, "server", loadgen.Rewind, 0, 0, layout{procs: c.procs, gomaxprocs: 1})
			r.grow(b, c.rooms)
			s := r.measure(b, *settle, *window)
			r.stop()
			say("%s: %s", c.name, s)
			cpu[c.name] = s.cpu
			b.ReportMetric(s.cpu, c.name+"-cpu-µs/room-s")
			b.ReportMetric(100*s.late, c.name+"-late-%")
		}
		b.ReportMetric(cpu["8matches-8procs"]/cpu["8matches-1proc"], "8procs/1proc")
		b.ReportMetric(cpu["1match-1proc"]/cpu["64matches-1proc"], "1match/64matches")
		b.ReportMetric(cpu["1match-1proc"]/cpu["8matches-1proc"], "1match/8matches")
	}
}
