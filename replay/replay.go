package replay

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/systems"
	"github.com/rewind-gg/rewind/weapons"
)

// Config configures a replay.
type Config struct {
	// Kinds is the weapon-kind registry (nil: the built-in kinds). A
	// recording whose weapons use kinds registered in code replays only
	// with a registry that registers them, in the same order.
	Kinds *weapons.Registry
	// Bucketing and CellSize, when set, replace the recorded settings of
	// the same names for the match itself. They change how lag
	// compensation computes, never what it decides, so the replay is still
	// checked against the recording tick by tick: with bucketing off, every
	// event must come out the same.
	Bucketing *bool
	CellSize  float64
	// Variants are other settings to judge the match's shots under, beside
	// the match itself (see Variant).
	Variants []Variant
	// OnTick, when set, is called after every tick simulated, with the
	// match's simulation and the variants'. An error stops the replay; Run
	// returns it.
	OnTick func(*Tick) error
}

// Variant is a set of lag-compensation settings a replay judges the
// recorded match's shots under, in a simulation of its own beside the
// match's. The world stays the recorded one: before every tick, every
// player's state (position, aim, health, life, weapons, streak:
// systems.PlayerState) is set from the match's, so only what lag
// compensation decides differs: when and where each shot is resolved, and
// what it hits. What a hit would have done (damage, a kill) shows in the
// variant's events of that tick, and goes no further.
//
// (Letting the new verdicts change the match would make another match
// after the first kill that differs: players would walk their recorded
// inputs from other places, their recorded aim would track nobody, and
// nothing after it would say anything about the settings.)
type Variant struct {
	Name    string
	LagComp lagcomp.Config
	// MaxRewind replaces weapons' caps (max_rewind), in ticks, by weapon name (0: no
	// cap but the room's). Weapons not named keep their recorded cap.
	MaxRewind map[string]float64
	// TrustClaims grants every shot the view time its client claimed: no
	// bound from the server's measurement of the client (ecs.Input.Earliest)
	// and no weapon caps. With a window wide enough (lagcomp.MaxWindowTicks)
	// and no max_unlag, shots are resolved exactly against what the
	// shooters' screens showed.
	TrustClaims bool
}

// Tick is what OnTick sees after a tick: the match's simulation and the
// variants', each with the tick's events in its Events and its clock on the
// next tick.
type Tick struct {
	Tick     int64 // the tick simulated
	Recorded Digest
	Sim      *systems.Simulation   // the match, as recorded (its events checked)
	Variants []*systems.Simulation // Config.Variants' simulations, in order
	r        *Runner
}

// RecordedID returns the recording's id of entity e of variant v's
// simulation (v = −1: the match's own), also once it is gone: a variant
// allocates its own entities, and a player who joined late may have
// another one there than in the recording. False for entities that no
// record spawned (shots).
func (t *Tick) RecordedID(v int, e ecs.Entity) (EntityID, bool) {
	s := t.r.main
	if v >= 0 {
		s = t.r.variants[v]
	}
	id, ok := s.back[e]
	return id, ok
}

// Entity returns variant v's entity of a recorded one (v = −1: the
// match's own, which is the recorded one), if it exists.
func (t *Tick) Entity(v int, id EntityID) (ecs.Entity, bool) {
	s := t.r.main
	if v >= 0 {
		s = t.r.variants[v]
	}
	e, ok := s.ents[id]
	return e, ok
}

// Tally counts a simulation's events and lag compensation over the ticks
// replayed.
type Tally struct {
	Ticks    int64
	Events   int64 // of every kind
	Shots    int64 // shot events (hits, blocks, misses, invalid shots)
	Hits     int64 // shot events with ecs.ResultHit
	Kills    int64
	Respawns int64
	Rejected int64
	Clamps   int64
	// Lag compensation, from the simulation's Stats.
	Rewinds    int64
	Items      int64
	Buckets    int64 // distinct view times, summed over ticks
	MaxBuckets int
}

// Result is what a replay simulated.
type Result struct {
	Setup   Setup
	Players int   // players spawned
	Inputs  int64 // inputs queued
	Tally         // the match's
	// Verified: every tick simulated matched the recording.
	Verified bool
	// Incomplete: the recorder dropped ticks from FirstMissing on (Dropped
	// of them), and the replay stopped there.
	Incomplete   bool
	FirstMissing int64
	Dropped      int64
	// End is why the match ended, and MatchResult its result (the results
	// file's JSON line), if recorded.
	End         string
	MatchResult []byte
	Variants    []VariantResult
}

// VariantResult is what a variant's simulation did.
type VariantResult struct {
	Name string
	Tally
	// Differ counts the ticks whose events differ from the recording's,
	// the first being FirstDiffer (−1: none).
	Differ      int64
	FirstDiffer int64
}

// DivergenceError is a replay that does not do what the recording says:
// the events of a tick, the entity a spawn got or the verdict of an input
// differ. It means the simulation is not deterministic, or has changed
// since the recording.
type DivergenceError struct {
	Tick   int64 // the simulation's present tick
	Offset int64 // the byte offset of the record that showed it
	// Recorded and Replayed are the tick's digests, for differing events.
	Recorded, Replayed Digest
	Msg                string
}

func (e *DivergenceError) Error() string {
	return fmt.Sprintf("replay: tick %d (record at byte %d): %s", e.Tick, e.Offset, e.Msg)
}

// Run re-simulates the recording rd reads (its header read, no record
// yet) and returns what it simulated. It checks every tick's events against
// the recording and stops at the first that differs (a *DivergenceError
// naming the tick). A damaged or truncated recording replays up to its last
// intact tick, then returns the reader's *RecordError with the partial
// Result; so does one whose records are whole but that ends before its end
// record.
func Run(rd *Reader, cfg Config) (Result, error) {
	r, err := NewRunner(rd.Setup(), cfg)
	if err != nil {
		return Result{Setup: rd.Setup()}, err
	}
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			if r.res.End == "" {
				// Cut at a record boundary: every record is whole, but the
				// match's end is missing (the server died, or is still
				// writing the file).
				return r.Result(), &RecordError{Offset: rd.Offset(), Type: RecordEnd, Err: errNoEnd}
			}
			return r.Result(), nil
		}
		if err == nil {
			err = r.Apply(rec)
		}
		if err != nil { // the ticks before it were checked
			return r.Result(), err
		}
	}
}

// Runner re-simulates a recording record by record: Run's loop, for a
// reader that follows a recording still being written.
type Runner struct {
	cfg      Config
	main     *replayed
	variants []*replayed
	sims     []*replayed // main, then the variants
	res      Result
	stopped  bool // at an Incomplete record: only its count and End follow
	tick     Tick
	players  []EntityID // in the match, in spawn order: the ones pinned
	state    systems.PlayerState
}

// replayed is one simulation of a replay and its entities.
type replayed struct {
	sim    *systems.Simulation
	ents   map[EntityID]ecs.Entity // recorded → this simulation's
	back   map[ecs.Entity]EntityID // this simulation's → recorded
	trust  bool                    // TrustClaims
	tally  *Tally
	digest Digester
	// differ and firstDiffer: ticks whose events differ from the recording.
	differ      *int64
	firstDiffer *int64
}

// NewRunner builds the match's simulation (and the variants') from setup,
// with its level geometry.
func NewRunner(setup Setup, cfg Config) (*Runner, error) {
	r := &Runner{cfg: cfg, res: Result{Setup: setup, Verified: true, FirstMissing: -1}}
	sc, err := setup.Config(cfg.Kinds)
	if err != nil {
		return nil, err
	}
	main := sc
	if cfg.Bucketing != nil {
		main.LagComp.Bucketing = *cfg.Bucketing
	}
	if cfg.CellSize != 0 {
		main.LagComp.CellSize = cfg.CellSize
	}
	if r.main, err = newReplayed(setup, main, "the match", &r.res.Tally, nil, nil); err != nil {
		return nil, err
	}
	r.res.Variants = make([]VariantResult, len(cfg.Variants))
	for i, v := range cfg.Variants {
		vc := sc
		vc.LagComp = v.LagComp
		vc.Weapons = slices.Clone(sc.Weapons)
		for name := range v.MaxRewind {
			if !slices.ContainsFunc(vc.Weapons, func(d weapons.Definition) bool { return d.Name == name }) {
				return nil, fmt.Errorf("replay: variant %s: max_rewind: no weapon %q in the recording", v.Name, name)
			}
		}
		for j := range vc.Weapons {
			d := &vc.Weapons[j]
			if m, ok := v.MaxRewind[d.Name]; ok {
				d.MaxRewindTicks, d.MaxRewind = m, 0
			}
			if v.TrustClaims {
				d.MaxRewindTicks, d.MaxRewind = 0, 0
			}
		}
		vr := &r.res.Variants[i]
		vr.Name, vr.FirstDiffer = v.Name, -1
		s, err := newReplayed(setup, vc, "variant "+v.Name, &vr.Tally, &vr.Differ, &vr.FirstDiffer)
		if err != nil {
			return nil, err
		}
		s.trust = v.TrustClaims
		r.variants = append(r.variants, s)
	}
	r.sims = append([]*replayed{r.main}, r.variants...)
	r.tick = Tick{r: r, Sim: r.main.sim}
	for _, v := range r.variants {
		r.tick.Variants = append(r.tick.Variants, v.sim)
	}
	return r, nil
}

func newReplayed(setup Setup, sc systems.Config, what string, t *Tally, differ, first *int64) (*replayed, error) {
	sim, err := systems.New(sc)
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", what, err)
	}
	return &replayed{sim: sim, ents: map[EntityID]ecs.Entity{}, back: map[ecs.Entity]EntityID{}, tally: t,
		differ: differ, firstDiffer: first}, nil
}

// Sim returns the match's simulation.
func (r *Runner) Sim() *systems.Simulation { return r.main.sim }

// Result returns what the replay has simulated so far.
func (r *Runner) Result() Result {
	res := r.res
	res.Variants = slices.Clone(r.res.Variants)
	finish(&res.Tally, r.main.sim)
	for i, v := range r.variants {
		finish(&res.Variants[i].Tally, v.sim)
	}
	return res
}

// finish copies a simulation's lag-compensation counters.
func finish(t *Tally, sim *systems.Simulation) {
	st := sim.Stats()
	t.Rewinds, t.Items, t.MaxBuckets = st.Rewinds, st.Items, st.MaxBuckets
}

// Apply applies one record to the simulations. A record the match's
// simulation does not reproduce is a *DivergenceError, and the replay is
// then over; so is a record that cannot be applied (a *RecordError).
func (r *Runner) Apply(rec *Record) error {
	switch {
	case rec.Type == RecordIncomplete:
		r.res.Incomplete, r.res.FirstMissing, r.res.Dropped = true, rec.Tick, rec.Dropped
		r.stopped = true
		return nil
	case rec.Type == RecordEnd:
		r.res.End, r.res.MatchResult = rec.Reason, slices.Clone(rec.Result)
		return nil
	case r.stopped:
		return nil
	}
	err := r.apply(rec)
	if err != nil {
		var de *DivergenceError
		if errors.As(err, &de) {
			r.res.Verified = false
		}
	}
	return err
}

func (r *Runner) apply(rec *Record) error {
	switch rec.Type {
	case RecordSpawnPlayer:
		r.res.Players++
		r.players = append(r.players, rec.Entity)
		return r.each(rec, func(s *replayed) (ecs.Entity, error) {
			e := s.sim.SpawnPlayer(rec.Player)
			if EntityOf(e) != rec.Entity && s != r.main {
				s.sim.SpreadAs(e, rec.Entity.WireID()) // its shots spread as recorded
			}
			return e, nil
		})
	case RecordSpawnShield:
		return r.each(rec, func(s *replayed) (ecs.Entity, error) {
			owner, err := s.entity(rec, rec.Owner)
			if err != nil {
				return ecs.Entity{}, err
			}
			return s.sim.SpawnShield(owner, rec.Team, rec.Box, rec.Expires)
		})
	case RecordDespawn:
		r.players = slices.DeleteFunc(r.players, func(id EntityID) bool { return id == rec.Entity })
		for _, s := range r.all() {
			e, err := s.entity(rec, rec.Entity)
			if err != nil {
				return err
			}
			s.sim.Despawn(e)
			// back keeps it: a shot fired before it left may land after, and
			// still names its shooter (an entity is never reused as it was).
			delete(s.ents, rec.Entity)
		}
	case RecordInput:
		for _, s := range r.all() {
			e, err := s.entity(rec, rec.Entity)
			if err != nil {
				return err
			}
			in := rec.Input
			if s.trust {
				in.Earliest = 0
			}
			v := s.sim.QueueInput(e, in)
			if s == r.main {
				if v != systems.InputQueued && v != systems.InputLate {
					return r.diverged(rec, "input of tick %d for entity %v: %v, queued (in time or late) when recorded", rec.Input.Tick, rec.Entity, v)
				}
				r.res.Inputs++
			}
		}
	case RecordStep:
		return r.step(rec)
	default:
		return &RecordError{Offset: rec.Offset, Type: rec.Type, Err: errors.New("not expected in a recording")}
	}
	return nil
}

// all returns the match's simulation, then the variants'.
func (r *Runner) all() []*replayed { return r.sims }

// each spawns in every simulation, and maps the recorded entity to each
// one's. The match's must be the recorded one.
func (r *Runner) each(rec *Record, spawn func(*replayed) (ecs.Entity, error)) error {
	for _, s := range r.all() {
		e, err := spawn(s)
		if err != nil {
			var re *RecordError
			if errors.As(err, &re) {
				return err
			}
			return &RecordError{Offset: rec.Offset, Type: rec.Type, Err: err}
		}
		if s == r.main && EntityOf(e) != rec.Entity {
			return r.diverged(rec, "%v got entity %v, %v when recorded", rec.Type, EntityOf(e), rec.Entity)
		}
		s.ents[rec.Entity], s.back[e] = e, rec.Entity
	}
	return nil
}

func (r *Runner) diverged(rec *Record, format string, args ...any) error {
	return &DivergenceError{Tick: r.main.sim.Now(), Offset: rec.Offset, Msg: fmt.Sprintf(format, args...)}
}

// entity returns this simulation's entity of a recorded one.
func (s *replayed) entity(rec *Record, id EntityID) (ecs.Entity, error) {
	if id == (EntityID{}) {
		return ecs.Entity{}, nil // the zero entity: a shield without an owner
	}
	e, ok := s.ents[id]
	if !ok {
		return e, &RecordError{Offset: rec.Offset, Type: rec.Type, Err: fmt.Errorf("entity %v: no record spawned it", id)}
	}
	return e, nil
}

// step simulates a tick: the variants' players are set to the match's
// state, then every simulation steps, and the match's events are compared
// with the recording's.
func (r *Runner) step(rec *Record) error {
	if now := r.main.sim.Now(); rec.Tick != now {
		return &RecordError{Offset: rec.Offset, Type: rec.Type,
			Err: fmt.Errorf("tick %d: the simulation is at tick %d (ticks are recorded one after another)", rec.Tick, now)}
	}
	r.pin()
	d := r.main.step()
	if d != rec.Digest {
		return &DivergenceError{Tick: rec.Tick, Offset: rec.Offset, Recorded: rec.Digest, Replayed: d,
			Msg: fmt.Sprintf("events differ: recorded %v; replayed %v", rec.Digest, d)}
	}
	for _, v := range r.variants {
		if v.step() != rec.Digest {
			if *v.differ == 0 {
				*v.firstDiffer = rec.Tick
			}
			*v.differ++
		}
	}
	if r.cfg.OnTick != nil {
		r.tick.Tick, r.tick.Recorded = rec.Tick, rec.Digest
		if err := r.cfg.OnTick(&r.tick); err != nil {
			return err
		}
	}
	return nil
}

// pin sets every variant's players to the match's state.
func (r *Runner) pin() {
	if len(r.variants) == 0 {
		return
	}
	for _, id := range r.players {
		var ok bool
		if r.state, ok = r.main.sim.PlayerState(r.main.ents[id]); !ok {
			continue
		}
		for _, v := range r.variants {
			v.sim.SetPlayerState(v.ents[id], &r.state)
		}
	}
}

// step simulates one tick and counts its events; it returns their digest.
func (s *replayed) step() Digest {
	s.sim.Step()
	ev := s.sim.Events
	d := s.digest.Of(ev)
	t := s.tally
	t.Ticks++
	t.Events += int64(d.Events())
	t.Shots += int64(d.Shots)
	t.Kills += int64(d.Kills)
	t.Respawns += int64(d.Respawns)
	t.Rejected += int64(d.Rejected)
	t.Clamps += int64(d.Clamps)
	for i := range ev.Shots {
		if ev.Shots[i].Result == ecs.ResultHit {
			t.Hits++
		}
	}
	t.Buckets += int64(s.sim.Stats().Last.Buckets)
	return d
}
