package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/rewind-gg/rewind/internal/loadgen"
	"github.com/rewind-gg/rewind/server"
)

// The benchmark runs its parts as child processes of the test binary: the
// environment says which part a process plays.
const (
	envRole = "REWIND_BENCH_ROLE" // server, echo-udp, echo-quic, fleet
	envCPU  = "REWIND_BENCH_CPU"  // the CPUs to bind the process to (a comma-separated list), if any
	envAddr = "REWIND_BENCH_ADDR" // fleet: the server's address
	envMode = "REWIND_BENCH_MODE" // fleet: loadgen.Mode
	envSize = "REWIND_BENCH_SIZE" // fleet: a floor client's packet size; echo: the reply's size
	envSeed = "REWIND_BENCH_SEED" // fleet: its seed
	envRate = "REWIND_BENCH_RATE" // server: its tick (and snapshot) rate; fleet: a floor client's packet rate
	// envClasses: fleet: the classes its players join with, in turn,
	// comma-separated ("none" or empty: the server's default)
	envClasses = "REWIND_BENCH_CLASSES"
	// envProfile: write the process's CPU profile to this file
	// (-capacity.cpuprofile).
	envProfile = "REWIND_BENCH_CPUPROFILE"
	// envMemRate: the process's runtime.MemProfileRate (1: every
	// allocation, for a heap profile that accounts for every byte).
	envMemRate = "REWIND_BENCH_MEMPROFILERATE"
)

// A child reads commands, a line each, on its stdin and answers each with
// one line on its stdout; it exits when its stdin ends:
//
//	cpu           → its CPU time so far, nanoseconds (user and system)
//	stats         → a JSON object (serverStats or loadgen.Stats)
//	room NAME     → fleet: adds a room of clients; "ok" or "error: …"
//	close         → fleet: closes its clients' connections; "ok"
//	open PREFIX N → server: opens N rooms, PREFIX000 on (as the operator); "ok"
//	mem           → server: a JSON object (memStats), after two collections
//	trace FILE    → server: starts writing its execution trace to FILE; "ok"
//	untrace       → server: stops it; "ok"
//	heap FILE     → server: writes its heap profile to FILE; "ok"
//
// Its first line is "ready ADDR" (the address it serves on; the fleet's is
// "-").

// role runs the part the environment names and returns the exit status.
func role(name string) int {
	if r, err := strconv.Atoi(os.Getenv(envMemRate)); err == nil {
		runtime.MemProfileRate = r
	}
	if list := os.Getenv(envCPU); list != "" {
		cpus, err := parseCPUs(list)
		if err == nil {
			err = pin(cpus)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench %s: bind to CPUs %s: %v\n", name, list, err)
			return 1
		}
	}
	if path := os.Getenv(envProfile); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench %s: %v\n", name, err)
			return 1
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		addr   string
		answer func(cmd string) string
		err    error
	)
	switch name {
	case "server":
		addr, answer, err = serverRole(ctx)
	case "echo-udp", "echo-quic":
		addr, err = echoRole(ctx, name)
	case "fleet":
		addr, answer, err = fleetRole(ctx)
	default:
		err = fmt.Errorf("unknown role %q", name)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench %s: %v\n", name, err)
		return 1
	}
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, "ready", addr)
	out.Flush()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd := in.Text()
		switch {
		case cmd == "cpu":
			fmt.Fprintln(out, cpuTime().Nanoseconds())
		case answer != nil:
			fmt.Fprintln(out, answer(cmd))
		default:
			fmt.Fprintf(out, "error: unknown command %q\n", cmd)
		}
		out.Flush()
	}
	return 0
}

// parseCPUs parses a comma-separated list of CPU numbers.
func parseCPUs(list string) ([]int, error) {
	var cpus []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a CPU number", f)
		}
		cpus = append(cpus, n)
	}
	return cpus, nil
}

// formatCPUs is the list parseCPUs parses.
func formatCPUs(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// pin binds every thread of the process to cpus; threads made later
// inherit it from the thread that makes them.
func pin(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			return fmt.Errorf("thread %d: %w", tid, err)
		}
	}
	return nil
}

// cpuTime is the process's CPU time so far.
func cpuTime() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverStats is what the server role reports.
type serverStats struct {
	Rooms     int
	Players   int
	Ticks     int64         // ticks simulated, all rooms
	TickTotal time.Duration // the room goroutines' time in ticks, all rooms
	Applied   uint64        // inputs applied, all players
	Overruns  uint64
	// Lateness counts ticks by how late they started: cumulative, by
	// LatenessBounds (seconds), then all of them.
	Lateness       []uint64
	LatenessBounds []float64
	// SnapshotBytes and Snapshots: the snapshots sent, all players.
	SnapshotBytes, Snapshots uint64
	// Drops counts the datagrams dropped, by reason; Halved the clients
	// whose snapshot rate flow control halved; Inputs the inputs received,
	// by verdict (rewind_inputs_total).
	Drops  map[string]uint64
	Halved uint64
	Inputs map[string]uint64
	// PlayerApplied is Applied by player, "room/name".
	PlayerApplied map[string]uint64
}

func serverRole(ctx context.Context) (string, func(string) string, error) {
	cfg := server.DefaultConfig()
	if r, err := strconv.Atoi(os.Getenv(envRate)); err == nil {
		// Every tick's snapshot, and the datagram budget in proportion.
		cfg.MaxDatagramRate = cfg.MaxDatagramRate * r / cfg.TickRate
		cfg.TickRate, cfg.SnapshotRate = r, r
	}
	cfg.Listen = "127.0.0.1:0"
	cfg.Admin.Listen = ""
	cfg.MaxRooms = 4096
	// Rooms opened empty (BenchmarkRoomMemory) stay open while measured.
	cfg.Match.EmptyTimeout = time.Hour
	// Every client comes from 127.0.0.1.
	cfg.Limits = server.LimitsConfig{HandshakesPerSource: 256, PlayersPerSource: 1 << 20, RoomsPerSource: 1 << 20, JoinsPerSecond: 10000, JoinBurst: 10000}
	srv, err := server.New(cfg, zerolog.Nop())
	if err != nil {
		return "", nil, err
	}
	if err := srv.Start(); err != nil {
		return "", nil, err
	}
	var traced *os.File
	answer := func(cmd string) string {
		if a, ok := serverMemCommand(srv, cmd); ok {
			return a
		}
		if file, ok := strings.CutPrefix(cmd, "trace "); ok {
			f, err := os.Create(file)
			if err == nil {
				err = trace.Start(f)
			}
			if err != nil {
				return "error: trace: " + err.Error()
			}
			traced = f
			return "ok"
		}
		if cmd == "untrace" && traced != nil {
			trace.Stop()
			err := traced.Close()
			traced = nil
			if err != nil {
				return "error: trace: " + err.Error()
			}
			return "ok"
		}
		if cmd != "stats" {
			return fmt.Sprintf("error: unknown command %q", cmd)
		}
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		rooms, err := srv.Stats(sctx)
		if err != nil {
			return "error: " + err.Error()
		}
		var st serverStats
		st.Rooms = len(rooms)
		st.PlayerApplied = map[string]uint64{}
		for _, r := range rooms {
			st.Players += len(r.Players)
			st.Ticks += r.Tick
			st.TickTotal += r.TickTotal
			st.Overruns += r.Overruns
			for _, p := range r.Players {
				st.PlayerApplied[r.ID+"/"+p.Name] = p.Applied
				st.Applied += p.Applied
				st.Snapshots += p.Snapshots
				st.SnapshotBytes += p.SnapshotBytes
			}
		}
		mfs, err := srv.Registry().Gather()
		if err != nil {
			return "error: " + err.Error()
		}
		st.Drops, st.Inputs = map[string]uint64{}, map[string]uint64{}
		for _, mf := range mfs {
			switch mf.GetName() {
			case "rewind_tick_lateness_seconds":
				h := mf.GetMetric()[0].GetHistogram()
				for _, b := range h.GetBucket() {
					st.LatenessBounds = append(st.LatenessBounds, b.GetUpperBound())
					st.Lateness = append(st.Lateness, b.GetCumulativeCount())
				}
				st.Lateness = append(st.Lateness, h.GetSampleCount())
			case "rewind_flow_halved_total":
				st.Halved = uint64(mf.GetMetric()[0].GetCounter().GetValue())
			case "rewind_datagrams_dropped_total", "rewind_inputs_total":
				into := st.Drops
				if mf.GetName() == "rewind_inputs_total" {
					into = st.Inputs
				}
				for _, m := range mf.GetMetric() {
					if v := uint64(m.GetCounter().GetValue()); v > 0 {
						into[m.GetLabel()[0].GetValue()] = v
					}
				}
			}
		}
		b, _ := json.Marshal(st)
		return string(b)
	}
	return srv.Addr().String(), answer, nil
}

func echoRole(ctx context.Context, name string) (string, error) {
	size, _ := strconv.Atoi(os.Getenv(envSize))
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return "", err
	}
	conn.SetReadBuffer(4 << 20)
	conn.SetWriteBuffer(4 << 20)
	run := func() error { return loadgen.EchoUDP(ctx, conn, size) }
	if name == "echo-quic" {
		cert, err := loadgen.SelfSigned()
		if err != nil {
			return "", err
		}
		run = func() error { return loadgen.EchoQUIC(ctx, conn, cert, size) }
	}
	go func() {
		if err := run(); err != nil {
			fmt.Fprintf(os.Stderr, "bench %s: %v\n", name, err)
			os.Exit(1)
		}
	}()
	return conn.LocalAddr().String(), nil
}

func fleetRole(ctx context.Context) (string, func(string) string, error) {
	size, _ := strconv.Atoi(os.Getenv(envSize))
	seed, _ := strconv.ParseUint(os.Getenv(envSeed), 10, 64)
	rate, _ := strconv.Atoi(os.Getenv(envRate))
	var classes []string
	if c := os.Getenv(envClasses); c != "" && c != "none" {
		classes = strings.Split(c, ",")
	}
	f, err := loadgen.New(loadgen.Config{Addr: os.Getenv(envAddr), Mode: loadgen.Mode(os.Getenv(envMode)), Size: size, Seed: seed,
		Rate: rate, Classes: classes})
	if err != nil {
		return "", nil, err
	}
	ctx, stop := context.WithCancel(ctx) // stopped by close: Run then ends without an error
	go func() {
		if err := f.Run(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "bench fleet: %v\n", err)
			os.Exit(1)
		}
	}()
	answer := func(cmd string) string {
		switch {
		case cmd == "stats":
			b, _ := json.Marshal(f.Stats())
			return string(b)
		case cmd == "close":
			stop()
			f.Close()
			return "ok"
		case strings.HasPrefix(cmd, "room "):
			actx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			if err := f.AddRoom(actx, strings.TrimPrefix(cmd, "room ")); err != nil {
				return "error: " + err.Error()
			}
			return "ok"
		}
		return fmt.Sprintf("error: unknown command %q", cmd)
	}
	return "-", answer, nil
}
