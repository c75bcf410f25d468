package view

import (
	"bytes"
	"math"
	"testing"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/matchtest"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/ticks"
)

// disputedScript is a scripted match with one disputed hit: carol (team 1)
// stands at (9, 0, −10), the level's box (x 8..10, z −2..2, 3 m high)
// between her and the line z = 10 along which dave (team 2) runs toward
// +x. Once dave is behind the box, she fires her rifle at where he was 20
// ticks before (in the open), claiming 20 ticks of view lag: the server
// rewinds him there and the shot hits; in his present he was behind the
// box, and a shot not rewound would have missed. It returns the recording
// and the tick of the shot.
func disputedScript(t testing.TB) ([]byte, int64) {
	t.Helper()
	sc, _ := matchtest.RoomConfig(t)
	sc.LagComp = lagcomp.Config{WindowTicks: 30, Bucketing: true, CellSize: 4}
	var buf bytes.Buffer
	r := matchtest.NewRecorded(t, sc, matchtest.Level(geom.AABB{Min: geom.V(8, 0, -2), Max: geom.V(10, 3, 2)}), replay.RecorderConfig{Writer: &buf})
	sim := r.Sim
	rifle, _ := sim.Catalog.Lookup("rifle")
	carol := r.Spawn(matchtest.Player("carol", 1, geom.V(9, 0, -10), rifle))
	dave := r.Spawn(matchtest.Player("dave", 2, geom.V(-3, 0, 10), rifle))
	shot := int64(-1)
	for tick := int64(0); tick < 80; tick++ {
		in := ecs.Input{Tick: tick, Weapon: rifle, ViewTime: ecs.ViewTime{Tick: tick}}
		if p, ok := sim.History.PoseAt(tick-1, dave); ok && shot < 0 && p.Pos.X >= 8.4 {
			then, _ := sim.History.PoseAt(tick-20, dave)
			d := then.Pos.Add(geom.V(0, 1.1, 0)).Sub(geom.V(9, sc.EyeHeight, -10))
			in.Yaw, in.Pitch = math.Atan2(d.X, d.Z), math.Atan2(d.Y, math.Hypot(d.X, d.Z))
			in.Buttons, in.Shot, in.ViewTime = ecs.ButtonFire, 1, ecs.ViewTime{Tick: tick - 20}
			shot = tick
		}
		r.Queue(carol, in)
		r.Queue(dave, ecs.Input{Tick: tick, MoveX: 1, Weapon: rifle, ViewTime: ecs.ViewTime{Tick: tick}})
		r.Step()
	}
	r.Close()
	if shot < 0 {
		t.Fatal("dave never got behind the box")
	}
	return buf.Bytes(), shot
}

// The view names the disputed hit, and only it; the hits of the other
// script (bob in plain sight) are not.
func TestMatchFlagsTheDisputedHit(t *testing.T) {
	data, tick := disputedScript(t)
	f, err := Load(writeRecording(t, data), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := f.Match(0)
	var disputed []Shot
	for _, s := range m.Shots {
		if s.Disputed {
			disputed = append(disputed, s)
		}
	}
	if len(disputed) != 1 {
		t.Fatalf("%d disputed shots, want the one at tick %d: %+v", len(disputed), tick, disputed)
	}
	if s := disputed[0]; s.Tick != tick || s.Result != "hit" || m.Players[s.Shooter].Name != "carol" || m.Players[s.Target].Name != "dave" ||
		s.Lag != 20 || s.Dealt == 0 {
		t.Errorf("the disputed hit: %+v", s)
	}
	s := recordScript(t)
	f, err = Load(writeRecording(t, s.data), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ = f.Match(0)
	for _, sh := range m.Shots {
		if sh.Disputed {
			t.Errorf("a hit in plain sight flagged disputed: %+v", sh)
		}
	}
}

// The frames carry each player's view lag: alice's 150 ms at the hit (3
// ticks at 20 Hz), no measured bound (the script's inputs claim none); the
// players their hitboxes; the rocket its splash radius.
func TestMatchCarriesLagsHeightsAndSplash(t *testing.T) {
	s := recordScript(t)
	f, err := Load(writeRecording(t, s.data), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := f.Match(0)
	var alice *[3]Num
	for i, l := range m.Frames[hitTick].Lags {
		if l[0] == 0 {
			alice = &m.Frames[hitTick].Lags[i]
		}
	}
	if alice == nil || alice[1] != 150 || alice[2] != 0 {
		t.Errorf("tick %d's lags %v: want alice's 150 ms, no bound", hitTick, m.Frames[hitTick].Lags)
	}
	for _, p := range m.Players {
		if p.Radius <= 0 || p.Height <= p.Head || p.Head <= 0 || p.Crouched <= 0 || p.Crouched > p.Height {
			t.Errorf("%s's hitbox: %+v", p.Name, p)
		}
	}
	for _, sh := range m.Shots {
		if (sh.Weapon == "rocket") != (sh.Blast == 3) {
			t.Errorf("a %s shot with splash radius %v (the rocket's is 3 m)", sh.Weapon, sh.Blast)
		}
	}
}

// Viewed under another window (view --window), the shots are judged under
// it: with none, alice's hit rewound 3 ticks misses; the recorded window is
// named beside it.
func TestMatchUnderAnotherWindow(t *testing.T) {
	s := recordScript(t)
	f, err := LoadWith(writeRecording(t, s.data), Config{Window: &ticks.Span{D: 0}})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := f.Match(0)
	if m.Window != 0 || m.Recorded == nil || *m.Recorded != 30 {
		t.Fatalf("window %d, recorded %v: want 0 and 30", m.Window, m.Recorded)
	}
	if sh := findShot(t, m, hitTick, "hitscan"); sh.Result != "miss" || sh.Lag != 0 {
		t.Errorf("alice's shot without rewind: %+v", sh)
	}
	if len(m.Players) != 2 || m.Players[0].Name != "alice" || len(m.Frames) != int(s.ticks) {
		t.Errorf("players %+v, %d frames", m.Players, len(m.Frames))
	}
}

// Every kill a weapon dealt marks the shot that dealt it, and only those.
func TestMatchMarksKills(t *testing.T) {
	data := matchtest.Record(t, 6, 1200)
	rd, err := replay.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	kills := 0
	if _, err := replay.Run(rd, replay.Config{OnTick: func(tk *replay.Tick) error {
		for _, k := range tk.Sim.Events.Kills {
			if k.Weapon != ecs.NoWeapon {
				kills++
			}
		}
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	f, err := Load(writeRecording(t, data), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := f.Match(0)
	marked := 0
	for _, s := range m.Shots {
		if s.Kill {
			marked++
			if s.Result != "hit" || s.Dealt == 0 {
				t.Errorf("a kill marked on %+v", s)
			}
		}
	}
	if kills == 0 || marked != kills {
		t.Errorf("%d shots marked kills, the replay's weapons killed %d times: want as many, some", marked, kills)
	}
}
