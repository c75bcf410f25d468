package tests

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/quic-go/quic-go"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/rewind-gg/rewind/bots"
	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/netshim"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/server"
)

// Shutting down closes every client's connection with a reason, and leaves
// no goroutine behind (servers, rooms, sessions, clients, shims).
func TestShutdownIsClean(t *testing.T) {
	// Not parallel: goleak checks the whole process when this test ends.
	cfg := server.DefaultConfig()
	cfg.Listen, cfg.Admin.Listen = "127.0.0.1:0", "127.0.0.1:0"
	srv, err := server.New(cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	way := netshim.Conditions{Latency: 20 * time.Millisecond, Loss: 0.05}
	sh, err := netshim.Start(netshim.Config{Listen: "127.0.0.1:0", Target: srv.Addr().String(), Up: way, Down: way, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var clients []*client.Client
	for i, room := range []string{"a", "a", "b"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := client.Dial(ctx, client.Config{Addr: sh.Addr().String(), Room: room, Name: fmt.Sprint(room, i), ServerCertSHA256: srv.CertSHA256(),
			Input: bots.NewBot(bots.BotConfig{Seed: uint64(i)})})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	done := make(chan []error, 1)
	go func() { done <- play(time.Minute, clients...) }()
	waitTicks(t, srv, "a", 20)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	for i, err := range <-done {
		var ce *client.CloseError
		if !errors.As(err, &ce) || ce.Code != protocol.CloseShutdown || ce.Reason != "server shutting down" {
			t.Errorf("client %d: Run returned %v, want the shutdown close reason", i, err)
		}
	}
	if err := sh.Close(); err != nil {
		t.Errorf("shim: %v", err)
	}
	goleak.VerifyNone(t)
}

// Two rooms share a process, not a world: what happens in one never shows
// in the other.
func TestRoomsAreIsolated(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	var hitsB atomic.Int64
	onB := func(ev protocol.Event) {
		if ev.Kind == protocol.EventHit || ev.Kind == protocol.EventKill {
			hitsB.Add(1)
		}
	}
	var seenByB atomic.Int64 // the most players a room-b client ever saw besides itself
	watch := func(src client.InputSource) client.InputSource {
		return scripted(func(v *client.View) client.Intent {
			if n := int64(len(v.Players)); n > seenByB.Load() {
				seenByB.Store(n)
			}
			in := src.Intent(v)
			in.Fire = false
			return in
		})
	}
	a1 := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "a", Name: "a1", Team: 1, Input: bots.NewBot(bots.BotConfig{Seed: 1})})
	a2 := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "a", Name: "a2", Team: 2, Input: bots.NewBot(bots.BotConfig{Seed: 2})})
	b1 := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "b", Name: "b1", Team: 1, Input: watch(bots.NewBot(bots.BotConfig{Seed: 3})), OnEvent: onB})
	b2 := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "b", Name: "b2", Team: 2, Input: watch(bots.NewBot(bots.BotConfig{Seed: 4})), OnEvent: onB})
	stop := start(a1, a2, b1, b2)
	waitTicks(t, srv, "a", 200)
	a := roomStats(t, srv, "a")
	b := roomStats(t, srv, "b")
	stop()
	var hitsA uint64
	for _, p := range a.Players {
		hitsA += p.Hits
	}
	if hitsA == 0 {
		t.Fatal("room a should have seen hits")
	}
	for _, p := range b.Players {
		if p.Hits != 0 || p.Deaths != 0 {
			t.Errorf("room b player %s: %d hits, %d deaths", p.Name, p.Hits, p.Deaths)
		}
	}
	if n := hitsB.Load(); n != 0 {
		t.Errorf("room b clients got %d hit or kill events", n)
	}
	if n := seenByB.Load(); n != 1 {
		t.Errorf("a room b client saw %d other players, want exactly its one roommate", n)
	}
	if len(a.Players) != 2 || len(b.Players) != 2 {
		t.Errorf("rooms hold %d and %d players", len(a.Players), len(b.Players))
	}
}

// A full room refuses joins with a reason.
func TestRoomFull(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) { c.MaxPlayers = 1 })
	dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "duel", Name: "first", Input: strafer(10)})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := client.Dial(ctx, client.Config{Addr: srv.Addr().String(), Room: "duel", Name: "second", Input: strafer(10), ServerCertSHA256: srv.CertSHA256()})
	var rj *client.RejectError
	if !errors.As(err, &rj) || rj.Code != protocol.RejectFull {
		t.Errorf("second join: %v, want a RejectFull", err)
	}
}

// rawConn is a QUIC connection speaking the protocol by hand, to misbehave.
type rawConn struct {
	conn   *quic.Conn
	stream *quic.Stream
}

func rawDial(t *testing.T, addr string) *rawConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := quic.DialAddr(ctx, addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{protocol.ALPN}},
		&quic.Config{EnableDatagrams: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseWithError(0, "") })
	st, err := conn.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &rawConn{conn: conn, stream: st}
}

func (r *rawConn) join(t *testing.T, j protocol.Join) (uint8, []byte) {
	t.Helper()
	if j.Channels == 0 && j.Version == protocol.Version {
		j.Channels = protocol.ChannelQUIC // a raw player sends QUIC DATAGRAMs
	}
	if _, err := protocol.WriteFrame(r.stream, nil, protocol.MsgJoin, protocol.AppendJoin(nil, &j)); err != nil {
		t.Fatal(err)
	}
	r.stream.SetReadDeadline(time.Now().Add(10 * time.Second))
	typ, payload, _, err := protocol.ReadFrame(r.stream, nil)
	if err != nil {
		t.Fatal(err)
	}
	return typ, payload
}

// closed waits for the server to close the connection and returns its code
// and reason.
func (r *rawConn) closed(t *testing.T) (quic.ApplicationErrorCode, string) {
	t.Helper()
	select {
	case <-r.conn.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not close the connection")
	}
	var ae *quic.ApplicationError
	if !errors.As(context.Cause(r.conn.Context()), &ae) {
		t.Fatalf("closed with %v", context.Cause(r.conn.Context()))
	}
	return ae.ErrorCode, ae.ErrorMessage
}

func TestBadJoins(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	tests := []struct {
		name string
		join protocol.Join
		code uint8
	}{
		{"wrong version", protocol.Join{Version: 1, Room: "r", Name: "n"}, protocol.RejectVersion},
		{"bad room", protocol.Join{Version: protocol.Version, Room: "no spaces", Name: "n"}, protocol.RejectBadJoin},
		{"no name", protocol.Join{Version: protocol.Version, Room: "r"}, protocol.RejectBadJoin},
		{"no such team", protocol.Join{Version: protocol.Version, Room: "r", Name: "n", Team: 7}, protocol.RejectBadJoin},
	}
	for _, tt := range tests {
		r := rawDial(t, srv.Addr().String())
		typ, payload := r.join(t, tt.join)
		rj, err := protocol.DecodeReject(payload)
		if typ != protocol.MsgReject || err != nil || rj.Code != tt.code || rj.Reason == "" {
			t.Errorf("%s: got type %d %+v %v, want reject %d", tt.name, typ, rj, err, tt.code)
		}
		if code, _ := r.closed(t); code != protocol.CloseRejected {
			t.Errorf("%s: closed with %d", tt.name, code)
		}
	}
	// Not a join at all.
	r := rawDial(t, srv.Addr().String())
	protocol.WriteFrame(r.stream, nil, protocol.MsgEvent, []byte{1, 2, 3})
	if code, reason := r.closed(t); code != protocol.CloseProtocol {
		t.Errorf("a non-join first message: closed with %d %q", code, reason)
	}
}

// A client that sends garbage, floods, claims ticks far in the future and
// view times outside the window is dropped and counted, and the honest
// player in its room plays on unharmed.
func TestMisbehavingClientHarmsNobody(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	probe := starvedProbe(t)
	honest := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "mixed", Name: "honest", Team: 1, Input: strafer(20)})
	stop := start(honest)
	bad := rawDial(t, srv.Addr().String())
	if typ, _ := bad.join(t, protocol.Join{Version: protocol.Version, Room: "mixed", Name: "bad", Team: 2}); typ != protocol.MsgWelcome {
		t.Fatalf("the bad client could not join: type %d", typ)
	}
	waitTicks(t, srv, "mixed", 20)
	p0 := playerStats(t, srv, "mixed", honest.ID())
	now := uint32(roomStats(t, srv, "mixed").Tick)
	good := func(newest uint32, lag uint16) []byte {
		p := protocol.InputPacket{Newest: newest, SnapshotAck: protocol.NoTick, Count: 1}
		p.Inputs[0].ViewLag = lag
		p.Inputs[0].Buttons = ecs.ButtonFire
		return protocol.AppendInputPacket(nil, &p)
	}
	valid := good(now+2, 0)
	send := func(d []byte) { bad.conn.SendDatagram(d) }
	send(valid[:5])                                                     // truncated
	send(append([]byte{9}, valid[1:]...))                               // another version
	send(append([]byte{protocol.Version, 2}, valid[2:]...))             // a snapshot, from a client
	send(append([]byte{protocol.Version, 7}, valid[2:]...))             // an unknown type
	send(protocol.AppendPathChallenge(nil, protocol.PathData{}))        // a path challenge, from a client
	send([]byte{protocol.Version, protocol.DatagramPathResponse, 1, 2}) // a path response, truncated
	send(append(valid[:10:10], 0))                                      // zero inputs
	send(good(now+5000, 0))                                             // far in the future
	send(good(now+12, 60000))                                           // a shot seen 234 ticks back: clamped to what the server measured
	// The room takes them at its next tick: a flood before that would push
	// them out of the session's input slot (its oldest go first).
	waitTicks(t, srv, "mixed", 2)
	for i := range 400 { // a flood, of shots well before that one's (a fire interval must not refuse it)
		send(good(now+uint32(i%8), 0))
	}
	waitTicks(t, srv, "mixed", 200)
	p1 := playerStats(t, srv, "mixed", honest.ID())
	room := roomStats(t, srv, "mixed")
	stop()
	applied := p1.Applied - p0.Applied
	ratio := float64(applied) / float64(applied+p1.Rooted-p0.Rooted)
	if ratio < 0.99 {
		t.Errorf("the honest player got %.1f%% of its inputs applied", 100*ratio)
	}
	// No overrun but those a machine busier than its cores explains: one
	// for each moment the process waited more than half a tick for a CPU
	// (none on an idle machine).
	if late := probe.Late(); room.Overruns > late {
		t.Errorf("%d tick overruns, more than the %d moments the process was starved for a CPU explain", room.Overruns, late)
	}
	m := gather(t, srv)
	for _, want := range []struct {
		metric, label, value string
	}{
		{"rewind_datagrams_dropped_total", "reason", "truncated"},
		{"rewind_datagrams_dropped_total", "reason", "version"},
		{"rewind_datagrams_dropped_total", "reason", "direction"},
		{"rewind_datagrams_dropped_total", "reason", "type"},
		{"rewind_datagrams_dropped_total", "reason", "value"},
		{"rewind_datagrams_dropped_total", "reason", "flood"},
		{"rewind_inputs_total", "verdict", "too_early"},
		{"rewind_inputs_total", "verdict", "duplicate"},
		{"rewind_view_lag_clamped_total", "reason", "measured"},
	} {
		if v := m.value(want.metric, want.label, want.value); v < 1 {
			t.Errorf("%s{%s=%q} = %v, want ≥ 1", want.metric, want.label, want.value, v)
		}
	}
}

type metricFamilies map[string]*dto.MetricFamily

func gather(t *testing.T, srv *server.Server) metricFamilies {
	t.Helper()
	fams, err := srv.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	m := metricFamilies{}
	for _, f := range fams {
		m[f.GetName()] = f
	}
	return m
}

func (m metricFamilies) value(name, label, value string) float64 {
	f, ok := m[name]
	if !ok {
		return -1
	}
	for _, met := range f.GetMetric() {
		match := label == ""
		for _, l := range met.GetLabel() {
			if l.GetName() == label && l.GetValue() == value {
				match = true
			}
		}
		if match && met.GetCounter() != nil {
			return met.GetCounter().GetValue()
		}
	}
	return -1
}

// A client on the sealed channel learns why the server closed its connection
// even when every QUIC packet to it is lost from then on, CONNECTION_CLOSE
// included: the sealed Close datagrams say it, long before its idle timeout.
func TestSealedCloseWhenTheQUICCloseIsLost(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	var cut atomic.Bool
	// Every QUIC packet has bit 0x40 set; no sealed packet does.
	quicDown := func(down bool, p []byte) bool { return down && cut.Load() && len(p) > 0 && p[0]&0x40 != 0 }
	sh, err := netshim.Start(netshim.Config{Listen: "127.0.0.1:0", Target: srv.Addr().String(), Drop: quicDown})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	c := dial(t, srv, client.Config{Addr: sh.Addr().String(), Room: "r", Name: "a", Input: bots.NewBot(bots.BotConfig{Seed: 1})})
	if ch := c.Welcome().Channel; ch != protocol.ChannelSealed {
		t.Fatalf("channel %d, want the sealed channel", ch)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background()) }()
	waitTicks(t, srv, "r", 20)
	cut.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ce *client.CloseError
		if !errors.As(err, &ce) || ce.Code != protocol.CloseShutdown || ce.Reason != "server shutting down" {
			t.Errorf("Run returned %v, want the shutdown close reason", err)
		}
	case <-time.After(5 * time.Second): // the client's idle timeout is 10 s
		t.Fatal("the client did not learn of the close within 5 s")
	}
	// Every QUIC packet to the client was dropped from the cut on, so the
	// reason came in a sealed Close. (Whether the server's own
	// CONNECTION_CLOSE was among the dropped packets depends on a race: a
	// client that closes on the sealed Close first may close the server's
	// connection before the server sends it.)
	t.Logf("down: %+v", sh.Stats().Down)
}
