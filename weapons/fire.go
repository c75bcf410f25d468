package weapons

import (
	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/ecs"
)

// FireSystem drains the tick's fire commands: a command from a shooter that
// exists, with a weapon of the catalogue and a usable aim, spawns its kind's
// lag-compensated entity carrying the shooter's view lag; any other is
// reported as an invalid shot.
type FireSystem struct {
	env     *Env
	kinds   []Kind
	cmds    *ecs.Commands
	shooter generic.Map4[ecs.Hitbox, ecs.Team, ecs.ViewLag, ecs.Life]
	shot    Shot
}

// NewFireSystem returns the fire system of a room whose kinds are kinds
// (indexed as in the registry the catalogue was built with).
func NewFireSystem(env *Env, kinds []Kind) *FireSystem {
	return &FireSystem{
		env:     env,
		kinds:   kinds,
		cmds:    ecs.Resource[ecs.Commands](env.World),
		shooter: generic.NewMap4[ecs.Hitbox, ecs.Team, ecs.ViewLag, ecs.Life](env.World),
	}
}

// Run spawns this tick's shots.
func (s *FireSystem) Run() {
	for i := range s.cmds.Fire {
		cmd := &s.cmds.Fire[i]
		team, lag, ok := s.shooterOf(cmd)
		if !ok {
			s.env.Events.Shots = append(s.env.Events.Shots, ecs.ShotEvent{
				Shot: cmd.Shot, Weapon: cmd.Weapon, Shooter: cmd.Shooter, Result: ecs.ResultInvalid, Tick: s.env.Clock.Tick,
			})
			continue
		}
		s.shot = Shot{
			Def: s.env.Catalog.At(cmd.Weapon), Weapon: cmd.Weapon, Kind: s.env.Catalog.KindOf(cmd.Weapon),
			ID: cmd.Shot, Shooter: cmd.Shooter, Team: team.ID, Lag: lag.Ticks,
			Origin: cmd.Origin, Dir: cmd.Dir.Normalize(),
		}
		s.kinds[s.shot.Kind].Spawn(&s.shot)
	}
	s.cmds.Fire = s.cmds.Fire[:0]
}

// shooterOf returns the shooter's team and view lag, and whether the command
// can be fired at all: an existing shooter with a hitbox, not dead, a known
// weapon, a finite origin and a direction.
func (s *FireSystem) shooterOf(cmd *ecs.FireCommand) (*ecs.Team, *ecs.ViewLag, bool) {
	if !s.env.World.Alive(cmd.Shooter) || int(cmd.Weapon) >= s.env.Catalog.Len() ||
		!cmd.Origin.IsFinite() || !cmd.Dir.IsFinite() || cmd.Dir.LenSq() == 0 {
		return nil, nil, false
	}
	hb, team, lag, life := s.shooter.Get(cmd.Shooter)
	return team, lag, hb != nil && team != nil && lag != nil && (life == nil || !life.Dead)
}
