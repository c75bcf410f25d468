package bench

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/server"
)

var (
	memEmpty   = flag.Int("memory.empty", 64, "how many empty rooms BenchmarkRoomMemory opens")
	memRooms   = flag.Int("memory.rooms", 16, "how many rooms of 12 light clients BenchmarkRoomMemory fills")
	memProfile = flag.String("memory.heapprofile", "", "BenchmarkRoomMemory: write the server's heap profile, its rooms full, to this file (and once their players left, to this file.left)")
)

// memStats is the server process's memory, right after two collections.
type memStats struct {
	HeapAlloc  uint64 // live heap
	HeapInuse  uint64 // the heap's spans in use
	StackInuse uint64
	// Go is the memory the runtime holds from the system and has not
	// released: what GOMEMLIMIT bounds.
	Go uint64
}

// serverMemCommand answers the server role's memory commands (open, mem,
// heap); false for any other.
func serverMemCommand(srv *server.Server, cmd string) (string, bool) {
	f := strings.Fields(cmd)
	switch {
	case len(f) == 3 && f[0] == "open":
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return "error: open: " + err.Error(), true
		}
		for i := range n {
			if err := srv.OpenRoom(fmt.Sprintf("%s%03d", f[1], i)); err != nil {
				return "error: open: " + err.Error(), true
			}
		}
		return "ok", true
	case len(f) == 1 && f[0] == "mem":
		runtime.GC()
		runtime.GC() // the first one's finalizers and sync.Pools
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		b, _ := json.Marshal(memStats{HeapAlloc: m.HeapAlloc, HeapInuse: m.HeapInuse, StackInuse: m.StackInuse, Go: m.Sys - m.HeapReleased})
		return string(b), true
	case len(f) == 2 && f[0] == "heap":
		out, err := os.Create(f[1])
		if err == nil {
			runtime.GC()
			err = pprof.Lookup("heap").WriteTo(out, 0)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return "error: heap: " + err.Error(), true
		}
		return "ok", true
	}
	return "", false
}

func (c *child) mem(tb testing.TB) memStats {
	tb.Helper()
	var m memStats
	if err := json.Unmarshal([]byte(c.ask(tb, "mem")), &m); err != nil {
		tb.Fatalf("%s: mem: %v", c.name, err)
	}
	return m
}

// waitServerTicks waits until the server's rooms have simulated n ticks each
// (on average) more than they had.
func waitServerTicks(tb testing.TB, srv *child, n int64) {
	tb.Helper()
	var st serverStats
	srv.stats(tb, &st)
	want := st.Ticks + n*int64(st.Rooms)
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	for deadline := time.Now().Add(time.Duration(n)*time.Second/time.Duration(*tickRate) + time.Minute); st.Ticks < want; <-poll.C {
		if time.Now().After(deadline) {
			tb.Fatalf("the rooms simulated %d of the %d ticks awaited", st.Ticks-want+n*int64(st.Rooms), n*int64(st.Rooms))
		}
		srv.stats(tb, &st)
	}
}

// BenchmarkRoomMemory measures what a room costs the server process in
// memory, over QUIC on loopback, the server in a process of its own: a
// room opened and never joined (-memory.empty of them), a room of 12
// light clients playing (-memory.rooms of them, after 10 s of play), and
// those rooms once their players have left (as a room lingers for
// match.empty_timeout). It reports, per room, the live heap (heap-B/...),
// the heap's spans in use (inuse-B/room), the goroutine stacks
// (stack-B/room) and all the memory the Go runtime holds
// (go-B/room, what GOMEMLIMIT bounds); the process's base before any room
// (base-go-MiB); and the Go memory of max_rooms (256) full rooms, from
// those (go-MiB@256).
//
//	go test ./bench -run '^$' -bench RoomMemory -benchtime 1x
func BenchmarkRoomMemory(b *testing.B) {
	for b.Loop() {
		env := []string{envRole + "=server", envRate + "=" + strconv.Itoa(*tickRate)}
		if *memProfile != "" {
			env = append(env, envMemRate+"=1")
		}
		srv := startChild(b, "server", env...)
		base := srv.mem(b)
		srv.ask(b, fmt.Sprintf("open empty %d", *memEmpty))
		waitServerTicks(b, srv, 2*int64(*tickRate))
		empty := srv.mem(b)
		fleet := startChild(b, "fleet", envRole+"=fleet", envAddr+"="+srv.addr, envMode+"=rewind", envRate+"="+strconv.Itoa(*tickRate))
		for i := range *memRooms {
			fleet.ask(b, fmt.Sprintf("room full%03d", i))
		}
		waitServerTicks(b, srv, 10*int64(*tickRate))
		full := srv.mem(b)
		if *memProfile != "" {
			srv.ask(b, "heap "+*memProfile)
		}
		fleet.ask(b, "close")
		poll := time.NewTicker(100 * time.Millisecond)
		for deadline := time.Now().Add(time.Minute); ; <-poll.C {
			var st serverStats
			srv.stats(b, &st)
			if st.Players == 0 {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d players still seated a minute after their clients closed", st.Players)
			}
		}
		poll.Stop()
		left := srv.mem(b)
		if *memProfile != "" {
			srv.ask(b, "heap "+*memProfile+".left")
		}
		per := func(a, b uint64, n int) float64 { return (float64(b) - float64(a)) / float64(n) }
		n := *memRooms
		b.ReportMetric(per(base.HeapAlloc, empty.HeapAlloc, *memEmpty), "heap-B/empty-room")
		b.ReportMetric(per(empty.HeapAlloc, full.HeapAlloc, n), "heap-B/room")
		b.ReportMetric(per(empty.HeapAlloc, left.HeapAlloc, n), "heap-B/left-room")
		b.ReportMetric(per(empty.HeapInuse, full.HeapInuse, n), "inuse-B/room")
		b.ReportMetric(per(empty.StackInuse, full.StackInuse, n), "stack-B/room")
		goPerRoom := per(empty.Go, full.Go, n)
		b.ReportMetric(goPerRoom, "go-B/room")
		b.ReportMetric(float64(base.Go)/(1<<20), "base-go-MiB")
		b.ReportMetric((float64(base.Go)+256*goPerRoom)/(1<<20), "go-MiB@256")
		b.Logf("base %+v; %d empty rooms %+v; and %d rooms of 12 %+v; after they left %+v", base, *memEmpty, empty, n, full, left)
	}
}
