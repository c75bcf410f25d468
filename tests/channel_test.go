package tests

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/server"
)

// forwarder relays UDP between one client and the server, as a NAT does:
// the client talks to its front socket, and it talks to the server from an
// upstream socket, which rebind replaces (the NAT's new mapping: the server
// sees the client at a new address). What reaches a replaced upstream is no
// longer relayed (the old mapping expired). It tells sealed packets (first
// byte's two high bits 0) from QUIC's, keeps the client's, and counts both
// kinds each way.
type forwarder struct {
	front  *net.UDPConn
	server *net.UDPAddr
	wg     sync.WaitGroup

	mu       sync.Mutex
	client   *net.UDPAddr
	ups      []*upstream
	quicUp   int      // the upstream QUIC packets go by (an index of ups)
	sealedUp int      // the upstream sealed packets go by
	sealed   [][]byte // the client's sealed packets, the first 4096
	sealedDn [][]byte // the server's sealed packets, the first 4096

	sealedUpCount atomic.Uint64 // sealed packets from the client
	quicUpCount   atomic.Uint64
}

// upstream is one of the forwarder's sockets toward the server.
type upstream struct {
	conn                 *net.UDPConn
	sealedDown, quicDown atomic.Uint64 // packets from the server, relayed
	expired              atomic.Uint64 // packets from the server after it was replaced, not relayed
	expiredSealed        atomic.Uint64 // of which sealed
}

// sealedPacket reports whether p is not QUIC: the sealed channel's.
func sealedPacket(p []byte) bool { return len(p) > 0 && p[0]&0xc0 == 0 }

func loopbackUDP(t testing.TB) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// forward starts a forwarder to srv; the test closes it when it ends.
func forward(t testing.TB, srv *server.Server) *forwarder {
	t.Helper()
	f := &forwarder{front: loopbackUDP(t), server: srv.Addr().(*net.UDPAddr)}
	f.rebind(false)
	f.wg.Add(1)
	go f.readClient()
	t.Cleanup(func() {
		f.front.Close()
		f.mu.Lock()
		for _, u := range f.ups {
			u.conn.Close()
		}
		f.mu.Unlock()
		f.wg.Wait()
	})
	return f
}

func (f *forwarder) addr() string { return f.front.LocalAddr().String() }

// rebind opens a new upstream socket. Without split, all the client's
// packets go by it from now on; with split, only its sealed packets, and
// its QUIC packets keep the old one.
func (f *forwarder) rebind(split bool) *upstream {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		panic(err)
	}
	u := &upstream{conn: c}
	f.mu.Lock()
	f.ups = append(f.ups, u)
	i := len(f.ups) - 1
	f.sealedUp = i
	if !split {
		f.quicUp = i
	}
	f.mu.Unlock()
	f.wg.Add(1)
	go f.readServer(u, i)
	return u
}

func (f *forwarder) readClient() {
	defer f.wg.Done()
	buf := make([]byte, 2048)
	for {
		n, from, err := f.front.ReadFromUDP(buf)
		if err != nil {
			return
		}
		p := buf[:n]
		sealed := sealedPacket(p)
		f.mu.Lock()
		f.client = from
		up := f.ups[f.quicUp]
		if sealed {
			up = f.ups[f.sealedUp]
			if len(f.sealed) < 4096 {
				f.sealed = append(f.sealed, bytes.Clone(p))
			}
		}
		f.mu.Unlock()
		if sealed {
			f.sealedUpCount.Add(1)
		} else {
			f.quicUpCount.Add(1)
		}
		up.conn.WriteToUDP(p, f.server)
	}
}

func (f *forwarder) readServer(u *upstream, i int) {
	defer f.wg.Done()
	buf := make([]byte, 2048)
	for {
		n, _, err := u.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		p := buf[:n]
		sealed := sealedPacket(p)
		f.mu.Lock()
		active := i == f.quicUp || i == f.sealedUp
		client := f.client
		if active && sealed && len(f.sealedDn) < 4096 {
			f.sealedDn = append(f.sealedDn, bytes.Clone(p))
		}
		f.mu.Unlock()
		switch {
		case !active || client == nil:
			u.expired.Add(1)
			if sealed {
				u.expiredSealed.Add(1)
			}
			continue
		case sealed:
			u.sealedDown.Add(1)
		default:
			u.quicDown.Add(1)
		}
		f.front.WriteToUDP(p, client)
	}
}

// captured returns the client's sealed packets so far.
func (f *forwarder) captured() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sealed[:len(f.sealed):len(f.sealed)]
}

func (f *forwarder) capturedDown() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sealedDn[:len(f.sealedDn):len(f.sealedDn)]
}

func (f *forwarder) clientAddr() *net.UDPAddr {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.client
}

// sealedReasons are the sealed channel's drop reasons
// (rewind_datagrams_dropped_total{reason}).
var sealedReasons = []string{"sealed_short", "sealed_version", "sealed_session", "sealed_auth", "sealed_replay", "sealed_queue"}

// sealedDrops reads the server's sealed-channel drop counters.
func sealedDrops(t *testing.T, srv *server.Server) map[string]float64 {
	t.Helper()
	m := gather(t, srv)
	out := map[string]float64{}
	for _, r := range sealedReasons {
		out[r] = m.value("rewind_datagrams_dropped_total", "reason", r)
	}
	return out
}

func counter(t *testing.T, srv *server.Server, name, label, value string) float64 {
	t.Helper()
	return gather(t, srv).value(name, label, value)
}

// applied is how many ticks applied the player's input so far; false once
// the room is gone.
func applied(t *testing.T, srv *server.Server, room string, id uint32) (uint64, bool) {
	t.Helper()
	r, ok := findRoom(t, srv, room)
	if !ok {
		return 0, false
	}
	for _, p := range r.Players {
		if p.ID == id {
			return p.Applied, true
		}
	}
	return 0, false
}

// keepsPlaying waits ticks more room ticks and checks that the player's
// inputs kept being applied (at least 3/4 of the ticks) and that snapshots
// kept arriving (at least half as many).
func keepsPlaying(t *testing.T, srv *server.Server, room string, c *client.Client, ticks int64) {
	t.Helper()
	p0, s0 := playerStats(t, srv, room, c.ID()), c.Stats().Snapshots
	waitTicks(t, srv, room, ticks)
	p1, s1 := playerStats(t, srv, room, c.ID()), c.Stats().Snapshots
	if got := p1.Applied - p0.Applied; got < uint64(ticks*3/4) {
		t.Errorf("%d of the player's inputs applied in %d ticks", got, ticks)
	}
	if got := s1 - s0; got < uint64(ticks/2) {
		t.Errorf("%d snapshots decoded in %d ticks", got, ticks)
	}
}

func checkRun(t *testing.T, stop func() []error) {
	t.Helper()
	for _, err := range stop() {
		if err != nil {
			t.Errorf("run: %v", err)
		}
	}
}

// By default a client plays on the sealed channel: the Welcome says so, and
// every snapshot it decodes came in a sealed packet.
func TestSealedChannelPlays(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	fw := forward(t, srv)
	c := dial(t, srv, client.Config{Addr: fw.addr(), Room: "sealed", Name: "sealed", Input: strafer(20)})
	if w := c.Welcome(); w.Channel != protocol.ChannelSealed || w.Session == 0 {
		t.Fatalf("welcome: channel %d, session %#x; want the sealed channel (%d) and a session", w.Channel, w.Session, protocol.ChannelSealed)
	}
	stop := start(c)
	defer stop()
	waitTicks(t, srv, "sealed", 20)
	keepsPlaying(t, srv, "sealed", c, 40)
	checkRun(t, stop)
	st := c.Stats()
	up := fw.ups[0]
	t.Logf("sealed: %d up, %d down; QUIC: %d up, %d down; %d snapshots decoded", fw.sealedUpCount.Load(), up.sealedDown.Load(),
		fw.quicUpCount.Load(), up.quicDown.Load(), st.Snapshots)
	if up.sealedDown.Load() < st.Snapshots {
		t.Errorf("%d sealed packets came down, yet %d snapshots were decoded: some came as QUIC DATAGRAMs", up.sealedDown.Load(), st.Snapshots)
	}
	if fw.sealedUpCount.Load() < 50 {
		t.Errorf("%d sealed packets went up in 60 ticks", fw.sealedUpCount.Load())
	}
	if v := counter(t, srv, "rewind_joins_by_channel_total", "channel", "sealed"); v != 1 {
		t.Errorf("rewind_joins_by_channel_total{channel=sealed} = %v, want 1", v)
	}
	if v := counter(t, srv, "rewind_joins_by_channel_total", "channel", "quic"); v != 0 {
		t.Errorf("rewind_joins_by_channel_total{channel=quic} = %v, want 0", v)
	}
	if v := counter(t, srv, "rewind_client_migrations_total", "", ""); v != 0 {
		t.Errorf("an honest client that never moved counted %v migrations", v)
	}
	for r, v := range sealedDrops(t, srv) {
		if v != 0 {
			t.Errorf("%s: %v packets of an honest client dropped", r, v)
		}
	}
}

// A client that offers only QUIC DATAGRAMs gets them, and plays a whole
// (short) match on them: no sealed packet either way.
func TestQUICChannelClientPlaysMatch(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) { c.Match.Duration = 4 * time.Second })
	fw := forward(t, srv)
	c := dial(t, srv, client.Config{Addr: fw.addr(), Room: "quic", Name: "quic", Input: strafer(20), Channel: "quic"})
	if w := c.Welcome(); w.Channel != protocol.ChannelQUIC || w.Session != 0 {
		t.Fatalf("welcome: channel %d, session %#x; want QUIC DATAGRAMs (%d) and no session", w.Channel, w.Session, protocol.ChannelQUIC)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var most uint64
	until(t, 10*time.Second, "the player's inputs were never applied 30 times", func() bool {
		n, _ := applied(t, srv, "quic", c.ID())
		most = max(most, n)
		return most >= 30
	})
	err := <-done
	var ce *client.CloseError
	if !errors.As(err, &ce) || ce.Code != protocol.CloseMatchOver {
		t.Fatalf("the match did not end with close code %d: %v", protocol.CloseMatchOver, err)
	}
	st := c.Stats()
	t.Logf("%d snapshots, %d inputs sent, %d applied; sealed packets: %d up, %d down", st.Snapshots, st.DatagramsSent, most,
		fw.sealedUpCount.Load(), fw.ups[0].sealedDown.Load())
	if st.Snapshots < 40 {
		t.Errorf("%d snapshots in a 4 s match at 20 a second", st.Snapshots)
	}
	if n := fw.sealedUpCount.Load() + fw.ups[0].sealedDown.Load(); n != 0 {
		t.Errorf("%d sealed packets on the QUIC channel", n)
	}
	if v := counter(t, srv, "rewind_joins_by_channel_total", "channel", "quic"); v != 1 {
		t.Errorf("rewind_joins_by_channel_total{channel=quic} = %v, want 1", v)
	}
	if v := counter(t, srv, "rewind_matches_total", "reason", "finished"); v != 1 {
		t.Errorf("rewind_matches_total{reason=finished} = %v, want 1", v)
	}
}

// A server whose datagrams.channel is quic gives a default client QUIC
// DATAGRAMs, and refuses a join that offers only the sealed channel.
func TestQUICChannelServer(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) { c.Datagrams.Channel = server.ChannelQUIC })
	fw := forward(t, srv)
	c := dial(t, srv, client.Config{Addr: fw.addr(), Room: "quic-server", Name: "default", Input: strafer(20)})
	if w := c.Welcome(); w.Channel != protocol.ChannelQUIC || w.Session != 0 {
		t.Fatalf("welcome: channel %d, session %#x; want QUIC DATAGRAMs (%d)", w.Channel, w.Session, protocol.ChannelQUIC)
	}
	stop := start(c)
	defer stop()
	waitTicks(t, srv, "quic-server", 20)
	keepsPlaying(t, srv, "quic-server", c, 40)
	checkRun(t, stop)
	if n := fw.sealedUpCount.Load() + fw.ups[0].sealedDown.Load(); n != 0 {
		t.Errorf("%d sealed packets on the QUIC channel", n)
	}
	typ, payload := joinChannels(t, srv, "sealed-only", protocol.ChannelSealed)
	rj, _ := protocol.DecodeReject(payload)
	if typ != protocol.MsgReject || rj.Code != protocol.RejectBadJoin {
		t.Errorf("a join offering only the sealed channel: type %d %+v, want Reject %d", typ, rj, protocol.RejectBadJoin)
	}
}

// joinChannels joins with a Join offering channels, and returns the
// answer's type and payload.
func joinChannels(t *testing.T, srv *server.Server, name string, channels uint8) (uint8, []byte) {
	t.Helper()
	conn, err := connectFrom(t, srv, srv.Addr().String(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := conn.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	j := protocol.Join{Version: protocol.Version, Room: "negotiation", Name: name, Channels: channels}
	if _, err := protocol.WriteFrame(st, nil, protocol.MsgJoin, protocol.AppendJoin(nil, &j)); err != nil {
		t.Fatal(err)
	}
	st.SetReadDeadline(time.Now().Add(10 * time.Second))
	typ, payload, _, err := protocol.ReadFrame(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	return typ, payload
}

// The server picks the sealed channel whenever the Join offers it, QUIC
// DATAGRAMs when only they are offered, and refuses a Join that offers
// neither.
func TestSealedChannelNegotiation(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	sessions := map[uint32]bool{}
	for _, tc := range []struct {
		channels uint8
		want     uint8 // 0: a Reject
	}{
		{protocol.ChannelQUIC | protocol.ChannelSealed, protocol.ChannelSealed},
		{protocol.ChannelSealed, protocol.ChannelSealed},
		{protocol.ChannelQUIC, protocol.ChannelQUIC},
		{0xff, protocol.ChannelSealed},
		{0, 0},
		{1 << 2, 0},
	} {
		typ, payload := joinChannels(t, srv, fmt.Sprintf("offers-%#x", tc.channels), tc.channels)
		if tc.want == 0 {
			rj, _ := protocol.DecodeReject(payload)
			if typ != protocol.MsgReject || rj.Code != protocol.RejectBadJoin {
				t.Errorf("channels %#x: type %d %+v, want Reject %d", tc.channels, typ, rj, protocol.RejectBadJoin)
			}
			continue
		}
		w, err := protocol.DecodeWelcome(payload)
		if typ != protocol.MsgWelcome || err != nil {
			t.Errorf("channels %#x: type %d, %v", tc.channels, typ, err)
			continue
		}
		if w.Channel != tc.want {
			t.Errorf("channels %#x: channel %d, want %d", tc.channels, w.Channel, tc.want)
		}
		switch {
		case w.Channel == protocol.ChannelQUIC && w.Session != 0:
			t.Errorf("channels %#x: QUIC DATAGRAMs with session %#x", tc.channels, w.Session)
		case w.Channel == protocol.ChannelSealed && (w.Session == 0 || sessions[w.Session]):
			t.Errorf("channels %#x: session %#x (seen before: %v)", tc.channels, w.Session, sessions[w.Session])
		}
		sessions[w.Session] = true
	}
}

// Packets from another socket aimed at the sealed channel — garbage, another
// version, unknown sessions, forgeries, replays of the client's own packets
// — are dropped and counted for their reasons; the honest client, whose
// packets the attacker has copies of, keeps playing, and the server keeps
// sending to it.
func TestHostileSealedPackets(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	fw := forward(t, srv)
	c := dial(t, srv, client.Config{Addr: fw.addr(), Room: "hostile", Name: "honest", Input: strafer(20)})
	session := c.Welcome().Session
	stop := start(c)
	defer stop()
	waitTicks(t, srv, "hostile", 20)
	until(t, 10*time.Second, "the client sent no 10 sealed packets", func() bool { return len(fw.captured()) >= 10 })
	waitTicks(t, srv, "hostile", 2) // the captured packets have arrived
	got := fw.captured()
	before := sealedDrops(t, srv)

	evil := loopbackUDP(t)
	defer evil.Close()
	header := func(session uint32, seq uint64) []byte {
		return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32([]byte{protocol.Version}, session), seq)
	}
	withSeq := func(p []byte, seq uint64) []byte {
		p = bytes.Clone(p)
		binary.BigEndian.PutUint64(p[5:13], seq)
		return p
	}
	other := session + 1
	if other == 0 {
		other = 1
	}
	wrongSession := bytes.Clone(got[3])
	binary.BigEndian.PutUint32(wrongSession[1:5], other)
	badTag := withSeq(got[2], 1<<40+1)
	badTag[len(badTag)-1] ^= 0x80
	badCiphertext := bytes.Clone(got[4])
	badCiphertext[20] ^= 1
	binary.BigEndian.PutUint64(badCiphertext[5:13], 1<<40+3)
	attacks := []struct {
		reason string
		pkt    []byte
	}{
		{"sealed_short", []byte{0x00, 0x01, 0x02}},
		{"sealed_short", append(header(session, 1<<40), make([]byte, 1300)...)}, // over 1229 bytes
		{"sealed_version", append([]byte{protocol.Version - 1}, make([]byte, 60)...)},
		{"sealed_version", append([]byte{0x3f}, make([]byte, 60)...)},
		{"sealed_session", append(header(other, 0), make([]byte, 40)...)},
		{"sealed_session", wrongSession},
		{"sealed_auth", append(header(session, 1<<40+2), make([]byte, 40)...)}, // the right session, no key
		{"sealed_auth", withSeq(got[1], 1<<40)},                                // a real packet, renumbered
		{"sealed_auth", badTag},
		{"sealed_auth", badCiphertext},
		{"sealed_replay", got[0]},
		{"sealed_replay", got[1]},
		{"sealed_replay", got[len(got)-5]}, // (the newest few may still be on their way)
	}
	want := map[string]float64{}
	for _, a := range attacks {
		want[a.reason]++
		if _, err := evil.WriteTo(a.pkt, srv.Addr()); err != nil {
			t.Fatal(err)
		}
	}
	// QUIC-looking garbage goes to QUIC, which drops it: not counted here.
	evil.WriteTo(append([]byte{0x40}, bytes.Repeat([]byte{0xee}, 60)...), srv.Addr())
	// And at the client, through its NAT: a forged snapshot and a replayed
	// one.
	if down := fw.capturedDown(); len(down) > 0 {
		evil.WriteTo(down[0], fw.clientAddr())
		evil.WriteTo(withSeq(down[0], 1<<40), fw.clientAddr())
	} else {
		t.Error("no sealed snapshot came down")
	}
	until(t, 10*time.Second, "the hostile packets were not all counted", func() bool {
		now := sealedDrops(t, srv)
		for r, n := range want {
			if now[r]-before[r] < n {
				return false
			}
		}
		return true
	})
	after := sealedDrops(t, srv)
	for _, r := range sealedReasons {
		if d := after[r] - before[r]; d != want[r] {
			t.Errorf("%s: %v more, want %v", r, d, want[r])
		}
	}
	snapsBefore := fw.ups[0].sealedDown.Load()
	keepsPlaying(t, srv, "hostile", c, 40)
	checkRun(t, stop)
	if v := counter(t, srv, "rewind_client_migrations_total", "", ""); v != 0 {
		t.Errorf("%v migrations: a replay from another address moved the client", v)
	}
	if fw.ups[0].sealedDown.Load() < snapsBefore+20 {
		t.Errorf("%d sealed snapshots to the client after the attack", fw.ups[0].sealedDown.Load()-snapsBefore)
	}
	if st := c.Stats(); st.SnapshotsDropped != 0 {
		t.Errorf("the client dropped %d snapshots", st.SnapshotsDropped)
	}
}

// NAT rebinding: mid-match the client's packets reach the server from a
// new address (twice). The sealed channel follows the client once it
// answers the challenge at the new address: snapshots go there, the client
// keeps playing, each change is validated and counted once, and the
// snapshots lost to the old mapping meanwhile are about a round trip's.
func TestMigrationNATRebinding(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	fw := forward(t, srv)
	c := dial(t, srv, client.Config{Addr: fw.addr(), Room: "rebind", Name: "roamer", Input: strafer(20)})
	stop := start(c)
	defer stop()
	waitTicks(t, srv, "rebind", 20)
	keepsPlaying(t, srv, "rebind", c, 20)
	old := fw.ups[0]
	for i := 1; i <= 2; i++ {
		prev := fw.ups[len(fw.ups)-1]
		up := fw.rebind(false)
		until(t, 10*time.Second, fmt.Sprintf("rebinding %d: no migration counted", i), func() bool {
			return counter(t, srv, "rewind_client_migrations_total", "", "") >= float64(i)
		})
		until(t, 10*time.Second, fmt.Sprintf("rebinding %d: no snapshot at the new address", i), func() bool {
			return up.sealedDown.Load() >= 10
		})
		keepsPlaying(t, srv, "rebind", c, 30)
		if v := counter(t, srv, "rewind_client_migrations_total", "", ""); v != float64(i) {
			t.Errorf("after rebinding %d: %v migrations counted", i, v)
		}
		if v := counter(t, srv, "rewind_path_validations_total", "event", "validated"); v != float64(i) {
			t.Errorf("after rebinding %d: %v validations counted", i, v)
		}
		// On loopback a round trip is well under a tick: a snapshot or two
		// went to the old mapping (4 allows for a busy machine).
		if lost := prev.expiredSealed.Load(); lost > 4 {
			t.Errorf("rebinding %d: %d snapshots went to the old mapping", i, lost)
		} else {
			t.Logf("rebinding %d: %d snapshots went to the old mapping", i, lost)
		}
	}
	// QUIC follows too, on its own: the client's next QUIC packet (a
	// keep-alive, within 3 s) comes from the new address, and the server
	// validates the path and moves there.
	up := fw.ups[len(fw.ups)-1]
	until(t, 10*time.Second, "the QUIC connection did not follow the client", func() bool { return up.quicDown.Load() > 0 })
	checkRun(t, stop)
	t.Logf("the first address got %d packets after it expired", old.expired.Load())
}

// The sealed channel follows the client alone: when only its sealed packets
// come from a new address (its QUIC packets keep the old one, so QUIC has no
// reason to move), the snapshots go to the new address and the QUIC
// connection stays where it was.
func TestMigrationSealedAlone(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	fw := forward(t, srv)
	c := dial(t, srv, client.Config{Addr: fw.addr(), Room: "split", Name: "split", Input: strafer(20)})
	stop := start(c)
	defer stop()
	waitTicks(t, srv, "split", 20)
	old := fw.ups[0]
	up := fw.rebind(true)
	until(t, 10*time.Second, "no migration counted", func() bool {
		return counter(t, srv, "rewind_client_migrations_total", "", "") >= 1
	})
	waitTicks(t, srv, "split", 2) // the snapshots sent before are in
	oldSealed := old.sealedDown.Load()
	keepsPlaying(t, srv, "split", c, 40)
	checkRun(t, stop)
	if up.sealedDown.Load() < 20 {
		t.Errorf("%d snapshots at the new address", up.sealedDown.Load())
	}
	if d := old.sealedDown.Load() - oldSealed; d > 0 {
		t.Errorf("%d snapshots still went to the old address after the migration", d)
	}
	if up.quicDown.Load() != 0 {
		t.Errorf("QUIC sent %d packets to the address only sealed packets came from", up.quicDown.Load())
	}
	if v := counter(t, srv, "rewind_client_migrations_total", "", ""); v != 1 {
		t.Errorf("%v migrations counted, want 1", v)
	}
}
