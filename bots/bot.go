package bots

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/level"
)

// BotConfig tunes a Bot.
type BotConfig struct {
	// AimError is the standard deviation of the bot's aim, in radians, on
	// both axes (0: perfect aim).
	AimError float64
	// Seed makes the bot's choices repeatable.
	Seed uint64
	// Slot is the weapon the bot uses: its index in the player's loadout
	// (default 0, the class's first weapon), unless Loadout is set.
	Slot int
	// Loadout makes the bot use its whole loadout as the fight asks: a
	// melee weapon on a target within its reach, a shield (a placeable)
	// every 20 to 30 seconds, and otherwise a ranged weapon it changes every few
	// seconds (a hitscan within its range, or a projectile); while its pick
	// is a melee weapon it closes in on its target.
	Loadout bool
	// Still keeps the bot in place (it still aims and fires).
	Still bool
}

// Bot plays by itself. It aims at the nearest enemy it can see with the
// configured error, and fires whenever it has one in sight. On a level with
// waypoints it navigates their graph: the shortest path to a goal (an
// enemy it sees, else an objective: a waypoint it picks, a third of the
// time on the upper floors), re-planned when the goal moves far or progress
// stalls, jumping along jump edges and crouching along crouch edges; in a
// fight it strafes and crouches now and then. A bot that makes no progress
// for half a second while it means to move recovers: it jumps, backs off,
// and plans again. On a level without waypoints (the arena) it strafes,
// keeps a middle distance from its target, and wanders toward the middle.
type Bot struct {
	cfg        BotConfig
	rng        *rand.Rand
	strafe     float64
	strafeLeft int

	nav   *navGraph // the level's waypoints, once seen; nil without
	navOf *client.Level

	path     []int32   // waypoints still to reach, next first
	from     int32     // the waypoint the bot left for path[0] (-1: none, it walked to the graph)
	goal     geom.Vec3 // what the path leads to
	goalNode int32
	chasing  bool // the goal is an enemy
	resume   bool // a fight took the bot off its path: plan again to the same goal

	anchor     geom.Vec3 // where the bot last made progress
	anchorTick int64
	recover    int64     // recovering until this tick
	backOff    geom.Vec3 // which way it recovers
	crouchTill int64     // crouching in a fight until this tick
	wasAlive   bool
	lastTick   int64

	// The whole loadout's choices (BotConfig.Loadout): the weapon picked
	// until pickUntil, the tick a shield may next be placed, and whether
	// the bot closes in on its target (its pick is melee, out of reach).
	pick      uint8
	pickUntil int64
	placeAt   int64
	charge    bool

	stats botCounters
}

// botCounters are a bot's counters, read from other goroutines.
type botCounters struct {
	longestStall atomic.Int64 // ticks
	recoveries   atomic.Int64
	plans        atomic.Int64
	jumps        atomic.Int64 // ticks the jump button was down
	crouches     atomic.Int64 // ticks the crouch button was down
	upper        atomic.Int64 // ticks spent on an upper floor (above 2 m)
}

// BotStats are a bot's counters.
type BotStats struct {
	// LongestStall is the longest the bot meant to move and made no
	// progress (less than stallDistance), in ticks.
	LongestStall int64
	// Recoveries counts the times it found itself stuck and recovered,
	// Plans the paths it planned on the waypoint graph.
	Recoveries, Plans int64
	// Jumping, Crouching and Upper count the ticks it held jump, held
	// crouch, and stood above 2 m (on an upper floor).
	Jumping, Crouching, Upper int64
}

// Stats returns the bot's counters. It is safe to call from any goroutine.
func (b *Bot) Stats() BotStats {
	s := &b.stats
	return BotStats{LongestStall: s.longestStall.Load(), Recoveries: s.recoveries.Load(), Plans: s.plans.Load(),
		Jumping: s.jumps.Load(), Crouching: s.crouches.Load(), Upper: s.upper.Load()}
}

// NewBot returns a bot.
func NewBot(cfg BotConfig) *Bot {
	return &Bot{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)), strafe: 1, from: -1, goalNode: -1}
}

// How a bot navigates, in metres and ticks at 20 Hz (scaled by the tick
// rate where they are times).
const (
	reached       = 0.75 // a waypoint this close (horizontally, and within a metre up or down) is reached
	stallDistance = 0.4  // moving less than this is no progress
	stallTime     = 0.5  // seconds without progress before recovering
	recoverTime   = 0.6  // seconds of recovery: jump, back off
	fightRange    = 25.0 // an enemy seen this close is fought; further, chased along the graph
	replanMove    = 4.0  // a chased enemy this far from where the path leads is planned for again
	upperFloor    = 2.0  // a waypoint this high is on an upper floor
)

// Intent implements client.InputSource.
func (b *Bot) Intent(v *client.View) client.Intent {
	in := client.Intent{Yaw: v.Self.Yaw, Pitch: v.Self.Pitch}
	if l := v.Welcome.Loadout; len(l) > 0 {
		in.Weapon = l[min(b.cfg.Slot, len(l)-1)]
	}
	if !v.Self.Alive {
		b.wasAlive, b.path = false, nil
		return in
	}
	eye := v.Eye()
	target, dist := b.nearestVisible(v, eye)
	if target != nil {
		aim := v.Capsule(target)
		chest := aim.A.Lerp(aim.B, 0.5)
		d := chest.Sub(eye)
		in.Yaw = math.Atan2(d.X, d.Z) + b.rng.NormFloat64()*b.cfg.AimError
		in.Pitch = math.Atan2(d.Y, math.Hypot(d.X, d.Z)) + b.rng.NormFloat64()*b.cfg.AimError
		in.Fire = true
	}
	b.charge = false
	if b.cfg.Loadout && target != nil {
		in.Weapon = b.choose(v, dist)
	}
	if b.cfg.Still {
		return in
	}
	if b.navOf != v.Level {
		b.navOf, b.nav = v.Level, newNavGraph(v.Level)
	}
	if b.nav == nil {
		b.wander(v, &in, target, dist)
		return in
	}
	b.navigate(v, &in, target, dist)
	return in
}

// wander is how a bot moves on a level without waypoints: it strafes,
// keeps between 6 and 15 m of its target, and without one walks toward the
// middle.
func (b *Bot) wander(v *client.View, in *client.Intent, target *client.Player, dist float64) {
	b.strafeStep()
	in.MoveX = b.strafe
	switch {
	case b.charge: // straight at it, sprinting, hopping over what is low between
		in.MoveX, in.MoveZ, in.Sprint = 0, 1, true
	case target == nil: // toward the middle
		to := geom.V(-v.Self.Pos.X, 0, -v.Self.Pos.Z)
		in.Yaw = math.Atan2(to.X, to.Z)
		in.MoveZ = 1
	case dist > 15:
		in.MoveZ = 1
	case dist < 6:
		in.MoveZ = -1
	}
}

// choose returns the weapon of the loadout for a target dist metres from
// the eye (BotConfig.Loadout), and sets b.charge when the bot's pick is a
// melee weapon that does not reach it yet (it fires what reaches
// meanwhile).
func (b *Bot) choose(v *client.View, dist float64) uint8 {
	ws, now, rate := v.Welcome.Weapons, v.Tick, float64(v.Welcome.TickRate)
	var melee, inReach, ranged, place []uint8
	for _, id := range v.Welcome.Loadout {
		if int(id) >= len(ws) {
			continue
		}
		switch w := &ws[id]; w.Kind { // package weapons' kinds
		case "melee":
			melee = append(melee, id)
			if dist <= w.Reach+w.Radius+v.Welcome.Radius {
				inReach = append(inReach, id)
			}
		case "placeable":
			place = append(place, id)
		case "hitscan":
			if dist <= w.Range {
				ranged = append(ranged, id)
			}
		default:
			ranged = append(ranged, id)
		}
	}
	// A shield 5 to 15 seconds into the fight, then every 20 to 30 (or its
	// fire interval): shields up all the time would block most shots.
	if len(place) > 0 && b.placeAt == 0 {
		b.placeAt = now + int64((5+10*b.rng.Float64())*rate)
	}
	if len(place) > 0 && now >= b.placeAt {
		id := place[b.rng.IntN(len(place))]
		b.placeAt = now + max(int64((20+10*b.rng.Float64())*rate), int64(ws[id].FireInterval))
		return id
	}
	picks := append(slices.Clone(ranged), melee...)
	if now >= b.pickUntil || !slices.Contains(picks, b.pick) {
		if len(picks) == 0 {
			return v.Welcome.Loadout[0]
		}
		b.pick, b.pickUntil = picks[b.rng.IntN(len(picks))], now+int64((2+3*b.rng.Float64())*rate)
		if slices.Contains(melee, b.pick) { // time to close in
			b.pickUntil += int64(4 * rate)
		}
	}
	switch {
	case slices.Contains(inReach, b.pick):
	case slices.Contains(melee, b.pick): // close in, with what reaches meanwhile
		b.charge = true
		if len(inReach) > 0 {
			return inReach[0]
		}
		if len(ranged) > 0 {
			return ranged[0]
		}
	case len(inReach) > 0:
		return inReach[b.rng.IntN(len(inReach))]
	}
	return b.pick
}

// strafeStep flips the strafe's direction every 15 to 45 ticks.
func (b *Bot) strafeStep() {
	if b.strafeLeft <= 0 {
		b.strafe, b.strafeLeft = -b.strafe, 15+b.rng.IntN(30)
	}
	b.strafeLeft--
}

// navigate moves a bot on the waypoint graph, fights what it sees close,
// and recovers when it is stuck.
func (b *Bot) navigate(v *client.View, in *client.Intent, target *client.Player, dist float64) {
	now := v.Tick
	rate := float64(v.Welcome.TickRate)
	pos := v.Self.Predict
	if !b.wasAlive || now != b.lastTick+1 || pos.Sub(b.anchor).Len() > 3 { // (re)spawned, or a gap: start afresh
		b.anchor, b.anchorTick, b.path, b.recover = pos, now, nil, 0
	}
	b.wasAlive, b.lastTick = true, now
	if pos.Y > upperFloor {
		b.stats.upper.Add(1)
	}

	var want geom.Vec3 // where the bot means to go, horizontally
	jump, crouch := false, false
	fight := target != nil && dist < fightRange
	if now < b.recover {
		want = b.backOff
		jump = now%2 == 0
	} else {
		chase := target
		if fight {
			chase = nil // fought where it stands, not chased
		}
		var edge navEdge
		want, edge = b.follow(v, pos, chase)
		jump = edge.Jump && now%2 == 0
		crouch = edge.Crouch
	}
	if fight && now >= b.recover {
		// Fight on the move: strafe across the line to the target, back off
		// within 6 m, crouch now and then.
		b.strafeStep()
		to := toward(pos, target.Pos)
		want = want.Add(geom.V(to.Z, 0, -to.X).Scale(0.7 * b.strafe))
		switch {
		case b.charge: // straight at it
			want = to
		case dist < 6:
			want = want.Sub(to)
		}
		if l := want.Len(); l > 1 {
			want = want.Scale(1 / l)
		}
		if now >= b.crouchTill && b.rng.IntN(int(2*rate)) == 0 { // a crouch every two seconds or so
			b.crouchTill = now + int64((0.5+b.rng.Float64())*rate)
		}
		crouch = crouch || (now < b.crouchTill && !b.charge)
	}

	// Progress: a bot that means to move and does not, for stallTime,
	// recovers.
	moving := want.X != 0 || want.Z != 0
	if pos.Sub(b.anchor).Len() > stallDistance || !moving {
		b.anchor, b.anchorTick = pos, now
	}
	stall := now - b.anchorTick
	if stall > b.stats.longestStall.Load() {
		b.stats.longestStall.Store(stall)
	}
	if moving && now >= b.recover && float64(stall) >= stallTime*rate {
		b.stats.recoveries.Add(1)
		back := want.Scale(-1)
		back.Y = 0
		side := geom.V(back.Z, 0, -back.X).Scale(b.rng.Float64()*2 - 1)
		b.backOff = back.Normalize().Add(side).Normalize()
		b.recover = now + int64(recoverTime*rate)
		b.anchor, b.anchorTick = pos, now
		b.path = nil // plan again once recovered
		b.strafe = -b.strafe
		want, jump = b.backOff, true
	}

	in.MoveX, in.MoveZ = stick(want, in.Yaw)
	in.Jump, in.Crouch = jump, crouch
	in.Sprint = (!fight || b.charge) && !crouch && in.MoveZ > 0.7
	if jump {
		b.stats.jumps.Add(1)
	}
	if crouch {
		b.stats.crouches.Add(1)
	}
}

// follow returns the horizontal direction toward the bot's next waypoint
// (planning a path to its goal first if it has none, or the goal moved
// far), and the edge it is on. chase is the enemy it goes for (one it
// sees), or nil.
func (b *Bot) follow(v *client.View, pos geom.Vec3, chase *client.Player) (geom.Vec3, navEdge) {
	g := b.nav
	switch {
	case chase != nil && (!b.chasing || chase.Pos.Sub(b.goal).Len() > replanMove):
		b.plan(v, pos, chase.Pos, true)
	case chase == nil && b.chasing:
		b.path = nil
	case b.resume && !b.chasing:
		b.planTo(v, pos, b.goalNode)
	}
	b.resume = false
	if len(b.path) == 0 {
		if b.chasing && chase != nil && b.goalNode >= 0 && pos.Sub(g.nodes[b.goalNode].Pos).Len() < 2*reached {
			return toward(pos, chase.Pos), navEdge{} // at the end of the path: straight at it
		}
		b.plan(v, pos, geom.Vec3{}, false)
		if len(b.path) == 0 {
			return geom.Vec3{}, navEdge{}
		}
	}
	next := g.nodes[b.path[0]].Pos
	if d := next.Sub(pos); math.Hypot(d.X, d.Z) < reached && math.Abs(d.Y) < 1 {
		b.from, b.path = b.path[0], b.path[1:]
		if len(b.path) == 0 {
			return geom.Vec3{}, navEdge{}
		}
		next = g.nodes[b.path[0]].Pos
	}
	return toward(pos, next), g.edge(b.from, b.path[0])
}

// plan finds the shortest path from the waypoint nearest the bot to the
// waypoint nearest goal (chase), or to an objective it picks: a random
// waypoint, half the time one on an upper floor.
func (b *Bot) plan(v *client.View, pos, goal geom.Vec3, chase bool) {
	g := b.nav
	start := g.nearest(v.Level, pos)
	var end int32
	if chase {
		end = g.nearest(v.Level, goal)
	} else {
		for range 8 { // not the waypoint it stands at
			if len(g.upper) > 0 && b.rng.IntN(2) == 0 {
				end = g.upper[b.rng.IntN(len(g.upper))]
			} else {
				end = int32(b.rng.IntN(len(g.nodes)))
			}
			if end != start {
				break
			}
		}
		goal = g.nodes[end].Pos
	}
	b.path = g.shortest(start, end, b.path[:0])
	b.from, b.goal, b.goalNode, b.chasing = -1, goal, end, chase
	b.stats.plans.Add(1)
}

// planTo plans again to the objective waypoint end, from where the bot is.
func (b *Bot) planTo(v *client.View, pos geom.Vec3, end int32) {
	b.path = b.nav.shortest(b.nav.nearest(v.Level, pos), end, b.path[:0])
	b.from = -1
	b.stats.plans.Add(1)
}

// toward returns the horizontal unit direction from a to b (zero when b is
// right above or below a).
func toward(a, b geom.Vec3) geom.Vec3 {
	d := geom.V(b.X-a.X, 0, b.Z-a.Z)
	if d.Len() == 0 {
		return d
	}
	return d.Normalize()
}

// stick returns the stick (strafe right, forward) that moves along the
// horizontal direction dir while looking along yaw: dir's components along
// the yaw's right (cos yaw, 0, −sin yaw) and forward (sin yaw, 0, cos yaw).
func stick(dir geom.Vec3, yaw float64) (float64, float64) {
	sin, cos := math.Sincos(yaw)
	x, z := dir.X*cos-dir.Z*sin, dir.X*sin+dir.Z*cos
	if l := math.Hypot(x, z); l > 1 {
		x, z = x/l, z/l
	}
	return x, z
}

// nearestVisible returns the nearest living enemy whose chest the eye can see
// past the level's walls.
func (b *Bot) nearestVisible(v *client.View, eye geom.Vec3) (*client.Player, float64) {
	var best *client.Player
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

// navGraph is a level's waypoint graph as bots plan on it.
type navGraph struct {
	nodes []level.Waypoint
	out   [][]navEdge // by node: its edges
	upper []int32     // the nodes on an upper floor
}

// navEdge is a one-way edge of the graph.
type navEdge struct {
	To           int32
	Cost         float64
	Jump, Crouch bool
}

// newNavGraph is l's waypoint graph; nil without waypoints.
func newNavGraph(l *client.Level) *navGraph {
	if l == nil || l.Level.Waypoints == nil || len(l.Level.Waypoints.Nodes) == 0 {
		return nil
	}
	wp := l.Level.Waypoints
	g := &navGraph{nodes: wp.Nodes, out: make([][]navEdge, len(wp.Nodes))}
	for _, e := range wp.Edges {
		cost := wp.Nodes[e.From].Pos.Sub(wp.Nodes[e.To].Pos).Len()
		g.out[e.From] = append(g.out[e.From], navEdge{To: e.To, Cost: cost, Jump: e.Jump, Crouch: e.Crouch})
	}
	for i, n := range wp.Nodes {
		if n.Pos.Y > upperFloor {
			g.upper = append(g.upper, int32(i))
		}
	}
	return g
}

// edge returns the edge from a to b (none, when a is not a waypoint or
// there is no such edge: a walk to the graph).
func (g *navGraph) edge(a, b int32) navEdge {
	if a < 0 {
		return navEdge{}
	}
	for _, e := range g.out[a] {
		if e.To == b {
			return e
		}
	}
	return navEdge{}
}

// nearest returns the waypoint nearest pos that a walker can head for
// straight (nothing that blocks movement between them at knee and waist
// height), else the nearest; height counts three times as much, so that a
// floor above or below comes last.
func (g *navGraph) nearest(l *client.Level, pos geom.Vec3) int32 {
	best, bestOpen := int32(0), int32(-1)
	bestD, bestOpenD := math.Inf(1), math.Inf(1)
	for i, n := range g.nodes {
		d := n.Pos.Sub(pos)
		cost := math.Hypot(d.X, d.Z) + 3*math.Abs(d.Y)
		if cost < bestD {
			best, bestD = int32(i), cost
		}
		if cost < bestOpenD && walkable(l, pos, n.Pos) {
			bestOpen, bestOpenD = int32(i), cost
		}
	}
	if bestOpen >= 0 {
		return bestOpen
	}
	return best
}

// walkable reports whether nothing that blocks movement lies between a and
// b at 0.5 and 1 m above them.
func walkable(l *client.Level, a, b geom.Vec3) bool {
	for _, h := range [...]float64{0.5, 1} {
		from, to := a.Add(geom.V(0, h, 0)), b.Add(geom.V(0, h, 0))
		d := to.Sub(from)
		n := d.Len()
		if n == 0 {
			continue
		}
		if _, hit := l.Mesh.Raycast(from, d.Scale(1/n), n, level.MovementMask); hit {
			return false
		}
	}
	return true
}

// shortest appends to path the waypoints after start on a shortest path
// from start to end (Dijkstra's algorithm, by the edges' lengths); only
// end itself when there is none.
func (g *navGraph) shortest(start, end int32, path []int32) []int32 {
	n := len(g.nodes)
	dist := make([]float64, n)
	prev := make([]int32, n)
	done := make([]bool, n)
	for i := range dist {
		dist[i], prev[i] = math.Inf(1), -1
	}
	dist[start] = 0
	for {
		u := int32(-1)
		for i := range n {
			if !done[i] && (u < 0 || dist[i] < dist[u]) {
				u = int32(i)
			}
		}
		if u < 0 || math.IsInf(dist[u], 1) || u == end {
			break
		}
		done[u] = true
		for _, e := range g.out[u] {
			if d := dist[u] + e.Cost; d < dist[e.To] {
				dist[e.To], prev[e.To] = d, u
			}
		}
	}
	if math.IsInf(dist[end], 1) {
		return append(path, end)
	}
	// The path backwards from end, then reversed; start first.
	from := len(path)
	for u := end; u >= 0; u = prev[u] {
		path = append(path, u)
	}
	for i, j := from, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}
