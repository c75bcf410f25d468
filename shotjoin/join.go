package shotjoin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/rewind-gg/rewind/bots"
	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/systems"
	"github.com/rewind-gg/rewind/weapons"
)

// Outcome is how a shot ended for its client.
type Outcome uint8

// Outcomes.
const (
	// NoHitSeen: no pellet hit an enemy on the screen, and no marker came.
	NoHitSeen Outcome = iota
	// Confirmed: the server registered the shot on an enemy it hit on the
	// screen (other targets of the shot may still be false positives).
	Confirmed
	// Missed: it hit an enemy on the screen, and the server registered it
	// on none of them.
	Missed
	// FalsePositive: no pellet hit an enemy on the screen, and the server
	// registered a hit.
	FalsePositive
	// AfterDeath: fired after the server's tick of the shooter's death.
	AfterDeath
	// Shielded: a hit seen, not confirmed, that a shield the screen showed
	// only later crosses (bots.TallyStats.HitsSeenShielded).
	Shielded
)

var outcomeNames = [...]string{NoHitSeen: "no_hit_seen", Confirmed: "confirmed", Missed: "missed", FalsePositive: "false_positive",
	AfterDeath: "after_death", Shielded: "shielded"}

// String names the outcome, as the CSV writes it.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome %d", o)
}

// Cause is the first difference between a client's shot and the server's
// that explains a hit lost or a false positive.
type Cause uint8

// Causes, in the order they are looked for.
const (
	CauseNone Cause = iota // the shot's outcome needs none (confirmed, nothing seen)
	// NotRun: the server has no shot of that player and counter at its
	// tick: its every input copy came too late to run, or the server's
	// rules refused it.
	NotRun
	Clamped // the server granted less view lag than the input claimed
	Late    // it ran after its tick (a late fire command)
	// EyeMoved: the shooter's eye on the server (its pose at the shot's
	// tick) was more than Tolerance from where its client predicted it.
	EyeMoved
	// TargetMoved: an enemy the screen showed hit was more than Tolerance
	// from where the server's history had it at the shot's view time.
	TargetMoved
	// ViewTime: the server resolved the shot at another view time than
	// the input reported (without a clamp: its view_resolution).
	ViewTime
	// Shield: a shield stopped it on the server that the screen did not
	// show in the way: shields are never rewound, so one placed after the
	// time the shooter saw is there.
	Shield
	// Unexplained: none of the above; the server resolved the shot where
	// the screen showed it, and still decided otherwise.
	Unexplained
)

var causeNames = [...]string{CauseNone: "", NotRun: "not_run", Clamped: "clamped", Late: "late", EyeMoved: "eye_moved",
	TargetMoved: "target_moved", ViewTime: "view_time", Shield: "shield", Unexplained: "unexplained"}

// String names the cause, as the CSV and the summary write it.
func (c Cause) String() string {
	if int(c) < len(causeNames) {
		return causeNames[c]
	}
	return fmt.Sprintf("cause %d", c)
}

// Tolerance is the distance (m) beyond which an eye or a target counts as
// elsewhere: far above the wire's rounding (1/256 m), far below a capsule's
// radius.
const Tolerance = 0.01

// Row is one client's shot with the server's judgement of it.
type Row struct {
	bots.ShotRecord
	Outcome Outcome
	Cause   Cause

	// Ran: the server ran the shot (the fields below are set only then).
	Ran     bool
	Decided int64 // the server tick of its decision
	// ServerView is the view time it was resolved at (ticks); when the
	// server clamped it, Clamp is the reason and ClaimedLag the view lag
	// (ticks) its input claimed.
	ServerView float64
	Clamp      string
	ClaimedLag float64
	// ServerSpan is the ticks between the snapshots the server drew the
	// shot's world between (ViewTime.Span; 0: one tick).
	ServerSpan uint8
	// Hits are the targets the server hit; Blocked says static geometry
	// or a shield stopped a pellet first, ByShield that a shield did.
	Hits     []uint32
	Blocked  bool
	ByShield bool
	// TrustedHits are the targets the server hits with the view time the
	// input claimed, no caps and no bound (the screen as the server can
	// reconstruct it: replay.Variant.TrustClaims).
	TrustedHits []uint32
	// EyeOffset is the distance (m) between the client's eye and the
	// server's at the shot's tick; TargetOffset the largest between a
	// target seen hit as shown and as the server's history had it at the
	// shot's view time (NaN: none seen, or no history of it).
	EyeOffset, TargetOffset float64
}

// Config configures a join.
type Config struct {
	// Kinds is the weapon-kind registry of the recording (nil: the
	// built-in kinds).
	Kinds *weapons.Registry
}

// shotKey names a shot: its shooter's player id and its counter.
type shotKey struct {
	player uint32
	shot   uint16
}

// serverShot is what the replay saw of one shot.
type serverShot struct {
	ran      bool
	decided  int64
	view     float64
	clamp    string
	claimed  float64
	hits     []uint32
	blocked  bool
	trusted  []uint32
	eye      float64
	target   float64
	span     uint8
	byShield bool
}

// Join replays the recording at path and joins every shot of shots with
// the server's judgement of it. Shots of players the recording does not
// hold join as not run.
func Join(ctx context.Context, path string, shots []bots.ShotRecord, cfg Config) ([]Row, error) {
	want := make(map[shotKey]*bots.ShotRecord, len(shots))
	for i := range shots {
		want[shotKey{shots[i].Player, shots[i].Shot}] = &shots[i]
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("shotjoin: %w", err)
	}
	defer f.Close()
	rd, err := replay.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("shotjoin: %s: %w", path, err)
	}
	trusted := rd.Setup().LagComp.Config()
	trusted.WindowTicks, trusted.MaxUnlagTicks, trusted.ViewResolution = lagcomp.MaxWindowTicks, 0, 0
	got := map[shotKey]*serverShot{}
	var poses []lagcomp.Pose
	rcfg := replay.Config{Kinds: cfg.Kinds, Variants: []replay.Variant{{Name: "trusted", LagComp: trusted, TrustClaims: true}}}
	rcfg.OnTick = func(t *replay.Tick) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		sim := t.Sim
		for i := range sim.Events.Shots {
			ev := &sim.Events.Shots[i]
			k := shotKey{ecs.WireID(ev.Shooter), uint16(ev.Shot)}
			c := want[k]
			if c == nil {
				continue
			}
			s := got[k]
			if s == nil {
				s = &serverShot{ran: true, decided: ev.Tick, view: ev.ViewTime.Ticks(), eye: math.NaN(), target: math.NaN()}
				got[k] = s
				s.eye = eyeOffset(sim, ev, c)
				poses, s.target = targetOffset(sim, c, ev.ViewTime, poses[:0])
				s.span = ev.ViewTime.Span
			}
			switch ev.Result {
			case ecs.ResultHit:
				s.hits = appendNew(s.hits, ecs.WireID(ev.Target))
			case ecs.ResultBlocked:
				s.blocked = true
				if ev.By != sim.Level() {
					s.byShield = true
				}
			}
		}
		for i := range sim.Events.Clamps {
			cl := &sim.Events.Clamps[i]
			if s := got[shotKey{ecs.WireID(cl.Shooter), uint16(cl.Shot)}]; s != nil {
				s.clamp, s.claimed = cl.Reason.String(), cl.Claimed
			}
		}
		v := t.Variants[0]
		for i := range v.Events.Shots {
			ev := &v.Events.Shots[i]
			if ev.Result != ecs.ResultHit {
				continue
			}
			shooter, ok1 := matchWire(t, ev.Shooter)
			target, ok2 := matchWire(t, ev.Target)
			if !ok1 || !ok2 {
				continue
			}
			k := shotKey{shooter, uint16(ev.Shot)}
			if want[k] == nil {
				continue
			}
			s := got[k]
			if s == nil {
				s = &serverShot{eye: math.NaN(), target: math.NaN()}
				got[k] = s
			}
			s.trusted = appendNew(s.trusted, target)
		}
		return nil
	}
	_, err = replay.Run(rd, rcfg)
	if err != nil && !errors.Is(err, context.Canceled) {
		err = fmt.Errorf("shotjoin: %s: %w", path, err)
	}
	rows := make([]Row, 0, len(shots))
	for i := range shots {
		rows = append(rows, join(&shots[i], got[shotKey{shots[i].Player, shots[i].Shot}]))
	}
	return rows, err
}

// matchWire returns the player id, in the match, of a variant's entity.
func matchWire(t *replay.Tick, e ecs.Entity) (uint32, bool) {
	id, ok := t.RecordedID(0, e)
	if !ok {
		return 0, false
	}
	m, ok := t.Entity(-1, id)
	if !ok {
		return 0, false
	}
	return ecs.WireID(m), true
}

// eyeOffset is the distance between the client's eye and the server's at
// the shot's tick, NaN when unknown. A shot decided at its own tick (the
// client's) was
// fired from where the shooter stands after the tick (the weapons stage
// comes after movement, and nothing moves it after that): exact. A late
// one from a step simulated again, of which the history keeps only the
// rooted pose, rounded as snapshots carry it (1/256 m).
func eyeOffset(sim *systems.Simulation, ev *ecs.ShotEvent, c *bots.ShotRecord) float64 {
	if ev.Tick == c.Tick {
		if st, ok := sim.PlayerState(ev.Shooter); ok {
			return sim.Eye(st.Transform.Pos, st.Motion.Crouched).Sub(c.Eye).Len()
		}
	}
	p, ok := sim.History.PoseAt(c.Tick, ev.Shooter)
	if !ok {
		return math.NaN()
	}
	return sim.Eye(p.Pos, p.Crouched).Sub(c.Eye).Len()
}

// targetOffset is the largest distance between an enemy the screen showed
// hit and where the server's history had it at the shot's view time, NaN
// when no such enemy is in the history. The view time is the one the
// server resolved the shot at (vt: between the snapshots the client drew
// it between) when that is the client's, else the client's own.
func targetOffset(sim *systems.Simulation, c *bots.ShotRecord, vt ecs.ViewTime, poses []lagcomp.Pose) ([]lagcomp.Pose, float64) {
	if len(c.Seen) == 0 {
		return poses, math.NaN()
	}
	if vt.Ticks() != c.View {
		vt = ecs.ViewTimeOf(c.View)
	}
	poses, _ = sim.History.PosesAt(vt, poses)
	worst := math.NaN()
	for _, s := range c.Seen {
		for j := range poses {
			if ecs.WireID(poses[j].Entity) == s.ID {
				d := poses[j].Pos.Sub(s.Pos).Len()
				if math.IsNaN(worst) || d > worst {
					worst = d
				}
			}
		}
	}
	return poses, worst
}

func appendNew(ids []uint32, id uint32) []uint32 {
	if slices.Contains(ids, id) {
		return ids
	}
	return append(ids, id)
}

// join makes a client's shot and the server's (nil: not run) a row.
func join(c *bots.ShotRecord, s *serverShot) Row {
	r := Row{ShotRecord: *c, EyeOffset: math.NaN(), TargetOffset: math.NaN()}
	switch {
	case c.AfterDeath:
		r.Outcome = AfterDeath
	case c.Confirmed():
		r.Outcome = Confirmed
	case c.Shielded:
		r.Outcome = Shielded
	case len(c.Seen) > 0:
		r.Outcome = Missed
	case len(c.Marked) > 0:
		r.Outcome = FalsePositive
	}
	if s != nil {
		r.TrustedHits = s.trusted
	}
	if s != nil && s.ran {
		r.Ran, r.Decided, r.ServerView, r.Clamp, r.ClaimedLag, r.ServerSpan = true, s.decided, s.view, s.clamp, s.claimed, s.span
		r.Hits, r.Blocked, r.ByShield, r.EyeOffset, r.TargetOffset = s.hits, s.blocked, s.byShield, s.eye, s.target
	}
	if r.Outcome == Missed || r.Outcome == FalsePositive || len(c.FalsePositives()) > 0 {
		r.Cause = cause(&r, s)
	}
	return r
}

// cause is the first difference that explains a row's hit lost or false
// positive.
func cause(r *Row, s *serverShot) Cause {
	switch {
	case s == nil || !s.ran:
		return NotRun
	case s.clamp != "":
		return Clamped
	case s.decided > r.Tick:
		return Late
	case r.EyeOffset > Tolerance:
		return EyeMoved
	case r.TargetOffset > Tolerance:
		return TargetMoved
	case math.Abs(s.view-r.View) > 1.0/512:
		return ViewTime
	case r.Outcome == Missed && r.ByShield:
		return Shield
	}
	return Unexplained
}
