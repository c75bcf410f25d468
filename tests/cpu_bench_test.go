package tests

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/bots"
	"github.com/rewind-gg/rewind/client"
)

// botProcessEnv makes the test binary a bot process: it plays 12 bots in
// room "cpu" against the address it names until its stdin closes. The CPU
// benchmark runs the server in its own process and the bots in this one, so
// that the process CPU it measures is the server's alone.
const botProcessEnv = "REWIND_TEST_BOT_PROCESS"

func botProcess(addr string) int {
	n, _ := strconv.Atoi(os.Getenv(botProcessEnv + "_N"))
	channel := os.Getenv(botProcessEnv + "_CHANNEL")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { io.Copy(io.Discard, os.Stdin); cancel() }()
	var clients []*client.Client
	for i := range n {
		dctx, dcancel := context.WithTimeout(ctx, 20*time.Second)
		c, err := client.Dial(dctx, client.Config{Addr: addr, Room: "cpu", Name: fmt.Sprint("bot", i), Team: uint8(1 + i%2), InsecureSkipVerify: true, Channel: channel,
			Input: bots.NewBot(bots.BotConfig{Seed: uint64(i), AimError: 0.03})})
		dcancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		clients = append(clients, c)
	}
	done := make(chan struct{})
	for _, c := range clients {
		go func() { c.Run(ctx); done <- struct{}{} }()
	}
	for range clients {
		<-done
	}
	return 0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRoomCPU compares the two datagram channels, the sealed channel
// and QUIC DATAGRAMs, with the Go SDK's own clients: one room of 12 bots
// playing over real QUIC on loopback (20 Hz inputs and snapshots each way),
// one op being one second of the room on each channel, one after the other
// in the same run. Run it with -benchtime 10x. For each channel it reports
// the process's CPU per room-second (QUIC, crypto, syscalls, GC and the
// room) and the room goroutine's own share; and the ratio of the two
// channels' CPU (quic/sealed: how many times more the fallback costs).
//
// Its bots run in one process and tick at the same instant, so the server
// gets their packets in bursts: this is not a capacity figure (rooms per
// core are bench.BenchmarkCapacity's, with clients on their own phases), but
// it is the only benchmark of the QUIC DATAGRAM fallback.
func BenchmarkRoomCPU(b *testing.B) {
	if testing.Short() {
		b.Skip("plays a real match")
	}
	n := b.N
	var cpu [2]float64
	for i, ch := range []string{"sealed", "quic"} {
		cpu[i] = roomCPU(b, ch, n)
	}
	b.ReportMetric(cpu[1]/cpu[0], "quic/sealed-cpu")
}

// roomCPU plays a room of 12 bots on a datagram channel for seconds room
// seconds and reports its metrics, prefixed by the channel; it returns the
// CPU per room-second.
func roomCPU(b *testing.B, channel string, seconds int) float64 {
	srv := startServer(b, nil)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), botProcessEnv+"="+srv.Addr().String(), botProcessEnv+"_N=12", botProcessEnv+"_CHANNEL="+map[string]string{"sealed": "", "quic": "quic"}[channel])
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	waitPlayers(b, srv, "cpu", 12)
	waitTicks(b, srv, "cpu", 40) // settle
	r0 := roomStats(b, srv, "cpu")
	c0 := cpuTime()
	for range seconds {
		waitTicks(b, srv, "cpu", 20)
	}
	c1 := cpuTime()
	r1 := roomStats(b, srv, "cpu")
	if len(r1.Players) != 12 {
		b.Fatalf("%s: %d players at the end", channel, len(r1.Players))
	}
	secs := float64(r1.Tick-r0.Tick) / 20
	cpu := float64((c1 - c0).Microseconds()) / secs
	b.ReportMetric(cpu, channel+"-cpu-µs/room-s")
	b.ReportMetric(float64((r1.TickTotal-r0.TickTotal).Microseconds())/secs, channel+"-room-µs/room-s")
	b.ReportMetric(float64(r1.Overruns-r0.Overruns), channel+"-overruns")
	return cpu
}
