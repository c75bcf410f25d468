package bots

import (
	"testing"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/protocol"
)

// tallyView is a shooter of team 1 at the origin facing +z (yaw 0) on the
// arena, with a rifle (one pellet, no spread) and a rocket, and two enemies
// and a friend standing in the open 10 m away.
func tallyView(t *testing.T) *client.View {
	t.Helper()
	lvl, err := client.LoadLevel("arena", nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &protocol.Welcome{Player: 1, Team: 1, Radius: 0.4, Height: 1.8, EyeHeight: 1.6, SpreadSeed: 7,
		Weapons: []protocol.WeaponInfo{{Name: "rifle", Kind: "hitscan", Range: 100, Pellets: 1}, {Name: "rocket", Kind: "projectile", Speed: 30}}}
	return &client.View{Welcome: w, Level: lvl, Players: []client.Player{
		{ID: 2, Team: 2, Alive: true, Pos: geom.V(0, 0, 10)}, // straight ahead
		{ID: 3, Team: 2, Alive: true, Pos: geom.V(10, 0, 0)}, // to the side
		{ID: 4, Team: 1, Alive: true, Pos: geom.V(0, 0, 5)}}} // a friend in the way: shots pass friends
}

func TestTallyScoresShots(t *testing.T) {
	v := tallyView(t)
	eye := geom.V(0, 1.6, 0)
	var tl Tally
	tl.Shot(client.Shot{ID: 1, Tick: 100, Weapon: 0, Eye: eye, View: v})               // at enemy 2
	tl.Shot(client.Shot{ID: 2, Tick: 101, Weapon: 0, Eye: eye, Yaw: 3.14159, View: v}) // behind: nobody
	tl.Shot(client.Shot{ID: 3, Tick: 102, Weapon: 1, Eye: eye, View: v})               // a rocket: not scored
	if got := tl.Stats(); got.HitsSeen != 1 {
		t.Fatalf("hits seen %d, want 1 (shot 1 on enemy 2)", got.HitsSeen)
	}
	tl.Marker(client.HitMarker{HitConfirm: protocol.HitConfirm{Shot: 1, Target: 2}}) // the hit seen, confirmed
	tl.Marker(client.HitMarker{HitConfirm: protocol.HitConfirm{Shot: 2, Target: 3}}) // a hit nobody saw: a false positive
	tl.Marker(client.HitMarker{HitConfirm: protocol.HitConfirm{Shot: 3, Target: 3}}) // the rocket's: not a hitscan shot
	tl.Marker(client.HitMarker{HitConfirm: protocol.HitConfirm{Shot: 9, Target: 2}}) // a shot it never saw
	want := TallyStats{HitsSeen: 1, SeenConfirmed: 1, HitEvents: 2, FalsePositives: 1}
	if got := tl.Stats(); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
	targets := tl.Targets()
	if got, want := targets[2], (TargetStats{HitsSeen: 1, SeenConfirmed: 1, HitEvents: 1}); got != want {
		t.Errorf("target 2: %+v, want %+v", got, want)
	}
	if got, want := targets[3], (TargetStats{HitEvents: 1, FalsePositives: 1}); got != want {
		t.Errorf("target 3: %+v, want %+v", got, want)
	}
	// Killed at tick 100: shots 2 and 3, fired after, never were.
	tl.Event(protocol.Event{Kind: protocol.EventKill, Tick: 100, Player: 2, Other: 1})
	tl.Event(protocol.Event{Kind: protocol.EventKill, Tick: 50, Player: 1, Other: 3}) // a kill of its own
	if got := tl.Stats(); got.ShotsAfterDeath != 2 || got.HitsSeenAfterDeath != 0 {
		t.Errorf("after death: %d shots, %d hits seen; want 2 and 0", got.ShotsAfterDeath, got.HitsSeenAfterDeath)
	}
}

// Wire chains the tally after the callbacks a config already has.
func TestTallyWireKeepsCallbacks(t *testing.T) {
	var shots, markers, events int
	cfg := client.Config{OnShot: func(client.Shot) { shots++ }, OnHitMarker: func(client.HitMarker) { markers++ },
		OnEvent: func(protocol.Event) { events++ }}
	var tl Tally
	tl.Wire(&cfg)
	v := tallyView(t)
	cfg.OnShot(client.Shot{ID: 1, Eye: geom.V(0, 1.6, 0), View: v})
	cfg.OnHitMarker(client.HitMarker{HitConfirm: protocol.HitConfirm{Shot: 1, Target: 2}})
	cfg.OnEvent(protocol.Event{Kind: protocol.EventKill, Player: 2, Other: 1})
	if shots != 1 || markers != 1 || events != 1 {
		t.Errorf("the config's own callbacks ran %d, %d, %d times; want once each", shots, markers, events)
	}
	if got := tl.Stats(); got.HitsSeen != 1 || got.SeenConfirmed != 1 {
		t.Errorf("the tally saw %+v", got)
	}
}

// An enemy shield shown in the way stops a shot on the screen as on the
// server; the player's own, and its team's, let it through.
func TestTallyShieldsShown(t *testing.T) {
	eye := geom.V(0, 1.6, 0)
	wall := func(owner uint32, team uint8) client.Object { // across the line to enemy 2, 5 m out
		return client.Object{ID: 9, Kind: protocol.KindShield, Team: team, Owner: owner, Pos: geom.V(-1, 0, 5), Vel: geom.V(2, 2, 0.2)}
	}
	for _, tt := range []struct {
		name   string
		shield client.Object
		seen   uint64
	}{
		{"an enemy's shield", wall(3, 2), 0},
		{"a shield for everybody", wall(3, 0), 0},
		{"its team's shield", wall(4, 1), 1},
		{"its own shield", wall(1, 0), 1},
	} {
		v := tallyView(t)
		v.Objects = []client.Object{tt.shield}
		var tl Tally
		tl.Shot(client.Shot{ID: 1, Tick: 100, Weapon: 0, Eye: eye, View: v})
		if got := tl.Stats().HitsSeen; got != tt.seen {
			t.Errorf("%s: %d hits seen, want %d", tt.name, got, tt.seen)
		}
	}
}

// KeepShots keeps each hitscan shot with what the screen showed it hit
// and the markers the server sent for it.
func TestTallyKeepsShots(t *testing.T) {
	v := tallyView(t)
	v.RenderTime = 96.5
	tl := Tally{KeepShots: true}
	tl.Shot(client.Shot{ID: 1, Tick: 100, Seq: 4, Weapon: 0, Eye: geom.V(0, 1.6, 0), View: v})
	tl.Shot(client.Shot{ID: 2, Tick: 101, Weapon: 1, Eye: geom.V(0, 1.6, 0), View: v}) // a rocket: not kept
	tl.Shot(client.Shot{ID: 3, Tick: 102, Weapon: 0, Eye: geom.V(0, 1.6, 0), Yaw: 3.14159, View: v})
	tl.Marker(client.HitMarker{HitConfirm: protocol.HitConfirm{Shot: 1, Target: 2}})
	tl.Marker(client.HitMarker{HitConfirm: protocol.HitConfirm{Shot: 3, Target: 3}})
	shots := tl.Shots()
	if len(shots) != 2 {
		t.Fatalf("%d shots kept, want 2: %+v", len(shots), shots)
	}
	a, b := shots[0], shots[1]
	if a.Player != 1 || a.Shot != 1 || a.Seq != 4 || a.Tick != 100 || a.View != 96.5 || len(a.Seen) != 1 || a.Seen[0].ID != 2 ||
		a.Seen[0].Pos != geom.V(0, 0, 10) || !a.Confirmed() || len(a.FalsePositives()) != 0 {
		t.Errorf("shot 1: %+v", a)
	}
	if b.Shot != 3 || len(b.Seen) != 0 || b.Confirmed() || len(b.FalsePositives()) != 1 || b.FalsePositives()[0] != 3 {
		t.Errorf("shot 3: %+v", b)
	}
}

// A shield the screen shows only after a hit seen, across the shot's ray
// before the enemy, stopped it on the server (shields are never rewound):
// the hit seen is counted apart, unless the server confirms it after all.
func TestTallyShieldShownLater(t *testing.T) {
	eye := geom.V(0, 1.6, 0)
	across := client.Object{ID: 9, Kind: protocol.KindShield, Team: 2, Owner: 3, Pos: geom.V(-1, 0, 5), Vel: geom.V(2, 2, 0.2)}
	aside := across
	aside.ID, aside.Pos = 10, geom.V(5, 0, 5)
	v := tallyView(t)
	tl := Tally{KeepShots: true}
	tl.Shot(client.Shot{ID: 1, Tick: 100, Weapon: 0, Eye: eye, View: v}) // at enemy 2, 10 m ahead
	tl.Shot(client.Shot{ID: 2, Tick: 101, Weapon: 0, Eye: eye, View: v})
	later := tallyView(t)
	later.Tick = 104
	later.Objects = []client.Object{aside}
	tl.View(later)
	if got := tl.Stats().HitsSeenShielded; got != 0 {
		t.Fatalf("a shield aside: %d shielded, want 0", got)
	}
	later.Objects = []client.Object{aside, across}
	tl.View(later)
	tl.View(later) // counted once
	if got := tl.Stats(); got.HitsSeen != 2 || got.HitsSeenShielded != 2 {
		t.Fatalf("a shield across: %+v, want 2 hits seen, both shielded", got)
	}
	// The server confirms shot 2 after all: the shield came after it.
	tl.Marker(client.HitMarker{HitConfirm: protocol.HitConfirm{Shot: 2, Target: 2}})
	if got := tl.Stats(); got.HitsSeenShielded != 1 || got.SeenConfirmed != 1 {
		t.Errorf("after shot 2's marker: %+v, want 1 shielded and 1 confirmed", got)
	}
	if shots := tl.Shots(); len(shots) != 2 || !shots[0].Shielded || shots[1].Shielded {
		t.Errorf("kept shots %+v: want shot 1 shielded, shot 2 not", shots)
	}
	// Long after a shot, a new shield explains nothing.
	far := tallyView(t)
	far.Tick = 100 + shieldedWithin + 1
	far.Objects = []client.Object{across}
	var tl2 Tally
	tl2.Shot(client.Shot{ID: 1, Tick: 100, Weapon: 0, Eye: eye, View: tallyView(t)})
	tl2.View(far)
	if got := tl2.Stats().HitsSeenShielded; got != 0 {
		t.Errorf("a shield %d ticks later: %d shielded, want 0", shieldedWithin+1, got)
	}
}
