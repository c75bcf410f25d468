package systems

import (
	"math"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/examples/levels"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/stresslevel"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/trimesh"
	"github.com/rewind-gg/rewind/weapons"
)

// benchRoom is the benchmark room of the engine issue: 6v6, every player
// firing a rocket every tick (lifetime 44 ticks: a few hit early, so about
// 500 are alive), each player seeing the world a different number of ticks
// behind (12 distinct view times), window 30 ticks, players running in
// circles by their inputs.
type benchRoom struct {
	sim     *Simulation
	players []ecs.Entity
	lags    []float64
	weapon  uint16
	shot    uint32
	// mixed, when set, picks each player's weapon for a tick instead.
	mixed func(player int, tick int64) uint16
}

func newBenchRoom(tb testing.TB, bucketing bool, defs []weapons.Definition, loadout []string) *benchRoom {
	tb.Helper()
	return newBenchRoomOn(tb, arenaLevel(tb), bucketing, defs, loadout)
}

// benchLevel is a level of the benchmarks: its mesh, and the height of its
// ground under a point (where players stand).
type benchLevel struct {
	mesh   *trimesh.Mesh
	ground func(x, z float64) float64
	spawns []geom.Vec3 // where players start, when not on the circle
}

func levelOf(tb testing.TB, l *level.Level) benchLevel {
	tb.Helper()
	l.Canonicalize()
	m, err := l.Mesh()
	if err != nil {
		tb.Fatal(err)
	}
	return benchLevel{mesh: m, ground: func(x, z float64) float64 {
		if h, ok := m.Raycast(geom.V(x, 100, z), geom.V(0, -1, 0), 200, level.MovementMask); ok {
			return 100 - h.T
		}
		return 0
	}}
}

// arenaLevel is the server's default map, the built-in arena: a 60 m floor,
// four pillars, walls at the edge that only block movement.
func arenaLevel(tb testing.TB) benchLevel { return levelOf(tb, level.DefaultArena()) }

// sampleLevel is the sample map, courtyard (examples/levels): two floors,
// ramps, stairs, walls and cover; its players start at its spawns, and
// run in circles among its walls.
func sampleLevel(tb testing.TB) benchLevel {
	file, data, _ := levels.Lookup(levels.Courtyard)
	l, _, err := level.ReadBytes(file, data, level.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	lv := levelOf(tb, l)
	for _, s := range l.Spawns {
		lv.spawns = append(lv.spawns, s.Pos)
	}
	return lv
}

// noLevel is no geometry at all: flat ground at y = 0 that nothing stops
// at.
func noLevel(testing.TB) benchLevel {
	return benchLevel{ground: func(float64, float64) float64 { return 0 }}
}

// stressLevel is a level as large as a real map: a 90 m square of rolling
// terrain (0–4 m) and 320 crates, walls and pillars, 20,040 triangles
// (stresslevel.Stress).
func stressLevel(tb testing.TB) benchLevel {
	l := &level.Level{Name: "stress"}
	for _, t := range stresslevel.Level(7, 90, 320) {
		l.Triangles = append(l.Triangles, level.Triangle{A: t.A, B: t.B, C: t.C, Blocks: level.Blocks(t.Mask), Source: -1})
	}
	return levelOf(tb, l)
}

// newBenchRoomOn is the benchmark room on a level: the players stand on its
// ground.
func newBenchRoomOn(tb testing.TB, lv benchLevel, bucketing bool, defs []weapons.Definition, loadout []string) *benchRoom {
	tb.Helper()
	cfg := DefaultConfig()
	cfg.LagComp.Bucketing = bucketing
	cfg.Weapons = defs
	return newBenchRoomWith(tb, lv, cfg, loadout)
}

// newBenchRoomWith is the benchmark room of cfg (its weapons, cfg.Weapons)
// on a level.
func newBenchRoomWith(tb testing.TB, lv benchLevel, cfg Config, loadout []string) *benchRoom {
	tb.Helper()
	defs := cfg.Weapons
	cfg.Level = lv.mesh
	sim, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	r := &benchRoom{sim: sim}
	for i := range 12 {
		team := uint8(1 + i%2)
		angle := float64(i) / 12 * 2 * math.Pi
		var carried []uint16
		for id := range sim.Catalog.Len() {
			carried = append(carried, uint16(id))
		}
		pos := geom.V(20*math.Cos(angle), lv.ground(20*math.Cos(angle), 20*math.Sin(angle)), 20*math.Sin(angle))
		if len(lv.spawns) > 0 {
			pos = lv.spawns[i%len(lv.spawns)]
		}
		e := sim.SpawnPlayer(PlayerSpec{
			ID: uint32(i + 1), Team: team, Controlled: true, Loadout: carried,
			Pos:    pos,
			Hitbox: ecs.Hitbox{Radius: 0.4, Height: 1.8, HeadHeight: 0.3},
			Health: 100,
		})
		r.players = append(r.players, e)
		r.lags = append(r.lags, 2+float64(i)*0.5) // 12 distinct view lags, 2..7.5 ticks
	}
	if len(loadout) == 0 {
		loadout = []string{defs[0].Name}
	}
	r.weapon, _ = sim.Catalog.Lookup(loadout[0])
	return r
}

// rocket is the benchmark's projectile: 30 m/s, 44 ticks.
var rocket = weapons.Definition{Name: "rocket", Kind: weapons.KindProjectile, Speed: 30, Radius: 0.1, LifetimeTicks: 44}

// queueInputs gives every player its input for the present tick, as the
// server would from the network: running in a circle, firing every tick,
// aiming slightly up so most rockets fly their full lifetime.
func (r *benchRoom) queueInputs() {
	now := r.sim.Now()
	for i, e := range r.players {
		yaw := float64(now)*0.05 + float64(i)
		r.shot++
		weapon := r.weapon
		if r.mixed != nil {
			weapon = r.mixed(i, now)
		}
		in := ecs.Input{
			Tick: now, MoveZ: 1, Yaw: yaw, Pitch: 0.05 + 0.01*float64(i),
			Buttons: ecs.ButtonFire, Weapon: weapon, Shot: r.shot,
			ViewTime: ecs.ViewTimeOf(float64(now) - r.lags[i]),
		}
		if v := r.sim.QueueInput(e, in); v != InputQueued {
			panic("bench input not queued: " + v.String())
		}
	}
}

// tick runs one tick as Step does and returns how long the
// lag-compensation stage took.
func (r *benchRoom) tick() time.Duration {
	r.queueInputs()
	s := r.sim
	s.beginTick()
	var lc time.Duration
	for _, st := range s.stages {
		if st.name == "lag_compensation" {
			t0 := time.Now()
			st.run()
			lc = time.Since(t0)
			continue
		}
		st.run()
	}
	s.endTick()
	return lc
}

func (r *benchRoom) warm(ticks int) {
	for range ticks {
		r.tick()
	}
}

func (r *benchRoom) liveProjectiles() int {
	n := 0
	q := r.sim.resolving.Query(r.sim.World)
	for q.Next() {
		n++
	}
	return n
}

func BenchmarkLagCompensation(b *testing.B) {
	for _, mode := range []struct {
		name      string
		bucketing bool
	}{{"bucketed", true}, {"per-entity", false}} {
		b.Run(mode.name, func(b *testing.B) {
			r := newBenchRoom(b, mode.bucketing, []weapons.Definition{rocket}, nil)
			r.warm(100)
			var lc time.Duration
			var rewinds, items int64
			b.ReportAllocs()
			for b.Loop() {
				lc += r.tick()
				rewinds += int64(r.sim.stats.Last.Rewinds)
				items += int64(r.sim.stats.Last.Items)
			}
			n := float64(b.N)
			b.ReportMetric(float64(lc.Microseconds())/n, "lagcomp-µs/tick")
			b.ReportMetric(float64(rewinds)/n, "rewinds/tick")
			b.ReportMetric(float64(items)/n, "items/tick")
		})
	}
}

// BenchmarkLagCompensationRatio runs the bucketed room and the per-entity
// baseline tick for tick in the same loop and reports both and their ratio.
func BenchmarkLagCompensationRatio(b *testing.B) {
	bucketed := newBenchRoom(b, true, []weapons.Definition{rocket}, nil)
	baseline := newBenchRoom(b, false, []weapons.Definition{rocket}, nil)
	bucketed.warm(100)
	baseline.warm(100)
	var tb, tp time.Duration
	for b.Loop() {
		tb += bucketed.tick()
		tp += baseline.tick()
	}
	n := float64(b.N)
	b.ReportMetric(float64(tb.Nanoseconds())/n/1e3, "bucketed-µs/tick")
	b.ReportMetric(float64(tp.Nanoseconds())/n/1e3, "per-entity-µs/tick")
	b.ReportMetric(float64(tp)/float64(tb), "speedup")
}

// BenchmarkRoomTick is the whole room tick, all systems: one op is one
// tick; on the built-in arena, on the stress level of 20,040 triangles
// (within the engine's target of 100 µs on the 2-core machine), and without
// a level, the baseline: what the level's geometry costs.
func BenchmarkRoomTick(b *testing.B) {
	for _, lv := range []struct {
		name  string
		level func(testing.TB) benchLevel
	}{{"arena", arenaLevel}, {"sample", sampleLevel}, {"stress-20040tris", stressLevel}, {"no-level", noLevel}} {
		b.Run(lv.name, func(b *testing.B) {
			r := newBenchRoomOn(b, lv.level(b), true, []weapons.Definition{rocket}, nil)
			r.warm(100)
			r.measure(b, perTick{"buckets/tick", func(r *benchRoom) int64 { return int64(r.sim.stats.Last.Buckets) }},
				perTick{"blocked/tick", func(r *benchRoom) int64 {
					n := int64(0)
					for i := range r.sim.Events.Shots {
						if r.sim.Events.Shots[i].Result == ecs.ResultBlocked {
							n++
						}
					}
					return n
				}})
		})
	}
}

// BenchmarkRoomTickLevels is BenchmarkRoomTick on the arena and on the
// stress level, a tick of each in turn in the same loop, so that both see
// the same load on a shared machine: it reports both and their ratio, the
// figure issue 20's target is (under 100 µs on the stress level when the
// arena ran 58–72 µs: at most 1.39 × the arena).
func BenchmarkRoomTickLevels(b *testing.B) {
	arena := newBenchRoomOn(b, arenaLevel(b), true, []weapons.Definition{rocket}, nil)
	stress := newBenchRoomOn(b, stressLevel(b), true, []weapons.Definition{rocket}, nil)
	arena.warm(100)
	stress.warm(100)
	var ta, ts time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		arena.tick()
		t1 := time.Now()
		stress.tick()
		ta, ts = ta+t1.Sub(t0), ts+time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(ta.Nanoseconds())/n/1e3, "arena-µs/tick")
	b.ReportMetric(float64(ts.Nanoseconds())/n/1e3, "stress-µs/tick")
	b.ReportMetric(float64(ts)/float64(ta), "stress/arena")
}

// perTick is a figure a benchmark reports per tick: a count each tick adds.
type perTick struct {
	unit  string
	count func(*benchRoom) int64
}

// measure runs the benchmark's ticks and reports µs and rewinds per tick,
// the figures given, and the projectiles alive at the end.
func (r *benchRoom) measure(b *testing.B, figures ...perTick) {
	sums := make([]int64, len(figures))
	var rewinds int64
	b.ReportAllocs()
	for b.Loop() {
		r.tick()
		rewinds += int64(r.sim.stats.Last.Rewinds)
		for i, f := range figures {
			sums[i] += f.count(r)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n/1e3, "µs/tick")
	b.ReportMetric(float64(rewinds)/n, "rewinds/tick")
	for i, f := range figures {
		b.ReportMetric(float64(sums[i])/n, f.unit)
	}
	b.ReportMetric(float64(r.liveProjectiles()), "projectiles")
}

// The mixed loadout of the weapons issue: every player fires a rocket with
// splash every other tick (lifetime 88 ticks: a few hit early, so about 500
// fly), and in the ticks between, its class's weapon: a rifle, a shotgun of 8
// pellets, or a melee strike (four players each).
var mixedLoadout = []weapons.Definition{
	{Name: "rocket", Kind: weapons.KindProjectile, Speed: 30, Radius: 0.1, LifetimeTicks: 88, Damage: 1,
		Splash: weapons.Splash{Radius: 3, Damage: 1, Min: 0.2}},
	{Name: "rifle", Kind: weapons.KindHitscan, Range: 100, Damage: 1, HeadMultiplier: 2, Falloff: weapons.Falloff{Start: 30, End: 80, Min: 0.5}},
	{Name: "shotgun", Kind: weapons.KindHitscan, Range: 35, Pellets: 8, Spread: 0.07, Damage: 1},
	{Name: "bite", Kind: weapons.KindMelee, Reach: 1.5, Radius: 1, Damage: 1},
}

func newMixedRoom(tb testing.TB) *benchRoom {
	r := newBenchRoom(tb, true, mixedLoadout, nil)
	r.mixed = func(player int, tick int64) uint16 {
		if (tick+int64(player))%2 == 0 {
			return 0
		}
		return uint16(1 + player%3)
	}
	return r
}

// BenchmarkRoomTickMixed is the whole room tick with the mixed loadout: it
// must stay within the engine's target (100 µs on the 2-core machine).
func BenchmarkRoomTickMixed(b *testing.B) {
	r := newMixedRoom(b)
	r.warm(200)
	r.measure(b, perTick{"items/tick", func(r *benchRoom) int64 { return int64(r.sim.stats.Last.Items) }},
		perTick{"events/tick", func(r *benchRoom) int64 { return int64(len(r.sim.Events.Shots)) }})
}

func TestMixedTickAllocatesNothing(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("coverage and race instrumentation allocate")
	}
	r := newMixedRoom(t)
	r.warm(300)
	if allocs := testing.AllocsPerRun(1, func() { r.warm(200) }); allocs != 0 { // the total of 200 ticks
		t.Errorf("200 steady-state mixed ticks allocate %v times", allocs)
	}
	if n := r.liveProjectiles(); n < 400 {
		t.Errorf("%d lag-compensated entities alive, want about 500", n)
	}
}
