package weapons

import (
	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/arsenal"
	"github.com/rewind-gg/rewind/ecs"
)

// FireSystem drains the tick's fire commands. A command from a shooter that
// exists and is alive, with a weapon of the catalogue and a usable aim, is
// checked against the rules (the weapon is carried, its fire interval or
// cooldown has passed, it has ammo and is not reloading); a valid one spawns
// its kind's entity carrying the shooter's view lag (cut to the weapon's
// max_rewind; a late command carries its own view lag, and the rules apply
// at its own tick) and the next index of the shooter's spread sequence. A
// shot fired with less view lag than its shooter claimed is reported as a
// clamp. Invalid commands are reported as invalid shots, refused ones as
// rejected shots. Scripted commands (scenarios) skip the rules.
type FireSystem struct {
	env     *Env
	kinds   []Kind
	cmds    *ecs.Commands
	shooter generic.Map6[ecs.Hitbox, ecs.Team, ecs.ViewLag, ecs.Life, ecs.Transform, ecs.Arsenal]
	shot    Shot
}

// NewFireSystem returns the fire system of a room whose kinds are kinds
// (indexed as in the registry the catalogue was built with).
func NewFireSystem(env *Env, kinds []Kind) *FireSystem {
	return &FireSystem{
		env:     env,
		kinds:   kinds,
		cmds:    ecs.Resource[ecs.Commands](env.World),
		shooter: generic.NewMap6[ecs.Hitbox, ecs.Team, ecs.ViewLag, ecs.Life, ecs.Transform, ecs.Arsenal](env.World),
	}
}

// Run spawns this tick's shots.
func (s *FireSystem) Run() {
	now := s.env.Clock.Tick
	for i := range s.cmds.Fire {
		cmd := &s.cmds.Fire[i]
		team, lag, tf, arsenal, ok := s.shooterOf(cmd)
		if !ok {
			s.env.Events.Shots = append(s.env.Events.Shots, ecs.ShotEvent{
				Shot: cmd.Shot, Weapon: cmd.Weapon, Shooter: cmd.Shooter, Result: ecs.ResultInvalid, Fired: now, Tick: now,
			})
			continue
		}
		def := s.env.Catalog.At(cmd.Weapon)
		at := now // the tick the rules apply at: a late command's own
		if cmd.Late {
			at, lag = cmd.Tick, &cmd.Lag
		}
		seq := cmd.Shot // a scripted shot's place in its spread sequence: its index
		if !cmd.Scripted {
			seq = arsenal.Fired
			if reason := Use(arsenal, cmd.Weapon, def, at); reason != 0 {
				s.env.Events.Rejected = append(s.env.Events.Rejected, ecs.RejectedShot{
					Shooter: cmd.Shooter, Shot: cmd.Shot, Weapon: cmd.Weapon, Reason: reason, Tick: now})
				continue
			}
		}
		granted, reason := lag.Ticks, lag.Clamp
		if g, cut := def.Rewind(granted, s.env.Clock.TickRate); cut {
			granted, reason = g, ecs.ClampWeapon
		}
		if reason != 0 {
			claimed := lag.Claimed
			if lag.Clamp == 0 {
				claimed = lag.Ticks
			}
			s.env.Events.Clamps = append(s.env.Events.Clamps, ecs.ClampEvent{Shooter: cmd.Shooter, Shot: cmd.Shot,
				Weapon: cmd.Weapon, Reason: reason, Claimed: claimed, Granted: granted, Tick: now})
		}
		s.shot = Shot{
			Def: def, Weapon: cmd.Weapon, Kind: s.env.Catalog.KindOf(cmd.Weapon),
			ID: cmd.Shot, Seq: seq, Shooter: cmd.Shooter, Team: team.ID, Lag: granted,
			Origin: cmd.Origin, Dir: cmd.Dir.Normalize(), Feet: tf.Pos,
		}
		if reason == 0 { // the claim stands: so do the snapshots it was seen between
			s.shot.Back, s.shot.Span = lag.Back, lag.Span
		}
		s.kinds[s.shot.Kind].Spawn(&s.shot)
	}
	s.cmds.Fire = s.cmds.Fire[:0]
}

// shooterOf returns what the shot needs of its shooter, and whether the
// command can be fired at all: an existing shooter with a hitbox, alive, a
// known weapon, a finite origin and a direction. A player's command also
// needs an arsenal.
func (s *FireSystem) shooterOf(cmd *ecs.FireCommand) (*ecs.Team, *ecs.ViewLag, *ecs.Transform, *ecs.Arsenal, bool) {
	if !s.env.World.Alive(cmd.Shooter) || int(cmd.Weapon) >= s.env.Catalog.Len() ||
		!cmd.Origin.IsFinite() || !cmd.Dir.IsFinite() || cmd.Dir.LenSq() == 0 {
		return nil, nil, nil, nil, false
	}
	hb, team, lag, life, tf, arsenal := s.shooter.Get(cmd.Shooter)
	ok := hb != nil && team != nil && lag != nil && tf != nil && (life == nil || !life.Dead) && (cmd.Scripted || arsenal != nil)
	return team, lag, tf, arsenal, ok
}

// Use applies the rules to one use of weapon at tick now (arsenal.Use,
// with def's rules).
func Use(a *ecs.Arsenal, weapon uint16, def *Definition, now int64) ecs.RejectReason {
	return arsenal.Use(a, weapon, def.Rules(), now)
}

// Reload starts reloading weapon (arsenal.Reload, with def's rules).
func Reload(a *ecs.Arsenal, weapon uint16, def *Definition, now int64) {
	arsenal.Reload(a, weapon, def.Rules(), now)
}

// StreakHit records a hit of weapon at view time t in st and reports whether
// it completes a streak: s.Hits hits of that weapon within s.WindowTicks of
// view time, this one included.
func StreakHit(st *ecs.Streak, weapon uint16, t float64, s Streak) bool {
	st.Times[st.Next], st.Weapons[st.Next] = t, weapon
	st.Next = (st.Next + 1) % ecs.StreakMemory
	st.Count = min(st.Count+1, ecs.StreakMemory)
	n := 0
	for i := range st.Count {
		if st.Weapons[i] == weapon && st.Times[i] <= t && st.Times[i] > t-s.WindowTicks {
			n++
		}
	}
	return n >= s.Hits
}
