package tests

import (
	"context"
	"math"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/trimesh"
)

// Shots on the sample map over QUIC: a shooter at its spawn fires once at
// each of six enemies standing at theirs, as its screen shows them. Where
// the sample map's walls, cover or deck stand between them (judged here on
// the level's own mesh, apart from the server, by a margin), the server
// stops the shot at the level, at the shooter's view time; where a line
// to the target is clear, the shot along it hits. The recording replays
// the same verdicts.
func TestShotsOnTheSampleMap(t *testing.T) {
	t.Parallel()
	lc, lvl := courtyard(t)
	dir := t.TempDir()
	srv := startServer(t, func(c *server.Config) {
		c.Level = lc
		c.Record.Dir = dir
	})
	still := scripted(func(*client.View) client.Intent { return client.Intent{} })
	var targets []*client.Client
	for _, name := range []string{"t-a", "t-b", "t-c", "t-d", "t-e", "t-f"} { // at each of the team's spawns
		targets = append(targets, dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "yard", Name: name, Team: 2, Input: still, Loaded: lvl}))
	}

	// The shooter fires at the targets in turn; aims[i] is what shot i+1
	// was aimed at, and whether the level's mesh has a wall on the way.
	type aim struct {
		target uint32
		sight  sight
	}
	var mu sync.Mutex
	var aims []aim
	var shooter *client.Client
	var ready atomic.Bool
	script := scripted(func(v *client.View) client.Intent {
		in := client.Intent{Weapon: v.Welcome.Loadout[0]}
		n := int(shooter.Stats().ShotsFired)
		if !ready.Load() || len(v.Players) < len(targets) || n >= len(targets) {
			return in
		}
		mu.Lock()
		defer mu.Unlock()
		if len(aims) > n { // aimed, not yet fired (a cooldown): aim again at it
			aims = aims[:n]
		}
		p := &v.Players[n]
		c := v.Capsule(p)
		// Aim at a point of the target's axis with a clear line, clear by
		// a margin (the wire rounds the aim, and the server's eye is its
		// own); failing one, at the chest, behind the level by a margin.
		eye, to, sight := v.Eye(), c.A.Lerp(c.B, 0.5).Sub(v.Eye()), hidden
		for k := 0.0; k <= 1; k += 0.125 {
			if d := c.A.Lerp(c.B, k).Sub(eye); lineOfSight(lvl.Mesh, eye, d) == open {
				to, sight = d, open
				break
			}
		}
		if sight != open {
			sight = lineOfSight(lvl.Mesh, eye, to)
		}
		aims = append(aims, aim{target: p.ID, sight: sight})
		in.Yaw, in.Pitch = math.Atan2(to.X, to.Z), math.Atan2(to.Y, math.Hypot(to.X, to.Z))
		in.Fire = true
		return in
	})
	shooter = dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "yard", Name: "shooter", Team: 1, Input: script, Loaded: lvl})
	stop := start(append(targets, shooter)...)
	until(t, 20*time.Second, "the shooter never settled", func() bool { return !shooter.Stats().Settling })
	ready.Store(true)
	until(t, 30*time.Second, "the shooter never fired at every target", func() bool {
		return int(shooter.Stats().ShotsFired) == len(targets)
	})
	waitTicks(t, srv, "yard", 20) // the last shot's input has arrived and been resolved
	stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil { // closes the recording
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var count [3]int
	for _, a := range aims {
		count[a.sight]++
	}
	if count[hidden] == 0 || count[open] == 0 {
		t.Fatalf("from the shooter's spawn, %d targets in the open, %d hidden, %d on the edge of cover (%+v): want some in the open and some hidden; has the map changed?", count[open], count[hidden], count[edge], aims)
	}

	files, _ := filepath.Glob(filepath.Join(dir, "yard-*"+replay.Extension))
	if len(files) != 1 {
		t.Fatalf("recordings %v, want one", files)
	}
	_, shots, levelEntity := replayShots(t, files[0])
	if len(shots) != len(aims) {
		t.Fatalf("%d shot events, %d shots aimed: %+v", len(shots), len(aims), shots)
	}
	for i, a := range aims {
		ev := shots[i]
		switch {
		case a.sight == hidden && (ev.Result != ecs.ResultBlocked || ev.By != levelEntity):
			t.Errorf("shot %d at player %d, behind the level's geometry: %+v; want it blocked by the level", i+1, a.target, ev)
		case a.sight == hidden && ev.ViewTime.Ticks() >= float64(ev.Tick):
			t.Errorf("shot %d was resolved at %v, tick %d: want the shooter's view time, in the past", i+1, ev.ViewTime.Ticks(), ev.Tick)
		case a.sight == open && ev.Result != ecs.ResultHit:
			t.Errorf("shot %d at player %d, in the open: %+v; want a hit", i+1, a.target, ev)
		}
	}
	t.Logf("from the shooter's spawn: %d targets in the open, %d hidden, %d on the edge of cover", count[open], count[hidden], count[edge])
}

// sight is what stands on a line: nothing, the level, or the edge of cover
// (within the margin of a shot's rounding).
type sight int

const (
	open sight = iota
	hidden
	edge
)

// sightMargin is how far, in metres, a line must clear cover or be
// inside it for lineOfSight to call it: far above the aim's rounding on
// the wire over the sample map's distances.
const sightMargin = 0.05

// lineOfSight says whether the segment from eye along to meets the mesh's
// shot-blocking triangles: open if a sphere of sightMargin swept along it
// touches none, hidden if the line and four lines sightMargin beside it
// all meet some, the edge of cover otherwise.
func lineOfSight(m *trimesh.Mesh, eye, to geom.Vec3) sight {
	l := to.Len()
	d := to.Scale(1 / l)
	if _, hit := m.SweepSphere(eye, sightMargin, d, l, level.ShotMask); !hit {
		return open
	}
	side := d.Cross(geom.V(0, 1, 0)).Normalize()
	up := side.Cross(d)
	for _, off := range []geom.Vec3{{}, side, side.Scale(-1), up, up.Scale(-1)} {
		o := eye.AddScaled(off, sightMargin)
		if _, hit := m.Raycast(o, d, l, level.ShotMask); !hit {
			return edge
		}
	}
	return hidden
}

// A crouched target on the sample map is rewound crouched over the
// network. Six enemies stand at their spawns and three shooters at theirs;
// of the pairs, the test takes one whose lines to the target's standing
// head and to its crouched body are both clear of the level (by a margin).
// That target crouches for eight ticks; its shooter, 300 ms away, fires
// when its screen shows it crouched, first at the standing head's height,
// then at the crouched body: the first misses (at the shooter's view time
// the head was not there), the second hits.
func TestCrouchedTargetOnTheSampleMap(t *testing.T) {
	t.Parallel()
	lc, lvl := courtyard(t)
	srv := startServer(t, func(c *server.Config) { c.Level = lc })
	var targetID, shooterID atomic.Uint32 // the chosen pair: 0 until chosen
	var crouchFrom atomic.Int64
	crouchFrom.Store(math.MaxInt64)
	var clients, targets, shooters []*client.Client
	for i := range 6 {
		c := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "c", Name: "t" + string(rune('a'+i)), Team: 2, Loaded: lvl,
			Input: scripted(func(v *client.View) client.Intent {
				from := crouchFrom.Load()
				me := v.Welcome.Player == targetID.Load()
				return client.Intent{Yaw: math.Pi, Crouch: me && v.Tick >= from && v.Tick < from+8}
			})})
		targets, clients = append(targets, c), append(clients, c)
	}
	var mu sync.Mutex
	hits := map[uint16]protocol.Event{}
	addr := shim(t, srv, 300*time.Millisecond, 0, 0, 5)
	for i := range 3 {
		var c *client.Client
		c = dial(t, srv, client.Config{Addr: addr, Room: "c", Name: "s" + string(rune('a'+i)), Team: 1, Loaded: lvl, Class: "assault",
			OnEvent: func(ev protocol.Event) {
				if (ev.Kind == protocol.EventHit || ev.Kind == protocol.EventNoDamage) && ev.Player == shooterID.Load() && c.ID() == ev.Player {
					mu.Lock()
					hits[ev.Shot] = ev
					mu.Unlock()
				}
			},
			Input: scripted(func(v *client.View) client.Intent {
				in := client.Intent{Weapon: v.Welcome.Loadout[0]}
				if v.Welcome.Player != shooterID.Load() {
					return in
				}
				n := c.Stats().ShotsFired
				var p *client.Player
				for i := range v.Players {
					if v.Players[i].ID == targetID.Load() {
						p = &v.Players[i]
					}
				}
				if p == nil || !p.Crouched || n >= 2 {
					return in
				}
				return crouchedAim(v, in, p, n)
			})})
		shooters, clients = append(shooters, c), append(clients, c)
	}
	// The pair: both lines clear from the shooter's eye at its spawn.
	var shooter *client.Client
	for _, s := range shooters {
		ws := s.Welcome()
		eye := geom.FromArray(ws.Spawn).Add(geom.V(0, ws.EyeHeight, 0))
		for _, tg := range targets {
			at := geom.FromArray(tg.Welcome().Spawn)
			if shooter == nil && lineOfSight(lvl.Mesh, eye, at.Add(geom.V(0, ws.Height-0.15, 0)).Sub(eye)) == open &&
				lineOfSight(lvl.Mesh, eye, at.Add(geom.V(0, 0.55, 0)).Sub(eye)) == open {
				shooter = s
				shooterID.Store(s.ID())
				targetID.Store(tg.ID())
			}
		}
	}
	if shooter == nil {
		t.Fatal("no shooter's spawn with clear lines to an enemy spawn's head and crouched body: has the sample map changed?")
	}
	stop := start(clients...)
	defer stop()
	crouchedShots(t, srv, "c", shooter, &crouchFrom, &mu, hits)
}
