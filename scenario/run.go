package scenario

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/fields"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/systems"
	"github.com/rewind-gg/rewind/ticks"
)

// Result is what the server decided for every shot of a scenario.
type Result struct {
	Events []Event `json:"events"`
	Stats  Stats   `json:"stats"`
}

// Event is one decision about a shot, in the scenario format's output.
type Event struct {
	Shot     int      `json:"shot"`
	Result   string   `json:"result"`
	Target   string   `json:"target,omitempty"`
	By       string   `json:"by,omitempty"`
	Tick     int64    `json:"tick"`
	ViewTime *float64 `json:"view_time,omitempty"`
}

// Stats are the scenario's lag-compensation counters.
type Stats struct {
	Ticks               int   `json:"ticks"`
	Rewinds             int64 `json:"rewinds"`
	MaxBucketsPerTick   int   `json:"max_buckets_per_tick"`
	LagCompensatedItems int64 `json:"lag_compensated_items"`
}

// Overrides replace fields of a scenario's lagcomp block (the command's
// --window, --resolution and --no-buckets flags); nil leaves a field as is.
type Overrides struct {
	// Window is the window as a duration, rounded up to whole ticks at the
	// scenario's tick rate, or as a number of ticks.
	Window         *ticks.Span
	ViewResolution *int
	NoBuckets      bool
}

// Apply validates the overrides and applies them to sc.
func (ov Overrides) Apply(sc *Scenario) error {
	if ov.Window != nil {
		w, err := ov.Window.WholeTicks(sc.TickRate)
		if err != nil {
			return fields.Errorf("--window", "%v", err)
		}
		if w < 0 || w > lagcomp.MaxWindowTicks {
			return fields.Errorf("--window", "%s is outside 0..%d ticks", ov.Window.Describe(sc.TickRate), lagcomp.MaxWindowTicks)
		}
		sc.LagComp.WindowTicks = w
	}
	if r := ov.ViewResolution; r != nil {
		if *r < 0 || *r > lagcomp.MaxViewResolution {
			return fields.Errorf("--resolution", "%d is outside 0..%d", *r, lagcomp.MaxViewResolution)
		}
		sc.LagComp.ViewResolution = *r
	}
	if ov.NoBuckets {
		sc.LagComp.Bucketing = false
	}
	return nil
}

// Run plays the scenario on a fresh simulation.
func Run(sc *Scenario) (*Result, error) {
	cfg := systems.DefaultConfig()
	cfg.TickRate = sc.TickRate
	cfg.LagComp.WindowTicks = sc.LagComp.WindowTicks
	cfg.LagComp.ViewResolution = sc.LagComp.ViewResolution
	cfg.LagComp.Bucketing = sc.LagComp.Bucketing
	cfg.FriendlyFire = sc.FriendlyFire
	cfg.Weapons = sc.Weapons
	geometry, statics, err := sc.geometry()
	if err != nil {
		return nil, err
	}
	if geometry != nil {
		if cfg.Level, err = geometry.Mesh(); err != nil {
			return nil, fmt.Errorf("scenario: %w", err)
		}
	}
	sim, err := systems.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	r := &runner{sc: sc, sim: sim, geometry: geometry, statics: statics, names: map[ecs.Entity]string{}, live: make([]ecs.Entity, len(sc.Entities)),
		body: generic.NewMap2[ecs.Transform, ecs.ViewLag](sim.World), placedQ: generic.NewFilter2[ecs.Shield, ecs.Owner]()}
	shots := make([][]int, sc.Ticks) // tick → shot indices
	for i, s := range sc.Shots {
		shots[s.Tick] = append(shots[s.Tick], i)
	}
	res := &Result{Events: []Event{}}
	for t := 0; t < sc.Ticks; t++ {
		if err := r.script(t); err != nil {
			return nil, err
		}
		for _, i := range shots[t] {
			s := &sc.Shots[i]
			sim.Commands.Fire = append(sim.Commands.Fire, ecs.FireCommand{
				Shooter:  r.live[r.index(s.Shooter)], // the zero entity when absent: invalid
				Weapon:   r.weapon(s.Weapon),
				Shot:     uint32(i),
				Origin:   s.Origin,
				Dir:      s.Dir,
				Scripted: true,
			})
		}
		sim.Step()
		r.namePlaced()
		for _, ev := range sim.Events.Shots {
			res.Events = append(res.Events, r.event(ev))
		}
	}
	slices.SortStableFunc(res.Events, func(a, b Event) int {
		return cmp.Or(cmp.Compare(a.Tick, b.Tick), cmp.Compare(a.Shot, b.Shot), cmp.Compare(a.Target, b.Target))
	})
	st := sim.Stats()
	res.Stats = Stats{Ticks: sc.Ticks, Rewinds: st.Rewinds, MaxBucketsPerTick: st.MaxBuckets, LagCompensatedItems: st.Items}
	return res, nil
}

type runner struct {
	sc       *Scenario
	sim      *systems.Simulation
	geometry *level.Level          // the level and the static boxes, nil for neither
	statics  []string              // the static boxes' ids: their triangles end the geometry's, 12 each
	names    map[ecs.Entity]string // every entity ever spawned, for the output
	live     []ecs.Entity          // by scenario entity index; zero when absent
	body     generic.Map2[ecs.Transform, ecs.ViewLag]
	placedQ  *generic.Filter2[ecs.Shield, ecs.Owner]
}

func (r *runner) index(id string) int {
	return slices.IndexFunc(r.sc.Entities, func(e Entity) bool { return e.ID == id })
}

func (r *runner) weapon(name string) uint16 {
	id, _ := r.sim.Catalog.Lookup(name) // Parse checked every shot's weapon
	return id
}

// script makes players and shields exist, or not, as the scenario says for
// tick t, and puts players at their tick-t positions (the scripted inputs).
func (r *runner) script(t int) error {
	for i := range r.sc.Entities {
		e := &r.sc.Entities[i]
		switch e.Kind {
		case KindPlayer:
			exists := t >= e.Path[0].Tick && (e.DespawnTick == nil || t < *e.DespawnTick)
			if exists && r.live[i].IsZero() {
				r.live[i] = r.sim.SpawnPlayer(systems.PlayerSpec{
					Name: e.ID, Team: e.Team, Pos: pathPos(e.Path, t),
					Hitbox: ecs.Hitbox{Radius: e.Radius, Height: e.Height},
				})
				r.names[r.live[i]] = e.ID
			} else if !exists && !r.live[i].IsZero() {
				r.sim.Despawn(r.live[i])
				r.live[i] = ecs.Entity{}
			}
			if exists {
				tf, lag := r.body.Get(r.live[i])
				tf.Pos = pathPos(e.Path, t)
				lag.Ticks = e.ViewDelayTicks
			}
		case KindShield:
			if t == e.SpawnTick {
				expires := int64(0)
				if e.DespawnTick != nil {
					expires = int64(*e.DespawnTick)
				}
				ent, err := r.sim.SpawnShield(ecs.Entity{}, 0, e.Box, expires)
				if err != nil {
					return fmt.Errorf("scenario: entities[%d]: %w", i, err)
				}
				r.names[ent] = e.ID
			}
		}
	}
	return nil
}

// pathPos interpolates a path's keyframes at tick t; before the first and
// after the last keyframe the player stands at that keyframe.
func pathPos(path []Keyframe, t int) geom.Vec3 {
	if t <= path[0].Tick {
		return path[0].Pos
	}
	for k := 1; k < len(path); k++ {
		if a, b := path[k-1], path[k]; t <= b.Tick {
			return a.Pos.Lerp(b.Pos, float64(t-a.Tick)/float64(b.Tick-a.Tick))
		}
	}
	return path[len(path)-1].Pos
}

func (r *runner) event(ev ecs.ShotEvent) Event {
	out := Event{Shot: int(ev.Shot), Result: ev.Result.String(), Tick: ev.Tick}
	if ev.Result != ecs.ResultInvalid {
		vt := ev.ViewTime.Ticks()
		out.ViewTime = &vt
	}
	switch ev.Result {
	case ecs.ResultHit:
		out.Target = r.names[ev.Target]
	case ecs.ResultBlocked:
		out.By = r.names[ev.By]
		switch {
		case ev.By == r.sim.Level() && !ev.By.IsZero():
			out.By = r.blockedBy(ev.Tri)
		case out.By == "": // a shield placed and gone within one tick
			out.By = "placed"
		}
	}
	return out
}

// geometry returns the scenario's static geometry as one level: the level
// it names, then its static boxes (each a solid of 12 triangles), whose
// ids it returns in order; nil for neither.
func (sc *Scenario) geometry() (*level.Level, []string, error) {
	if sc.Level != "" && sc.Map == nil {
		return nil, nil, fmt.Errorf("scenario: level: %q is a file, read by ParseFile, not Parse", sc.Level)
	}
	var g *level.Level
	if sc.Map != nil {
		c := *sc.Map
		c.Triangles = slices.Clone(sc.Map.Triangles)
		g = &c
	}
	var ids []string
	for i := range sc.Entities {
		if e := &sc.Entities[i]; e.Kind == KindStatic {
			if g == nil {
				g = &level.Level{Name: "static"}
			}
			g.AddBox(e.Box, level.BlocksBoth, -1)
			ids = append(ids, e.ID)
		}
	}
	return g, ids, nil
}

// blockedBy names the geometry's triangle tri for the output: a static
// box's id; else "level", with the name of the level's node it came from
// when it has one ("level:col_wall").
func (r *runner) blockedBy(tri int32) string {
	if base := len(r.geometry.Triangles) - 12*len(r.statics); int(tri) >= base {
		return r.statics[(int(tri)-base)/12]
	}
	if src := r.geometry.Triangles[tri].Source; src >= 0 && r.geometry.Sources[src].Name != "" {
		return "level:" + r.geometry.Sources[src].Name
	}
	return "level"
}

// namePlaced names the shields scripted shots placed, "<shooter>/<weapon>",
// when they appear (they may expire before a later event names them).
func (r *runner) namePlaced() {
	q := r.placedQ.Query(r.sim.World)
	for q.Next() {
		if e := q.Entity(); r.names[e] == "" {
			sh, owner := q.Get()
			r.names[e] = r.names[owner.Entity] + "/" + r.sim.Catalog.At(sh.Weapon).Name
		}
	}
}

// Marshal renders a result as the scenario format's one JSON object, one
// event per line.
func (res *Result) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"events": [`)
	for i, ev := range res.Events {
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n   ")
		b, err := json.Marshal(ev)
		if err != nil {
			return nil, err
		}
		buf.Write(b)
	}
	buf.WriteString("],\n \"stats\": ")
	b, err := json.Marshal(res.Stats)
	if err != nil {
		return nil, err
	}
	buf.Write(b)
	buf.WriteString("}\n")
	return buf.Bytes(), nil
}
