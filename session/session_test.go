package session

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/protocol"
)

// fakeClock is a clock the tests move by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// tickView is what the client shows at tick: the local player at x, and
// remote players and objects as given, at 20 Hz.
func tickView(w *protocol.Welcome, tick int64, x float64, players []client.Player, objects []client.Object) *client.View {
	return &client.View{Tick: tick, RenderTime: float64(tick) - 5, Welcome: w,
		Self:    client.Self{ID: 1, Team: 1, Alive: true, Health: 100, Pos: geom.V(x, 0, 0), Yaw: 0.1 * float64(tick)},
		Players: players, Objects: objects}
}

func TestSetIntentKeepsTapsForTheNextTick(t *testing.T) {
	s := newSession(Config{})
	w := &protocol.Welcome{TickRate: 20, Player: 1}
	s.SetIntent(Intent{Fire: true, Jump: true, MoveZ: 1})
	s.SetIntent(Intent{MoveZ: 0.5}) // released within the tick
	in := s.Intent(tickView(w, 1, 0, nil, nil))
	if !in.Fire || !in.Jump || in.Reload || in.MoveZ != 0.5 {
		t.Errorf("first tick: %+v, want fire and jump from the taps and the latest stick", in)
	}
	if in := s.Intent(tickView(w, 2, 0, nil, nil)); in.Fire || in.Jump || in.MoveZ != 0.5 {
		t.Errorf("second tick: %+v, want the taps gone and the stick held", in)
	}
	s.SetIntent(Intent{Fire: true}) // held
	s.Intent(tickView(w, 3, 0, nil, nil))
	if in := s.Intent(tickView(w, 4, 0, nil, nil)); !in.Fire {
		t.Errorf("a held button was released: %+v", in)
	}
}

func TestFrameBlendsTheLastTwoTicks(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	s := newSession(Config{})
	s.now = clock.now
	w := &protocol.Welcome{TickRate: 20, Player: 1}
	var f Frame
	if np, no := s.Frame(&f, nil, nil); f.Status != Connecting || np != 0 || no != 0 {
		t.Fatalf("before any tick: %+v", f)
	}
	s.Intent(tickView(w, 10, 1, []client.Player{
		{ID: 2, Alive: true, Pos: geom.V(0, 0, 0), Yaw: 3},
		{ID: 5, Alive: true, Pos: geom.V(0, 0, 0)},
		{ID: 7, Alive: true, Pos: geom.V(10, 0, 0)},
	}, []client.Object{{ID: 9, Kind: protocol.KindProjectile, Pos: geom.V(0, 1, 0)}}))
	clock.t = clock.t.Add(50 * time.Millisecond)
	s.Intent(tickView(w, 11, 2, []client.Player{
		{ID: 2, Alive: true, Pos: geom.V(1, 0, 0), Yaw: -3}, // moved, and turned across ±π
		{ID: 3, Alive: true, Pos: geom.V(5, 0, 0)},          // new
		{ID: 7, Alive: true, Pos: geom.V(30, 0, 0)},         // teleported (respawned)
	}, []client.Object{{ID: 9, Kind: protocol.KindProjectile, Pos: geom.V(2, 1, 0)}}))
	clock.t = clock.t.Add(50 * time.Millisecond / 4)
	players, objects := make([]Player, 2), make([]Object, 4)
	np, no := s.Frame(&f, players, objects)
	if f.Tick != 11 || f.Alpha != 0.25 || f.TickRate != 20 || f.Players != 3 || f.Objects != 1 || np != 2 || no != 1 {
		t.Fatalf("frame %+v, %d players and %d objects written", f, np, no)
	}
	if f.Self.Pos != geom.V(1.25, 0, 0) || math.Abs(f.Self.Yaw-1.025) > 1e-12 || f.RenderTime != 5.25 {
		t.Errorf("self at %v yaw %v, render time %v; want (1.25, 0, 0), 1.025, 5.25", f.Self.Pos, f.Self.Yaw, f.RenderTime)
	}
	if p := players[0]; p.ID != 2 || p.Pos != geom.V(0.25, 0, 0) || math.Abs(math.Remainder(p.Yaw-(3+0.25*(2*math.Pi-6)), 2*math.Pi)) > 1e-12 {
		t.Errorf("player 2 %+v: want a quarter of the way, turning the short way across ±π", p)
	}
	if p := players[1]; p.ID != 3 || p.Pos != geom.V(5, 0, 0) {
		t.Errorf("player 3 %+v: a new player is drawn where it is", p)
	}
	if o := objects[0]; o.Pos != geom.V(0.5, 1, 0) {
		t.Errorf("projectile at %v, want (0.5, 1, 0)", o.Pos)
	}
	all := make([]Player, 3)
	s.Frame(&f, all, nil)
	if all[2].ID != 7 || all[2].Pos != geom.V(30, 0, 0) {
		t.Errorf("player 7 %+v: a teleport is drawn where it ends", all[2])
	}
	clock.t = clock.t.Add(time.Second) // the next tick is late: hold the newest
	s.Frame(&f, all, nil)
	if f.Alpha != 1 || f.Self.Pos != geom.V(2, 0, 0) {
		t.Errorf("a late tick: alpha %v, self at %v; want 1 and the newest", f.Alpha, f.Self.Pos)
	}
}

func TestEventsAreBoundedAndClosedComesLast(t *testing.T) {
	s := newSession(Config{Events: 3})
	for i := range 5 {
		s.onHitMarker(client.HitMarker{HitConfirm: protocol.HitConfirm{Shot: uint16(i), Target: 2}})
	}
	s.finish(&client.CloseError{Code: 3, Reason: "drained"})
	out := make([]Event, 2)
	if n := s.Events(out); n != 2 || out[0].Shot != 0 || out[1].Shot != 1 {
		t.Fatalf("first drain: %d %+v", n, out[:n])
	}
	if n := s.Events(out); n != 2 || out[0].Shot != 2 || out[1].Kind != EventClosed || out[1].Code != 3 || out[1].Name != "drained" {
		t.Fatalf("second drain: %d %+v", n, out[:n])
	}
	if n := s.Events(out); n != 0 {
		t.Errorf("the closed event came twice: %+v", out[:n])
	}
	if st := s.Stats(); st.EventsDropped != 2 || st.Status != Closed {
		t.Errorf("stats %+v: want 2 events dropped, closed", st)
	}
	var ce *client.CloseError
	if !errors.As(s.Err(), &ce) {
		t.Errorf("Err %v, want the close", s.Err())
	}
}

func TestOnlyOthersHitsOnThePlayerAreDamage(t *testing.T) {
	s := newSession(Config{})
	s.Intent(tickView(&protocol.Welcome{TickRate: 20, Player: 1}, 1, 0, nil, nil))
	s.onEvent(protocol.Event{Kind: protocol.EventHit, Player: 2, Other: 1, Damage: 10, Weapon: 1}) // on the player
	s.onEvent(protocol.Event{Kind: protocol.EventHit, Player: 1, Other: 2, Damage: 10})            // the player's own: a marker
	s.onEvent(protocol.Event{Kind: protocol.EventNoDamage, Player: 3, Other: 1, Reason: protocol.NoDamageInvulnerable})
	s.onEvent(protocol.Event{Kind: protocol.EventJoined, Player: 4, Team: 2, Name: "dana"})
	out := make([]Event, 8)
	n := s.Events(out)
	if n != 3 || out[0].Kind != EventDamaged || out[0].Player != 2 || out[0].Damage != 10 ||
		out[1].Kind != EventDamaged || out[1].Reason != protocol.NoDamageInvulnerable ||
		out[2].Kind != EventJoined || out[2].Name != "dana" || out[2].Team != 2 {
		t.Errorf("events %+v", out[:n])
	}
}

// The engine's per-frame calls allocate nothing once the views have grown.
func TestFrameCallsAllocateNothing(t *testing.T) {
	s := newSession(Config{})
	w := &protocol.Welcome{TickRate: 60, Player: 1}
	players := make([]client.Player, 12)
	for i := range players {
		players[i] = client.Player{ID: uint32(i + 2), Alive: true}
	}
	objects := []client.Object{{ID: 100, Kind: protocol.KindProjectile}}
	tick := int64(0)
	s.Intent(tickView(w, tick, 0, players, objects))
	buf, obuf, evs := make([]Player, 16), make([]Object, 16), make([]Event, 16)
	var f Frame
	v := tickView(w, tick, 0, players, objects) // the client keeps one View, too
	allocs := testing.AllocsPerRun(200, func() {
		tick++
		s.SetIntent(Intent{MoveZ: 1, Fire: tick%2 == 0})
		v.Tick, v.Self.Pos.X = tick, float64(tick)*0.1
		s.Intent(v)
		s.onHitMarker(client.HitMarker{HitConfirm: protocol.HitConfirm{Shot: 1, Target: 2}})
		s.Frame(&f, buf, obuf)
		s.Events(evs)
		s.Stats()
	})
	if allocs != 0 {
		t.Errorf("%v allocations per frame", allocs)
	}
}

// BenchmarkFrame is the cost of an engine's frame: SetIntent, Frame with 11
// remote players and 40 projectiles blended, and Events, beside the tick
// loop publishing a view every third frame (a 60 Hz tick at 180 frames a
// second), with the bare copy of the view's players and objects (what any
// frame API must do) as the floor, timed in the same loop.
func BenchmarkFrame(b *testing.B) {
	s := newSession(Config{})
	w := &protocol.Welcome{TickRate: 60, Player: 1}
	players := make([]client.Player, 11)
	for i := range players {
		players[i] = client.Player{ID: uint32(i + 2), Alive: true, Pos: geom.V(float64(i), 0, 0)}
	}
	objects := make([]client.Object, 40)
	for i := range objects {
		objects[i] = client.Object{ID: uint32(100 + i), Kind: protocol.KindProjectile}
	}
	v := tickView(w, 0, 0, players, objects)
	s.Intent(v)
	pbuf, obuf, ebuf := make([]Player, 16), make([]Object, 64), make([]Event, 16)
	var f Frame
	var frame, floor time.Duration
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%3 == 0 {
			v.Tick, v.Self.Pos.X = int64(i/3+1), float64(i)*0.01
			s.Intent(v)
		}
		i++
		t0 := time.Now()
		s.SetIntent(Intent{MoveZ: 1, Yaw: 0.5})
		s.Frame(&f, pbuf, obuf)
		s.Events(ebuf)
		t1 := time.Now()
		copy(pbuf, players)
		copy(obuf, objects)
		frame, floor = frame+t1.Sub(t0), floor+time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(frame.Nanoseconds())/n, "ns/frame")
	b.ReportMetric(float64(floor.Nanoseconds())/n, "copy-ns/frame")
	b.ReportMetric(float64(frame)/float64(floor), "x-copy")
}

// OnTick runs at every tick before the session takes the intent: an intent
// set from it is the tick's.
func TestOnTickSetsTheTicksIntent(t *testing.T) {
	var s *Session
	var views []int64
	s = newSession(Config{OnTick: func(v *client.View) {
		views = append(views, v.Tick)
		s.SetIntent(Intent{MoveZ: float64(v.Tick)})
	}})
	w := &protocol.Welcome{TickRate: 20, Player: 1}
	for tick := int64(1); tick <= 3; tick++ {
		if in := s.Intent(tickView(w, tick, 0, nil, nil)); in.MoveZ != float64(tick) {
			t.Errorf("tick %d: intent %+v, want the one OnTick set", tick, in)
		}
	}
	if len(views) != 3 || views[2] != 3 {
		t.Errorf("OnTick saw ticks %v", views)
	}
}
