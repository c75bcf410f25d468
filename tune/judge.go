package tune

import (
	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/systems"
	"github.com/rewind-gg/rewind/weapons"
)

// shotKey names a shot across a replay's variants: its shooter as recorded
// and its index in the shooter's spread sequence (identical in every
// variant, since variants keep the recorded weapons' state).
type shotKey struct {
	shooter replay.EntityID
	seq     uint32
}

// hitKey is a shot and a target it hit.
type hitKey struct {
	shot   shotKey
	target replay.EntityID
}

// verdict is what a setting's variant made of a hit.
type verdict struct {
	weapon   uint16
	damaging bool // it dealt damage
	unseen   bool // the victim, in its own present, was out of the shooter's sight or reach
}

// Variants of a judged replay, before the settings'.
const (
	variantSeen    = 0 // every claim granted: what the shooters saw
	variantPresent = 1 // no rewind: what the victims saw
	firstSetting   = 2
)

// matchJudge collects one recording's verdicts under some settings.
type matchJudge struct {
	setup    replay.Setup
	settings []Setting
	first    bool // the recording's first chunk: it counts the match-wide figures

	ticks   int64
	players int
	viewLag Histogram

	shots   map[shotKey]uint16       // every shot fired, and its weapon
	seen    map[hitKey]uint16        // hits the shooters saw
	present map[hitKey]struct{}      // hits in the victims' present
	verdict []map[hitKey]verdict     // per setting, its hits
	clamped [][]int64                // per setting, per weapon: shots granted less than claimed
	cost    []replay.Tally           // per setting
	teams   []generic.Map1[ecs.Team] // per setting's simulation
	lags    *generic.Filter2[ecs.InputQueue, ecs.ViewLag]
	scratch []lagcomp.Hit
}

func newMatchJudge(setup replay.Setup, settings []Setting, first bool) *matchJudge {
	m := &matchJudge{setup: setup, settings: settings, first: first,
		shots: map[shotKey]uint16{}, seen: map[hitKey]uint16{}, present: map[hitKey]struct{}{}}
	for range settings {
		m.verdict = append(m.verdict, map[hitKey]verdict{})
		m.clamped = append(m.clamped, make([]int64, len(setup.Weapons)))
	}
	return m
}

// config is the replay's configuration: "seen", "present", then one
// variant per setting.
func (m *matchJudge) config(kinds *weapons.Registry) replay.Config {
	rec := m.setup.LagComp.Config()
	seen := rec
	seen.WindowTicks, seen.MaxUnlagTicks, seen.ViewResolution = lagcomp.MaxWindowTicks, 0, 0
	present := rec
	present.WindowTicks, present.MaxUnlagTicks = 0, 0
	cfg := replay.Config{Kinds: kinds, Variants: []replay.Variant{
		{Name: "seen", LagComp: seen, TrustClaims: true},
		{Name: "present", LagComp: present},
	}}
	for _, s := range m.settings {
		lc := rec
		lc.WindowTicks, lc.MaxUnlagTicks = s.Window, 0
		cfg.Variants = append(cfg.Variants, replay.Variant{Name: s.String(), LagComp: lc, MaxRewind: s.MaxRewind})
	}
	return cfg
}

// tick reads one tick's events of every variant.
func (m *matchJudge) tick(t *replay.Tick) {
	if m.teams == nil {
		for _, sim := range t.Variants[firstSetting:] {
			m.teams = append(m.teams, generic.NewMap1[ecs.Team](sim.World))
		}
		m.lags = generic.NewFilter2[ecs.InputQueue, ecs.ViewLag]()
		m.lags.Register(t.Variants[variantSeen].World)
	}
	seen := t.Variants[variantSeen]
	for i := range seen.Events.Shots {
		ev := &seen.Events.Shots[i]
		k, ok := key(t, variantSeen, ev)
		if !ok {
			continue
		}
		m.shots[k.shot] = ev.Weapon
		if ev.Result == ecs.ResultHit {
			m.seen[k] = ev.Weapon
		}
	}
	if m.first {
		m.viewLags(t.Tick, seen)
	}
	for i := range t.Variants[variantPresent].Events.Shots {
		ev := &t.Variants[variantPresent].Events.Shots[i]
		if k, ok := key(t, variantPresent, ev); ok && ev.Result == ecs.ResultHit {
			m.present[k] = struct{}{}
		}
	}
	for s := range m.settings {
		v := firstSetting + s
		sim := t.Variants[v]
		for i := range sim.Events.Shots {
			ev := &sim.Events.Shots[i]
			k, ok := key(t, v, ev)
			if !ok || ev.Result != ecs.ResultHit {
				continue
			}
			vd := verdict{weapon: ev.Weapon, damaging: ev.Dealt > 0}
			if vd.damaging {
				vd.unseen = m.outOfSight(sim, m.teams[s], t.Tick, ev)
			}
			m.verdict[s][k] = vd
		}
		for _, c := range sim.Events.Clamps {
			m.clamped[s][c.Weapon]++
		}
	}
}

// key returns a hit event's key, by recorded entities; false for an event
// without a recorded shooter.
func key(t *replay.Tick, variant int, ev *ecs.ShotEvent) (hitKey, bool) {
	shooter, ok := t.RecordedID(variant, ev.Shooter)
	if !ok {
		return hitKey{}, false
	}
	k := hitKey{shot: shotKey{shooter: shooter, seq: ev.Seq}}
	if ev.Result == ecs.ResultHit {
		if k.target, ok = t.RecordedID(variant, ev.Target); !ok {
			return hitKey{}, false
		}
	}
	return k, true
}

// viewLags samples the view lag every player claimed with its input of the
// tick: the "seen" variant grants claims as they are.
func (m *matchJudge) viewLags(tick int64, seen *systems.Simulation) {
	perMS := 1000 / float64(m.setup.TickRate)
	q := m.lags.Query(seen.World)
	for q.Next() {
		queue, lag := q.Get()
		if queue.Applied == tick {
			m.viewLag.Add(lag.Ticks * perMS)
		}
	}
}

// outOfSight reports whether a hit's target was, in its own present (the
// tick's newest history frame), out of the shooter's sight or reach: the
// server's own test (systems.Simulation.OutOfSight, package fairness), so
// the sweep and the live count judge alike.
func (m *matchJudge) outOfSight(sim *systems.Simulation, _ generic.Map1[ecs.Team], tick int64, ev *ecs.ShotEvent) bool {
	return sim.OutOfSight(tick, ev)
}

// finish takes the replay's figures: ticks, players, each setting's cost.
func (m *matchJudge) finish(res *replay.Result) {
	m.ticks, m.players = res.Ticks, res.Players
	for s := range m.settings {
		if v := firstSetting + s; v < len(res.Variants) {
			m.cost = append(m.cost, res.Variants[v].Tally)
		} else {
			m.cost = append(m.cost, replay.Tally{})
		}
	}
}

// rows returns, per setting, a row for every weapon together ("") and one
// per weapon that was fired.
func (m *matchJudge) rows() [][]Row {
	names := make([]string, len(m.setup.Weapons))
	for i, d := range m.setup.Weapons {
		names[i] = d.Name
	}
	out := make([][]Row, len(m.settings))
	for s := range m.settings {
		per := make([]Row, len(names)+1) // [0]: every weapon
		row := func(w uint16) [2]*Row { return [2]*Row{&per[0], &per[1+int(w)]} }
		for _, w := range m.shots {
			for _, r := range row(w) {
				r.Shots++
			}
		}
		for k, w := range m.seen {
			_, confirmed := m.verdict[s][k]
			for _, r := range row(w) {
				r.Seen++
				if confirmed {
					r.Confirmed++
				}
			}
		}
		for k, v := range m.verdict[s] {
			_, seen := m.seen[k]
			_, inPresent := m.present[k]
			for _, r := range row(v.weapon) {
				r.Hits++
				if !seen {
					r.Unseen++
				}
				if v.damaging {
					r.Damaging++
					if v.unseen && !inPresent {
						r.Disputed++
					}
				}
			}
		}
		for w, n := range m.clamped[s] {
			for _, r := range row(uint16(w)) {
				r.Clamped += n
			}
		}
		c := m.cost[s]
		for i := range per {
			per[i].Ticks, per[i].Rewinds, per[i].Buckets, per[i].MaxBuckets = c.Ticks, c.Rewinds, c.Buckets, c.MaxBuckets
		}
		out[s] = append(out[s], per[0])
		for w, name := range names {
			if r := per[1+w]; r.Shots > 0 || r.Hits > 0 || r.Seen > 0 {
				r.Weapon = name
				out[s] = append(out[s], r)
			}
		}
	}
	return out
}
