package server

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mlange-42/arche/generic"
	"github.com/quic-go/quic-go"
	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/channel"
	"github.com/rewind-gg/rewind/coverage"
	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/results"
	"github.com/rewind-gg/rewind/systems"
)

// room is one match: a goroutine that owns a Simulation and talks to its
// sessions through channels.
type room struct {
	id   string
	srv  *Server
	log  zerolog.Logger
	sim  *systems.Simulation
	cfg  *Config
	snap int64 // ticks between snapshots

	tickEvery time.Duration // the tick interval
	tickStart time.Time     // when the last tick began: the next begins a tick later

	inbox   chan roomMsg
	stop    chan struct{} // closed by end: the room finishes at once
	done    chan struct{} // closed when the goroutine has returned
	endOnce sync.Once
	why     endReason // why stop was closed; written before

	pending  int // joins on their way to the inbox; guarded by srv.mu
	members  []*member
	bySess   map[*session]*member
	byEnt    map[ecs.Entity]*member
	nextTeam uint8

	// Lifecycle.
	opened     time.Time
	lastTick   atomic.Int64 // when the last tick ended (Unix ns): the server's liveness check reads it
	emptySince int64        // the tick the room last became empty
	duration   int64        // ticks the match lasts, 0: until everybody leaves
	emptyTicks int64        // ticks a room may stay empty
	// A room a join created (byJoin) that nobody has played in closes after
	// unplayedTicks empty; it is played once a player has had its inputs
	// applied on unplayedTicks ticks. A room the operator opened, or asked
	// for after a join created it (OpenRoom), always waits emptyTicks.
	byJoin        atomic.Bool
	played        bool
	unplayedTicks int64
	// release frees the room in its creator's count of rooms (package
	// limits) when the room leaves the server; nil for the operator's.
	release func()
	// tally is every player's part in the match by user id, over all its
	// connections: the members' stats are folded in when they leave.
	tally map[string]*results.Player
	order []string // users in the order they first joined

	world protocol.State // this tick's world, shared by every client's snapshot
	// sender writes the sealed snapshots (nil without the sealed channel);
	// sealing is the batch of the tick's being filled, encoded the buffer a
	// sealed snapshot is encoded into.
	sender   *snapshotSender
	sealing  *channel.Batch
	encoded  []byte
	snapTime time.Time // when this tick's snapshots go out
	// rec records the match (record.dir; nil: not recorded) into the file
	// recording names.
	rec       *replay.Recorder
	recording string
	stats     roomCounters
	seed      uint64 // the match's spread seed, told to its clients

	// What the server adds to a client's round trip to bound the view lag
	// it grants (besides the client's interpolation delay), in ticks: a
	// snapshot interval, a tick of the server's phase, and the jitter
	// tolerance. The round trip the room measures holds the tick a client
	// may keep a snapshot before its next input; QUIC's, taken until the
	// first sample, does not, and gets that tick added.
	lagSlack float64
	// rttMargin is how far the round trip a client's acknowledgements
	// show may exceed QUIC's own estimate before it is capped there: the
	// tick a client may hold a snapshot before the input that acknowledges
	// it, and lagcomp.rtt_margin.
	rttMargin    time.Duration
	inputTimeout int64 // ticks without an input before a player loses its seat

	// seats is the seat rule (input_coverage), checked every seats.Step()
	// ticks on each player's ecs.InputQueue; the checks also mark the room
	// played.
	seats  coverage.Rule
	queues generic.Map[ecs.InputQueue]

	// Objects (projectiles, shields) get ids from a room-wide sequence, so
	// the ids of objects created together are close and cost one byte in a
	// snapshot; objIDs maps an entity index (and generation) to its id.
	objIDs []objID
	nextID uint32

	// Component access and queries, built once.
	players     *generic.Filter6[ecs.Player, ecs.Team, ecs.Transform, ecs.Health, ecs.Life, ecs.InputQueue]
	projectiles *generic.Filter6[ecs.Projectile, ecs.Velocity, ecs.Shot, ecs.Owner, ecs.Team, ecs.LagCompensated]
	shields     *generic.Filter3[ecs.Shield, ecs.Owner, ecs.Team]
	body        generic.Map8[ecs.Transform, ecs.Health, ecs.Life, ecs.InputQueue, ecs.Arsenal, ecs.ViewLag, ecs.Velocity, ecs.Motion]
}

type roomCounters struct {
	tickTime  time.Duration // the last tick's
	tickTotal time.Duration
	overruns  uint64
}

type objID struct {
	gen uint32
	id  uint32 // 0: none yet
}

// objectID returns the wire id of a projectile or shield: assigned on first
// sight from the room's sequence, above every player id.
func (r *room) objectID(e ecs.Entity) uint32 {
	i := int(e.ID())
	for i >= len(r.objIDs) {
		r.objIDs = append(r.objIDs, objID{})
	}
	o := &r.objIDs[i]
	if o.id == 0 || o.gen != e.Generation() {
		r.nextID++
		if r.nextID < firstObjectID {
			r.nextID = firstObjectID
		}
		*o = objID{gen: e.Generation(), id: r.nextID}
	}
	return o.id
}

// firstObjectID keeps object ids clear of player ids in logs and tools
// (the sections are separate on the wire, so they could overlap).
const firstObjectID = 1 << 24

// member is a player in a room, with what the room knows of its client.
type member struct {
	sess   *session
	log    zerolog.Logger // the session's: room, player, name
	entity ecs.Entity
	id     uint32
	user   string // the stable user id (its token's; the name in open mode)
	name   string
	team   uint8

	ring        [protocol.Baselines]protocol.State // what the client knows if it got each recent snapshot
	sentAt      [protocol.Baselines]time.Time      // when each went out
	acked       uint32                             // the newest snapshot the client acknowledged, NoTick
	rtt         roundTrip                          // from snapshots to the inputs that acknowledge them
	rttObserved time.Time                          // when rtt last went into rewind_client_rtt_seconds
	quicRTT     roundTrip                          // QUIC's estimate with the latest packet (session's quicRTT)
	lagBound    float64                            // the view lag the latest packet's arrival allows, beyond its input lead, ticks
	// The round trip its acknowledgements show has been capped at QUIC's
	// estimate since cappedSince (zero: the latest packet's was not), with
	// the latest capped packet at cappedAt; cappedFor is how long in all,
	// flagged once a run reached rttDisagreement.
	cappedSince, cappedAt time.Time
	cappedFor             time.Duration
	flagged               bool
	newestInput           int64          // the newest input tick of the latest packet
	lastInput             int64          // the room tick the newest input was queued at (or the join's)
	interp                float64        // the interpolation delay granted at join, ticks
	kicked                bool           // being disconnected
	target                protocol.State // the world without the member itself, reused

	// The clock the client steers by: the newest input tick received, and
	// the smallest margin of an input's first arrival since the last
	// snapshot (protocol.SnapshotHeader.Margin).
	received   int64
	margin     float64
	marginTick int64
	hasMargin  bool
	// halved: the session's flow control found the path bad, and the
	// client gets every other snapshot.
	halved  bool
	covered coverage.Player // its record for the seat rule
	// confirms are the hits to repeat in snapshots until acknowledged.
	confirms []pendingConfirm

	stats PlayerStats
}

// pendingConfirm is a hit confirmation and the first snapshot it went in.
type pendingConfirm struct {
	protocol.HitConfirm
	sentIn uint32 // NoTick: not yet sent
}

// maxPendingConfirms bounds the confirmations waiting for an
// acknowledgement; the oldest give way (the control stream still has them).
const maxPendingConfirms = 32

type msgKind uint8

const (
	msgJoin msgKind = iota + 1
	msgLeave
	msgStats
)

type roomMsg struct {
	kind   msgKind
	sess   *session
	who    *identity // with a join
	interp uint16    // with a join: the interpolation delay declared, ms
	stats  chan RoomStats
}

func newRoom(s *Server, id string) (*room, error) {
	c := &s.cfg
	sc := systems.DefaultConfig()
	sc.TickRate = c.TickRate
	sc.LagComp = c.LagCompConfig()
	sc.FriendlyFire = c.Match.FriendlyFire
	sc.EyeHeight, sc.CrouchEyeHeight = c.Match.EyeHeight, c.Match.CrouchEyeHeight
	sc.RespawnTicks = c.Match.RespawnTicks
	sc.InvulnerableTicks = c.Match.InvulnerableTicks
	sc.Kinds, sc.Catalog = c.registry(), s.catalog
	sc.Level, sc.Bounds, sc.KillVolumes = s.level.mesh, s.level.level.Bounds, s.level.kill
	sc.PoseScale = protocol.PosScale // rewind to the positions clients were sent
	var seed [8]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("server: room %s: spread seed: %w", id, err)
	}
	sc.SpreadSeed = binary.BigEndian.Uint64(seed[:])
	sim, err := systems.New(sc)
	if err != nil {
		return nil, err
	}
	r := &room{
		id: id, srv: s, log: s.log.With().Str("room", id).Logger(), sim: sim, cfg: c,
		snap: int64(c.TickRate / c.SnapshotRate), seed: sc.SpreadSeed,
		tickEvery: time.Second / time.Duration(c.TickRate), tickStart: time.Now(),
		lagSlack:     float64(c.TickRate/c.SnapshotRate) + 1 + c.ticks(c.LagComp.ViewLagTolerance),
		rttMargin:    time.Second/time.Duration(c.TickRate) + c.LagComp.RTTMargin,
		inputTimeout: int64(math.Ceil(c.ticks(c.InputTimeout))),
		inbox:        make(chan roomMsg, 256), stop: make(chan struct{}), done: make(chan struct{}),
		bySess: map[*session]*member{}, byEnt: map[ecs.Entity]*member{}, nextTeam: 1,
		opened:        time.Now(),
		duration:      int64(math.Ceil(c.ticks(c.Match.Duration))),
		emptyTicks:    int64(math.Ceil(c.ticks(c.Match.EmptyTimeout))),
		unplayedTicks: int64(math.Ceil(c.ticks(min(c.Match.UnplayedTimeout, c.Match.EmptyTimeout)))),
		queues:        generic.NewMap[ecs.InputQueue](sim.World),
		tally:         map[string]*results.Player{},
		players:       generic.NewFilter6[ecs.Player, ecs.Team, ecs.Transform, ecs.Health, ecs.Life, ecs.InputQueue](),
		projectiles:   generic.NewFilter6[ecs.Projectile, ecs.Velocity, ecs.Shot, ecs.Owner, ecs.Team, ecs.LagCompensated](),
		shields:       generic.NewFilter3[ecs.Shield, ecs.Owner, ecs.Team](),
		body:          generic.NewMap8[ecs.Transform, ecs.Health, ecs.Life, ecs.InputQueue, ecs.Arsenal, ecs.ViewLag, ecs.Velocity, ecs.Motion](sim.World),
	}
	r.seats = coverage.NewRule(c.InputCoverage, int64(math.Ceil(c.ticks(c.InputCoverageWindow))))
	r.players.Register(sim.World)
	r.projectiles.Register(sim.World)
	r.shields.Register(sim.World)
	r.lastTick.Store(r.opened.UnixNano())
	if s.writer != nil {
		r.sender = newSnapshotSender(s.writer, s.m)
		r.encoded = make([]byte, 0, protocol.SnapshotBufferSize)
	}
	if c.Record.Dir != "" {
		r.record(sc)
	}
	return r, nil
}

// record starts the match's recording. A recording that cannot start (a
// full disk, a permission) is logged and counted; the match plays on
// without it.
func (r *room) record(sc systems.Config) {
	c := r.cfg
	setup, err := replay.NewSetup(sc, r.srv.level.level)
	if err == nil {
		setup.Room, setup.Started = r.id, r.opened.UTC().Format(time.RFC3339Nano)
		for n := range 10 { // a name already taken (a room id reused within the millisecond)
			r.recording = replay.MatchFile(c.Record.Dir, r.id, r.opened, n)
			r.rec, err = replay.NewRecorder(replay.RecorderConfig{Path: r.recording, Setup: setup, FlushInterval: c.Record.FlushInterval})
			if !errors.Is(err, os.ErrExist) {
				break
			}
		}
	}
	if err != nil {
		r.rec, r.recording = nil, ""
		r.srv.m.recordings[recordFailed].Inc()
		r.log.Error().Err(err).Msg("match not recorded")
		return
	}
	r.log.Info().Str("file", r.recording).Msg("recording")
}

// closeRecording writes the recording's end (why the match ended, and its
// result) and closes it, off the room's goroutine: it waits for the disk.
func (r *room) closeRecording(why endReason, result []byte) {
	if r.rec == nil {
		return
	}
	rec, m, log := r.rec, r.srv.m, r.log.With().Str("file", r.recording).Logger()
	rec.End(why.String(), result)
	r.srv.wg.Add(1)
	go func() {
		defer r.srv.wg.Done()
		err := rec.Close()
		dropped := rec.Dropped()
		m.recordingDropped.Add(float64(dropped))
		switch {
		case err != nil:
			m.recordings[recordFailed].Inc()
			log.Error().Err(err).Msg("recording failed: the file replays up to the error")
		case dropped > 0:
			m.recordings[recordIncomplete].Inc()
			log.Warn().Int64("ticks_dropped", dropped).Msg("recording incomplete: the disk fell behind")
		default:
			m.recordings[recordComplete].Inc()
			log.Info().Msg("recording closed")
		}
	}()
}

// netID is an entity's id on the wire: its index and generation (unique
// within the room while the entity exists, and for 4096 reuses of its index
// after), never 0.
func netID(e ecs.Entity) uint32 { return ecs.WireID(e) }

func (r *room) run() {
	defer r.srv.wg.Done()
	defer close(r.done)
	if r.sender != nil {
		r.srv.wg.Add(1)
		go func() {
			defer r.srv.wg.Done()
			r.sender.run()
		}()
		defer r.sender.close()
	}
	r.log.Info().Msg("room open")
	ticker := time.NewTicker(time.Second / time.Duration(r.cfg.TickRate))
	defer ticker.Stop()
	for {
		select {
		case <-r.stop:
			r.finish(r.why)
			return
		case m := <-r.inbox:
			r.handle(m)
		case scheduled := <-ticker.C:
			// A ticker's value is the time it was due: how late the tick
			// starts is how far the process is behind.
			r.srv.m.tickLateness.Observe(time.Since(scheduled).Seconds())
			r.tick()
			r.lastTick.Store(time.Now().UnixNano())
			now := r.sim.Now()
			if r.duration > 0 && now >= r.duration {
				r.finish(endFinished)
				return
			}
			if len(r.members) == 0 {
				limit, why := r.emptyTicks, endEmpty
				if r.unplayed() {
					limit, why = r.unplayedTicks, endUnplayed
				}
				if (now-r.emptySince >= limit || r.srv.draining.Load()) && r.srv.closeRoomIfIdle(r, why) {
					r.finish(why)
					return
				}
			}
		}
	}
}

// endReason is why a match ended.
type endReason uint8

const (
	endFinished     endReason = iota + 1 // its duration ran out
	endEmpty                             // nobody was left for match.empty_timeout
	endDrainTimeout                      // the server drained and the match did not finish in time
	endShutdown                          // the server stopped
	endUnplayed                          // a join created it, and it was left empty before anybody played (match.unplayed_timeout)
)

func (e endReason) String() string {
	return [...]string{"", "finished", "empty", "drain_timeout", "shutdown", "unplayed"}[e]
}

// unplayed reports whether the room is a join's that nobody has played in
// yet; only the room's goroutine may ask.
func (r *room) unplayed() bool { return r.byJoin.Load() && !r.played }

// end asks the room to finish at once, for why; it returns at once.
func (r *room) end(why endReason) {
	r.endOnce.Do(func() {
		r.why = why
		close(r.stop)
	})
}

// join asks the room to take the session's player and waits for the answer;
// false when the connection or the room went away first.
func (r *room) join(se *session, who *identity, interp uint16) (joinReply, bool) {
	select {
	case r.inbox <- roomMsg{kind: msgJoin, sess: se, who: who, interp: interp}:
	case <-r.done:
		r.srv.joinDone(r)
		return joinReply{}, false
	case <-se.conn.Context().Done():
		r.srv.joinDone(r)
		return joinReply{}, false
	}
	select {
	case rep := <-se.reply:
		return rep, true
	case <-r.done:
		return joinReply{}, false
	}
}

// leave tells the room the session is gone.
func (r *room) leave(se *session) {
	select {
	case r.inbox <- roomMsg{kind: msgLeave, sess: se}:
	case <-r.done:
	}
}

func (r *room) handle(m roomMsg) {
	switch m.kind {
	case msgJoin:
		r.srv.joinDone(r)
		m.sess.reply <- r.admit(m.sess, m.who, m.interp)
	case msgLeave:
		if mem := r.bySess[m.sess]; mem != nil {
			r.remove(mem)
		}
	case msgStats:
		m.stats <- r.statsNow()
	}
}

// admit seats a player, or says why not. A user already in the room (a
// reconnection, with a fresh token) takes its seat over; in open mode a
// name already in the room is refused. A team holds at most half the room
// (rounded up); team 0 goes to the smaller team.
func (r *room) admit(se *session, who *identity, interpMS uint16) joinReply {
	refuse := func(code uint8, reason string) joinReply {
		return joinReply{reject: &protocol.Reject{Code: code, Reason: reason}}
	}
	// The seat this join takes over (a user has one at most): it counts as
	// free below, and is given up only once the join is admitted.
	var old *member
	for _, mem := range r.members {
		switch {
		case who.token && mem.user == who.user:
			old = mem
		case !who.token && mem.name == who.name:
			return refuse(protocol.RejectNameTaken, "name: "+who.name+" is already in room "+r.id)
		}
	}
	n, seated := [3]int{}, 0
	for _, mem := range r.members {
		if mem != old {
			n[mem.team]++
			seated++
		}
	}
	if seated >= r.cfg.MaxPlayers {
		return refuse(protocol.RejectFull, "room "+r.id+" is full")
	}
	perTeam := (r.cfg.MaxPlayers + 1) / 2
	team := who.team
	if team == 0 {
		team = 1
		if n[2] < n[1] {
			team = 2
		}
	}
	if n[team] >= perTeam {
		return refuse(protocol.RejectTeamFull, fmt.Sprintf("team %d already has %d of the room's %d players", team, n[team], r.cfg.MaxPlayers))
	}
	classIndex, err := r.sim.Catalog.Class(who.class)
	if err != nil {
		return refuse(protocol.RejectBadJoin, "class: "+err.Error())
	}
	loadout, _ := r.sim.Catalog.Loadout(who.class)
	cl := &r.sim.Catalog.Classes()[classIndex]
	class := cl.Name
	if old != nil {
		r.srv.m.kicked[kickReplaced].Inc()
		r.kick(old, protocol.CloseReplaced, "replaced: the same user joined again on another connection")
		r.remove(old)
	}
	spawn := r.spawnPoint(team)
	c := r.cfg.Match
	spec := systems.PlayerSpec{Name: who.name, Team: team, Pos: spawn.Pos, Yaw: spawn.Yaw, Controlled: true, Health: c.Health,
		Hitbox: ecs.Hitbox{Radius: c.Radius, Height: c.Height, HeadHeight: c.HeadHeight, CrouchHeight: c.CrouchHeight},
		Class:  classIndex, Loadout: loadout}
	e := r.sim.SpawnPlayer(spec)
	r.rec.SpawnPlayer(spec, e)
	interp := min(time.Duration(interpMS)*time.Millisecond, r.cfg.LagComp.MaxInterpDelay)
	mem := &member{sess: se, entity: e, id: netID(e), user: who.user, name: who.name, team: team, acked: protocol.NoTick,
		newestInput: r.sim.Now() - 1, lastInput: r.sim.Now(), interp: r.cfg.ticks(interp), received: -1, covered: coverage.NewPlayer(),
		confirms: make([]pendingConfirm, 0, maxPendingConfirms)}
	mem.log = r.log.With().Uint32("player", mem.id).Str("name", who.name).Str("user", who.user).Logger()
	mem.stats = PlayerStats{ID: mem.id, User: who.user, Name: who.name, Team: team}
	if r.tally[who.user] == nil {
		r.tally[who.user] = &results.Player{UserID: who.user}
		r.order = append(r.order, who.user)
	}
	w := r.srv.welcome
	w.Player, w.Team, w.ServerTick = mem.id, team, uint32(r.sim.Now())
	w.SpreadSeed, w.InterpDelay = r.seed, uint16(interp.Milliseconds())
	w.Room, w.Name = r.id, who.name
	w.Spawn, w.SpawnYaw = spawn.Pos.Array(), protocol.QuantizeYaw(spawn.Yaw)
	w.Movement = movementInfo(&cl.Movement)
	w.Class = class
	for _, id := range loadout {
		w.Loadout = append(w.Loadout, uint8(id))
	}
	// Everybody learns of the newcomer; the newcomer of everybody.
	for _, other := range r.members {
		r.event(other, protocol.Event{Kind: protocol.EventJoined, Tick: uint32(r.sim.Now()), Player: mem.id, Team: team, Name: who.name})
		r.event(mem, protocol.Event{Kind: protocol.EventJoined, Tick: uint32(r.sim.Now()), Player: other.id, Team: other.team, Name: other.name})
	}
	r.members = append(r.members, mem)
	r.bySess[se], r.byEnt[e] = mem, mem
	r.srv.m.players.Inc()
	r.srv.agones.playerJoined(who.user)
	return joinReply{welcome: w, room: r}
}

// spawnPoint returns where a newcomer of team appears, and which way it
// faces: the level's spawns of the team in turn, by how many of the team
// are in the room (on the built-in arena, its players spread along the
// team's end).
func (r *room) spawnPoint(team uint8) level.Spawn {
	n := 0
	for _, mem := range r.members {
		if mem.team == team {
			n++
		}
	}
	return r.srv.level.spawn(team, n)
}

// remove takes a member out of the room: its entity, its seat, its tally.
func (r *room) remove(mem *member) {
	r.markPlayed(r.queues.Get(mem.entity).Used)
	r.sim.Despawn(mem.entity)
	r.rec.Despawn(mem.entity)
	delete(r.bySess, mem.sess)
	delete(r.byEnt, mem.entity)
	r.members = slices.DeleteFunc(r.members, func(x *member) bool { return x == mem })
	r.fold(mem)
	r.srv.m.players.Dec()
	r.srv.agones.playerLeft(mem.user)
	if len(r.members) == 0 {
		r.emptySince = r.sim.Now()
	}
	for _, other := range r.members {
		r.event(other, protocol.Event{Kind: protocol.EventLeft, Tick: uint32(r.sim.Now()), Player: mem.id})
	}
}

// fold adds a member's part in the match to its user's tally.
func (r *room) fold(mem *member) {
	t := r.tally[mem.user]
	t.Name, t.Team = mem.name, mem.team
	t.Kills += mem.stats.Kills
	t.Deaths += mem.stats.Deaths
	t.Hits += mem.stats.Hits
	t.NoDamage += mem.stats.NoDamage
	t.Clamped += mem.stats.Clamped
	t.RTTDisagreements += mem.stats.RTTDisagreements
	t.RTTCapped += mem.cappedFor.Seconds()
	mem.stats = PlayerStats{ID: mem.id, User: mem.user, Name: mem.name, Team: mem.team}
}

// applyInputs queues a packet's inputs and records its acknowledgement. Each
// input is bounded by what the server measured when it arrived: an honest
// client was rendering no earlier than the arrival tick minus the round
// trip, its interpolation delay, a snapshot interval, two ticks, and the
// jitter tolerance (docs/protocol.md, "View lag"); a claim beyond is cut.
func (r *room) applyInputs(mem *member, m *inputMsg) {
	p := &m.input
	now := r.sim.Now()
	mem.halved = m.halved
	slack := r.lagSlack
	if mem.halved {
		slack += float64(r.snap) // snapshots come half as often
	}
	// The round trip: from a snapshot leaving to the first input that
	// acknowledges it, which holds the client's wait for its next tick (a
	// tick of the slack that QUIC's round trip, before the first sample,
	// leaves out).
	if a := p.SnapshotAck; a != protocol.NoTick && (mem.acked == protocol.NoTick || a > mem.acked) && a < uint32(now) {
		if i := r.ringIndex(a); mem.ring[i].Tick == a {
			mem.rtt.add(m.at.Sub(mem.sentAt[i]))
			if m.at.Sub(mem.rttObserved) >= netSample {
				r.srv.m.clientRTT.Observe(mem.rtt.srtt.Seconds())
				mem.rttObserved = m.at
			}
		}
		mem.acked = a
	}
	rtt := r.grantedRTT(mem, m)
	if mem.rtt.n == 0 {
		slack++
	}
	earliest := float64(now) - r.cfg.ticks(rtt) - mem.interp - slack
	mem.lagBound = float64(now) - earliest
	// The margin of the first arrival of the packet's first new input: how
	// long before the server simulates its tick it came (the room simulates
	// tick now at tickStart + one tick).
	if newest := int64(p.Newest); newest > mem.received {
		first := max(mem.received+1, int64(p.Tick(0)))
		margin := float64(first-now) + (r.tickStart.Add(r.tickEvery).Sub(m.at)).Seconds()*float64(r.cfg.TickRate)
		if !mem.hasMargin || margin < mem.margin {
			mem.margin, mem.marginTick, mem.hasMargin = margin, first, true
		}
		mem.received = newest
	}
	for i := 0; i < p.Count; i++ {
		q := &p.Inputs[i]
		in := q.Value(int64(p.Tick(i)))
		in.Earliest = earliest
		v := r.sim.QueueInput(mem.entity, in)
		r.rec.Input(mem.entity, in, v)
		r.srv.m.inputs[v].Inc()
		mem.stats.Inputs[v]++
		if v == systems.InputQueued || v == systems.InputLate {
			mem.lastInput = now
		}
	}
	// The lead the client steers by: its latest packet's newest input (a
	// maximum would stick after the client's clock jumps back).
	mem.newestInput = int64(p.Newest)
}

// grantedRTT is the round trip the view-lag bound of a packet's inputs
// takes: the one the room measures from the client's acknowledgements, but
// no more than QUIC's own estimate (its smoothed round trip plus twice its
// deviation, as the room bounds its own) plus rttMargin, so that delaying
// acknowledgements alone buys nothing; QUIC's until the room's first
// sample. A client whose estimates disagree for rttDisagreement without a
// break is counted once: a fake-lag signature.
func (r *room) grantedRTT(mem *member, m *inputMsg) time.Duration {
	mem.quicRTT = m.quicRTT
	if mem.rtt.n == 0 {
		return m.quicRTT.bound()
	}
	rtt, limit := mem.rtt.bound(), m.quicRTT.bound()+r.rttMargin
	if !m.quicSampled || rtt <= limit {
		mem.cappedSince = time.Time{}
		return rtt
	}
	if mem.cappedSince.IsZero() {
		mem.cappedSince = m.at
	} else {
		mem.cappedFor += m.at.Sub(mem.cappedAt)
	}
	mem.cappedAt = m.at
	if !mem.flagged && m.at.Sub(mem.cappedSince) >= rttDisagreement {
		mem.flagged = true
		mem.stats.RTTDisagreements++
		r.srv.m.rttDisagreements.Inc()
		mem.log.Info().Dur("acked_rtt", rtt).Dur("quic_rtt", m.quicRTT.bound()).
			Msg("round trips disagree: the acknowledgements' exceed QUIC's; the view lag granted follows QUIC's")
	}
	return limit
}

// rttDisagreement is how long a player's two round-trip estimates must
// disagree without a break before it is counted: QUIC samples the round
// trip only when it sends an ack-eliciting packet (an event, a keep-alive),
// so after a path slows down (a mobile handover's spike of a second or
// two) its estimate follows a few seconds late.
const rttDisagreement = 5 * time.Second

// roundTrip smooths a client's round-trip samples as TCP does (RFC 6298).
type roundTrip struct {
	srtt, rttvar time.Duration
	n            int
}

func (rt *roundTrip) add(s time.Duration) {
	s = max(s, 0)
	if rt.n == 0 {
		rt.srtt, rt.rttvar = s, s/2
	} else {
		d := rt.srtt - s
		if d < 0 {
			d = -d
		}
		rt.rttvar = (3*rt.rttvar + d) / 4
		rt.srtt = (7*rt.srtt + s) / 8
	}
	rt.n++
}

// bound is the round trip the view-lag bound takes: the smoothed round
// trip plus twice its mean deviation.
func (rt *roundTrip) bound() time.Duration { return rt.srtt + 2*rt.rttvar }

func (r *room) tick() {
	start := time.Now()
	// The inputs that came since the last tick, before tickStart moves: an
	// input's margin is measured to the start of the tick it came before.
	for _, mem := range r.members {
		for i, in := 0, mem.sess.inputs.take(); i < len(in); i++ {
			r.applyInputs(mem, &in[i])
		}
	}
	r.tickStart = start
	r.sim.Step()
	r.rec.Step(r.sim.Now()-1, r.sim.Events)
	r.events()
	if r.sim.Now()%r.snap == 0 {
		r.snapshots()
	}
	d := time.Since(start)
	r.stats.tickTime = d
	r.stats.tickTotal += d
	m := r.srv.m
	m.tickSeconds.Observe(d.Seconds())
	if d > time.Second/time.Duration(r.cfg.TickRate) {
		m.tickOverruns.Inc()
		r.stats.overruns++
	}
	st := r.sim.Stats().Last
	m.rewinds.Observe(float64(st.Rewinds))
	m.buckets.Observe(float64(st.Buckets))
	r.kickIdle()
	if r.sim.Now()%r.seats.Step() == 0 {
		r.checkSeats()
	}
}

// kickIdle frees the seats of players that sent no input for the input
// timeout: a connection that keeps QUIC alive without playing holds nothing.
func (r *room) kickIdle() {
	now := r.sim.Now()
	for _, mem := range r.members {
		if !mem.kicked && now-mem.lastInput > r.inputTimeout {
			r.srv.m.kicked[kickIdle].Inc()
			r.kick(mem, protocol.CloseIdle, idleReason(r.cfg.InputTimeout))
		}
	}
}

func idleReason(d time.Duration) string { return "no input for " + d.String() }

// checkSeats applies the seat rule (package coverage): a seat is held by
// playing. A player whose inputs the room did not have in time for too
// many of the last window's ticks loses its seat, as an idle player does
// (close code 5). The check also marks the room played.
func (r *room) checkSeats() {
	now := r.sim.Now()
	for _, mem := range r.members {
		used := r.queues.Get(mem.entity).Used
		r.markPlayed(used)
		if missed, ticks, broken := r.seats.Check(&mem.covered, now, used); broken && !mem.kicked {
			r.srv.m.kicked[kickCoverage].Inc()
			r.kick(mem, protocol.CloseIdle, coverageReason(missed, ticks, r.cfg.InputCoverage, r.cfg.InputCoverageWindow))
		}
	}
}

func coverageReason(missed, ticks int64, share float64, window time.Duration) string {
	return fmt.Sprintf("too few inputs: none in time for %d of the last %d ticks; a seat needs them for %g%% of every %v",
		missed, ticks, 100*share, window)
}

// markPlayed marks the room played once a player has had its inputs
// applied on unplayedTicks ticks (used of them).
func (r *room) markPlayed(used uint64) {
	if !r.played && used >= uint64(r.unplayedTicks) {
		r.played = true
	}
}

// events sends the tick's game events: a hit to its shooter (hit confirmed)
// and its target, as a Hit when it dealt damage and a NoDamage when it did
// not; kills and respawns to everybody. Shots fired with less view lag than
// claimed are counted by reason.
func (r *room) events() {
	ev := r.sim.Events
	m := r.srv.m
	for i := range ev.Shots {
		s := &ev.Shots[i]
		if s.Result != ecs.ResultHit {
			continue
		}
		shooter, target := r.byEnt[s.Shooter], r.byEnt[s.Target]
		e := protocol.Event{Kind: protocol.EventHit, Tick: uint32(s.Tick), Player: netID(s.Shooter), Other: netID(s.Target),
			Shot: uint16(s.Shot), Weapon: uint8(s.Weapon), Damage: float32(s.Dealt),
			ViewTick: uint32(s.ViewTime.Tick), ViewFrac: uint16(min(s.ViewTime.Frac*65536, 65535))}
		if s.Head {
			e.Flags |= protocol.HitHead
		}
		if s.Splash {
			e.Flags |= protocol.HitSplash
		}
		if s.Streak {
			e.Flags |= protocol.HitStreak
		}
		if s.Dealt > 0 {
			m.hits[0].Inc()
			if shooter != nil {
				shooter.stats.Hits++
			}
		} else {
			e.Kind, e.Damage, e.Reason = protocol.EventNoDamage, float32(s.Damage), uint8(s.NoDamage)
			m.hits[s.NoDamage].Inc()
			if shooter != nil {
				shooter.stats.NoDamage++
			}
		}
		if shooter != nil {
			r.event(shooter, e)
			shooter.confirm(&e)
		}
		if target != nil && target != shooter {
			r.event(target, e)
		}
	}
	for _, k := range ev.Kills {
		weapon := uint8(k.Weapon)
		if k.Weapon == ecs.NoWeapon {
			weapon = protocol.KillByLevel
		} else if m := r.byEnt[k.Killer]; m != nil {
			m.stats.Kills++
		}
		if m := r.byEnt[k.Victim]; m != nil {
			m.stats.Deaths++
		}
		r.broadcast(protocol.Event{Kind: protocol.EventKill, Tick: uint32(k.Tick), Player: netID(k.Killer), Other: netID(k.Victim), Weapon: weapon})
	}
	for _, rj := range ev.Rejected {
		m.shotsRejected[rj.Reason].Inc()
		if m := r.byEnt[rj.Shooter]; m != nil {
			m.stats.Rejected++
		}
	}
	for _, s := range ev.Respawns {
		r.broadcast(protocol.Event{Kind: protocol.EventRespawn, Tick: uint32(s.Tick), Player: netID(s.Player), Pos: s.Pos.Array(),
			Yaw: protocol.QuantizeYaw(s.Yaw)})
	}
	for i := range ev.Clamps {
		c := &ev.Clamps[i]
		m.clamped[c.Reason].Inc()
		if mem := r.byEnt[c.Shooter]; mem != nil {
			mem.stats.Clamped++
			mem.log.Debug().Stringer("reason", c.Reason).Uint32("shot", c.Shot).Uint16("weapon", c.Weapon).
				Float64("claimed_ticks", c.Claimed).Float64("granted_ticks", c.Granted).Int64("tick", c.Tick).Msg("view lag clamped")
		}
	}
}

func (r *room) broadcast(e protocol.Event) {
	for _, m := range r.members {
		r.event(m, e)
	}
}

// event queues an event for a member; a client whose queue is full is not
// reading its control stream and is disconnected.
func (r *room) event(m *member, e protocol.Event) {
	if m.sess.queueEvent(e) {
		return
	}
	r.srv.m.eventsDropped.Inc()
	if !m.kicked {
		r.srv.m.kicked[kickSlow].Inc()
		r.kick(m, protocol.CloseSlow, "control stream not read")
	}
}

// kick closes a member's connection with a code and reason; its session then
// leaves the room. Closing writes to the network: never on the room's
// goroutine.
func (r *room) kick(m *member, code quic.ApplicationErrorCode, reason string) {
	m.kicked = true
	m.log.Info().Str("reason", reason).Msg("kicked")
	closes := r.sealCloses(code, reason, m)
	r.srv.wg.Add(1)
	go func() {
		defer r.srv.wg.Done()
		r.writeCloses(closes)
		m.sess.conn.CloseWithError(code, reason)
	}()
}

// closeCopies is how many sealed Close datagrams go before a connection's
// CONNECTION_CLOSE: on the sealed channel a client sends QUIC packets only
// for its keep-alive, too rarely for QUIC to send a lost close again
// (docs/protocol.md, "Close").
const closeCopies = 3

// sealCloses seals the Close datagram, closeCopies times, for each of mems
// on the sealed channel; nil when none is. The room seals (it owns its
// sealers' sequence numbers); writeCloses writes, off its goroutine.
func (r *room) sealCloses(code quic.ApplicationErrorCode, reason string, mems ...*member) *channel.Batch {
	if r.sender == nil {
		return nil
	}
	var b *channel.Batch
	var payload []byte
	for _, m := range mems {
		peer := m.sess.peer.Load()
		if !m.sess.sealed || peer == nil {
			continue
		}
		if b == nil {
			b = new(channel.Batch)
			payload = protocol.AppendClose(nil, protocol.Close{Code: uint8(code), Reason: reason})
		}
		for range closeCopies {
			b.Add(peer, payload)
		}
	}
	return b
}

// writeCloses writes what sealCloses sealed (nil: nothing).
func (r *room) writeCloses(b *channel.Batch) {
	if b == nil {
		return
	}
	failed, _ := r.srv.writer.Write(b)
	for range failed {
		r.srv.m.drop(dropSendFailed)
	}
}

// snapshots encodes and queues every member's snapshot of the tick just
// simulated.
func (r *room) snapshots() {
	tick := r.sim.Now() - 1
	r.buildWorld(tick)
	if r.sender != nil {
		r.sealing = r.sender.batch() // nil: both in flight, the socket is stalled
	}
	r.snapTime = time.Now()
	for _, mem := range r.members {
		if mem.halved && (tick/r.snap)%2 == 1 {
			continue // flow control: every other snapshot
		}
		r.snapshot(mem, tick)
	}
	if r.sealing != nil {
		r.sender.send(r.sealing)
		r.sealing = nil
	}
}

// confirm queues a hit confirmation for the member's snapshots.
func (mem *member) confirm(e *protocol.Event) {
	if len(mem.confirms) == maxPendingConfirms {
		copy(mem.confirms, mem.confirms[1:])
		mem.confirms = mem.confirms[:maxPendingConfirms-1]
	}
	c := protocol.HitConfirm{Tick: e.Tick, Target: e.Other, Shot: e.Shot, Flags: e.Flags, Damage: e.Damage}
	if e.Kind == protocol.EventNoDamage {
		c.Reason = e.Reason
	}
	mem.confirms = append(mem.confirms, pendingConfirm{HitConfirm: c, sentIn: protocol.NoTick})
}

// putConfirms drops the confirmations the client acknowledged (it got a
// snapshot they were in) and puts the oldest others in hdr.
func (mem *member) putConfirms(hdr *protocol.SnapshotHeader) {
	kept := mem.confirms[:0]
	for _, c := range mem.confirms {
		if c.sentIn != protocol.NoTick && mem.acked != protocol.NoTick && c.sentIn <= mem.acked {
			continue
		}
		kept = append(kept, c)
	}
	mem.confirms = kept
	hdr.NConfirms = min(len(kept), protocol.MaxConfirms)
	for i := range hdr.NConfirms {
		hdr.Confirms[i] = kept[i].HitConfirm
		if kept[i].sentIn == protocol.NoTick {
			kept[i].sentIn = hdr.Tick
		}
	}
}

func byID(a, b protocol.Entity) int {
	switch {
	case a.ID < b.ID:
		return -1
	case a.ID > b.ID:
		return 1
	}
	return 0
}

// buildWorld quantises the world as every client may see it.
func (r *room) buildWorld(tick int64) {
	w := &r.world
	w.Tick = uint32(tick)
	w.Players, w.Objects = w.Players[:0], w.Objects[:0]
	// A remote player is shown alive exactly when it has a hitbox in the
	// history frame of this tick: what lag compensation rewinds to. (A death
	// or respawn during the tick's Damage stage shows from the next tick, as
	// it enters the history.)
	q := r.players.Query(r.sim.World)
	for q.Next() {
		_, team, tf, h, life, _ := q.Get()
		e := q.Entity()
		s := protocol.EntityState{Kind: protocol.KindPlayer, Team: team.ID, Flags: protocol.TeleportFlags(life.Teleports),
			Health: uint8(min(math.Ceil(h.Current), 255)), Yaw: protocol.QuantizeYaw(tf.Yaw), Pitch: protocol.QuantizePitch(tf.Pitch),
			Pos: protocol.QuantizeVec(tf.Pos)}
		if pose, ok := r.sim.History.PoseAt(tick, e); ok {
			s.Flags |= protocol.FlagAlive
			if pose.Crouched {
				s.Flags |= protocol.FlagCrouched
			}
			s.Pos = protocol.QuantizeVec(pose.Pos)
		}
		w.Players = append(w.Players, protocol.Entity{ID: netID(e), State: s})
	}
	pq := r.projectiles.Query(r.sim.World)
	for pq.Next() {
		p, _, shot, owner, team, lc := pq.Get()
		if lc.Done {
			continue
		}
		// Start is when a projectile that took one step a tick would have been
		// fired to have taken its steps by now: its firing tick in shooter
		// time, earlier for one that caught up. The client's formula holds for
		// both, and the state never changes in flight.
		w.Objects = append(w.Objects, protocol.Entity{ID: r.objectID(pq.Entity()), State: protocol.EntityState{
			Kind: protocol.KindProjectile, Team: team.ID, Owner: netID(owner.Entity), Weapon: uint8(shot.Weapon),
			Start: uint32(max(tick-int64(p.Steps)+1, 0)), Pos: protocol.QuantizeVec(p.Origin), Vel: protocol.QuantizeVec(p.Launch)}})
	}
	sq := r.shields.Query(r.sim.World)
	for sq.Next() {
		sh, owner, team := sq.Get()
		w.Objects = append(w.Objects, protocol.Entity{ID: r.objectID(sq.Entity()), State: protocol.EntityState{
			Kind: protocol.KindShield, Team: team.ID, Owner: netID(owner.Entity), Start: uint32(max(sh.Expires, 0)),
			Pos: protocol.QuantizeVec(sh.Box.Min), Vel: protocol.QuantizeVec(sh.Box.Max.Sub(sh.Box.Min))}})
	}
	slices.SortFunc(w.Players, byID)
	slices.SortFunc(w.Objects, byID)
}

func (r *room) ringIndex(tick uint32) int { return protocol.BaselineSlot(tick, r.snap) }

func (r *room) snapshot(mem *member, tick int64) {
	var buf []byte
	var peer *channel.Peer
	if mem.sess.sealed {
		if peer = mem.sess.peer.Load(); peer == nil {
			return // its sealed channel opens with the Welcome, just after the join
		}
		if r.sealing != nil {
			buf = r.encoded
		}
	} else {
		buf = mem.sess.takeBuffer()
	}
	if buf == nil {
		r.srv.m.drop(dropSendQueue)
		mem.stats.SnapshotsDropped++
		return
	}
	tf, h, life, queue, arsenal, lag, vel, mo := r.body.Get(mem.entity)
	hdr := protocol.SnapshotHeader{Tick: uint32(tick), Baseline: protocol.NoTick, InputAck: protocol.NoTick,
		InputLead: int8(min(max(mem.newestInput-tick, -127), 127)),
		Own: protocol.OwnState{Flags: protocol.OwnFlags(!life.Dead, mo.Crouched, mo.JumpHeld), Pos: tf.Pos.Array(), Vel: vel.V.Array(),
			Health: float32(h.Current), Shots: arsenal.Fired}}
	r.srv.m.viewLag.Observe(lag.Ticks / float64(r.cfg.TickRate))
	if queue.Applied >= 0 {
		hdr.InputAck = uint32(queue.Applied)
	}
	hdr.Own.NSlots = min(arsenal.Count, protocol.MaxSlots)
	for i := range hdr.Own.NSlots {
		w := &arsenal.Slots[i]
		hdr.Own.Slots[i] = protocol.WeaponSlot{Ready: uint32(max(w.Ready, 0)), Ammo: uint16(min(max(w.Ammo, 0), math.MaxUint16)),
			Reloading: w.Reloading, Reloaded: uint32(max(w.Reloaded, 0))}
	}
	hdr.Interval = uint8(min(r.snap, 127))
	if mem.halved {
		hdr.Interval *= 2 // every other snapshot (snapshots)
	}
	hdr.Margin = protocol.NoMargin
	if mem.hasMargin {
		hdr.Margin = int16(min(max(math.Round(mem.margin*256), math.MinInt16+1), math.MaxInt16))
		hdr.MarginTick = uint32(mem.marginTick)
	}
	mem.putConfirms(&hdr)
	var base *protocol.State
	if a := mem.acked; a != protocol.NoTick && r.ringIndex(a) != r.ringIndex(hdr.Tick) {
		if b := &mem.ring[r.ringIndex(a)]; b.Tick == a {
			base, hdr.Baseline = b, a
		}
	}
	mem.target.Tick = hdr.Tick
	mem.target.Players = mem.target.Players[:0]
	for _, p := range r.world.Players {
		if p.ID != mem.id {
			mem.target.Players = append(mem.target.Players, p)
		}
	}
	mem.target.Objects = r.world.Objects
	known := &mem.ring[r.ringIndex(hdr.Tick)]
	d := protocol.AppendSnapshot(buf[:0], &hdr, base, &mem.target, known)
	if peer != nil {
		r.sealing.Add(peer, d)
		r.encoded = d
	} else if !mem.sess.queueSnapshot(d) {
		known.Tick = protocol.NoTick // never sent: not a baseline
		r.srv.m.drop(dropSendQueue)
		mem.stats.SnapshotsDropped++
		return
	}
	mem.hasMargin = false
	mem.sentAt[r.ringIndex(hdr.Tick)] = r.snapTime
	r.srv.m.dgOut.Inc()
	r.srv.m.snapshotBytes.Observe(float64(len(d)))
	r.srv.m.bytesOut.Add(float64(len(d)))
	mem.stats.Snapshots++
	mem.stats.SnapshotBytes += uint64(len(d))
	if base == nil {
		mem.stats.FullSnapshots++
	}
}

// finish ends the match: the room leaves the server, every client is told
// why its connection closes, and the match's result is written (results
// file, log) before the room's goroutine returns.
func (r *room) finish(why endReason) {
	// Counted before the room leaves the registry: whoever sees it gone
	// (the admin API, a test) sees its match counted.
	r.srv.m.matches[why].Inc()
	r.srv.mu.Lock()
	r.srv.removeRoomLocked(r, why)
	r.srv.mu.Unlock()
	code, reason := quic.ApplicationErrorCode(protocol.CloseShutdown), "server shutting down"
	switch why {
	case endFinished:
		code, reason = protocol.CloseMatchOver, "match over"
	case endDrainTimeout:
		reason = "server shutting down: the match did not finish within drain_timeout"
	}
	for _, mem := range r.members {
		r.fold(mem)
		r.srv.m.players.Dec()
		r.srv.agones.playerLeft(mem.user)
	}
	res := r.result(why)
	// The whole result goes into the log line too: log shipping keeps it
	// where the results file may not outlive its pod.
	line, err := json.Marshal(res)
	if err != nil {
		line = []byte("null")
	}
	r.log.Info().Str("reason", why.String()).Int64("ticks", res.Ticks).Float64("duration_seconds", res.Duration).
		RawJSON("result", line).Msg("room closed")
	if w := r.srv.results; w != nil {
		if err := w.Write(res); err != nil {
			r.log.Error().Err(err).Msg("match result not written")
		}
	}
	r.closeRecording(why, line)
	r.srv.agones.roomClosed(r.id)
	// Closing writes to the network and waits: not on the room's goroutine.
	// The sealed Close datagrams go first, then each CONNECTION_CLOSE.
	closes := r.sealCloses(code, reason, r.members...)
	var sent sync.WaitGroup
	sent.Add(1)
	r.srv.wg.Add(1)
	go func() {
		defer r.srv.wg.Done()
		defer sent.Done()
		r.writeCloses(closes)
	}()
	for _, mem := range r.members {
		r.srv.wg.Add(1)
		go func() {
			defer r.srv.wg.Done()
			sent.Wait()
			mem.sess.conn.CloseWithError(code, reason)
		}()
	}
	r.members = nil
}

// result is the match's result as it ends.
func (r *room) result(why endReason) *results.Match {
	now := time.Now()
	lc := r.cfg.LagCompConfig()
	res := &results.Match{MatchID: r.id, Started: r.opened.UTC(), Ended: now.UTC(), Duration: now.Sub(r.opened).Seconds(),
		Reason: why.String(), Ticks: r.sim.Now(), TickRate: r.cfg.TickRate, Players: []results.Player{},
		LagComp: results.LagComp{WindowTicks: lc.WindowTicks, MaxUnlag: lc.MaxUnlag(), WindowSeconds: float64(lc.WindowTicks) / float64(r.cfg.TickRate), MaxUnlagSeconds: lc.MaxUnlag() / float64(r.cfg.TickRate),
			ViewLagTolerance: r.cfg.LagComp.ViewLagTolerance.Seconds(), MaxInterpDelay: r.cfg.LagComp.MaxInterpDelay.Seconds(),
			ViewResolution: lc.ViewResolution, Bucketing: lc.Bucketing}}
	for _, user := range r.order {
		res.Players = append(res.Players, *r.tally[user])
	}
	return res
}
