package server

import (
	"testing"

	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/buildinfo"
	"github.com/rewind-gg/rewind/internal/matchtest"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/replication"
	"github.com/rewind-gg/rewind/results"
)

// A room plays the behind-the-wall script (matchtest.WallInputs) on an
// arena holding the wall: alice's one hit on bob, granted her view 8
// ticks back, reaches him behind the wall in his present. The room counts
// exactly it: rewind_hits_total{outcome=disputed}, alice's disputed_hits and bob's
// disputed_hits_taken in the match result, and the match's totals.
func TestRoomCountsTheDisputedHit(t *testing.T) {
	cfg := DefaultConfig()
	w := matchtest.Wall
	cfg.Arena.Boxes = []Box{{Min: w.Min.Array(), Max: w.Max.Array()}}
	s := &Server{cfg: cfg, log: zerolog.Nop(), m: newMetrics(buildinfo.Info{}), rooms: map[string]*room{}, sessions: map[*session]struct{}{}}
	var err error
	if s.weapons, err = s.cfg.LoadWeapons(); err != nil {
		t.Fatal(err)
	}
	if s.catalog, err = s.weapons.Catalog(s.cfg.registry()); err != nil {
		t.Fatal(err)
	}
	s.level = mustLevel(t, &s.cfg)
	s.welcome = welcomeTemplate(&s.cfg, s.catalog, s.level)
	r, err := newRoom(s, "wall")
	if err != nil {
		t.Fatal(err)
	}
	if lc := r.sim.Config().LagComp; float64(matchtest.WallLag) > lc.MaxUnlag() {
		t.Fatalf("the room grants %v ticks of view lag; the script claims %d", lc.MaxUnlag(), matchtest.WallLag)
	}
	join := func(name string, team uint8) *member {
		se := &session{ctrl: make(chan protocol.Event, ctrlQueue), queue: replication.NewQueue(sendBuffers), done: make(chan struct{})}
		se.snapshots = se.queue
		if rep := r.admit(se, &identity{user: name, name: name, room: "wall", team: team}, 100); rep.reject != nil {
			t.Fatal(rep.reject.Reason)
		}
		return r.bySess[se]
	}
	alice, bob := join("alice", 1), join("bob", 2)
	for _, p := range []struct {
		m   *member
		pos geom.Vec3
	}{{alice, matchtest.WallAlice}, {bob, matchtest.WallBob}} {
		st, _ := r.sim.PlayerState(p.m.entity)
		st.Transform.Pos = p.pos
		st.Transform.Yaw, st.Life.Spawn, st.Motion.Left = 0, st.Transform.Pos, st.Transform.Pos
		r.sim.SetPlayerState(p.m.entity, &st)
	}
	rifle, _ := r.sim.Catalog.Lookup("rifle")
	disputed := 0
	for range matchtest.WallTicks {
		a, b := matchtest.WallInputs(r.sim, alice.entity, bob.entity, rifle, r.sim.Now())
		r.sim.QueueInput(alice.entity, a)
		r.sim.QueueInput(bob.entity, b)
		r.tick()
		for _, ev := range r.sim.Events.Shots {
			if ev.Disputed {
				disputed++
			}
		}
		for _, m := range r.members { // what the senders would take
			drain(m.sess)
		}
	}
	if disputed != 1 {
		t.Fatalf("%d hits marked disputed, the script wants 1", disputed)
	}
	if v := readCounter(s.m.disputed); v != 1 {
		t.Errorf("rewind_hits_total{outcome=disputed} = %v, want 1", v)
	}
	if v := readCounter(s.m.hits[0]); v != 0 {
		t.Errorf("rewind_hits_total{outcome=damage} = %v, want 0: the one damaging hit is disputed, and an outcome counts each hit once", v)
	}
	for _, m := range r.members {
		r.fold(m)
	}
	res := r.result(endFinished)
	want := []results.Player{
		{UserID: "alice", Name: "alice", Team: 1, Hits: 1, Disputed: 1},
		{UserID: "bob", Name: "bob", Team: 2, DisputedTaken: 1},
	}
	if len(res.Players) != 2 || res.Players[0] != want[0] || res.Players[1] != want[1] {
		t.Errorf("players %+v, want %+v", res.Players, want)
	}
	if res.Hits != 1 || res.Disputed != 1 {
		t.Errorf("the match's hits %d and disputed hits %d, want 1 and 1", res.Hits, res.Disputed)
	}
}

// drain takes whatever the room queued for a session.
func drain(se *session) {
	for {
		select {
		case d := <-se.queue.Out():
			se.queue.Return(d)
		case <-se.ctrl:
		default:
			return
		}
	}
}
