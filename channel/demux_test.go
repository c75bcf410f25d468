package channel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// A burst of a session's packets that arrives while the Demux is busy
// waits in the socket, not in a queue of quic-go's: every packet is
// delivered, none dropped. (Before the Demux read the socket itself,
// quic-go's queue of 32 non-QUIC packets dropped the rest of such a burst,
// silently.)
func TestDemuxBurstWaitsInTheSocket(t *testing.T) {
	dm := startDemux(t)
	if err := dm.srvUDP.SetReadBuffer(4 << 20); err != nil {
		t.Fatal(err)
	}
	const burst = 200
	release := make(chan struct{})
	got := make(chan []byte, burst)
	peer, err := dm.d.Open(dm.srv, func(b []byte) bool {
		<-release // the first delivery holds the Demux until the burst is sent
		got <- bytes.Clone(b)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	up, _ := keysOf(t, dm.cli, peer.ID())
	s, _ := newPair(t, up, peer.ID())
	for i := range burst {
		if _, err := dm.cliTr.WriteTo(s.Seal(nil, []byte{byte(i)}), dm.srvUDP.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	for i := range burst {
		if b := delivered(t, got); !bytes.Equal(b, []byte{byte(i)}) {
			t.Fatalf("delivery %d: %x", i, b)
		}
	}
	select {
	case r := <-dm.drops:
		t.Errorf("dropped (%v)", r)
	default:
	}
}

// QUIC packets past the queue are dropped and counted; those queued are
// read in order, from their senders, and the reads honour their deadline.
func TestDemuxQUICQueue(t *testing.T) {
	udp := listenUDP(t)
	drops := make(chan Reason, 100)
	d := NewDemux(DemuxConfig{Conn: udp, QUICQueue: 4, Drop: func(r Reason) { drops <- r }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	peer := listenUDP(t)
	// Short-header QUIC packets (fixed bit set); nobody reads them yet.
	for i := range 10 {
		if _, err := peer.WriteTo([]byte{0x40, byte(i), 1, 2, 3}, udp.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	for range 6 {
		select {
		case r := <-drops:
			if r != ReasonQUICQueue {
				t.Fatalf("dropped for %v, want %v", r, ReasonQUICQueue)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the packets past the queue were not dropped")
		}
	}
	q := d.QUIC()
	buf := make([]byte, 100)
	for i := range 4 {
		n, from, err := q.ReadFrom(buf)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf[:n], []byte{0x40, byte(i), 1, 2, 3}) || from.String() != peer.LocalAddr().String() {
			t.Errorf("packet %d: %x from %v", i, buf[:n], from)
		}
	}
	// A deadline in the past fails at once; one set while a read waits
	// wakes it; no deadline waits for the next packet.
	q.SetReadDeadline(time.Now().Add(-time.Second))
	if _, _, err := q.ReadFrom(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("past deadline: %v", err)
	}
	q.SetReadDeadline(time.Time{})
	read := make(chan error, 1)
	go func() {
		_, _, err := q.ReadFrom(buf)
		read <- err
	}()
	q.SetReadDeadline(time.Now())
	if err := <-read; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("deadline set while reading: %v", err)
	}
	q.SetReadDeadline(time.Time{})
	go func() {
		_, _, err := q.ReadFrom(buf)
		read <- err
	}()
	peer.WriteTo([]byte{0x80, 9}, udp.LocalAddr()) // a long header
	if err := <-read; err != nil || buf[0] != 0x80 {
		t.Errorf("after the deadline was cleared: %x %v", buf[:2], err)
	}
	// A sealed-looking packet never reaches the QUIC side.
	peer.WriteTo([]byte{0x00, 1, 2}, udp.LocalAddr())
	if r := <-drops; r != ReasonShort {
		t.Errorf("a short sealed packet: %v", r)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run: %v", err)
	}
	if _, _, err := q.ReadFrom(buf); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read after Run returned: %v", err)
	}
}

// Run ends without an error when the socket closes, and the QUIC reads
// with it.
func TestDemuxSocketClosed(t *testing.T) {
	udp := listenUDP(t)
	d := NewDemux(DemuxConfig{Conn: udp})
	done := make(chan error, 1)
	go func() { done <- d.Run(context.Background()) }()
	read := make(chan error, 1)
	go func() {
		_, _, err := d.QUIC().ReadFrom(make([]byte, 10))
		read <- err
	}()
	udp.Close()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if err := <-read; !errors.Is(err, net.ErrClosed) {
		t.Errorf("QUIC read: %v", err)
	}
}

// Errors of one packet or one peer do not stop the Demux; others do.
func TestDemuxTransientErrors(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "read", Err: os.NewSyscallError("recvmmsg", syscall.ECONNREFUSED)}, true},
		{fmt.Errorf("x: %w", syscall.EINTR), true},
		{syscall.ENOBUFS, true},
		{syscall.EBADF, false},
		{errors.New("other"), false},
	} {
		if got := transient(c.err); got != c.want {
			t.Errorf("transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
