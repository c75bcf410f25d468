package client

import (
	"math"
	"math/rand/v2"

	"github.com/rewind-gg/rewind/geom"
)

// BotConfig tunes a Bot.
type BotConfig struct {
	// AimError is the standard deviation of the bot's aim, in radians, on
	// both axes (0: perfect aim).
	AimError float64
	// Seed makes the bot's choices repeatable.
	Seed uint64
	// Slot is the weapon the bot uses: its index in the player's loadout
	// (default 0, the class's first weapon).
	Slot int
	// Still keeps the bot in place (it still aims and fires).
	Still bool
}

// Bot plays by itself: it moves about (strafing, keeping a middle distance),
// aims at the nearest enemy it can see with the configured error, and fires
// whenever it has one in sight.
type Bot struct {
	cfg        BotConfig
	rng        *rand.Rand
	strafe     float64
	strafeLeft int
}

// NewBot returns a bot.
func NewBot(cfg BotConfig) *Bot {
	return &Bot{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)), strafe: 1}
}

// Intent implements InputSource.
func (b *Bot) Intent(v *View) Intent {
	in := Intent{Yaw: v.Self.Yaw, Pitch: v.Self.Pitch}
	if l := v.Welcome.Loadout; len(l) > 0 {
		in.Weapon = l[min(b.cfg.Slot, len(l)-1)]
	}
	if !v.Self.Alive {
		return in
	}
	eye := v.Eye()
	target, dist := b.nearestVisible(v, eye)
	if !b.cfg.Still {
		if b.strafeLeft <= 0 {
			b.strafe, b.strafeLeft = -b.strafe, 15+b.rng.IntN(30)
		}
		b.strafeLeft--
		in.MoveX = b.strafe
	}
	if target == nil {
		if !b.cfg.Still { // wander toward the middle
			to := geom.V(-v.Self.Pos.X, 0, -v.Self.Pos.Z)
			in.Yaw = math.Atan2(to.X, to.Z)
			in.MoveZ = 1
		}
		return in
	}
	aim := v.Capsule(target)
	chest := aim.A.Lerp(aim.B, 0.5)
	d := chest.Sub(eye)
	in.Yaw = math.Atan2(d.X, d.Z) + b.rng.NormFloat64()*b.cfg.AimError
	in.Pitch = math.Atan2(d.Y, math.Hypot(d.X, d.Z)) + b.rng.NormFloat64()*b.cfg.AimError
	if !b.cfg.Still {
		switch {
		case dist > 15:
			in.MoveZ = 1
		case dist < 6:
			in.MoveZ = -1
		}
	}
	in.Fire = true
	return in
}

// nearestVisible returns the nearest living enemy whose chest the eye can see
// past the level's walls.
func (b *Bot) nearestVisible(v *View, eye geom.Vec3) (*Player, float64) {
	var best *Player
	bestDist := math.Inf(1)
	for i := range v.Players {
		p := &v.Players[i]
		if !p.Alive || p.Team == v.Self.Team {
			continue
		}
		c := v.Capsule(p)
		to := c.A.Lerp(c.B, 0.5).Sub(eye)
		dist := to.Len()
		if dist >= bestDist || dist == 0 {
			continue
		}
		if v.Level.Sees(eye, eye.Add(to)) {
			best, bestDist = p, dist
		}
	}
	return best, bestDist
}
