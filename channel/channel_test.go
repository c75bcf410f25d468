package channel

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/rewind-gg/rewind/internal/docvec"
	"github.com/rewind-gg/rewind/protocol"
)

// testKey is a key made of n, n+1, … n+31.
func testKey(n byte) Key {
	var k Key
	for i := range k {
		k[i] = n + byte(i)
	}
	return k
}

func newPair(t testing.TB, k Key, session uint32) (*Sealer, *Opener) {
	t.Helper()
	s, err := NewSealer(k, session)
	if err != nil {
		t.Fatal(err)
	}
	o, err := NewOpener(k, session)
	if err != nil {
		t.Fatal(err)
	}
	return s, o
}

// payload returns n bytes drawn from r.
func payload(r *mrand.Rand, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	return p
}

// Sealed packets open to their payload, in order, each the newest yet; the
// header is the marker, the session and the sequence number, big-endian.
func TestSealOpenRoundTrip(t *testing.T) {
	r := mrand.New(mrand.NewPCG(1, 2))
	const session = 0xdeadbeef
	s, o := newPair(t, testKey(7), session)
	for seq, n := range []int{0, 1, 23, 395, protocol.MaxDatagram} {
		p := payload(r, n)
		prefix := []byte("prefix")
		pkt := s.Seal(bytes.Clone(prefix), p)
		if !bytes.HasPrefix(pkt, prefix) {
			t.Fatalf("Seal did not append to dst: %x", pkt[:len(prefix)])
		}
		pkt = pkt[len(prefix):]
		if len(pkt) != n+Overhead {
			t.Errorf("payload of %d bytes: packet of %d, want %d", n, len(pkt), n+Overhead)
		}
		if pkt[0] != protocol.Version || binary.BigEndian.Uint32(pkt[1:5]) != session || binary.BigEndian.Uint64(pkt[5:13]) != uint64(seq) {
			t.Errorf("packet %d: header %x, want %02x %08x %016x", seq, pkt[:HeaderSize], protocol.Version, session, seq)
		}
		if id, err := Session(pkt); err != nil || id != session {
			t.Errorf("Session: %#x %v", id, err)
		}
		if len(pkt) > MaxPacket {
			t.Errorf("packet of %d bytes, over MaxPacket %d", len(pkt), MaxPacket)
		}
		out, got, newest, err := o.Open([]byte("x"), pkt)
		if err != nil {
			t.Fatalf("packet %d: %v", seq, err)
		}
		if !bytes.Equal(out, append([]byte("x"), p...)) || got != uint64(seq) || !newest {
			t.Errorf("packet %d: opened %d bytes, seq %d, newest %v", seq, len(out), got, newest)
		}
	}
	if MaxPacket != 1229 {
		t.Errorf("MaxPacket = %d, docs/protocol.md says 1229", MaxPacket)
	}
}

// Sealing and opening allocate nothing when the buffers have room.
func TestSealOpenDoNotAllocate(t *testing.T) {
	s, o := newPair(t, testKey(1), 9)
	p := make([]byte, 300)
	pkt := make([]byte, 0, MaxPacket)
	out := make([]byte, 0, MaxPacket)
	allocs := testing.AllocsPerRun(100, func() {
		pkt = s.Seal(pkt[:0], p)
		var err error
		if out, _, _, err = o.Open(out[:0], pkt); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per packet", allocs)
	}
}

// wantDrop checks that an Open failed for reason r and appended nothing.
func wantDrop(t *testing.T, what string, o *Opener, pkt []byte, r Reason) {
	t.Helper()
	dst := []byte("dst")
	out, _, newest, err := o.Open(dst, pkt)
	var de *DropError
	switch {
	case err == nil:
		t.Errorf("%s: accepted, want %v", what, r)
	case !errors.As(err, &de) || ReasonOf(err) != r:
		t.Errorf("%s: %v, want %v", what, err, r)
	}
	if !bytes.Equal(out, dst) || newest {
		t.Errorf("%s: dropped, yet %q appended, newest %v", what, out, newest)
	}
}

// Every way a packet can be wrong is dropped, for its reason; none of them
// moves the replay window.
func TestOpenRejects(t *testing.T) {
	r := mrand.New(mrand.NewPCG(3, 4))
	const session = 0x01020304
	s, o := newPair(t, testKey(0x40), session)
	var pkts [][]byte
	for range 8 {
		pkts = append(pkts, s.Seal(nil, payload(r, 40)))
	}
	open := func(i int) {
		t.Helper()
		if _, _, _, err := o.Open(nil, pkts[i]); err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
	}
	open(0)
	open(1)

	// Tampered: every single byte of packet 2, header and sealed part.
	for i := range pkts[2] {
		bad := bytes.Clone(pkts[2])
		bad[i] ^= 0x10
		want := ReasonAuth
		switch {
		case i == 0:
			want = ReasonMarker
		case i < 5:
			want = ReasonSession
		}
		wantDrop(t, fmt.Sprintf("byte %d tampered", i), o, bad, want)
	}
	// A sequence number changed to one not seen yet: the header is
	// authenticated.
	bad := bytes.Clone(pkts[2])
	binary.BigEndian.PutUint64(bad[5:], 1000)
	wantDrop(t, "seq changed", o, bad, ReasonAuth)
	// Truncated: below a header and a tag, and within the sealed part.
	for _, n := range []int{0, 1, HeaderSize, HeaderSize + TagSize - 1} {
		wantDrop(t, fmt.Sprintf("truncated to %d", n), o, pkts[2][:n], ReasonShort)
	}
	wantDrop(t, "last byte cut", o, pkts[2][:len(pkts[2])-1], ReasonAuth)
	wantDrop(t, "a byte added", o, append(bytes.Clone(pkts[2]), 0), ReasonAuth)
	// Over MaxPacket, even if it were authentic.
	big := s.Seal(nil, make([]byte, protocol.MaxDatagram+1))
	wantDrop(t, "oversized", o, big, ReasonShort)
	// Another session, under the same key.
	other, _ := newPair(t, testKey(0x40), session+1)
	wantDrop(t, "another session", o, other.Seal(nil, []byte("hello")), ReasonSession)
	// The right session under another key (the other direction's).
	wrongKey, _ := newPair(t, testKey(0x41), session)
	wrongKey.seq = 500 // not seen yet: the replay check comes first
	wantDrop(t, "another key", o, wrongKey.Seal(nil, []byte("hello")), ReasonAuth)
	// Another marker: another protocol version, or what QUIC would take.
	for _, m := range []byte{0, protocol.Version - 1, protocol.Version + 1, 0x3f, 0x40, 0xc0} {
		bad := bytes.Clone(pkts[2])
		bad[0] = m
		wantDrop(t, fmt.Sprintf("marker %#02x", m), o, bad, ReasonMarker)
	}
	// Replayed.
	wantDrop(t, "packet 0 again", o, pkts[0], ReasonReplay)
	wantDrop(t, "packet 1 again", o, pkts[1], ReasonReplay)
	// None of the forgeries above moved the window or took a sequence
	// number: the real packets 2…7 all open, once.
	for i := 2; i < len(pkts); i++ {
		open(i)
		wantDrop(t, fmt.Sprintf("packet %d again", i), o, pkts[i], ReasonReplay)
	}
	// The real packet 1000 (whose forgery was dropped above) still opens.
	s.seq = 1000
	open1000 := s.Seal(nil, []byte("late"))
	if _, seq, newest, err := o.Open(nil, open1000); err != nil || seq != 1000 || !newest {
		t.Errorf("packet 1000 after its forgery: seq %d, newest %v, %v", seq, newest, err)
	}
}

// A packet older than the window is dropped as a replay even if it was
// never received; within the window, reordered packets open once each.
func TestOpenReplayWindow(t *testing.T) {
	s, o := newPair(t, testKey(9), 77)
	const n = 1100
	pkts := make([][]byte, n)
	for i := range pkts {
		pkts[i] = s.Seal(nil, binary.BigEndian.AppendUint32(nil, uint32(i)))
	}
	// Reorder: shuffle blocks of 200 (every packet stays within 200 of its
	// place, less than the window), and hold packets 5 and 300 back.
	r := mrand.New(mrand.NewPCG(5, 6))
	order := make([]int, 0, n)
	for from := 0; from < 800; from += 200 {
		for _, i := range r.Perm(200) {
			if i+from != 5 && i+from != 300 {
				order = append(order, i+from)
			}
		}
	}
	newestSoFar := -1
	for _, i := range order {
		out, seq, newest, err := o.Open(nil, pkts[i])
		if err != nil {
			t.Fatalf("packet %d (newest so far %d): %v", i, newestSoFar, err)
		}
		if seq != uint64(i) || binary.BigEndian.Uint32(out) != uint32(i) {
			t.Errorf("packet %d opened as %d, payload %x", i, seq, out)
		}
		if newest != (i > newestSoFar) {
			t.Errorf("packet %d: newest %v, the newest before was %d", i, newest, newestSoFar)
		}
		newestSoFar = max(newestSoFar, i)
	}
	if newestSoFar != 799 {
		t.Fatalf("newest %d, want 799", newestSoFar)
	}
	// Every one of them again: replays.
	for _, i := range order {
		wantDrop(t, fmt.Sprintf("packet %d again", i), o, pkts[i], ReasonReplay)
	}
	// Packets 5 and 300 were never received, but are older than the window
	// (799 − 256 = 543 and older).
	wantDrop(t, "packet 5, never received, far too old", o, pkts[5], ReasonReplay)
	wantDrop(t, "packet 300, never received, too old", o, pkts[300], ReasonReplay)
	// A jump ahead to 1056: the window is 801…1056. 800, never received, is
	// just out; 801 just in.
	if _, _, newest, err := o.Open(nil, pkts[1056]); err != nil || !newest {
		t.Fatalf("packet 1056: newest %v, %v", newest, err)
	}
	wantDrop(t, "packet 800, 256 behind", o, pkts[800], ReasonReplay)
	if _, _, newest, err := o.Open(nil, pkts[801]); err != nil || newest {
		t.Errorf("packet 801, 255 behind and never received: newest %v, %v", newest, err)
	}
	wantDrop(t, "packet 801 again", o, pkts[801], ReasonReplay)
	if _, _, newest, err := o.Open(nil, pkts[1000]); err != nil || newest {
		t.Errorf("packet 1000: newest %v, %v", newest, err)
	}
}

// Replay against a model: a sequence number is fresh unless it was marked,
// or is ReplayWindow or more behind the newest marked.
func TestReplay(t *testing.T) {
	var r Replay
	if !r.Fresh(0) || !r.Fresh(1<<40) {
		t.Error("an empty window refuses a packet")
	}
	if !r.Mark(10) {
		t.Error("the first mark is not the newest")
	}
	if r.Fresh(10) {
		t.Error("10 still fresh after its mark")
	}
	if !r.Fresh(0) || !r.Fresh(9) || !r.Fresh(11) {
		t.Error("a neighbour of 10 is not fresh")
	}
	if r.Mark(3) {
		t.Error("3 marked after 10 is the newest")
	}
	if !r.Mark(1000) {
		t.Error("1000 is not the newest")
	}
	for seq, want := range map[uint64]bool{743: false, 744: false, 745: true, 999: true, 1000: false, 1001: true, 3: false, 1000 + ReplayWindow: true} {
		if got := r.Fresh(seq); got != want {
			t.Errorf("after 1000: Fresh(%d) = %v, want %v", seq, got, want)
		}
	}
	// Fresh does not mark.
	if !r.Fresh(745) || !r.Fresh(745) {
		t.Error("Fresh marked 745")
	}
	r.Mark(745)
	if r.Fresh(745) {
		t.Error("745 fresh after its mark")
	}
	// 1001 shares 745's slot: marking one does not hide the other.
	if !r.Fresh(1001) {
		t.Error("1001 not fresh after 745 was marked in its slot")
	}

	// The model, on random marks: mostly forward, some back, some jumps.
	rnd := mrand.New(mrand.NewPCG(7, 8))
	var got Replay
	seen := map[uint64]bool{}
	var newest uint64
	anyMarked := false
	var seq uint64 = 1 << 32
	for i := range 200000 {
		switch k := rnd.IntN(100); {
		case k < 60:
			seq++
		case k < 95:
			seq -= min(seq, uint64(rnd.IntN(2*ReplayWindow)))
		case k < 99:
			seq += uint64(rnd.IntN(4 * ReplayWindow))
		default:
			seq += uint64(rnd.IntN(1 << 20))
		}
		fresh := !seen[seq] && (!anyMarked || seq+ReplayWindow > newest)
		if g := got.Fresh(seq); g != fresh {
			t.Fatalf("step %d: Fresh(%d) = %v, the model says %v (newest %d)", i, seq, g, fresh, newest)
		}
		if fresh && rnd.IntN(4) > 0 { // some fresh packets are forgeries: never marked
			isNewest := !anyMarked || seq > newest
			if g := got.Mark(seq); g != isNewest {
				t.Fatalf("step %d: Mark(%d) = %v, the model says %v", i, seq, g, isNewest)
			}
			seen[seq] = true
			if isNewest {
				newest, anyMarked = seq, true
			}
		}
	}
}

// The metric labels the server counts drops under
// (rewind_datagrams_dropped_total{reason}).
func TestReasonLabels(t *testing.T) {
	want := map[Reason]string{ReasonShort: "sealed_short", ReasonMarker: "sealed_version", ReasonSession: "sealed_session",
		ReasonAuth: "sealed_auth", ReasonReplay: "sealed_replay", ReasonQueue: "sealed_queue", ReasonQUICQueue: "quic_queue", 0: "sealed_unknown"}
	for r, label := range want {
		if r.String() != label {
			t.Errorf("Reason %d: %q, want %q", r, r.String(), label)
		}
	}
	if ReasonOf(errors.New("other")) != 0 || ReasonOf(nil) != 0 {
		t.Error("ReasonOf of another error is not 0")
	}
	if ReasonOf(fmt.Errorf("wrapped: %w", errAuth)) != ReasonAuth {
		t.Error("ReasonOf does not unwrap")
	}
}

// selfSigned makes a certificate for localhost, as server/tls.go does.
func selfSigned(t testing.TB) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "channel test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// loopback is a QUIC connection on loopback, both ends, each on a transport
// of its own.
type loopback struct {
	srvTr, cliTr *quic.Transport
	srvUDP       *net.UDPConn
	srv, cli     *quic.Conn
}

func listenUDP(t testing.TB) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func connect(t testing.TB) *loopback {
	t.Helper()
	udp := listenUDP(t)
	return connectOn(t, udp, udp)
}

// connectOn is connect with the server's transport on pc, which reads the
// server socket udp's QUIC packets (udp itself, or a Demux's QUIC()).
func connectOn(t testing.TB, udp *net.UDPConn, pc net.PacketConn) *loopback {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l := &loopback{srvUDP: udp}
	l.srvTr = &quic.Transport{Conn: pc}
	l.cliTr = &quic.Transport{Conn: listenUDP(t)}
	t.Cleanup(func() { l.cliTr.Close(); l.srvTr.Close() })
	qc := &quic.Config{EnableDatagrams: true}
	ln, err := l.srvTr.Listen(&tls.Config{Certificates: []tls.Certificate{selfSigned(t)}, NextProtos: []string{protocol.ALPN}}, qc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan *quic.Conn, 1)
	go func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	l.cli, err = l.cliTr.Dial(ctx, l.srvUDP.LocalAddr(), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{protocol.ALPN}}, qc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.cli.CloseWithError(0, "") })
	var ok bool
	if l.srv, ok = <-accepted; !ok {
		t.Fatal("accept failed")
	}
	return l
}

func keysOf(t testing.TB, c *quic.Conn, session uint32) (Key, Key) {
	t.Helper()
	cs := c.ConnectionState().TLS
	up, down, err := Keys(&cs, session)
	if err != nil {
		t.Fatal(err)
	}
	return up, down
}

// Both ends of a real QUIC connection derive the same keys from its TLS
// exporter; they differ by direction, session and connection.
func TestKeysBothEnds(t *testing.T) {
	l := connect(t)
	cu, cd := keysOf(t, l.cli, 0x2a5f19c3)
	su, sd := keysOf(t, l.srv, 0x2a5f19c3)
	if cu != su || cd != sd {
		t.Fatalf("the ends derive different keys:\nclient %x %x\nserver %x %x", cu, cd, su, sd)
	}
	if cu == cd || cu == (Key{}) || cd == (Key{}) {
		t.Errorf("up %x, down %x", cu, cd)
	}
	// The 64 bytes of the exporter, split: what docs/protocol.md says.
	cs := l.cli.ConnectionState().TLS
	m, err := cs.ExportKeyingMaterial("EXPORTER-rewind-sealed-channel", []byte{0x2a, 0x5f, 0x19, 0xc3}, 64)
	if err != nil || !bytes.Equal(m[:32], cu[:]) || !bytes.Equal(m[32:], cd[:]) {
		t.Errorf("the keys are not the exporter's 64 bytes split in two (%v)", err)
	}
	ou, od := keysOf(t, l.cli, 0x2a5f19c4)
	if ou == cu || od == cd || ou == cd || od == cu {
		t.Error("another session id derives a key of this one")
	}
	other := connect(t)
	if u, d := keysOf(t, other.cli, 0x2a5f19c3); u == cu || d == cd {
		t.Error("another connection derives the same keys")
	}
	// The client seals with up, the server opens with it; and down the
	// other way.
	cliSeal, _ := newPair(t, cu, 0x2a5f19c3)
	_, srvOpen := newPair(t, su, 0x2a5f19c3)
	srvSeal, _ := newPair(t, sd, 0x2a5f19c3)
	_, cliOpen := newPair(t, cd, 0x2a5f19c3)
	if out, _, _, err := srvOpen.Open(nil, cliSeal.Seal(nil, []byte("input"))); err != nil || string(out) != "input" {
		t.Errorf("up: %q %v", out, err)
	}
	if out, _, _, err := cliOpen.Open(nil, srvSeal.Seal(nil, []byte("snapshot"))); err != nil || string(out) != "snapshot" {
		t.Errorf("down: %q %v", out, err)
	}
	// A packet sealed for one direction does not open in the other.
	if _, _, _, err := cliOpen.Open(nil, cliSeal.Seal(nil, []byte("reflected"))); ReasonOf(err) != ReasonAuth {
		t.Errorf("the client's own packet, reflected back to it: %v", err)
	}
}

// demuxed is a Demux on a loopback connection's server transport, with
// its drops and migrations reported on channels.
type demuxed struct {
	*loopback
	d       *Demux
	drops   chan Reason
	migrate chan [2]net.Addr
	paths   chan PathEvent
}

// primeNonQUIC makes a transport queue non-QUIC packets now (quic-go drops
// them until ReadNonQUICPacket is first called): one call with a done
// context.
func primeNonQUIC(tr *quic.Transport) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tr.ReadNonQUICPacket(ctx, make([]byte, 1))
}

// startDemux starts a Demux on a server socket, and a QUIC connection to
// it whose server transport reads the Demux's QUIC packets.
func startDemux(t *testing.T) *demuxed { return startDemuxWith(t, DemuxConfig{}) }

// startDemuxWith is startDemux with cfg's settings (its callbacks are the
// test's).
func startDemuxWith(t *testing.T, cfg DemuxConfig) *demuxed {
	t.Helper()
	udp := listenUDP(t)
	dm := &demuxed{drops: make(chan Reason, 100), migrate: make(chan [2]net.Addr, 10), paths: make(chan PathEvent, 1000)}
	cfg.Conn = udp
	cfg.Drop = func(r Reason) { dm.drops <- r }
	cfg.Migrate = func(from, to net.Addr) { dm.migrate <- [2]net.Addr{from, to} }
	cfg.Path = func(e PathEvent) { dm.paths <- e }
	dm.d = NewDemux(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- dm.d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Run did not return when its context ended") // (its goroutine leaks)
		}
	})
	dm.loopback = connectOn(t, udp, dm.d.QUIC())
	primeNonQUIC(dm.cliTr)
	return dm
}

func (dm *demuxed) wantDrop(t *testing.T, want Reason) {
	t.Helper()
	select {
	case r := <-dm.drops:
		if r != want {
			t.Errorf("dropped for %v, want %v", r, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no drop (%v) reported", want)
	}
}

func (dm *demuxed) noMigration(t *testing.T) {
	t.Helper()
	select {
	case m := <-dm.migrate:
		t.Errorf("migrated from %v to %v", m[0], m[1])
	default:
	}
}

// open opens a session whose payloads arrive, copied, on the channel it
// returns.
func (dm *demuxed) open() (*Peer, chan []byte, error) {
	got := make(chan []byte, 16)
	p, err := dm.d.Open(dm.srv, func(b []byte) bool {
		got <- bytes.Clone(b)
		return true
	})
	return p, got, err
}

// endpoint is the client's end of a session's sealed channel.
func (dm *demuxed) endpoint(t *testing.T, peer *Peer) *Endpoint {
	t.Helper()
	cs := dm.cli.ConnectionState().TLS
	ep, err := NewEndpoint(dm.cliTr, dm.srvUDP.LocalAddr(), &cs, peer.ID())
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// delivered returns the next payload delivered to a session.
func delivered(t *testing.T, got chan []byte) []byte {
	t.Helper()
	select {
	case b := <-got:
		return b
	case <-time.After(5 * time.Second):
		t.Fatal("nothing delivered")
		return nil
	}
}

func receive(t *testing.T, c Conn) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := c.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(b)
}

// The server's Demux and the client's Endpoint, on one QUIC connection's
// sockets: payloads both ways, hostile packets dropped for their reasons.
func TestDemuxEndpoint(t *testing.T) {
	dm := startDemux(t)
	peer, got, err := dm.open()
	if err != nil {
		t.Fatal(err)
	}
	if peer.ID() == 0 || dm.d.Peers() != 1 {
		t.Fatalf("session %#x, %d peers", peer.ID(), dm.d.Peers())
	}
	ep := dm.endpoint(t, peer)
	for i := range 3 {
		in := fmt.Sprintf("input %d", i)
		if err := ep.Send([]byte(in)); err != nil {
			t.Fatal(err)
		}
		if got := delivered(t, got); string(got) != in {
			t.Errorf("server received %q, want %q", got, in)
		}
		snap := fmt.Sprintf("snapshot %d", i)
		if err := peer.Send([]byte(snap)); err != nil {
			t.Fatal(err)
		}
		if got := receive(t, ep); string(got) != snap {
			t.Errorf("client received %q, want %q", got, snap)
		}
	}
	dm.noMigration(t)
	if peer.Addr().String() != dm.cli.LocalAddr().String() || peer.Migrations() != 0 {
		t.Errorf("peer sends to %v (%d migrations), the client is at %v", peer.Addr(), peer.Migrations(), dm.cli.LocalAddr())
	}

	// Hostile packets from another socket.
	evil := listenUDP(t)
	send := func(p []byte) {
		t.Helper()
		if _, err := evil.WriteTo(p, dm.srvUDP.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	send([]byte{0, 1, 2})
	dm.wantDrop(t, ReasonShort)
	send(bytes.Repeat([]byte{protocol.Version}, MaxPacket+1))
	dm.wantDrop(t, ReasonShort)
	send(append([]byte{protocol.Version - 1}, make([]byte, 40)...))
	dm.wantDrop(t, ReasonMarker)
	unknown := binary.BigEndian.AppendUint32([]byte{protocol.Version}, peer.ID()+1)
	send(append(unknown, make([]byte, 40)...))
	dm.wantDrop(t, ReasonSession)
	forged := binary.BigEndian.AppendUint32([]byte{protocol.Version}, peer.ID())
	forged = binary.BigEndian.AppendUint64(forged, 1<<40)
	send(append(forged, make([]byte, 40)...))
	dm.wantDrop(t, ReasonAuth)
	// A replay of the client's packet 1, sealed as the Endpoint does.
	up, down := keysOf(t, dm.cli, peer.ID())
	s, _ := newPair(t, up, peer.ID())
	s.Seal(nil, []byte("input 0"))
	send(s.Seal(nil, []byte("input 1")))
	dm.wantDrop(t, ReasonReplay)
	dm.noMigration(t)

	// Hostile packets to the client are dropped and counted; the next
	// authentic one comes through.
	toClient := func(p []byte) {
		t.Helper()
		if _, err := evil.WriteTo(p, dm.cli.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	down0, _ := newPair(t, down, peer.ID())
	toClient(down0.Seal(nil, []byte("snapshot 0 again")))      // seq 0: a replay
	toClient(append(bytes.Clone(forged), make([]byte, 40)...)) // the right session, a fresh seq: forged
	if err := peer.Send([]byte("after")); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, ep); string(got) != "after" {
		t.Errorf("client received %q", got)
	}
	if ep.Dropped(ReasonReplay) != 1 || ep.Dropped(ReasonAuth) != 1 || ep.Dropped(ReasonQueue+1) != 0 {
		t.Errorf("the client counts %d replays and %d forgeries, want 1 and 1", ep.Dropped(ReasonReplay), ep.Dropped(ReasonAuth))
	}

	// Closed: the session's packets are dropped.
	peer.Close()
	peer.Close() // idempotent
	if dm.d.Peers() != 0 {
		t.Errorf("%d peers after Close", dm.d.Peers())
	}
	ep.Send([]byte("too late"))
	dm.wantDrop(t, ReasonSession)
}

// pathEvents returns the path events reported so far.
func (dm *demuxed) pathEvents() []PathEvent {
	var out []PathEvent
	for {
		select {
		case e := <-dm.paths:
			out = append(out, e)
		default:
			return out
		}
	}
}

// session is the test's client end of a peer's session: its sealer, and an
// opener for what the server sends.
type session struct {
	t      *testing.T
	dm     *demuxed
	sealer *Sealer
	opener *Opener
	got    chan []byte
}

func (dm *demuxed) session(t *testing.T, peer *Peer, got chan []byte) *session {
	up, down := keysOf(t, dm.cli, peer.ID())
	s, _ := newPair(t, up, peer.ID())
	_, o := newPair(t, down, peer.ID())
	return &session{t: t, dm: dm, sealer: s, opener: o, got: got}
}

type packetWriter interface {
	WriteTo([]byte, net.Addr) (int, error)
}

// send seals payload (the next sequence number) and sends it from c.
func (se *session) send(c packetWriter, payload []byte) int {
	se.t.Helper()
	p := se.sealer.Seal(nil, payload)
	if _, err := c.WriteTo(p, se.dm.srvUDP.LocalAddr()); err != nil {
		se.t.Fatal(err)
	}
	return len(p)
}

// input sends an input from c and waits for the server to deliver it: the
// Demux has handled every packet sent before.
func (se *session) input(c packetWriter, payload []byte) {
	se.t.Helper()
	se.send(c, payload)
	if got := delivered(se.t, se.got); !bytes.Equal(got, payload) {
		se.t.Fatalf("delivered %x, want %x", got, payload)
	}
}

// readAt reads the next sealed packet at c and opens it.
func (se *session) readAt(c *net.UDPConn) []byte {
	se.t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, MaxPacket)
	n, err := c.Read(buf)
	return se.open(buf[:n], err)
}

// readOld reads the next sealed packet at the client's QUIC socket and
// opens it.
func (se *session) readOld() []byte {
	se.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	buf := make([]byte, MaxPacket)
	n, _, err := se.dm.cliTr.ReadNonQUICPacket(ctx, buf)
	return se.open(buf[:n], err)
}

// open opens a packet read (err: the read's).
func (se *session) open(p []byte, err error) []byte {
	se.t.Helper()
	if err != nil {
		se.t.Fatal(err)
	}
	out, _, _, err := se.opener.Open(nil, p)
	if err != nil {
		se.t.Fatal(err)
	}
	return out
}

// challenge decodes a path challenge.
func challengeOf(t *testing.T, p []byte) protocol.PathData {
	t.Helper()
	typ, data, err := protocol.DecodePath(p)
	if err != nil || typ != protocol.DatagramPathChallenge {
		t.Fatalf("%x: not a path challenge (%v)", p, err)
	}
	return data
}

// The server follows the client to a new address once the address proves it
// receives there: an authentic packet, the newest yet, from a new address
// draws a path challenge there, snapshots keep going to the validated
// address, and the client's answer from the new address moves them. A
// response with other data, a late packet from the old address, a replay
// and a forgery move nothing.
func TestDemuxMigration(t *testing.T) {
	dm := startDemux(t)
	peer, got, err := dm.open()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	se := dm.session(t, peer, got)
	old := dm.cli.LocalAddr()
	se.input(dm.cliTr, []byte("input 0"))
	if ev := dm.pathEvents(); len(ev) != 0 {
		t.Errorf("path events %v from the validated address", ev)
	}
	rebound := listenUDP(t)
	se.input(rebound, []byte("input 1")) // delivered: it authenticated
	data := challengeOf(t, se.readAt(rebound))
	if ev := dm.pathEvents(); !slices.Equal(ev, []PathEvent{PathChallenged}) {
		t.Errorf("path events %v, want challenged", ev)
	}
	dm.noMigration(t)
	// Unvalidated: the snapshots still go to the old address.
	if err := peer.Send([]byte("snapshot 1")); err != nil {
		t.Fatal(err)
	}
	if got := se.readOld(); string(got) != "snapshot 1" {
		t.Errorf("at the old address: %q", got)
	}
	if peer.Addr().String() != old.String() || peer.Migrations() != 0 {
		t.Errorf("peer sends to %v after %d migrations, want %v", peer.Addr(), peer.Migrations(), old)
	}
	// A response with other data moves nothing, and is not delivered.
	wrong := data
	wrong[0] ^= 1
	se.send(rebound, protocol.AppendPathResponse(nil, wrong))
	se.input(rebound, []byte("input 2"))
	dm.noMigration(t)
	// The right one, from the challenged address: the address is adopted.
	se.send(rebound, protocol.AppendPathResponse(nil, data))
	select {
	case m := <-dm.migrate:
		if m[0].String() != old.String() || m[1].String() != rebound.LocalAddr().String() {
			t.Errorf("migrated from %v to %v, want %v to %v", m[0], m[1], old, rebound.LocalAddr())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no migration")
	}
	if peer.Addr().String() != rebound.LocalAddr().String() || peer.Migrations() != 1 {
		t.Errorf("peer sends to %v after %d migrations", peer.Addr(), peer.Migrations())
	}
	if ev := dm.pathEvents(); len(ev) < 1 || ev[len(ev)-1] != PathValidated {
		t.Errorf("path events %v, want validated last", ev)
	}
	// A malformed path response is the session's to count.
	se.input(rebound, []byte{protocol.Version, protocol.DatagramPathResponse, 1})
	if err := peer.Send([]byte("snapshot 2")); err != nil {
		t.Fatal(err)
	}
	if got := se.readAt(rebound); string(got) != "snapshot 2" {
		t.Errorf("at the new address: %q", got)
	}
	// A late packet from the old address (an older sequence number): the
	// peer stays, and no challenge goes there.
	late := se.sealer.Seal(nil, []byte("input late")) // sealed now, sent after a newer one
	se.input(rebound, []byte("input 3"))
	if _, err := dm.cliTr.WriteTo(late, dm.srvUDP.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	if got := delivered(t, got); string(got) != "input late" {
		t.Errorf("delivered %q", got)
	}
	if ev := dm.pathEvents(); len(ev) != 0 {
		t.Errorf("path events %v after a late packet from the old address", ev)
	}
	// A replay and a forgery from a third address.
	evil := listenUDP(t)
	evil.WriteTo(late, dm.srvUDP.LocalAddr())
	dm.wantDrop(t, ReasonReplay)
	forged := se.sealer.Seal(nil, []byte("forged"))
	forged[len(forged)-1] ^= 1
	evil.WriteTo(forged, dm.srvUDP.LocalAddr())
	dm.wantDrop(t, ReasonAuth)
	dm.noMigration(t)
	if ev := dm.pathEvents(); len(ev) != 0 {
		t.Errorf("path events %v after a replay and a forgery", ev)
	}
	// Back to the old address with the newest packet: validated again.
	se.input(dm.cliTr, []byte("input 4"))
	back := challengeOf(t, se.readOld())
	se.send(dm.cliTr, protocol.AppendPathResponse(nil, back))
	select {
	case <-dm.migrate:
	case <-time.After(5 * time.Second):
		t.Fatal("no migration back")
	}
	if peer.Addr().String() != old.String() || peer.Migrations() != 2 {
		t.Errorf("peer sends to %v after %d migrations, want %v after 2", peer.Addr(), peer.Migrations(), old)
	}
}

// A client that seals packets for its own session and sends them from a
// third party's address (here a socket that never answers) gets that
// address at most 3 times the bytes it sent from it, only challenges, never
// a snapshot; the validation is abandoned after the timeout and counted.
func TestDemuxPathAmplification(t *testing.T) {
	dm := startDemuxWith(t, DemuxConfig{PathTimeout: 300 * time.Millisecond})
	peer, got, err := dm.open()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	se := dm.session(t, peer, got)
	old := dm.cli.LocalAddr()
	se.input(dm.cliTr, []byte("input"))
	victim := listenUDP(t)
	// The smallest authentic packets (an empty payload: 29 bytes), from
	// the victim's address, interleaved with the client's own, which keep
	// the snapshots coming; until the validation is abandoned.
	sent, abandoned := 0, false
	for deadline := time.Now().Add(10 * time.Second); !abandoned; {
		if time.Now().After(deadline) {
			t.Fatal("no validation abandoned within 10 s")
		}
		sent += se.send(victim, nil)
		<-got // the Demux has sent whatever it sends the victim for it
		se.input(dm.cliTr, []byte("input"))
		if err := peer.Send([]byte("snapshot")); err != nil {
			t.Fatal(err)
		}
		if got := se.readOld(); string(got) != "snapshot" {
			t.Fatalf("at the client: %q", got)
		}
		for _, e := range dm.pathEvents() {
			abandoned = abandoned || e == PathAbandoned
			if e == PathValidated {
				t.Fatal("the victim's address was validated")
			}
		}
	}
	dm.noMigration(t)
	if peer.Addr().String() != old.String() {
		t.Errorf("peer sends to %v, want %v", peer.Addr(), old)
	}
	// Everything the server sent the victim is in its socket (loopback
	// delivers before the send returns).
	received, challenges := 0, 0
	buf := make([]byte, 2048)
	_, down := keysOf(t, dm.cli, peer.ID())
	_, atVictim := newPair(t, down, peer.ID())
	for {
		victim.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		n, err := victim.Read(buf)
		if err != nil {
			break
		}
		received += n
		if out, _, _, err := atVictim.Open(nil, buf[:n]); err != nil || len(out) < 2 || out[1] != protocol.DatagramPathChallenge {
			t.Errorf("the victim got %x (%v), not a challenge", out, err)
		}
		challenges++
	}
	if received > AmplificationFactor*sent || challenges == 0 {
		t.Errorf("the victim got %d bytes in %d packets for %d sent from its address: want some, at most ×%d", received, challenges, sent, AmplificationFactor)
	}
	t.Logf("the victim got %d bytes in %d challenges for %d bytes from its address (×%.3f)", received, challenges, sent, float64(received)/float64(sent))
}

// The limit holds by itself: a challenge due when the address sent too
// little is withheld and counted.
func TestPathChallengeWithheld(t *testing.T) {
	dm := startDemux(t)
	victim := listenUDP(t)
	up, down := keysOf(t, dm.cli, 7)
	p, err := newPeer(dm.d, 7, up, down, dm.cli.LocalAddr(), func([]byte) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	p.probe = probe{addr: victim.LocalAddr(), received: 12}
	p.challenge(time.Now())
	if ev := dm.pathEvents(); !slices.Equal(ev, []PathEvent{PathWithheld}) || p.probe.sent != 0 {
		t.Errorf("events %v, %d bytes sent for 12 received", ev, p.probe.sent)
	}
	p.probe.received = 13 // 3 × 13 = 39: a challenge's packet
	p.challenge(time.Now())
	if ev := dm.pathEvents(); !slices.Equal(ev, []PathEvent{PathChallenged}) || p.probe.sent != 39 {
		t.Errorf("events %v, %d bytes sent for 13 received", ev, p.probe.sent)
	}
}

// A payload its session cannot take (its input slot is full) is dropped
// and counted; the next one it takes comes through.
func TestDemuxRefused(t *testing.T) {
	dm := startDemux(t)
	take := make(chan bool, 1)
	got := make(chan []byte, 1)
	peer, err := dm.d.Open(dm.srv, func(b []byte) bool {
		if !<-take {
			return false
		}
		got <- bytes.Clone(b)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	ep := dm.endpoint(t, peer)
	take <- false
	ep.Send([]byte{0})
	dm.wantDrop(t, ReasonQueue)
	take <- true
	ep.Send([]byte{1})
	if b := delivered(t, got); !bytes.Equal(b, []byte{1}) {
		t.Errorf("delivered %x, want 01", b)
	}
}

// Session ids are never 0 and never repeat among open sessions.
func TestDemuxSessions(t *testing.T) {
	dm := startDemux(t)
	ids := map[uint32]bool{}
	for range 50 {
		p, _, err := dm.open()
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if p.ID() == 0 || ids[p.ID()] {
			t.Fatalf("session id %#x (seen: %v)", p.ID(), ids[p.ID()])
		}
		ids[p.ID()] = true
	}
	if dm.d.Peers() != 50 {
		t.Errorf("%d peers", dm.d.Peers())
	}
}

// The test vectors of docs/protocol.md ("The sealed channel"): each is a
// key, a session id, a sequence number and a payload, and the packet they
// seal to. Sealing gives the doc's packet exactly, and opening it gives the
// payload back.
//
// After a change of the format, regenerate the block from sealedVectors:
//
//	go test ./channel -run TestDocVectors -update
var update = flag.Bool("update", false, "rewrite the sealed-channel vectors block of docs/protocol.md")

const vectorsDoc = "../docs/protocol.md"

type sealedVector struct {
	what      string // a comment
	key       Key
	session   uint32
	seq       uint64
	plaintext []byte
}

// sealedVectors are the Go values of the doc's vectors: an input datagram
// up (seq 0) and a snapshot datagram down (seq 5), under the two halves of
// one exporter output.
func sealedVectors() []sealedVector {
	in := protocol.InputPacket{Newest: 1000, SnapshotAck: 995, Count: 2}
	in.Inputs[0] = protocol.Input{MoveX: 127, Yaw: 0x4000, Shot: 0, ViewLag: 0x0280}
	in.Inputs[1] = protocol.Input{MoveX: 127, MoveZ: -127, Yaw: 0x4100, Buttons: 1, Shot: 7, ViewLag: 0x0280}
	h := protocol.SnapshotHeader{Tick: 1005, Baseline: protocol.NoTick, InputAck: 1000, InputLead: 2, Interval: 1,
		Margin: protocol.NoMargin, Own: protocol.OwnState{Flags: protocol.OwnAlive, Pos: [3]float64{-20, 0, 12.5}, Health: 100}}
	snap := protocol.AppendSnapshot(nil, &h, nil, &protocol.State{}, &protocol.State{})
	return []sealedVector{
		{"client → server, the first packet: an input datagram", testKey(0x00), 0x2a5f19c3, 0, protocol.AppendInputPacket(nil, &in)},
		{"server → client, the sixth packet: a full snapshot datagram with no other entity", testKey(0x20), 0x2a5f19c3, 5, snap},
	}
}

// sealAt seals v's payload with v's sequence number.
func (v *sealedVector) seal(t testing.TB) []byte {
	s, err := NewSealer(v.key, v.session)
	if err != nil {
		t.Fatal(err)
	}
	s.seq = v.seq
	return s.Seal(nil, v.plaintext)
}

// hexLines lays b out in lines of at most 32 bytes.
func hexLines(label string, b []byte, comment string) []string {
	var out []string
	for len(b) > 0 || len(out) == 0 {
		n := min(len(b), 32)
		l := fmt.Sprintf("%-10s %x", label, b[:n])
		if comment != "" {
			l = fmt.Sprintf("%-76s # %s", l, comment)
			comment = ""
		}
		out = append(out, l)
		b = b[n:]
	}
	return out
}

func vectorLines(t testing.TB, vs []sealedVector) []string {
	lines := []string{
		"# Each vector: key, session, seq and plaintext, then the packet they seal to. A label",
		"# repeated on the next line continues its value; the hex groups of a line are one value.",
	}
	for i, v := range vs {
		pkt := v.seal(t)
		lines = append(lines, "", fmt.Sprintf("# %d: %s", i+1, v.what))
		lines = append(lines, fmt.Sprintf("%-10s %x", "key", v.key[:]))
		lines = append(lines, fmt.Sprintf("%-10s %08x", "session", v.session))
		lines = append(lines, fmt.Sprintf("%-10s %016x", "seq", v.seq))
		lines = append(lines, hexLines("plaintext", v.plaintext, fmt.Sprintf("%d bytes", len(v.plaintext)))...)
		lines = append(lines, fmt.Sprintf("%-76s # header: marker, session, seq",
			fmt.Sprintf("%-10s %02x %x %x", "packet", pkt[0], pkt[1:5], pkt[5:HeaderSize])))
		lines = append(lines, hexLines("packet", pkt[HeaderSize:len(pkt)-TagSize], "AES-256-GCM ciphertext")...)
		lines = append(lines, hexLines("packet", pkt[len(pkt)-TagSize:], "tag")...)
	}
	return lines
}

// readVectors parses the doc's block: a vector starts at its key line.
func readVectors(t *testing.T) []map[string][]byte {
	rows, err := docvec.Read(vectorsDoc, "sealed-channel")
	if err != nil {
		t.Fatal(err)
	}
	var vs []map[string][]byte
	prev := ""
	for i, r := range rows {
		if len(r) < 2 {
			t.Fatalf("line %d %q: want a label, then hex", i+1, r)
		}
		b, err := hex.DecodeString(strings.Join(r[1:], ""))
		if err != nil {
			t.Fatalf("line %d %q: %v", i+1, r, err)
		}
		switch label := r[0]; {
		case label == "key" && prev != "key":
			vs = append(vs, map[string][]byte{})
		case len(vs) == 0:
			t.Fatalf("line %d %q: a vector starts with its key", i+1, r)
		case label != prev && vs[len(vs)-1][label] != nil:
			t.Fatalf("line %d %q: %s given twice", i+1, r, label)
		}
		v := vs[len(vs)-1]
		v[r[0]] = append(v[r[0]], b...)
		prev = r[0]
	}
	return vs
}

func TestDocVectors(t *testing.T) {
	want := sealedVectors()
	if *update {
		doc, err := os.ReadFile(vectorsDoc)
		if err != nil {
			t.Fatal(err)
		}
		if doc, err = docvec.Replace(doc, "sealed-channel", vectorLines(t, want)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(vectorsDoc, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vs := readVectors(t)
	if len(vs) < 2 {
		t.Fatalf("%d vectors in the doc, want at least 2", len(vs))
	}
	for i, v := range vs {
		t.Run(fmt.Sprint(i+1), func(t *testing.T) {
			for _, f := range []struct {
				name string
				size int
			}{{"key", KeySize}, {"session", 4}, {"seq", 8}, {"plaintext", -1}, {"packet", -1}} {
				if b, ok := v[f.name]; !ok || (f.size >= 0 && len(b) != f.size) {
					t.Fatalf("%s: %x, want %d bytes", f.name, b, f.size)
				}
			}
			dv := sealedVector{key: Key(v["key"]), session: binary.BigEndian.Uint32(v["session"]),
				seq: binary.BigEndian.Uint64(v["seq"]), plaintext: v["plaintext"]}
			// Seal: the doc's packet, exactly.
			if pkt := dv.seal(t); !bytes.Equal(pkt, v["packet"]) {
				t.Errorf("sealing gives\n%x\nthe doc says\n%x", pkt, v["packet"])
			}
			// Open: the plaintext back.
			o, err := NewOpener(dv.key, dv.session)
			if err != nil {
				t.Fatal(err)
			}
			out, seq, _, err := o.Open(nil, v["packet"])
			if err != nil || !bytes.Equal(out, dv.plaintext) || seq != dv.seq {
				t.Errorf("opening the doc's packet: %x seq %d %v, want %x seq %d", out, seq, err, dv.plaintext, dv.seq)
			}
			// The doc's values are the Go ones (-update rewrites them).
			if i < len(want) {
				w := want[i]
				if dv.key != w.key || dv.session != w.session || dv.seq != w.seq || !bytes.Equal(dv.plaintext, w.plaintext) {
					t.Errorf("the doc's vector differs from sealedVectors()[%d] (go test ./channel -run TestDocVectors -update rewrites it)", i)
				}
			}
		})
	}
	if len(vs) != len(want) {
		t.Errorf("%d vectors in the doc, %d in sealedVectors (go test ./channel -run TestDocVectors -update rewrites them)", len(vs), len(want))
	}
	// What the doc promises of them: both directions, one at seq 0, payloads
	// that are real datagrams.
	var seq0, seq5 bool
	for _, v := range vs {
		seq := binary.BigEndian.Uint64(v["seq"])
		seq0 = seq0 || seq == 0
		seq5 = seq5 || seq == 5
		if _, err := protocol.DatagramType(v["plaintext"]); err != nil {
			t.Errorf("plaintext %x is not a datagram: %v", v["plaintext"], err)
		}
	}
	if !seq0 || !seq5 {
		t.Error("the doc's vectors lack seq 0 or seq 5")
	}
}

// FuzzOpen: Open never panics, and accepts only a packet its session's
// sealer made (sealing what it opened at the sequence number it read gives
// the packet back), once.
func FuzzOpen(f *testing.F) {
	const session = 0x2a5f19c3
	key := testKey(0x60)
	s, _ := newPair(f, key, session)
	var genuine [][]byte
	for i, n := range []int{0, 1, 23, 300} {
		p := s.Seal(nil, bytes.Repeat([]byte{byte(i)}, n))
		genuine = append(genuine, p)
		f.Add(p, uint8(0))
		f.Add(p, uint8(i))
		bad := bytes.Clone(p)
		bad[len(bad)-1] ^= 1
		f.Add(bad, uint8(0))
	}
	s.seq = 1000
	f.Add(s.Seal(nil, []byte("far")), uint8(3))
	f.Add([]byte{}, uint8(0))
	f.Add([]byte{protocol.Version}, uint8(0))
	f.Add(make([]byte, HeaderSize+TagSize), uint8(1))
	f.Fuzz(func(t *testing.T, p []byte, opened uint8) {
		o, err := NewOpener(key, session)
		if err != nil {
			t.Fatal(err)
		}
		// Bring the window to one of several states first: the genuine
		// packets opened in a rotating subset.
		for i, g := range genuine {
			if opened&(1<<i) != 0 {
				if _, _, _, err := o.Open(nil, g); err != nil {
					t.Fatalf("genuine packet %d: %v", i, err)
				}
			}
		}
		in := bytes.Clone(p)
		dst := make([]byte, 3, 8)
		out, seq, _, err := o.Open(dst, p)
		if !bytes.Equal(p, in) {
			t.Fatal("Open modified the packet")
		}
		if err != nil {
			if r := ReasonOf(err); r < ReasonShort || r > ReasonReplay {
				t.Fatalf("dropped with %v (reason %d)", err, r)
			}
			if len(out) != 3 {
				t.Fatalf("dropped, yet %d bytes appended", len(out)-3)
			}
			return
		}
		if len(out) != 3+len(p)-Overhead {
			t.Fatalf("opened %d bytes of a %d-byte packet", len(out)-3, len(p))
		}
		re, _ := newPair(t, key, session)
		re.seq = seq
		if !bytes.Equal(re.Seal(nil, out[3:]), p) {
			t.Fatalf("accepted a packet the sealer did not make: %x", p)
		}
		if _, _, _, err := o.Open(nil, p); ReasonOf(err) != ReasonReplay {
			t.Fatalf("opened twice: %v", err)
		}
	})
}

// A Writer writes a batch of sealed packets, in order, to their peers'
// addresses: in one sendmmsg on an IPv4 socket, and one write a packet
// (the IPv6 sockets' way) alike; the Batch's buffers are reused.
func TestWriterBatch(t *testing.T) {
	dm := startDemux(t)
	peer, _, err := dm.open()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	ep := dm.endpoint(t, peer)
	batched := NewWriter(dm.srvUDP)
	if batched.pc == nil {
		t.Fatal("an IPv4 socket's Writer does not batch")
	}
	single := &Writer{conn: dm.srvUDP}
	var b Batch
	for round, w := range []*Writer{batched, single, batched} {
		b.Reset()
		for i := range 3 {
			b.Add(peer, []byte(fmt.Sprintf("snapshot %d.%d", round, i)))
		}
		if b.Len() != 3 {
			t.Fatalf("batch of %d", b.Len())
		}
		if failed, err := w.Write(&b); failed != 0 || err != nil {
			t.Fatalf("round %d: %d failed: %v", round, failed, err)
		}
		for i := range 3 {
			if got, want := string(receive(t, ep)), fmt.Sprintf("snapshot %d.%d", round, i); got != want {
				t.Errorf("received %q, want %q", got, want)
			}
		}
	}
	if len(b.msgs) != 3 {
		t.Errorf("%d messages allocated for batches of 3", len(b.msgs))
	}
	// A room's tick: sealing and writing its batch allocates nothing. (To a
	// socket nobody reads: the client's transport would allocate as it
	// reads, and AllocsPerRun counts every goroutine's.)
	sink := listenUDP(t)
	var to net.Addr = sink.LocalAddr()
	peer.addr.Store(&to)
	payload := []byte("snapshot")
	if n := testing.AllocsPerRun(20, func() {
		b.Reset()
		for range 3 {
			b.Add(peer, payload)
		}
		batched.Write(&b)
	}); n != 0 && !raceEnabled {
		t.Errorf("a batch of 3 allocates %v times", n)
	}
	// A closed socket fails the rest of the batch.
	closed := listenUDP(t)
	cw := NewWriter(closed)
	closed.Close()
	if failed, err := cw.Write(&b); failed != 3 || !errors.Is(err, net.ErrClosed) {
		t.Errorf("on a closed socket: %d failed, %v", failed, err)
	}
}
