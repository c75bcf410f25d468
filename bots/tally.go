package bots

import (
	"math"
	"slices"
	"sync"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/spread"
)

// Tally scores a player's hitscan shots as the demo and the bots report
// them: which enemy each shot's pellets hit on the player's screen (the
// first enemy capsule on each pellet's ray, unless the level stops the ray
// first, as shown at the render time), and whether the server registered
// the shot on that enemy. The server's lag compensation should agree: a hit
// seen and not confirmed is a hit the player lost, and a hit confirmed on a
// target no pellet hit on the screen is a false positive.
//
// Wire connects it to a client; its methods are safe to call from any
// goroutine.
type Tally struct {
	// KeepShots, set before the first shot, keeps a record of every
	// hitscan shot (Shots), for joining with the server's judgement of
	// each (package shotjoin).
	KeepShots bool

	mu      sync.Mutex
	self    uint32 // the player, from the first shot's view
	shots   [shotRing]shotScore
	stats   TallyStats
	targets map[uint32]*TargetStats
	kept    []ShotRecord
}

// ShotRecord is a hitscan shot as its client fired and saw it, and the
// hit markers the server sent for it.
type ShotRecord struct {
	Player uint32 // the shooter's player id
	Shot   uint16 // the shot counter the server's events echo
	Seq    uint32 // the shot's index in the shooter's spread sequence
	Tick   int64  // the tick it was fired at
	// View is the view time the shot's input reports (its tick minus its
	// view_lag): the server time the remote players were shown at.
	View       float64
	Weapon     uint8
	Eye        geom.Vec3
	Yaw, Pitch float64
	// Seen are the enemies its pellets hit on the screen, where they were
	// shown; Marked the targets of the server's hit markers for it.
	Seen   []SeenTarget
	Marked []uint32
	// AfterDeath: fired after the server's tick of the shooter's death
	// (the server never fired it).
	AfterDeath bool
	// Shielded: a hit seen, not confirmed, that a shield shown only later
	// crosses (TallyStats.HitsSeenShielded).
	Shielded bool
}

// SeenTarget is an enemy a shot hit on the screen.
type SeenTarget struct {
	ID       uint32
	Pos      geom.Vec3 // its feet as shown
	Crouched bool
}

// Confirmed reports whether the server registered the shot on an enemy
// its pellets hit on the screen.
func (r *ShotRecord) Confirmed() bool {
	return slices.ContainsFunc(r.Marked, r.saw)
}

// FalsePositives returns the markers' targets that no pellet hit on the
// screen.
func (r *ShotRecord) FalsePositives() []uint32 {
	var out []uint32
	for _, id := range r.Marked {
		if !r.saw(id) {
			out = append(out, id)
		}
	}
	return out
}

func (r *ShotRecord) saw(id uint32) bool {
	return slices.ContainsFunc(r.Seen, func(s SeenTarget) bool { return s.ID == id })
}

// TallyStats are a player's scored shots.
type TallyStats struct {
	HitsSeen      uint64 // hitscan shots that hit an enemy on the client's screen
	SeenConfirmed uint64 // hits seen (shots) that the server registered on a target the shot's pellets hit on the screen (with or without damage)
	// HitEvents counts the hit markers (Hit and NoDamage events) of the
	// player's hitscan shots; FalsePositives those of them on a target that
	// no pellet of the shot hit on the client's screen.
	HitEvents, FalsePositives uint64
	// Shots (and hits seen) fired after the server had killed the player,
	// learnt from the kill event: the server never fired them.
	ShotsAfterDeath    uint64
	HitsSeenAfterDeath uint64
	// HitsSeenShielded counts the hits seen, not confirmed, whose every
	// ray to an enemy seen a shield crosses that the screen did not show
	// when the shot was fired and a later snapshot did: shields are never
	// rewound, so one placed after the newest snapshot the shooter had
	// stops the shot (docs/protocol.md). The player could not have seen
	// it.
	HitsSeenShielded uint64
}

// TargetStats counts the player's hitscan hits on one target.
type TargetStats struct {
	HitsSeen       uint64 // shots with a pellet that hit it on the client's screen
	SeenConfirmed  uint64 // of those shots, the ones the server registered on it
	HitEvents      uint64 // hit events (Hit and NoDamage) on it of the player's hitscan shots
	FalsePositives uint64 // hit events on it of shots that no pellet hit it with on the screen
}

// shotScore is what the tally remembers of a recent shot.
type shotScore struct {
	shot uint16
	tick int64
	// seen are the enemies its pellets hit on the client's screen (0:
	// none); confirmed says the server registered the shot on one of them.
	seen      [maxSeen]uint32
	hitscan   bool
	confirmed bool  // on any of them
	targetsOK uint8 // bit i: on seen[i]
	dead      bool  // fired after the server had already killed the shooter
	valid     bool
	kept      int32 // its index in Tally.kept + 1 (0: not kept)
	// The rays of the pellets that hit an enemy on the screen (from eye),
	// each up to that enemy; the shields the screen showed then; whether a
	// shield shown later crosses every ray (HitsSeenShielded).
	eye      geom.Vec3
	rays     [maxSeen]seenRay
	nrays    uint8
	shown    []uint32
	shielded bool
}

// seenRay is a pellet's ray to the enemy it hit on the screen.
type seenRay struct {
	dir geom.Vec3
	t   float64
}

// maxSeen is how many distinct targets one shot's pellets are remembered
// hitting.
const maxSeen = 8

// shotRing is how many recent shots are remembered: far more than can be in
// flight in a round trip.
const shotRing = 256

// saw reports whether one of the shot's pellets hit target on the screen.
func (r *shotScore) saw(target uint32) bool {
	return target != 0 && slices.Contains(r.seen[:], target)
}

// Wire has cfg's client report its shots, hit markers and events to t,
// after whatever cfg already reports them to.
func (t *Tally) Wire(cfg *client.Config) {
	if cfg.Input != nil {
		cfg.Input = viewing{source: cfg.Input, tally: t}
	}
	onShot, onMarker, onEvent := cfg.OnShot, cfg.OnHitMarker, cfg.OnEvent
	cfg.OnShot = func(s client.Shot) {
		if onShot != nil {
			onShot(s)
		}
		t.Shot(s)
	}
	cfg.OnHitMarker = func(m client.HitMarker) {
		if onMarker != nil {
			onMarker(m)
		}
		t.Marker(m)
	}
	cfg.OnEvent = func(ev protocol.Event) {
		if onEvent != nil {
			onEvent(ev)
		}
		t.Event(ev)
	}
}

// viewing shows the tally every view its client builds, then asks the
// input source the client had.
type viewing struct {
	source client.InputSource
	tally  *Tally
}

func (w viewing) Intent(v *client.View) client.Intent {
	w.tally.View(v)
	return w.source.Intent(v)
}

// Shot scores a shot the player fired: the enemies its pellets hit on the
// screen of s.View.
func (t *Tally) Shot(s client.Shot) {
	v := s.View
	w := v.Welcome.Weapons[s.Weapon]
	r := shotScore{shot: s.ID, tick: s.Tick, valid: true}
	n := 0
	if w.Kind == "hitscan" {
		r.hitscan = true
		aim := movement.Aim(s.Yaw, s.Pitch)
		key := spread.Key(v.Welcome.SpreadSeed, v.Welcome.Player, s.Seq)
		r.eye = s.Eye
		for p := range max(int(w.Pellets), 1) { // the server's own pellets (package spread)
			dir := spread.Dir(aim, w.Spread, key, p)
			e, at := firstEnemy(v, s.Eye, dir, w.Range)
			if e == 0 {
				continue
			}
			if int(r.nrays) < maxSeen {
				r.rays[r.nrays] = seenRay{dir: dir, t: at}
				r.nrays++
			}
			if !r.saw(e) && n < maxSeen {
				r.seen[n] = e
				n++
			}
		}
		if n > 0 {
			for i := range v.Objects {
				if o := &v.Objects[i]; o.Kind == protocol.KindShield {
					r.shown = append(r.shown, o.ID)
				}
			}
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.self = v.Welcome.Player
	if t.KeepShots && r.hitscan {
		k := ShotRecord{Player: v.Welcome.Player, Shot: s.ID, Seq: s.Seq, Tick: s.Tick, View: v.RenderTime,
			Weapon: s.Weapon, Eye: s.Eye, Yaw: s.Yaw, Pitch: s.Pitch}
		for _, e := range r.seen[:n] {
			if p := shown(v, e); p != nil {
				k.Seen = append(k.Seen, SeenTarget{ID: e, Pos: p.Pos, Crouched: p.Crouched})
			}
		}
		t.kept = append(t.kept, k)
		r.kept = int32(len(t.kept))
	}
	t.shots[s.ID%shotRing] = r
	if n > 0 {
		t.stats.HitsSeen++
		for _, e := range r.seen[:n] {
			t.target(e).HitsSeen++
		}
	}
}

// firstEnemy returns the enemy a ray touches first on v, and where on the
// ray, or 0 when the level (its triangles that block shots), a shield shown
// that stops the player's shots, or nothing comes first.
func firstEnemy(v *client.View, o, d geom.Vec3, rng float64) (uint32, float64) {
	best, target := math.Inf(1), uint32(0)
	if h, ok := v.Level.Mesh.Raycast(o, d, rng, level.ShotMask); ok {
		best = h.T
	}
	for i := range v.Objects {
		if t, ok := shieldStops(v, &v.Objects[i], o, d, rng); ok && t < best {
			best = t
		}
	}
	for i := range v.Players {
		p := &v.Players[i]
		if !p.Alive || p.Team == v.Welcome.Team || p.ID == v.Welcome.Player {
			continue
		}
		if t, ok := geom.RayCapsule(o, d, rng, v.Capsule(p)); ok && t < best {
			best, target = t, p.ID
		}
	}
	return target, best
}

// shieldStops reports whether object o of v is a shield that stops the
// player's shots (not its own, not its team's) and that the ray from o
// along d meets within rng, and where.
func shieldStops(v *client.View, sh *client.Object, o, d geom.Vec3, rng float64) (float64, bool) {
	if sh.Kind != protocol.KindShield || sh.Owner == v.Welcome.Player || (sh.Team != 0 && sh.Team == v.Welcome.Team) {
		return 0, false
	}
	return geom.RayAABB(o, d, rng, geom.AABB{Min: sh.Pos, Max: sh.Pos.Add(sh.Vel)})
}

// View takes a view the player's client showed (Wire calls it every
// tick): a shield in it that the screen did not show when a recent hit
// seen was fired, and that crosses every ray of that shot to an enemy it
// saw, stopped the shot on the server (HitsSeenShielded).
func (t *Tally) View(v *client.View) {
	if !slices.ContainsFunc(v.Objects, func(o client.Object) bool { return o.Kind == protocol.KindShield }) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.shots {
		r := &t.shots[i]
		if !r.valid || r.dead || r.confirmed || r.shielded || r.nrays == 0 || v.Tick-r.tick > shieldedWithin {
			continue
		}
		for j := range v.Objects {
			sh := &v.Objects[j]
			if sh.Kind != protocol.KindShield || slices.Contains(r.shown, sh.ID) || !r.stoppedBy(v, sh) {
				continue
			}
			r.shielded = true
			t.stats.HitsSeenShielded++
			if r.kept > 0 {
				t.kept[r.kept-1].Shielded = true
			}
			break
		}
	}
}

// shieldedWithin is how many ticks after a shot a shield newly shown may
// still explain it: a round trip and more on any path the demo plays.
const shieldedWithin = 60

// stoppedBy reports whether shield sh crosses every ray of the shot to an
// enemy it saw, before the enemy.
func (r *shotScore) stoppedBy(v *client.View, sh *client.Object) bool {
	for _, ray := range r.rays[:r.nrays] {
		if at, ok := shieldStops(v, sh, r.eye, ray.dir, ray.t); !ok || at >= ray.t {
			return false
		}
	}
	return true
}

// Marker scores a hit marker (the client shows one per shot and target): on
// a hitscan shot, a hit seen confirmed when one of the shot's pellets hit
// that target on the screen, and a false positive when none did.
func (t *Tally) Marker(m client.HitMarker) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &t.shots[m.Shot%shotRing]
	if !r.valid || r.shot != m.Shot || !r.hitscan {
		return
	}
	t.stats.HitEvents++
	if r.kept > 0 {
		k := &t.kept[r.kept-1]
		k.Marked = append(k.Marked, m.Target)
	}
	ts := t.target(m.Target)
	ts.HitEvents++
	switch {
	case !r.saw(m.Target):
		t.stats.FalsePositives++
		ts.FalsePositives++
	case !r.confirmed:
		r.confirmed = true
		t.stats.SeenConfirmed++
		if r.shielded { // the shield came after the shot after all
			r.shielded = false
			t.stats.HitsSeenShielded--
			if r.kept > 0 {
				t.kept[r.kept-1].Shielded = false
			}
		}
	}
	if i := slices.Index(r.seen[:], m.Target); i >= 0 && r.targetsOK&(1<<i) == 0 {
		r.targetsOK |= 1 << i
		ts.SeenConfirmed++
	}
}

// Event takes the player's death: the shots it fired after the server's
// tick of death never were (the client only learns of its death a round
// trip later).
func (t *Tally) Event(ev protocol.Event) {
	if ev.Kind != protocol.EventKill {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.self == 0 || ev.Other != t.self {
		return
	}
	for i := range t.shots {
		if r := &t.shots[i]; r.valid && !r.dead && r.tick > int64(ev.Tick) {
			r.dead = true
			t.stats.ShotsAfterDeath++
			if r.kept > 0 {
				t.kept[r.kept-1].AfterDeath = true
			}
			if r.seen[0] != 0 {
				t.stats.HitsSeenAfterDeath++
			}
		}
	}
}

// Shots returns a copy of the records of the hitscan shots fired so far
// (none unless KeepShots is set).
func (t *Tally) Shots() []ShotRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := slices.Clone(t.kept)
	for i := range out {
		out[i].Seen, out[i].Marked = slices.Clone(out[i].Seen), slices.Clone(out[i].Marked)
	}
	return out
}

// shown returns the remote player id as v shows it, nil if it does not.
func shown(v *client.View, id uint32) *client.Player {
	for i := range v.Players {
		if v.Players[i].ID == id {
			return &v.Players[i]
		}
	}
	return nil
}

// Stats returns the scores so far.
func (t *Tally) Stats() TallyStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stats
}

// Targets returns the scores per target entity id.
func (t *Tally) Targets() map[uint32]TargetStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := make(map[uint32]TargetStats, len(t.targets))
	for id, ts := range t.targets {
		m[id] = *ts
	}
	return m
}

// target returns the counters of a target, creating them; t.mu is held.
func (t *Tally) target(id uint32) *TargetStats {
	if t.targets == nil {
		t.targets = map[uint32]*TargetStats{}
	}
	ts := t.targets[id]
	if ts == nil {
		ts = &TargetStats{}
		t.targets[id] = ts
	}
	return ts
}
