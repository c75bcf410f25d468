package bench

import (
	"cmp"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-gg/rewind/internal/loadgen"
	"github.com/rewind-gg/rewind/weapons"
)

var (
	cores    = flag.Int("capacity.cores", 1, "the cores the Rewind server (and the floors) run on: its GOMAXPROCS and its CPUs, the first of those this process may use; the clients run on the rest, or share the server's when none are left")
	procs    = flag.Int("capacity.gomaxprocs", 0, "the Rewind server's GOMAXPROCS (0: -capacity.cores)")
	tickRate = flag.Int("capacity.tick-rate", 20, "the server's tick rate (and snapshot rate), and the clients' input rate: 20, 60 or 128")
	maxRooms = flag.Int("capacity.max", 512, "the most rooms per core the capacity benchmark adds")
	settle   = flag.Duration("capacity.settle", 2*time.Second, "how long the capacity benchmark lets a step settle before measuring it")
	window   = flag.Duration("capacity.window", 5*time.Second, "how long the capacity benchmark measures each step")
	profile  = flag.String("capacity.cpuprofile", "", "write the Rewind server's CPU profile to this file")
	traceTo  = flag.String("capacity.trace", "", "write the Rewind server's execution trace of each step's window to this file, .ROOMS appended")
	// roundsAt8: an odd number, so that the median is a round.
	roundsAt8 = flag.Int("capacity.rounds", 3, "how many rounds of Rewind and the UDP floor at 8 rooms the capacity benchmark measures")
	// layoutRooms: below the saturation BenchmarkCapacity finds, so that
	// every layout keeps up and the CPU compares.
	layoutRooms = flag.Int("layout.rooms", 48, "how many rooms BenchmarkLayout runs in each layout")
)

// classFlag is the classes a room's players join with, in turn: by
// default the default weapons file's (every kind of weapon, projectiles
// among them), four players each; "none": the server's default class.
var classFlag = flag.String("capacity.classes", strings.Join(defaultClasses(), ","),
	`the classes a room's players join with, in turn, comma-separated ("none": the server's default class, its first weapon only)`)

func defaultClasses() []string {
	var names []string
	for _, c := range weapons.Default().Classes {
		names = append(names, c.Name)
	}
	return names
}

const (
	players = 12 // a 6v6 room
	// lateBound and lateShare: a server keeps up while at most lateShare of
	// its rooms' ticks start more than lateBound late (p99 ≤ 5 ms).
	lateBound = 0.005
	lateShare = 0.01
	// minApplied: the share of inputs due that must be applied in time;
	// minPlaying: the share of its inputs due below which a client has
	// stopped playing.
	minApplied = 0.99
	minPlaying = 0.9
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
	steal     float64 // the share of the servers' CPUs' time their host took away (a virtual machine's)
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
	// behind are the clients (room/name) that had under 99% of their
	// inputs due applied, the fewest first, and their shares; gone the
	// clients whose connection ended; retried the joins tried again.
	behind        []clientShare
	gone, retried uint64
}

// clientShare is one client's share of its inputs due applied.
type clientShare struct {
	name  string
	share float64
}

// playing says whether every client played: 99% of the inputs due applied
// in time, none under 90% (stopped playing), no connection ended.
func (s step) playing() bool {
	return s.applied >= minApplied && (len(s.behind) == 0 || s.behind[0].share >= minPlaying) && s.gone == 0
}

// keptUp says whether the server kept up with the step's rooms: its ticks
// on time, and its players served (ticks on time alone do not say the
// packets around them were).
func (s step) keptUp() bool {
	return s.late <= lateShare && s.overruns == 0 && s.ticks >= 0.97 && s.playing()
}

// why names what the step fell short of, or "" if it kept up.
func (s step) why() string {
	var w []string
	if s.late > lateShare {
		w = append(w, fmt.Sprintf("%.2f%% of ticks over 5 ms late", 100*s.late))
	}
	if s.overruns > 0 {
		w = append(w, fmt.Sprintf("%d overruns", s.overruns))
	}
	if s.ticks < 0.97 {
		w = append(w, fmt.Sprintf("%.1f%% of the ticks due simulated", 100*s.ticks))
	}
	if s.applied < minApplied {
		w = append(w, fmt.Sprintf("%.1f%% of the inputs due applied", 100*s.applied))
	}
	if len(s.behind) > 0 && s.behind[0].share < minPlaying {
		n := 0
		for _, c := range s.behind {
			if c.share < minPlaying {
				n++
			}
		}
		w = append(w, fmt.Sprintf("%d clients stopped playing (under %.0f%% of their inputs applied), %s the first", n, 100*minPlaying, s.behind[0]))
	}
	if s.gone > 0 {
		w = append(w, fmt.Sprintf("%d clients' connections ended", s.gone))
	}
	return strings.Join(w, "; ")
}

func (c clientShare) String() string { return fmt.Sprintf("%s at %.1f%%", c.name, 100*c.share) }

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
	if len(s.behind) > 0 {
		fmt.Fprintf(&trouble, "  behind %d (%s", len(s.behind), s.behind[0])
		for _, c := range s.behind[1:min(len(s.behind), 3)] {
			fmt.Fprintf(&trouble, ", %s", c)
		}
		trouble.WriteString(")")
	}
	if s.gone > 0 {
		fmt.Fprintf(&trouble, "  gone %d", s.gone)
	}
	if s.retried > 0 {
		fmt.Fprintf(&trouble, "  joins retried %d", s.retried)
	}
	return fmt.Sprintf("%4d rooms  cpu %7.0f µs/room-s  room %5.0f µs/room-s  late>5ms %5.2f%%  steal %4.1f%%  overruns %d  ticks %5.3f  applied %5.3f  fleet late %5.2f%% cpu %3.0f%%  up %3.0f B × %4.1f/s  down %3.0f B × %4.1f/s%s",
		s.rooms, s.cpu, s.room, 100*s.late, 100*s.steal, s.overruns, s.ticks, s.applied, 100*s.fleetLate, 100*s.fleetCPU, s.upSize, s.upRate, s.downSize, s.downRate, trouble.String())
}

// rig is servers (Rewind's or a floor's), each in its own process, and
// fleets of clients, each in its own: one for each server process, or one
// for each CPU the servers leave, if more.
type rig struct {
	servers, fleets []*child
	isRewind        bool
	rooms           int
	cores           int   // how many CPUs the servers have
	cpus            []int // which
	rate            int   // the tick rate
}

// layout is how a rig's servers run: how many processes, each one's
// GOMAXPROCS, its GOGC ("": the default, 100), and the CPUs they all share.
type layout struct {
	procs, gomaxprocs, cpus int
	gogc                    string
}

// single is one process on the -capacity.cores cores.
func single() layout {
	return layout{procs: 1, gomaxprocs: cmp.Or(*procs, *cores), cpus: *cores}
}

// oneCore is one process on one core.
var oneCore = layout{procs: 1, gomaxprocs: 1, cpus: 1}

// placement is where a rig's processes run: the servers' CPUs, and each
// fleet's.
type placement struct {
	server []int
	fleets [][]int
	shared bool // no CPU was left for the clients: they share the servers'
}

// place puts the servers on the first n of the CPUs this process may run
// on (an outer taskset chooses them), and a fleet on each CPU left; with
// none left, one fleet on all of them.
func place(n int) (placement, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return placement{}, fmt.Errorf("CPU affinity: %w", err)
	}
	var allowed []int
	for c := 0; len(allowed) < set.Count(); c++ {
		if set.IsSet(c) {
			allowed = append(allowed, c)
		}
	}
	if n < 1 || n > len(allowed) {
		return placement{}, fmt.Errorf("-capacity.cores %d: this process may run on %d CPUs (%s)", n, len(allowed), formatCPUs(allowed))
	}
	p := placement{server: allowed[:n]}
	for _, c := range allowed[n:] {
		p.fleets = append(p.fleets, []int{c})
	}
	if len(p.fleets) == 0 {
		p.fleets, p.shared = [][]int{allowed}, true
	}
	return p, nil
}

// newRig starts the server processes of the kind ("server", "echo-udp",
// "echo-quic") on the layout, and fleets of the mode; up and down are a
// floor's packet sizes.
func newRig(tb testing.TB, kind string, mode loadgen.Mode, up, down int, l layout) *rig {
	tb.Helper()
	p, err := place(l.cpus)
	if err != nil {
		tb.Fatal(err)
	}
	r := &rig{isRewind: mode == loadgen.Rewind, cores: l.cpus, cpus: p.server, rate: *tickRate}
	rate := strconv.Itoa(r.rate)
	for i := range l.procs {
		env := []string{envRole + "=" + kind, envCPU + "=" + formatCPUs(p.server), "GOMAXPROCS=" + strconv.Itoa(l.gomaxprocs),
			envSize + "=" + strconv.Itoa(down), envRate + "=" + rate}
		if l.gogc != "" {
			env = append(env, "GOGC="+l.gogc)
		}
		if kind == "server" && *profile != "" && i == 0 {
			env = append(env, envProfile+"="+*profile)
		}
		r.servers = append(r.servers, startChild(tb, kind, env...))
	}
	for i := range max(l.procs, len(p.fleets)) {
		cpus := p.fleets[i%len(p.fleets)]
		fl := startChild(tb, "fleet "+string(mode), envRole+"=fleet", envCPU+"="+formatCPUs(cpus), "GOMAXPROCS=1", envClasses+"="+*classFlag,
			envAddr+"="+r.servers[i%l.procs].addr, envMode+"="+string(mode), envSize+"="+strconv.Itoa(up),
			envSeed+"="+strconv.Itoa(1+i), envRate+"="+rate)
		r.fleets = append(r.fleets, fl)
	}
	return r
}

func (r *rig) stop() {
	for _, f := range r.fleets {
		f.stop()
	}
	for _, s := range r.servers {
		s.stop()
	}
}

// grow adds rooms, in turn to each fleet (and so to each server), until the
// rig holds n.
func (r *rig) grow(tb testing.TB, n int) {
	tb.Helper()
	for ; r.rooms < n; r.rooms++ {
		r.fleets[r.rooms%len(r.fleets)].ask(tb, fmt.Sprintf("room r%04d", r.rooms))
	}
}

// sample is a rig's counters at one instant, summed over its processes.
type sample struct {
	at       time.Time
	cpu      time.Duration
	fleetCPU time.Duration
	srv      serverStats
	fleet    loadgen.Stats
	// steal and ticks are the servers' CPUs' steal time and all their
	// time, in the kernel's clock ticks (/proc/stat).
	steal, ticks uint64
}

// cpuTimes sums the steal time and all the time of the CPUs, in clock
// ticks, from /proc/stat (zero where it cannot be read): a virtual machine's
// host takes its CPUs away at times, and ticks start late for it.
func cpuTimes(cpus []int) (steal, total uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil || !slices.Contains(cpus, n) {
			continue
		}
		for i, v := range f[1:] {
			x, _ := strconv.ParseUint(v, 10, 64)
			if i < 8 { // user … steal; guest time is counted in user
				total += x
			}
			if i == 7 {
				steal += x
			}
		}
	}
	return steal, total
}

func (r *rig) sample(tb testing.TB) sample {
	tb.Helper()
	var s sample
	s.steal, s.ticks = cpuTimes(r.cpus)
	for _, c := range r.servers {
		s.cpu += c.cpu(tb)
	}
	for _, c := range r.fleets {
		s.fleetCPU += c.cpu(tb)
	}
	s.at = time.Now()
	for _, c := range r.servers {
		if r.isRewind {
			var st serverStats
			c.stats(tb, &st)
			s.srv.add(&st)
		}
	}
	for _, c := range r.fleets {
		var fs loadgen.Stats
		c.stats(tb, &fs)
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
	if s.PlayerApplied == nil {
		s.PlayerApplied = map[string]uint64{}
	}
	maps.Copy(s.PlayerApplied, o.PlayerApplied) // room names are the rig's, unique
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
	s.Retried += o.Retried
}

// measure lets the rig settle, then measures it for a window.
func (r *rig) measure(tb testing.TB, settle, window time.Duration) step {
	tb.Helper()
	<-time.After(settle)
	a := r.sample(tb)
	if *traceTo != "" && r.isRewind {
		r.servers[0].ask(tb, fmt.Sprintf("trace %s.%d", *traceTo, r.rooms))
	}
	<-time.After(window)
	if *traceTo != "" && r.isRewind {
		r.servers[0].ask(tb, "untrace")
	}
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
	s.gone, s.retried = b.fleet.Disconnected-a.fleet.Disconnected, b.fleet.Retried
	if b.ticks > a.ticks {
		s.steal = float64(b.steal-a.steal) / float64(b.ticks-a.ticks)
	}
	if r.isRewind {
		rate := float64(r.rate)
		s.room = float64((b.srv.TickTotal - a.srv.TickTotal).Microseconds()) / roomSecs
		s.overruns = b.srv.Overruns - a.srv.Overruns
		s.ticks = float64(b.srv.Ticks-a.srv.Ticks) / (roomSecs * rate)
		s.applied = float64(b.srv.Applied-a.srv.Applied) / (clientSecs * rate)
		// A client is behind with more than 1% of its inputs due, and one
		// more (the window's edges cut a tick), not applied.
		due := secs * rate
		for name, n := range b.srv.PlayerApplied {
			if share := float64(n-a.srv.PlayerApplied[name]) / due; share < minApplied-1/due {
				s.behind = append(s.behind, clientShare{name, share})
			}
		}
		slices.SortFunc(s.behind, func(x, y clientShare) int { return cmp.Or(cmp.Compare(x.share, y.share), cmp.Compare(x.name, y.name)) })
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

// nextRooms is the benchmark's schedule on c cores: 1, 8c, then 8c more a
// step, 16c more past 128c.
func nextRooms(n, c int) int {
	switch {
	case n < 8*c:
		return 8 * c
	case n < 128*c:
		return n + 8*c
	}
	return n + 16*c
}

// BenchmarkCapacity finds how many 6v6 rooms a core of a Rewind server
// holds with independent clients, and what a room-second costs, against the
// floors of the same traffic measured in the same run. Run it once:
//
//	go test ./bench -run '^$' -bench Capacity -benchtime 1x
//	go test ./bench -run '^$' -bench Capacity -benchtime 1x -capacity.cores 2 -capacity.tick-rate 60
//
// The server runs with GOMAXPROCS=-capacity.cores on that many CPUs (the
// first this process may use: an outer taskset chooses them), at
// -capacity.tick-rate (20, 60 or 128 Hz, its snapshot rate the same); the
// clients (12 a room of the default weapons file's three classes, firing
// their whole loadouts, projectiles among them; an input a tick each on a
// random phase, reading a snapshot a tick) run in a process for each CPU
// left, or share the server's CPUs when none is (then rooms/core is a
// floor: the clients' work took some of the server's cores).
//
// First, rounds at 8 rooms a core (-capacity.rounds, 3): Rewind's server,
// then a plain UDP echo serving the same clients with packets of the sizes
// Rewind's had; and once a minimal quic-go DATAGRAM echo. Each round's
// ratio compares two neighbouring measurements: the machine's speed drifts
// over minutes, more than the ratio's own spread. The median round is
// reported: the server's CPU per room-second, the room goroutines' own
// share, the floors', and Rewind's ratio to each floor and to the UDP floor
// plus the room goroutines' own cost.
//
// Then rooms are added to one server (1, 8, 16, … a core: 8 at a time, 16
// past 128) until it no longer keeps up: more than 1% of ticks start over
// 5 ms late, any tick overruns, ticks are skipped, under 99% of the
// clients' inputs are applied in time, a client stopped playing (under 90%
// of its own), or a connection ended. A step that falls short is measured
// once more before it counts (a shared machine has its moments). It
// reports rooms/core (the most rooms it kept up with, over the cores) and
// the CPU per room-second at 1 room and at that number.
func BenchmarkCapacity(b *testing.B) {
	if testing.Short() {
		b.Skip("runs servers and fleets of clients for minutes")
	}
	switch *tickRate {
	case 20, 60, 128:
	default:
		b.Fatalf("-capacity.tick-rate %d: 20, 60 or 128", *tickRate)
	}
	if _, err := place(*cores); err != nil {
		b.Fatal(err)
	}
	for range b.N {
		capacity(b)
	}
}

// round is one round at 8 rooms a core: Rewind and the UDP floor.
type round struct{ rewind, udp step }

// ratio is Rewind's CPU over the UDP floor's plus the room goroutines' own.
func (r round) ratio() float64 { return r.rewind.cpu / (r.udp.cpu + r.rewind.room) }

// measureKept measures r; a step that did not keep up is measured once
// more, and the second measurement stands.
func (r *rig) measureKept(tb testing.TB, name string) step {
	tb.Helper()
	s := r.measure(tb, *settle, *window)
	if s.keptUp() && s.fleetLate <= lateShare {
		return s
	}
	say("%s: %s  (fell short: measured again)", name, s)
	return r.measure(tb, 0, *window)
}

// measurePlaying measures r; a step whose clients did not all play is
// measured once more, and the second measurement stands.
func (r *rig) measurePlaying(tb testing.TB, name string) step {
	tb.Helper()
	s := r.measure(tb, *settle, *window)
	if s.playing() {
		return s
	}
	say("%s: %s  (%s: measured again)", name, s, s.why())
	return r.measure(tb, 0, *window)
}

func capacity(b *testing.B) {
	p, _ := place(*cores)
	at8rooms := 8 * *cores
	say("capacity: %d rooms a step at first, %d Hz, the server on CPUs %s, the clients on %s", at8rooms, *tickRate,
		formatCPUs(p.server), strings.Join(slices.Collect(func(yield func(string) bool) {
			for _, f := range p.fleets {
				if !yield(formatCPUs(f)) {
					return
				}
			}
		}), " "))
	if p.shared {
		say("no CPU is left for the clients: they share the server's, and rooms/core is a floor")
	}
	var rounds []round
	var quic step
	for i := range *roundsAt8 {
		r := newRig(b, "server", loadgen.Rewind, 0, 0, single())
		r.grow(b, at8rooms)
		s := r.measureKept(b, fmt.Sprintf("round %d, rewind", i+1))
		r.stop()
		say("round %d, rewind: %s", i+1, s)
		if !s.keptUp() {
			b.Fatalf("the server did not keep up with %d rooms, twice: %s", at8rooms, s.why())
		}
		up, down := int(math.Round(s.upSize)), int(math.Round(s.downSize))
		rd := round{rewind: s, udp: floor(b, "echo-udp", loadgen.FloorUDP, up, down, at8rooms)}
		say("round %d, echo-udp: %s  (rewind/(udp+room) %.3f)", i+1, rd.udp, rd.ratio())
		rounds = append(rounds, rd)
		if i == 0 {
			quic = floor(b, "echo-quic", loadgen.FloorQUIC, up, down, at8rooms)
			say("echo-quic: %s", quic)
		}
	}
	slices.SortFunc(rounds, func(a, b round) int { return cmp.Compare(a.ratio(), b.ratio()) })
	at8 := rounds[len(rounds)/2]

	r := newRig(b, "server", loadgen.Rewind, 0, 0, single())
	var first, kept step
	for n := 1; n <= *maxRooms**cores; n = nextRooms(n, *cores) {
		r.grow(b, n)
		s := r.measureKept(b, "rewind")
		say("rewind: %s", s)
		if n == 1 {
			first = s
			if !s.playing() {
				b.Fatalf("1 room: the clients are not playing: %s", s.why())
			}
		}
		if s.fleetLate > lateShare {
			say("the clients' processes fell behind at %d rooms (%.1f%% of send slots late): rooms/core is at least %.0f", n, 100*s.fleetLate, float64(kept.rooms)/float64(*cores))
			break
		}
		if !s.keptUp() {
			say("at %d rooms: %s", n, s.why())
			break
		}
		kept = s
	}
	r.stop()
	if kept.rooms == 0 {
		b.Fatal("the server did not keep up with one room")
	}
	at := fmt.Sprintf("@%d", at8rooms)
	b.ReportMetric(float64(kept.rooms)/float64(*cores), "rooms/core")
	// What the CPU alone would hold: the rooms the cores run at 80% busy,
	// at the CPU per room-second of the most rooms kept up with. Ticks
	// start late before the CPU runs out (and a virtual machine's host
	// takes its CPUs away at times: steal-%).
	b.ReportMetric(0.8e6/kept.cpu, "rooms/core@80%cpu")
	b.ReportMetric(100*kept.steal, "steal-%")
	b.ReportMetric(first.cpu, "cpu-µs/room-s@1")
	b.ReportMetric(at8.rewind.cpu, "cpu-µs/room-s"+at)
	b.ReportMetric(kept.cpu, fmt.Sprintf("cpu-µs/room-s@%d", kept.rooms))
	b.ReportMetric(at8.rewind.room, "room-µs/room-s"+at)
	b.ReportMetric(at8.rewind.room/float64(*tickRate), "room-µs/tick"+at)
	b.ReportMetric(at8.udp.cpu, "udp-µs/room-s"+at)
	b.ReportMetric(quic.cpu, "quic-µs/room-s"+at)
	b.ReportMetric(at8.rewind.cpu/at8.udp.cpu, "rewind/udp"+at)
	b.ReportMetric(at8.rewind.cpu/quic.cpu, "rewind/quic"+at)
	b.ReportMetric(at8.ratio(), "rewind/(udp+room)"+at)
	b.ReportMetric(at8.rewind.downSize*at8.rewind.downRate*8/1000, "down-kbit/s/client")
}

// floor measures a floor's server serving rooms rooms of clients that send
// up bytes and get down bytes back.
func floor(b *testing.B, kind string, mode loadgen.Mode, up, down, rooms int) step {
	fr := newRig(b, kind, mode, up, down, single())
	fr.grow(b, rooms)
	s := fr.measure(b, *settle, *window)
	fr.stop()
	if s.downRate < 0.9*float64(*tickRate) {
		b.Fatalf("%s: %.1f replies a second per client, %d due", kind, s.downRate, *tickRate)
	}
	return s
}

// TestCapacityRig checks the benchmark's parts on one room: Rewind clients
// in their own process play (their inputs are applied, their snapshots
// open) against a server in its own, and the UDP floor echoes.
func TestCapacityRig(t *testing.T) {
	r := newRig(t, "server", loadgen.Rewind, 0, 0, oneCore)
	r.grow(t, 1)
	s := r.measure(t, time.Second, 2*time.Second)
	r.stop()
	t.Log(s)
	if s.applied < 0.8 || s.ticks < 0.9 {
		t.Errorf("inputs applied %.2f, ticks %.2f of those due", s.applied, s.ticks)
	}
	if due := float64(*tickRate); s.downRate < 0.8*due || s.upRate < 0.8*due {
		t.Errorf("%.1f snapshots and %.1f input packets a second per client, %d due", s.downRate, s.upRate, *tickRate)
	}
	if s.upSize < 20 || s.downSize < 20 {
		t.Errorf("packets of %.0f B up and %.0f B down", s.upSize, s.downSize)
	}
	f := newRig(t, "echo-udp", loadgen.FloorUDP, 60, 200, oneCore)
	f.grow(t, 1)
	e := f.measure(t, 500*time.Millisecond, time.Second)
	f.stop()
	t.Log(e)
	if e.upSize != 60 || e.downSize != 200 || e.downRate < 0.8*float64(*tickRate) {
		t.Errorf("UDP echo: up %.0f B, down %.0f B at %.1f/s; want 60 B, 200 B, about %d/s", e.upSize, e.downSize, e.downRate, *tickRate)
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
		}{{"1proc", oneCore}, {"2procs", layout{procs: 2, gomaxprocs: 1, cpus: 1}}, {"gomaxprocs2", layout{procs: 1, gomaxprocs: 2, cpus: 1}},
			{"gogc400", layout{procs: 1, gomaxprocs: 1, cpus: 1, gogc: "400"}}} {
			r := newRig(b, "server", loadgen.Rewind, 0, 0, l.layout)
			r.grow(b, *layoutRooms)
			s := r.measurePlaying(b, l.name)
			r.stop()
			say("%s: %s", l.name, s)
			if !s.playing() {
				b.Fatalf("%s: the clients did not play, twice: %s", l.name, s.why())
			}
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
// 16 (deploy/agones/fleet-density.yaml's) and 64 matches in one process,
// against 8 matches in 8 processes of one match each
// (agones.retire_after_matches = 1, one GameServer a match), every process
// on the same core, in one run. Its ratios are each layout's CPU over the
// one-process one at the same number of matches. It fails, naming them, if
// the clients did not play (under 99% of the inputs due applied, a client
// under 90% of its own, a connection ended), measured twice.
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
			r := newRig(b, "server", loadgen.Rewind, 0, 0, layout{procs: c.procs, gomaxprocs: 1, cpus: 1})
			r.grow(b, c.rooms)
			s := r.measurePlaying(b, c.name)
			r.stop()
			say("%s: %s", c.name, s)
			if !s.playing() {
				b.Fatalf("%s: the clients did not play, twice: %s", c.name, s.why())
			}
			cpu[c.name] = s.cpu
			b.ReportMetric(s.cpu, c.name+"-cpu-µs/room-s")
			b.ReportMetric(100*s.late, c.name+"-late-%")
		}
		b.ReportMetric(cpu["8matches-8procs"]/cpu["8matches-1proc"], "8procs/1proc")
		b.ReportMetric(cpu["1match-1proc"]/cpu["64matches-1proc"], "1match/64matches")
		b.ReportMetric(cpu["1match-1proc"]/cpu["8matches-1proc"], "1match/8matches")
	}
}

// A step counts as kept up only if every client played: a client under
// 90% of its inputs, or a connection that ended, fails it, named.
func TestStepNamesClientsThatStopped(t *testing.T) {
	ok := step{rooms: 8, ticks: 1, applied: 0.995, behind: []clientShare{{"r0003/r0003-7", 0.97}}}
	if !ok.keptUp() || ok.why() != "" {
		t.Errorf("a client at 97%% failed the step: %q", ok.why())
	}
	for _, tt := range []struct {
		s    step
		want string
	}{
		{step{ticks: 1, applied: 0.995, behind: []clientShare{{"r0001/r0001-4", 0}, {"r0002/r0002-1", 0.5}}},
			"2 clients stopped playing (under 90% of their inputs applied), r0001/r0001-4 at 0.0% the first"},
		{step{ticks: 1, applied: 0.98}, "98.0% of the inputs due applied"},
		{step{ticks: 1, applied: 1, gone: 3}, "3 clients' connections ended"},
		{step{ticks: 1, applied: 1, late: 0.02}, "2.00% of ticks over 5 ms late"},
	} {
		if tt.s.keptUp() || tt.s.why() != tt.want {
			t.Errorf("%+v: kept up %v, why %q; want %q", tt.s, tt.s.keptUp(), tt.s.why(), tt.want)
		}
	}
}

// The servers take the first -capacity.cores CPUs this process may use,
// a fleet each of the rest.
func TestPlaceFollowsTheAffinity(t *testing.T) {
	p, err := place(1)
	if err != nil {
		t.Fatal(err)
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	if len(p.server) != 1 || !set.IsSet(p.server[0]) {
		t.Errorf("server CPUs %v", p.server)
	}
	if n := set.Count(); (n == 1) != p.shared || (n > 1 && len(p.fleets) != n-1) {
		t.Errorf("%d CPUs: fleets %v, shared %v", n, p.fleets, p.shared)
	}
	if _, err := place(set.Count() + 1); err == nil || !strings.Contains(err.Error(), "-capacity.cores") {
		t.Errorf("more cores than allowed: %v", err)
	}
}
