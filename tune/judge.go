package tune

import (
	"fmt"
	"time"

	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/systems"
	"github.com/rewind-gg/rewind/ticks"
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

// shotLabel names a shot as a clamp event knows it: its shooter, the
// client's label, the weapon and the tick it was fired at.
type shotLabel struct {
	shooter replay.EntityID
	shot    uint32
	weapon  uint16
	fired   int64
}

// group is a row's breakdown and group.
type group struct{ by, name string }

// shotInfo is what the breakdowns need of a shot: its groups (every shot,
// weapon, shooter, view-lag band, phase).
type shotInfo struct {
	label  shotLabel
	groups [5]group
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
	windows  []int // the settings' windows, in ticks of the recording
	first    bool  // the recording's first chunk: it counts the match-wide figures
	settle   int64 // the settling period, ticks

	ticks             int64
	players           int
	viewLag, settling Histogram

	names     map[replay.EntityID]string // players'
	joined    map[replay.EntityID]int64  // the tick of a player's first input applied
	shots     map[shotKey]*shotInfo      // every shot decided in "seen"
	labels    map[shotLabel]bool         // the shots' labels
	seen      map[hitKey]struct{}        // hits the shooters saw
	present   map[hitKey]struct{}        // hits in the victims' present
	verdict   []map[hitKey]verdict       // per setting, its hits
	details   []map[hitKey]Disputed      // per setting, its hits out of the victim's sight
	decisions []map[shotKey]int64        // per setting, its shot events per shot
	clamped   []map[shotLabel]struct{}   // per setting, shots granted less than claimed
	disputed  [][]Disputed               // per setting, after rows
	cost      []replay.Tally             // per setting
	teams     []generic.Map1[ecs.Team]   // per setting's simulation
	lags      *generic.Filter2[ecs.InputQueue, ecs.ViewLag]
	player    generic.Map1[ecs.Player] // the "seen" simulation's
}

func newMatchJudge(setup replay.Setup, settings []Setting, first bool, settle time.Duration) *matchJudge {
	m := &matchJudge{setup: setup, settings: settings, first: first, settle: ticks.Ceil(settle, setup.TickRate),
		names: map[replay.EntityID]string{}, joined: map[replay.EntityID]int64{},
		shots: map[shotKey]*shotInfo{}, labels: map[shotLabel]bool{}, seen: map[hitKey]struct{}{}, present: map[hitKey]struct{}{}}
	for _, s := range settings {
		lc, _ := s.lagComp(&setup)
		m.windows = append(m.windows, lc.WindowTicks)
		m.verdict = append(m.verdict, map[hitKey]verdict{})
		m.details = append(m.details, map[hitKey]Disputed{})
		m.decisions = append(m.decisions, map[shotKey]int64{})
		m.clamped = append(m.clamped, map[shotLabel]struct{}{})
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
		lc, caps := s.lagComp(&m.setup)
		cfg.Variants = append(cfg.Variants, replay.Variant{Name: s.String(), LagComp: lc, MaxRewind: caps})
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
		m.player = generic.NewMap1[ecs.Player](t.Variants[variantSeen].World)
	}
	seen := t.Variants[variantSeen]
	m.viewLags(t, seen)
	for i := range seen.Events.Shots {
		ev := &seen.Events.Shots[i]
		k, ok := key(t, variantSeen, ev)
		if !ok {
			continue
		}
		if m.shots[k.shot] == nil {
			m.addShot(k.shot, ev)
		}
		if ev.Result == ecs.ResultHit {
			m.seen[k] = struct{}{}
		}
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
			if !ok {
				continue
			}
			m.decisions[s][k.shot]++
			if ev.Result != ecs.ResultHit {
				continue
			}
			vd := verdict{weapon: ev.Weapon, damaging: ev.Dealt > 0}
			if vd.damaging {
				if vd.unseen = m.outOfSight(sim, m.teams[s], t.Tick, ev); vd.unseen {
					m.details[s][k] = m.detail(sim, t.Tick, ev, k)
				}
			}
			m.verdict[s][k] = vd
		}
		for _, c := range sim.Events.Clamps {
			if id, ok := t.RecordedID(v, c.Shooter); ok {
				m.clamped[s][shotLabel{id, c.Shot, c.Weapon, c.Tick}] = struct{}{}
			}
		}
	}
}

// addShot notes a shot "seen" decided, and its groups.
func (m *matchJudge) addShot(k shotKey, ev *ecs.ShotEvent) {
	info := &shotInfo{label: shotLabel{k.shooter, ev.Shot, ev.Weapon, ev.Fired}}
	band := "n/a"
	if ev.Result != ecs.ResultInvalid {
		band = viewLagBand((float64(ev.Tick) - ev.ViewTime.Ticks()) * 1000 / float64(m.setup.TickRate))
	}
	phase := "settled"
	if joined, ok := m.joined[k.shooter]; !ok || ev.Fired < joined+m.settle {
		phase = "settling"
	}
	info.groups = [5]group{{ByAll, "all"}, {ByWeapon, m.weaponName(ev.Weapon)}, {ByPlayer, m.name(k.shooter)}, {ByViewLag, band}, {ByPhase, phase}}
	m.shots[k] = info
	m.labels[info.label] = true
}

// viewLagBand names the band of a view lag: a shooter's round trip, with
// the interpolation delay and the input lead on top (the recording holds
// claims, not round trips).
func viewLagBand(ms float64) string {
	for _, b := range viewLagBands {
		if ms < b.below {
			return b.name
		}
	}
	return "800+ ms"
}

var viewLagBands = []struct {
	below float64
	name  string
}{{100, "0-100 ms"}, {200, "100-200 ms"}, {400, "200-400 ms"}, {800, "400-800 ms"}}

func (m *matchJudge) weaponName(w uint16) string {
	if int(w) < len(m.setup.Weapons) {
		return m.setup.Weapons[w].Name
	}
	return fmt.Sprintf("#%d", w)
}

// name is a recorded player's name, "#ID" when it had none.
func (m *matchJudge) name(id replay.EntityID) string {
	if n, ok := m.names[id]; ok && n != "" {
		return n
	}
	return fmt.Sprintf("#%d", id.WireID())
}

// detail describes a hit out of its victim's sight: the candidate for a
// disputed hit.
func (m *matchJudge) detail(sim *systems.Simulation, tick int64, ev *ecs.ShotEvent, k hitKey) Disputed {
	d := Disputed{Tick: tick, Shot: ev.Shot, Shooter: m.name(k.shot.shooter), Victim: m.name(k.target), Weapon: m.weaponName(ev.Weapon),
		ShooterID: k.shot.shooter.WireID(), VictimID: k.target.WireID(),
		ViewLagMS: (float64(ev.Tick) - ev.ViewTime.Ticks()) * 1000 / float64(m.setup.TickRate)}
	if pose, ok := sim.History.PoseAt(tick, ev.Target); ok {
		d.Present = pose.Pos
	}
	return d
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
// tick (the "seen" variant grants claims as they are), notes when each
// player's first input was applied, and its name.
func (m *matchJudge) viewLags(t *replay.Tick, seen *systems.Simulation) {
	perMS := 1000 / float64(m.setup.TickRate)
	q := m.lags.Query(seen.World)
	for q.Next() {
		queue, lag := q.Get()
		if queue.Applied != t.Tick {
			continue
		}
		id, ok := t.RecordedID(variantSeen, q.Entity())
		if !ok {
			continue
		}
		joined, ok := m.joined[id]
		if !ok {
			joined = t.Tick
			m.joined[id] = joined
			if p := m.player.Get(q.Entity()); p != nil {
				m.names[id] = p.Name
			}
		}
		if !m.first {
			continue
		}
		if t.Tick < joined+m.settle {
			m.settling.Add(lag.Ticks * perMS)
		} else {
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

// rows returns, per setting, a row for every shot together and one per
// group of each breakdown but the recording; and the setting's disputed
// hits into m.disputed.
func (m *matchJudge) rows() [][]Row {
	out := make([][]Row, len(m.settings))
	m.disputed = make([][]Disputed, len(m.settings))
	for s := range m.settings {
		var rows []Row
		index := map[group]int{}
		each := func(info *shotInfo, f func(r *Row)) {
			for _, g := range info.groups {
				i, ok := index[g]
				if !ok {
					i = len(rows)
					index[g] = i
					rows = append(rows, Row{By: g.by, Group: g.name})
				}
				f(&rows[i])
			}
		}
		info := func(k shotKey, weapon uint16) *shotInfo {
			if in := m.shots[k]; in != nil {
				return in
			}
			// Decided under the setting and never in "seen" (a projectile
			// still flying there as the recording ends).
			return &shotInfo{groups: [5]group{{ByAll, "all"}, {ByWeapon, m.weaponName(weapon)}, {ByPlayer, m.name(k.shooter)},
				{ByViewLag, "n/a"}, {ByPhase, "n/a"}}}
		}
		for _, in := range m.shots {
			each(in, func(r *Row) { r.Shots++ })
			if _, clamped := m.clamped[s][in.label]; clamped {
				each(in, func(r *Row) { r.Clamped++ })
			}
		}
		for k, n := range m.decisions[s] {
			if in := m.shots[k]; in != nil {
				each(in, func(r *Row) { r.Decisions += n })
			}
		}
		for k := range m.seen {
			_, confirmed := m.verdict[s][k]
			each(m.shots[k.shot], func(r *Row) {
				r.Seen++
				if confirmed {
					r.Confirmed++
				}
			})
		}
		for k, v := range m.verdict[s] {
			_, seen := m.seen[k]
			_, inPresent := m.present[k]
			disputed := v.damaging && v.unseen && !inPresent
			if disputed {
				m.disputed[s] = append(m.disputed[s], m.details[s][k])
			}
			each(info(k.shot, v.weapon), func(r *Row) {
				r.Hits++
				if !seen {
					r.Unseen++
				}
				if v.damaging {
					r.Damaging++
				}
				if disputed {
					r.Disputed++
				}
			})
		}
		c := m.cost[s]
		for i := range rows {
			rows[i].Ticks, rows[i].Rewinds, rows[i].Buckets, rows[i].MaxBuckets = c.Ticks, c.Rewinds, c.Buckets, c.MaxBuckets
		}
		if len(rows) == 0 {
			rows = append(rows, Row{By: ByAll, Group: "all", Ticks: c.Ticks, Rewinds: c.Rewinds, Buckets: c.Buckets, MaxBuckets: c.MaxBuckets})
		}
		out[s] = rows
	}
	return out
}
