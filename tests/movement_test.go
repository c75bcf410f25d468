package tests

import (
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/bots"
	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/examples/levels"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/leveltest"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/weapons"
)

// writeLevel writes a .gltf of nodes and returns its path.
func writeLevel(t testing.TB, name string, nodes ...map[string]any) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".gltf")
	if err := os.WriteFile(path, leveltest.GLTF(nodes...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// courtyard is the sample map, for a server (as the demo plays it) and for
// its clients.
func courtyard(t testing.TB) (server.LevelConfig, *client.Level) {
	t.Helper()
	file, data, _ := levels.Lookup(levels.Courtyard)
	lvl, err := client.LoadLevel(file, data)
	if err != nil {
		t.Fatal(err)
	}
	return server.LevelConfig{File: file, Data: data}, lvl
}

// events collects a client's events from its Run goroutine.
type events struct {
	mu  sync.Mutex
	evs []protocol.Event
}

func (e *events) add(ev protocol.Event) { e.mu.Lock(); e.evs = append(e.evs, ev); e.mu.Unlock() }

func (e *events) of(kind protocol.EventKind) []protocol.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []protocol.Event
	for _, ev := range e.evs {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// A player who walks off the floor falls into the kill volume under it and
// dies, its own killer with the level's weapon (KillByLevel); it respawns
// where it spawned, facing the spawn's way, and can walk off again.
func TestKillVolumeOverQUIC(t *testing.T) {
	t.Parallel()
	file := writeLevel(t, "pit",
		leveltest.Node("col_floor", "mesh", leveltest.FloorMesh),                                      // 20 m: its edge at z = 10
		leveltest.Node("spawn_t1_edge", "translation", []any{0, 0, 8}, "rotation", []any{0, 1, 0, 0}), // facing −Z
		leveltest.Node("spawn_t2_far", "translation", []any{0, 0, -8}),
		leveltest.Box("kill_pit", [3]float64{-30, -10, -30}, [3]float64{30, -4, 30}),
		leveltest.Node("bounds", "scale", []any{30, 10, 30}),
	)
	srv := startServer(t, func(c *server.Config) {
		c.Level.File = file
		c.Match.RespawnTicks = 10
	})
	lvl, err := client.LoadLevel(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	var evs events
	walker := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "pit", Name: "walker", Team: 1, Loaded: lvl, OnEvent: evs.add,
		Input: scripted(func(v *client.View) client.Intent { return client.Intent{MoveZ: -1, Yaw: v.Self.Yaw} })}) // backwards, off the edge behind
	if w := walker.Welcome(); protocol.YawValue(w.SpawnYaw) != math.Pi {
		t.Fatalf("the spawn's yaw %v, want π (facing −Z)", protocol.YawValue(w.SpawnYaw))
	}
	stop := start(walker)
	defer stop()
	// The kill events reach OnEvent before the client's own count takes
	// them: wait for both.
	until(t, 20*time.Second, "the walker never died twice", func() bool {
		return len(evs.of(protocol.EventKill)) >= 2 && walker.Stats().Deaths >= 2
	})
	for _, k := range evs.of(protocol.EventKill) {
		if k.Player != walker.ID() || k.Other != walker.ID() || k.Weapon != protocol.KillByLevel {
			t.Errorf("kill %+v: want the walker its own killer, weapon %d", k, protocol.KillByLevel)
		}
	}
	rs := evs.of(protocol.EventRespawn)
	if len(rs) < 1 || rs[0].Pos != [3]float64{0, 0, 8} || rs[0].Yaw != 0x8000 {
		t.Errorf("respawns %+v, want at the spawn, facing its way", rs)
	}
	if st := walker.Stats(); st.Deaths < 2 || st.Kills != 0 {
		t.Errorf("the walker's deaths %d and kills %d: want 2 deaths and no kill", st.Deaths, st.Kills)
	}
	if ps := playerStats(t, srv, "pit", walker.ID()); ps.Deaths < 2 || ps.Kills != 0 {
		t.Errorf("the server's count: %d deaths, %d kills", ps.Deaths, ps.Kills)
	}
}

// A crouched target is rewound crouched over the network. The target
// crouches for eight ticks, then stands; the shooter, 300 ms away, fires
// when its screen shows it crouched, first at the height of a standing
// head, then at the crouched body: the first misses (at the shooter's view
// time the head was not there), the second hits.
func TestCrouchedTargetOverQUIC(t *testing.T) {
	t.Parallel()
	file := writeLevel(t, "range",
		leveltest.Node("col_floor", "mesh", leveltest.FloorMesh, "scale", []any{2, 1, 2}),
		leveltest.Node("spawn_t1_a", "translation", []any{0, 0, -6}),
		leveltest.Node("spawn_t2_a", "translation", []any{0, 0, 6}),
		leveltest.Node("bounds", "translation", []any{0, 5, 0}, "scale", []any{20, 10, 20}),
	)
	srv := startServer(t, func(c *server.Config) { c.Level.File = file })
	lvl, err := client.LoadLevel(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := shim(t, srv, 300*time.Millisecond, 0, 0, 5)
	var crouchFrom atomic.Int64
	crouchFrom.Store(math.MaxInt64)
	target := dial(t, srv, client.Config{Addr: addr, Room: "r", Name: "target", Team: 2, Loaded: lvl,
		Input: scripted(func(v *client.View) client.Intent {
			from := crouchFrom.Load()
			return client.Intent{Yaw: math.Pi, Crouch: v.Tick >= from && v.Tick < from+8}
		})})
	var mu sync.Mutex
	hits := map[uint16]protocol.Event{}
	var shooter *client.Client
	shooter = dial(t, srv, client.Config{Addr: addr, Room: "r", Name: "shooter", Team: 1, Loaded: lvl, Class: "assault",
		OnEvent: func(ev protocol.Event) {
			if ev.Kind == protocol.EventHit || ev.Kind == protocol.EventNoDamage {
				mu.Lock()
				hits[ev.Shot] = ev
				mu.Unlock()
			}
		},
		Input: scripted(func(v *client.View) client.Intent {
			in := client.Intent{Weapon: v.Welcome.Loadout[0]}
			n := shooter.Stats().ShotsFired
			if len(v.Players) != 1 || !v.Players[0].Crouched || n >= 2 {
				return in
			}
			return crouchedAim(v, in, &v.Players[0], n)
		})})
	stop := start(target, shooter)
	defer stop()
	crouchedShots(t, srv, "r", shooter, &crouchFrom, &mu, hits)
}

// crouchedAim is in firing shot n+1 of the crouched-target tests at p: the
// first at the standing head's middle, the second at the crouched body's.
// (On the rifle's cooldown, the client does not fire.)
func crouchedAim(v *client.View, in client.Intent, p *client.Player, n uint64) client.Intent {
	h := []float64{v.Welcome.Height - 0.15, 0.55}[n]
	d := p.Pos.Add(geom.V(0, h, 0)).Sub(v.Eye())
	in.Yaw, in.Pitch = math.Atan2(d.X, d.Z), math.Atan2(d.Y, math.Hypot(d.X, d.Z))
	in.Fire = true
	return in
}

// crouchedShots runs the crouched-target tests' match once its clients
// run: after the room settles, the target crouches (from crouchFrom, 20
// ticks on), the shooter fires its two shots, and hits (the shooter's hit
// events by shot, guarded by mu) must show the first, at the standing
// head's height, missed and the second, at the crouched body, hit it.
func crouchedShots(t *testing.T, srv *server.Server, room string, shooter *client.Client, crouchFrom *atomic.Int64, mu *sync.Mutex, hits map[uint16]protocol.Event) {
	t.Helper()
	waitTicks(t, srv, room, 60) // all settled
	crouchFrom.Store(int64(roomStats(t, srv, room).Tick) + 20)
	until(t, 20*time.Second, "the shooter never fired twice", func() bool { return shooter.Stats().ShotsFired >= 2 })
	waitTicks(t, srv, room, 20) // every event of the two shots has come
	mu.Lock()
	defer mu.Unlock()
	if _, ok := hits[1]; ok {
		t.Errorf("the shot at the standing head of a crouched target hit: %+v", hits[1])
	}
	if h, ok := hits[2]; !ok || h.Kind != protocol.EventHit || h.Flags&protocol.HitHead != 0 {
		t.Errorf("the shot at the crouched body: %+v (%v), want a body hit", h, ok)
	}
}

// The Welcome carries the class's movement; a client predicting with it
// agrees with the server to 1e-6 m through a lossy path: over a scripted
// walk with jumps, crouches and sprints into the sample map's walls, it
// corrects its prediction only where the server rooted it for an input
// that never arrived (a client that sends each input once, so that inputs
// do get lost, and one with the default redundancy).
func TestPredictionAgreesThroughLoss(t *testing.T) {
	t.Parallel()
	lc, lvl := courtyard(t)
	srv := startServer(t, func(c *server.Config) { c.Level = lc })
	cfg := server.DefaultConfig()
	raptor := weapons.Default().Classes[2]
	want, err := cfg.Character(raptor.Movement, raptor.Name)
	if err != nil {
		t.Fatal(err)
	}
	walk := func(seed int64) scripted {
		return func(v *client.View) client.Intent {
			k := v.Tick + seed
			in := client.Intent{Yaw: v.Self.Yaw + 0.02*math.Sin(float64(k)/15), MoveZ: 1, MoveX: math.Sin(float64(k) / 23)}
			in.Jump = k%40 < 3
			in.Crouch = k%70 >= 50
			in.Sprint = k%90 < 30
			if k%160 >= 120 {
				in.MoveZ = -1
			}
			return in
		}
	}
	var cs []*client.Client
	for i, redundancy := range []int{1, 0} {
		addr := shim(t, srv, 100*time.Millisecond, 5*time.Millisecond, 0.05, uint64(11+i))
		c := dial(t, srv, client.Config{Addr: addr, Room: "p", Name: []string{"once", "redundant"}[i], Team: uint8(1 + i),
			Class: "raptor", Loaded: lvl, Redundancy: redundancy, Input: walk(int64(i * 37))})
		if w := c.Welcome(); c.Character() != want || w.Movement.JumpHeight != raptor.Movement.JumpHeight || w.CrouchHeight != cfg.Match.CrouchHeight {
			t.Fatalf("the client moves as %+v, the server as %+v", c.Character(), want)
		}
		cs = append(cs, c)
	}
	stop := start(cs...)
	until(t, 20*time.Second, "the clients never settled", func() bool { return !cs[0].Stats().Settling && !cs[1].Stats().Settling })
	type mark struct{ corrections, rooted uint64 }
	at := func(c *client.Client) mark {
		return mark{c.Stats().Corrections, playerStats(t, srv, "p", c.ID()).Rooted}
	}
	before := []mark{at(cs[0]), at(cs[1])}
	waitTicks(t, srv, "p", 160)
	after := []mark{at(cs[0]), at(cs[1])}
	stop()
	for i, c := range cs {
		corr, rooted := after[i].corrections-before[i].corrections, after[i].rooted-before[i].rooted
		t.Logf("%s: %d corrections, %d rooted ticks, largest correction %.3g m", c.Welcome().Name, corr, rooted, c.Stats().MaxCorrection)
		if corr > rooted {
			t.Errorf("%s: %d corrections over %d rooted ticks: a prediction the server did not make", c.Welcome().Name, corr, rooted)
		}
	}
	if after[0].rooted == before[0].rooted {
		t.Error("the client sending each input once lost none: the test exercises nothing")
	}
}

// Bots on the sample map, 6v6, for a minute on a clean link (60 ms, no
// loss): they navigate its waypoints, and the movement holds together.
// Every bot's prediction agrees with the server after the clocks settled
// (not one correction beyond 1e-6 m), every bot moves, several reach the
// second floor, some jump and some crouch (crouched players are seen in
// other clients' snapshots), and none is stuck for a second.
func TestBotsOnTheSampleMap(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of bots")
	}
	if raceEnabled {
		// The plain run has it; under the race detector the shorter tests
		// over QUIC run the same code, and CI's budget is minutes.
		t.Skip("a minute of bots, not under the race detector")
	}
	t.Parallel()
	lc, lvl := courtyard(t)
	srv := startServer(t, func(c *server.Config) {
		c.Level = lc
		c.Match.Health = 400 // fewer deaths: more moving about
	})
	const n = 12
	var crouchedSeen sync.Map // remote player ids seen crouched in a snapshot
	players := make([]*bots.Bot, n)
	cs := make([]*client.Client, n)
	classes := []string{"assault", "breacher", "raptor"}
	for i := range n {
		players[i] = bots.NewBot(bots.BotConfig{AimError: 0.03, Seed: uint64(100 + i)})
		see := players[i]
		input := scripted(func(v *client.View) client.Intent {
			for _, p := range v.Players {
				if p.Alive && p.Crouched {
					crouchedSeen.Store(p.ID, true)
				}
			}
			return see.Intent(v)
		})
		addr := shim(t, srv, 60*time.Millisecond, 0, 0, uint64(i))
		cs[i] = dial(t, srv, client.Config{Addr: addr, Room: "yard", Name: "bot" + string(rune('a'+i)), Team: uint8(1 + i%2),
			Class: classes[i%3], Loaded: lvl, Input: input})
	}
	stop := start(cs...)
	defer stop()
	until(t, 20*time.Second, "the bots never settled", func() bool {
		for _, c := range cs {
			if c.Stats().Settling {
				return false
			}
		}
		return true
	})
	corrections := make([]uint64, n)
	rooted := make([]uint64, n)
	for i, c := range cs {
		corrections[i] = c.Stats().Corrections
		rooted[i] = playerStats(t, srv, "yard", c.ID()).Rooted
	}
	// Where the server has each bot, a second apart: how far it went.
	travelled := make([]float64, n)
	last := make([][3]float64, n)
	for s := 0; s <= 60; s++ {
		for _, p := range roomStats(t, srv, "yard").Players {
			for i, c := range cs {
				if c.ID() != p.ID {
					continue
				}
				if s > 0 {
					if d := geom.FromArray(p.Pos).Sub(geom.FromArray(last[i])).Len(); d < 15 { // not a respawn
						travelled[i] += d
					}
				}
				last[i] = p.Pos
			}
		}
		if s < 60 {
			waitTicks(t, srv, "yard", 20)
		}
	}
	var did [3]int // bots that reached the second floor, jumped, crouched
	for i, c := range cs {
		st, bs := c.Stats(), players[i].Stats()
		t.Logf("%s (%s): travelled %.0f m, corrections %d, longest stall %d ticks, recoveries %d, plans %d, jumping %d, crouching %d, upper %d ticks, deaths %d",
			c.Welcome().Name, c.Welcome().Class, travelled[i], st.Corrections-corrections[i], bs.LongestStall, bs.Recoveries, bs.Plans,
			bs.Jumping, bs.Crouching, bs.Upper, st.Deaths)
		// A prediction is corrected when the server's state differs
		// from it: on a clean link, only where the server simulated a tick
		// without the bot's input (it came too late: a process starved for
		// a CPU on a busy machine), and never on an idle one.
		missed := playerStats(t, srv, "yard", c.ID()).Rooted - rooted[i]
		if d := st.Corrections - corrections[i]; d > missed {
			t.Errorf("%s: %d prediction corrections after the start (largest %.3g m), %d ticks without its input: on a clean link, none but those",
				c.Welcome().Name, d, st.MaxCorrection, missed)
		}
		if travelled[i] < 30 {
			t.Errorf("%s travelled %.1f m in a minute", c.Welcome().Name, travelled[i])
		}
		if bs.LongestStall >= 20 {
			t.Errorf("%s was stuck for %d ticks: more than a second", c.Welcome().Name, bs.LongestStall)
		}
		for k, ticks := range [3]int64{bs.Upper, bs.Jumping, bs.Crouching} {
			if ticks > 0 {
				did[k]++
			}
		}
	}
	seen := 0
	crouchedSeen.Range(func(any, any) bool { seen++; return true })
	if did[0] < 3 || did[1] < 2 || did[2] < 2 || seen < 2 {
		t.Errorf("%d bots reached the second floor, %d jumped, %d crouched, %d seen crouched: want at least 3, 2, 2 and 2", did[0], did[1], did[2], seen)
	}
}
