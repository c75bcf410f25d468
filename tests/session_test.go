package tests

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/examples/levels"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/session"
)

// engineLoop plays a session the way a game engine does: every frame (at
// about 120 Hz) it reads what to draw, aims at the nearest enemy it shows
// and holds fire, and drains the events, until done says so or the
// session closes. It returns the events it drained.
func engineLoop(t *testing.T, s *session.Session, deadline time.Duration, done func(events []session.Event, f *session.Frame) bool) []session.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	frame := time.NewTicker(8 * time.Millisecond)
	defer frame.Stop()
	var f session.Frame
	players := make([]session.Player, 16)
	buf := make([]session.Event, 32)
	var events []session.Event
	for {
		select {
		case <-ctx.Done():
			t.Fatalf("the session did not get there in %v: %+v, stats %+v", deadline, f, s.Stats())
		case <-frame.C:
		}
		np, _ := s.Frame(&f, players, nil)
		if w, ok := s.Welcome(); ok && f.Self.Alive {
			eye := f.Self.Pos.Add(geom.V(0, w.EyeHeight, 0))
			best := math.Inf(1)
			in := session.Intent{}
			for _, p := range players[:np] {
				if !p.Alive || p.Team == f.Self.Team {
					continue
				}
				d := p.Pos.Add(geom.V(0, 1, 0)).Sub(eye)
				if l := d.Len(); l < best {
					best = l
					in = session.Intent{Yaw: math.Atan2(d.X, d.Z), Pitch: math.Atan2(d.Y, math.Hypot(d.X, d.Z)), Fire: true}
				}
			}
			s.SetIntent(in)
		}
		n := s.Events(buf)
		events = append(events, buf[:n]...)
		if done(events, &f) {
			return events
		}
	}
}

func countKind(events []session.Event, kind session.EventKind) int {
	n := 0
	for _, e := range events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// A session driven by an engine-like frame loop over real QUIC: it joins,
// shows the other player, its hits come back as markers, and Close ends it
// with a Closed event, last.
func TestSessionPlaysFromAFrameLoop(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) { c.Match.Health = 1e9 })
	target := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "engine", Name: "target", Team: 1, Input: strafer(20)})
	stop := start(target)
	defer stop()
	s, err := session.Start(session.Config{Config: client.Config{Addr: srv.Addr().String(), Room: "engine", Name: "engine", Team: 2,
		ServerCertSHA256: srv.CertSHA256()}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	seen := false
	// Until ten hit markers, and the statistics count them too: the client
	// publishes its statistics at the end of the tick whose markers the
	// frame may already have shown.
	events := engineLoop(t, s, 30*time.Second, func(events []session.Event, f *session.Frame) bool {
		seen = seen || (f.Status == session.Playing && f.Players > 0)
		return countKind(events, session.EventHitMarker) >= 10 && s.Stats().HitsConfirmed >= 10
	})
	if !seen {
		t.Error("no frame showed the other player")
	}
	for _, e := range events {
		if e.Kind == session.EventHitMarker && (e.Other != target.ID() || e.Damage <= 0) {
			t.Errorf("a hit marker %+v, want hits on the target (%d) that dealt damage", e, target.ID())
		}
	}
	st := s.Stats()
	if st.Status != session.Playing || st.HitsConfirmed < 10 || st.ShotsFired < st.HitsConfirmed || st.RTT <= 0 {
		t.Errorf("stats %+v", st)
	}
	s.Close()
	closing := engineLoop(t, s, 10*time.Second, func(events []session.Event, _ *session.Frame) bool {
		return countKind(events, session.EventClosed) > 0
	})
	last := closing[len(closing)-1]
	if last.Kind != session.EventClosed || last.Code != 0 || countKind(closing, session.EventClosed) != 1 {
		t.Errorf("the session ended with %+v, want one Closed event, last, code 0", last)
	}
	if err := s.Wait(context.Background()); err != nil || s.Err() != nil || s.Status() != session.Closed {
		t.Errorf("after Close: wait %v, err %v, status %v", err, s.Err(), s.Status())
	}
}

// A session that cannot play says why, through Err and a Closed event,
// without blocking the frame: a level the server does not play, a server
// that is not there.
func TestSessionThatCannotPlaySaysWhy(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	file, data, _ := levels.Lookup(levels.Courtyard)
	for _, tc := range []struct {
		name string
		cfg  session.Config
		want string
	}{
		{"another level", session.Config{Config: client.Config{Addr: srv.Addr().String(), Room: "m", Name: "a", ServerCertSHA256: srv.CertSHA256(),
			Level: file, LevelData: data}}, "level"},
		{"no server", session.Config{Config: client.Config{Addr: "127.0.0.1:1", Room: "m", Name: "b", InsecureSkipVerify: true}, DialTimeout: 2 * time.Second}, "dial"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := session.Start(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			events := engineLoop(t, s, 20*time.Second, func(events []session.Event, _ *session.Frame) bool {
				return countKind(events, session.EventClosed) > 0
			})
			last := events[len(events)-1]
			if last.Code != session.CloseError || s.Err() == nil || s.Status() != session.Closed || !strings.Contains(last.Name, tc.want) {
				t.Errorf("closed with %+v, err %v", last, s.Err())
			}
			t.Logf("%s: %s", tc.name, last.Name)
		})
	}
}
