package systems

import (
	"cmp"
	"slices"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/fairness"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/movement"
	"github.com/rewind-gg/rewind/trimesh"
	"github.com/rewind-gg/rewind/weapons"
)

// applyInputs takes each controlled player's input for this tick out of its
// queue. With none, the player is rooted: it keeps its aim, does not move and
// does not fire; the server never guesses across a gap (and keeps the view
// lag it last granted: a rooted tick claims nothing). An input's claimed
// view lag is granted up to what the server measured of the client when the
// input arrived (Input.Earliest) and the room's cap (lagcomp.Config.MaxUnlag).
func (s *Simulation) applyInputs() {
	now := s.Clock.Tick
	maxUnlag := s.cfg.LagComp.MaxUnlag()
	q := s.inputs.Query(s.World)
	for q.Next() {
		queue, in, lag, tf := q.Get()
		slot := &queue.Slots[now%ecs.InputQueueLen]
		queue.Recent <<= 1
		if slot.Tick == now {
			*in = *slot
			slot.Tick = -1
			queue.Applied = now
			queue.Used++
			queue.Recent |= 1
			*lag = GrantViewLag(now, in, maxUnlag)
			continue
		}
		queue.Rooted++
		*in = ecs.Input{Tick: now, Yaw: tf.Yaw, Pitch: tf.Pitch}
		lag.Claimed, lag.Clamp, lag.Back, lag.Span = 0, 0, 0, 0
	}
}

// GrantViewLag returns the view lag the server grants an input of tick now:
// the lag it claims (now − its view time), cut to the server's measured
// bound (now − in.Earliest) and to maxUnlag, never negative; Clamp names the
// tightest bound that cut it.
func GrantViewLag(now int64, in *ecs.Input, maxUnlag float64) ecs.ViewLag {
	claimed := float64(now) - in.ViewTime.Ticks()
	v := ecs.ViewLag{Ticks: claimed}
	if in.Earliest > 0 {
		if bound := max(float64(now)-in.Earliest, 0); v.Ticks > bound {
			v.Ticks, v.Clamp = bound, ecs.ClampMeasured
		}
	}
	if v.Ticks > maxUnlag {
		v.Ticks, v.Clamp = maxUnlag, ecs.ClampMaxUnlag
	}
	if !(v.Ticks >= 0) { // a view time after the present (or NaN)
		v.Ticks, v.Clamp = 0, ecs.ClampFuture
	}
	if v.Clamp != 0 {
		v.Claimed = claimed
	} else {
		v.Back, v.Span = in.ViewTime.Back, in.ViewTime.Span
	}
	return v
}

// runLateInputs runs, before this tick's own inputs, the inputs that came
// after their tick was simulated without them (QueueInput's InputLate),
// as Source's server runs late user commands on arrival. The player's
// movement is simulated again from the end of its last applied tick
// (InputQueue.Base) through the ticks since: each late input turns and
// moves it one step, and reloads and fires as its buttons say, its shot
// fired now from where that step left the eyes, under the weapon rules at
// the input's own tick, lag compensated to the input's own view time
// (granted as any input's, against the bound measured when it arrived and
// max_unlag, from now); a tick still without its input is a rooted step
// again. So a player whose inputs were only late ends up exactly where
// its client predicted, and shoots from where it aimed from. The ticks
// already simulated stay in the history as they were (the player rooted):
// others saw them so, and the player catches up now. A player put
// somewhere since its last applied tick (a respawn, a teleport:
// Life.Moved), or dead, is not simulated again: its late inputs of ticks
// from before that run nothing, later ones step from where it stands.
func (s *Simulation) runLateInputs() {
	now := s.Clock.Tick
	maxUnlag := s.cfg.LagComp.MaxUnlag()
	q := s.late.Query(s.World)
	for k := 0; q.Next(); k++ {
		queue, tf, vel, life, mo := q.Get()
		if queue.NLate == 0 {
			continue
		}
		e := q.Entity()
		if tf.Pos != mo.Left {
			life.Moved = now
		}
		late := queue.Late[:queue.NLate]
		queue.NLate = 0
		if !life.Dead && queue.BaseTick == queue.Applied && life.Moved <= queue.Applied {
			b := &queue.Base
			*tf, *vel, *mo = b.Transform, b.Velocity, b.Motion
			for t := queue.Applied + 1; t < now && !life.Dead; t++ {
				in := &ecs.Input{Tick: t, Yaw: tf.Yaw, Pitch: tf.Pitch} // rooted, again
				if len(late) > 0 && late[0].Tick == t {
					in = &late[0]
					late = late[1:]
					s.ranLate(queue, in, now)
				}
				s.step(e, s.near(k), tf, vel, life, mo, in, now)
				if in.Buttons != 0 && !life.Dead {
					s.fireAndReload(e, in, tf, mo, t, true, GrantViewLag(now, in, maxUnlag))
				}
				if queue.Applied == t {
					*b, queue.BaseTick = ecs.MovementBase{Transform: *tf, Velocity: *vel, Motion: *mo}, t
				}
			}
		}
		for i := range late { // not simulated again
			in := &late[i]
			s.ranLate(queue, in, now)
			if life.Dead || in.Tick < life.Moved {
				continue
			}
			s.step(e, s.near(k), tf, vel, life, mo, in, now)
			if !life.Dead {
				s.fireAndReload(e, in, tf, mo, in.Tick, true, GrantViewLag(now, in, maxUnlag))
			}
		}
	}
}

// near returns the k-th cache of the level's triangles near a player
// (movement.MoveNear). Each stage gives its k-th player the k-th: the
// queries iterate in the same order tick after tick, so that a player
// mostly finds its own neighbourhood in it; which player uses which cache
// changes no answer, only the cost.
func (s *Simulation) near(k int) *trimesh.Near {
	for len(s.nears) <= k {
		s.nears = append(s.nears, trimesh.NewNear(s.walk, level.MovementMask, movement.NearMargin))
	}
	return s.nears[k]
}

// ranLate marks a late input applied: a later copy is a duplicate.
func (s *Simulation) ranLate(queue *ecs.InputQueue, in *ecs.Input, now int64) {
	queue.Recent |= 1 << uint(now-1-in.Tick)
	queue.Applied = in.Tick
	queue.LateRun++
}

// move advances every player moved by its inputs by one tick of its
// class's character (movement.Move) against the level's movement-blocking
// triangles. A rooted tick (no input: applyInputs left an empty one) moves
// it too, with no stick and no button held: a player in the air falls on.
// A player found elsewhere than the last tick left it was put there (a
// respawn, a teleport): its pose is a teleport (Life.Moved). A player whose
// feet then leave the level's bounds or enter a kill volume dies, its own
// killer (killedByLevel).
func (s *Simulation) move() {
	now := s.Clock.Tick
	q := s.movers.Query(s.World)
	for i := 0; q.Next(); i++ {
		tf, vel, in, life, mo, queue := q.Get()
		if life.Dead {
			vel.V = geom.Vec3{}
			continue
		}
		if tf.Pos != mo.Left {
			life.Moved = now
		}
		s.step(q.Entity(), s.near(i), tf, vel, life, mo, in, now)
		if queue.Applied == now { // late inputs of ticks after this one simulate them from here
			queue.Base, queue.BaseTick = ecs.MovementBase{Transform: *tf, Velocity: *vel, Motion: *mo}, now
		}
	}
}

// step turns player e and moves it one tick as in says, and kills it
// where it leaves the level (outOfLevel).
func (s *Simulation) step(e ecs.Entity, near *trimesh.Near, tf *ecs.Transform, vel *ecs.Velocity, life *ecs.Life, mo *ecs.Motion, in *ecs.Input, now int64) {
	tf.Yaw, tf.Pitch = movement.Look(in.Yaw, in.Pitch)
	st := movement.State{Pos: tf.Pos, Vel: vel.V, Crouched: mo.Crouched, JumpHeld: mo.JumpHeld}
	movement.MoveNear(&s.chars[mo.Class], &st, in.Movement(), s.Clock.Dt(), near)
	tf.Pos, vel.V, mo.Left = st.Pos, st.Vel, st.Pos
	mo.Crouched, mo.JumpHeld, mo.OnGround, mo.Ground = st.Crouched, st.JumpHeld, st.OnGround, st.Ground
	if s.outOfLevel(st.Pos) {
		s.killedByLevel(e, life, vel, now)
	}
}

// outOfLevel reports whether feet at pos are out of the level's bounds or
// in one of its kill volumes.
func (s *Simulation) outOfLevel(pos geom.Vec3) bool {
	if b := s.cfg.Bounds; b != (geom.AABB{}) && !b.Contains(pos) {
		return true
	}
	for _, k := range s.cfg.KillVolumes {
		if k.Contains(pos) {
			return true
		}
	}
	return false
}

// killedByLevel kills player e where it stands: no hitbox from this tick
// on, a Kill event with e as its own killer and ecs.NoWeapon, and a respawn
// as after any death.
func (s *Simulation) killedByLevel(e ecs.Entity, life *ecs.Life, vel *ecs.Velocity, now int64) {
	h, _ := s.healthOf.Get(e)
	h.Current = 0
	vel.V = geom.Vec3{}
	life.Dead, life.RespawnAt = true, now+1+int64(s.cfg.RespawnTicks)
	s.Events.Kills = append(s.Events.Kills, ecs.KillEvent{Killer: e, Victim: e, Weapon: ecs.NoWeapon, Tick: now})
}

// recordHistory appends every hitbox's pose, crouched or not, to the
// history and puts the collision world into the present. A pose is a
// teleport when the player was put there (a respawn, or for a player moved
// by its inputs, anywhere movement did not leave it: Life.Moved); lag
// compensation never interpolates across one, and the player's
// Life.Teleports counts them for clients.
func (s *Simulation) recordHistory() {
	now := s.Clock.Tick
	s.poses = s.poses[:0]
	q := s.hitboxes.Query(s.World)
	for q.Next() {
		tf, hb, team, life, mo := q.Get()
		if life.Dead {
			continue
		}
		p := lagcomp.Pose{Entity: q.Entity(), Team: team.ID, Hitbox: *hb, Pos: tf.Pos, Crouched: mo.Crouched, Teleport: life.Moved == now}
		if s.cfg.PoseScale > 0 {
			p.Pos = p.Pos.Round(s.cfg.PoseScale)
		}
		if p.Teleport {
			life.Teleports++
		}
		s.poses = append(s.poses, p)
	}
	// Ticks only increase, so Record cannot fail here.
	_ = s.History.Record(now, s.poses)
	s.Time.TravelToPresent()
}

// Eye returns where shots of a player with feet at pos start: EyeHeight
// above them, CrouchEyeHeight crouched.
func (s *Simulation) Eye(pos geom.Vec3, crouched bool) geom.Vec3 {
	if crouched {
		pos.Y += s.cfg.CrouchEyeHeight
	} else {
		pos.Y += s.cfg.EyeHeight
	}
	return pos
}

// weapons turns this tick's fire buttons into fire commands (origin at the
// eyes, direction from the aim: weapon positions are computed before lag
// compensation) and spawns every command's entity, under the weapons' rules;
// a reload button starts reloading the selected weapon.
func (s *Simulation) weapons() {
	now := s.Clock.Tick
	q := s.triggers.Query(s.World)
	for q.Next() {
		in, tf, mo, life := q.Get()
		if in.Tick != now || life.Dead {
			continue
		}
		s.fireAndReload(q.Entity(), in, tf, mo, now, false, ecs.ViewLag{})
	}
	s.fire.Run()
}

// fireAndReload starts reloading the selected weapon of player e when in
// holds the reload button, and queues its fire command when in holds the
// fire button: from the eyes, where the aim points. The rules apply at
// tick at; a late command carries its own view lag.
func (s *Simulation) fireAndReload(e ecs.Entity, in *ecs.Input, tf *ecs.Transform, mo *ecs.Motion, at int64, late bool, lag ecs.ViewLag) {
	if in.Buttons&ecs.ButtonReload != 0 && int(in.Weapon) < s.Catalog.Len() {
		arsenal, _ := s.armsOf.Get(e)
		weapons.Reload(arsenal, in.Weapon, s.Catalog.At(in.Weapon), at)
	}
	if in.Buttons&ecs.ButtonFire == 0 {
		return
	}
	s.Commands.Fire = append(s.Commands.Fire, ecs.FireCommand{
		Shooter: e, Weapon: in.Weapon, Shot: in.Shot,
		Origin: s.Eye(tf.Pos, mo.Crouched), Dir: movement.Aim(tf.Yaw, tf.Pitch),
		Late: late, Tick: at, Lag: lag,
	})
}

// lagCompensation gives every unfinished lag-compensated entity its view time
// (the present minus the view lag its shooter had when it fired: one tick
// later every tick, whatever the shooter does next) and resolves them all,
// one rewind per distinct view time.
func (s *Simulation) lagCompensation() {
	now := s.Clock.Tick
	s.viewTimes.Reset(s.cfg.LagComp, now, s.History.Oldest())
	items := s.items[:0] // a local: no write barrier's check per append
	q := s.resolving.Query(s.World)
	for q.Next() {
		lc, lag, vt := q.Get()
		if lc.Done || lc.From > now {
			continue
		}
		e := q.Entity()
		if lc.NeedsOwner {
			if owner := s.ownerOf.Get(e).Entity; !s.ownerStill(s.World.Alive(owner), owner, lc.OwnerLife) {
				lc.Done = true // cancelled: an invalid shot, never resolved
				shot := s.shotOf.Get(e)
				s.Events.Shots = append(s.Events.Shots, ecs.ShotEvent{Shot: shot.ID, Weapon: shot.Weapon, Shooter: owner,
					Seq: shot.Seq, Fired: shot.Fired, Tick: now, Result: ecs.ResultInvalid})
				continue
			}
		}
		if lc.CatchUp && lc.From < now { // caught up in its first tick: the present from then on
			*vt = ecs.ViewTime{Tick: now}
		} else {
			*vt = s.viewTimes.At(lag.Ticks)
			if lag.Span > 1 && lc.From == now && vt.Ticks() == float64(now)-lag.Ticks {
				// Its own tick, at the time its shooter saw (neither the
				// window nor the view resolution moved it): between the
				// snapshots the shooter drew it between.
				vt.Back, vt.Span = lag.Back, lag.Span
			}
		}
		items = append(items, lagcomp.Item{Entity: e, Kind: lc.Kind, Time: *vt})
		if lc.CatchUp && lc.From == now { // its first tick: one step per tick of view time, up to the present
			for t := (ecs.ViewTime{Tick: vt.Tick + 1, Frac: vt.Frac}); t.Tick < now || (t.Tick == now && t.Frac == 0); t.Tick++ {
				items = append(items, lagcomp.Item{Entity: e, Kind: lc.Kind, Time: t})
			}
		}
	}
	s.items = items
	st := s.compensator.Run(now, items)
	s.stats.Last = st
	s.stats.Rewinds += int64(st.Rewinds)
	s.stats.Items += int64(st.Items)
	s.stats.MaxBuckets = max(s.stats.MaxBuckets, st.Buckets)
}

// ownerStill reports whether an owner is still there, alive, in the life it
// was in when its entity started.
func (s *Simulation) ownerStill(alive bool, owner ecs.Entity, life uint32) bool {
	if !alive {
		return false
	}
	_, l := s.healthOf.Get(owner)
	return l != nil && !l.Dead && l.Lives == life
}

// damage applies this tick's hits in the order their shooters saw them land
// (view time; so the outcome never depends on how lag compensation was
// bucketed): streak bonuses, then health. A player whose health reaches 0
// dies (its killer is the shooter); hits on the dead and the invulnerable
// deal nothing, and say why (ShotEvent.NoDamage). Dead players whose time has come respawn, alive and briefly
// invulnerable from the next tick.
func (s *Simulation) damage() {
	now := s.Clock.Tick
	slices.SortFunc(s.Events.Shots, func(a, b ecs.ShotEvent) int {
		return cmp.Or(cmp.Compare(a.ViewTime.Tick, b.ViewTime.Tick), cmp.Compare(a.ViewTime.Frac, b.ViewTime.Frac),
			ecs.CompareEntity(a.Shooter, b.Shooter), cmp.Compare(a.Shot, b.Shot), cmp.Compare(a.Weapon, b.Weapon),
			ecs.CompareEntity(a.Target, b.Target), cmp.Compare(a.Result, b.Result), boolCmp(a.Splash, b.Splash))
	})
	for i := range s.Events.Shots {
		ev := &s.Events.Shots[i]
		if ev.Result != ecs.ResultHit {
			continue
		}
		if !s.World.Alive(ev.Target) { // left the room this tick
			ev.NoDamage = ecs.NoDamageDead
			continue
		}
		h, life := s.healthOf.Get(ev.Target)
		switch {
		case h == nil || h.Max == 0 || life == nil:
			ev.NoDamage = ecs.NoDamageZero
			continue
		case life.Dead:
			ev.NoDamage = ecs.NoDamageDead
			continue
		}
		if def := s.Catalog.At(ev.Weapon); def.Streak.Hits > 0 && s.World.Alive(ev.Shooter) {
			if _, st := s.armsOf.Get(ev.Shooter); st != nil && weapons.StreakHit(st, ev.Weapon, ev.ViewTime.Ticks(), def.Streak) {
				ev.Streak = true
				ev.Damage *= 1 + def.Streak.Bonus
			}
		}
		if now < life.InvulnerableUntil {
			ev.NoDamage = ecs.NoDamageInvulnerable
			continue
		}
		if !(ev.Damage > 0) {
			ev.NoDamage = ecs.NoDamageZero
			continue
		}
		ev.Dealt = min(ev.Damage, h.Current)
		h.Current -= ev.Dealt
		if h.Current <= 0 {
			h.Current = 0
			life.Dead, life.RespawnAt = true, now+1+int64(s.cfg.RespawnTicks)
			s.Events.Kills = append(s.Events.Kills, ecs.KillEvent{Killer: ev.Shooter, Victim: ev.Target, Weapon: ev.Weapon, Tick: now})
		}
	}
	q := s.lives.Query(s.World)
	for q.Next() {
		life, h, tf, arsenal, vel, mo := q.Get()
		if life.Dead && life.RespawnAt <= now+1 {
			life.Dead = false
			life.Lives++
			life.InvulnerableUntil = now + 1 + int64(s.cfg.InvulnerableTicks)
			life.Moved = now + 1
			h.Current = h.Max
			*tf = ecs.Transform{Pos: life.Spawn, Yaw: life.SpawnYaw}
			vel.V = geom.Vec3{}
			*mo = ecs.Motion{Class: mo.Class, Left: mo.Left} // standing, and nothing held
			s.Catalog.Refill(arsenal)                        // a fresh life, a full arsenal
			s.Events.Respawns = append(s.Events.Respawns, ecs.RespawnEvent{Player: q.Entity(), Pos: life.Spawn, Yaw: life.SpawnYaw, Tick: now + 1})
		}
	}
}

// judgeHits marks the tick's disputed hits (ecs.ShotEvent.Disputed): those
// that dealt damage to a victim out of the shooter's sight or reach in the
// victim's present (OutOfSight), and that the same shot, resolved again in
// the present, would not have hit. The collision world holds the present
// (lag compensation restored it, and nothing has moved since), and the
// tick's finished shots are still there to resolve again. A kind that
// cannot repeat a shot in the present (projectiles: weapons.PresentJudge)
// has its out-of-sight hits counted disputed; the tuning sweep, which
// replays the match without rewinding, can count fewer of them. A hit
// resolved in the present (nothing rewound) is the present's own: never
// disputed, and not judged.
func (s *Simulation) judgeHits() {
	now := s.Clock.Tick
	present := ecs.ViewTime{Tick: now}
	for i := range s.Events.Shots {
		ev := &s.Events.Shots[i]
		if ev.Result != ecs.ResultHit || !(ev.Dealt > 0) || ev.ViewTime == present || !s.OutOfSight(now, ev) {
			continue
		}
		if j := s.present[s.Catalog.KindOf(ev.Weapon)]; j != nil && j.HitsInPresent(ev) {
			continue
		}
		ev.Disputed = true
		s.stats.Disputed++
	}
}

// OutOfSight reports whether hit ev's target was, in the present of tick
// (the collision world must hold that tick's poses), out of its shooter's
// sight or its weapon's reach (fairness.OutOfSight): the shooter's eye is
// its pose at tick, its team the one it has now.
func (s *Simulation) OutOfSight(tick int64, ev *ecs.ShotEvent) bool {
	sh := fairness.Shooter{Entity: ev.Shooter}
	if s.World.Alive(ev.Shooter) && s.World.Has(ev.Shooter, s.teamOf.ID()) {
		sh.Team = s.teamOf.Get(ev.Shooter).ID
	}
	if pose, ok := s.History.PoseAt(tick, ev.Shooter); ok {
		sh.Eye, sh.HasEye = s.Eye(pose.Pos, pose.Crouched), true
	}
	return fairness.OutOfSight(s.Collision, s.Catalog.At(ev.Weapon), sh, ev)
}

// cleanup removes finished lag-compensated entities and the shields that no
// longer exist from the next tick on. Removal waits until the queries are
// closed: arche forbids structural changes while one is open.
func (s *Simulation) cleanup() {
	next := s.Clock.Tick + 1
	dead := s.dead[:0]
	q := s.finished.Query(s.World)
	for q.Next() {
		if q.Get().Done {
			dead = append(dead, q.Entity())
		}
	}
	sq := s.shields.Query(s.World)
	for sq.Next() {
		if sh := sq.Get(); sh.Expires != 0 && sh.Expires <= next {
			dead = append(dead, sq.Entity())
		}
	}
	s.dead = dead
	for _, e := range dead {
		s.Despawn(e)
	}
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case b:
		return -1
	}
	return 1
}
