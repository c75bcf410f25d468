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
	"github.com/rewind-gg/rewind/input"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/replication"
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

	tickStart time.Time // when the last tick began: the next begins a tick later

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
	// repl is the room's replication, each member's Client made by it;
	// sealer writes the sealed channel's snapshots (nil without it).
	repl   *replication.Replicator
	sealer *replication.Sealer
	// rec records the match (record.dir; nil: not recorded) into the file
	// recording names.
	rec       *replay.Recorder
	recording string
	stats     roomCounters
	seed      uint64 // the match's spread seed, told to its clients

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
	// repl is the client's replication: its baselines, round trips,
	// view-lag bound, margins, confirmations and snapshot channel.
	repl      *replication.Client
	lastInput int64           // the room tick the newest input was queued at (or the join's)
	kicked    bool            // being disconnected
	covered   coverage.Player // its record for the seat rule

	stats PlayerStats
}

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
	snap := int64(c.TickRate / c.SnapshotRate)
	repl, err := replication.New(replication.Config{TickRate: c.TickRate, Interval: snap,
		ViewLagTolerance: c.LagComp.ViewLagTolerance, RTTMargin: c.LagComp.RTTMargin, MaxInterpDelay: c.LagComp.MaxInterpDelay})
	if err != nil {
		return nil, fmt.Errorf("server: room %s: %w", id, err)
	}
	r := &room{
		id: id, srv: s, log: s.log.With().Str("room", id).Logger(), sim: sim, cfg: c,
		snap: snap, seed: sc.SpreadSeed, repl: repl, sealer: s.sealer(),
		tickStart:    time.Now(),
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
		r.srv.m.recordings.Inc(recordFailed)
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
			m.recordings.Inc(recordFailed)
			log.Error().Err(err).Msg("recording failed: the file replays up to the error")
		case dropped > 0:
			m.recordings.Inc(recordIncomplete)
			log.Warn().Int64("ticks_dropped", dropped).Msg("recording incomplete: the disk fell behind")
		default:
			m.recordings.Inc(recordComplete)
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
	if r.sealer != nil {
		r.srv.wg.Add(1)
		go func() {
			defer r.srv.wg.Done()
			r.sealer.Run()
		}()
		defer r.sealer.Close()
	}
	// The one line of a room's opening, whoever opened it: a join (a
	// token, or open development mode) or the operator (POST /rooms, an
	// Agones allocation).
	by := "operator"
	if r.byJoin.Load() {
		by = "join"
	}
	r.log.Info().Str("opened_by", by).Msg("room open")
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
	endInterrupted                       // the server was draining and its operator stopped it at once (ErrInterrupted)
	endReasons                           // the number of reasons (and one past the last)
)

func (e endReason) String() string { return label(endLabels[:], e) }

var endLabels = [endReasons]string{"", "finished", "empty", "drain_timeout", "shutdown", "unplayed", "interrupted"}

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
		r.srv.m.kicked.Inc(kickReplaced)
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
	interp := r.repl.Interp(interpMS)
	mem := &member{sess: se, entity: e, id: netID(e), user: who.user, name: who.name, team: team,
		lastInput: r.sim.Now(), covered: coverage.NewPlayer()}
	mem.repl = r.repl.NewClient(mem.id, interp, r.sim.Now(), se.snapshots)
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
	q := r.queues.Get(mem.entity)
	r.markPlayed(q.Used + q.LateRun)
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
	t.Disputed += mem.stats.Disputed
	t.DisputedTaken += mem.stats.DisputedTaken
	t.Clamped += mem.stats.Clamped
	t.RTTDisagreements += mem.stats.RTTDisagreements
	t.RTTCapped += mem.repl.Stats().Capped.Seconds()
	mem.stats = PlayerStats{ID: mem.id, User: mem.user, Name: mem.name, Team: mem.team}
}

// applyInputs queues a packet's inputs, each bounded by what the server
// measured of the client when the packet arrived (replication.Client.OnInput:
// an input may claim a view time no earlier than earliest).
func (r *room) applyInputs(mem *member, pkt *replication.Packet) {
	now := r.sim.Now()
	arr := mem.repl.OnInput(pkt, now, r.tickStart)
	if arr.RTT > 0 {
		r.srv.m.clientRTT.Observe(arr.RTT.Seconds())
	}
	if arr.Flagged {
		mem.stats.RTTDisagreements++
		r.srv.m.rttDisagreements.Inc()
		st := mem.repl.Stats()
		mem.log.Info().Dur("acked_rtt", st.RTTBound).Dur("quic_rtt", st.QUICRTT+2*st.QUICDev).
			Msg("round trips disagree: the acknowledgements' exceed QUIC's; the view lag granted follows QUIC's")
	}
	p, earliest := &pkt.Input, arr.Earliest
	for i := 0; i < p.Count; i++ {
		q := &p.Inputs[i]
		in := q.Value(int64(p.Tick(i)))
		in.Earliest = earliest
		if in.Buttons&input.ButtonFire != 0 {
			// The snapshots its client drew the shot's world between.
			in.ViewTime.Back, in.ViewTime.Span = mem.repl.SnapshotsAround(in.ViewTime)
		}
		v := r.sim.QueueInput(mem.entity, in)
		r.rec.Input(mem.entity, in, v)
		r.srv.m.inputs.Inc(v)
		if int(v) < len(mem.stats.Inputs) {
			mem.stats.Inputs[v]++
		}
		if v == systems.InputQueued || v == systems.InputLate {
			mem.lastInput = now
		}
	}
}

func (r *room) tick() {
	start := time.Now()
	// The inputs that came since the last tick, before tickStart moves: an
	// input's margin is measured to the start of the tick it came before.
	for _, mem := range r.members {
		for i, in := 0, mem.sess.inputs.Take(); i < len(in); i++ {
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
			r.srv.m.kicked.Inc(kickIdle)
			r.kick(mem, protocol.CloseIdle, idleReason(r.cfg.InputTimeout))
		}
	}
}

func idleReason(d time.Duration) string { return "no input for " + d.String() }

// checkSeats applies the seat rule (package coverage): a seat is held by
// playing. A player whose inputs the room did not have in time, or late
// enough to run (systems.InputLate: a stall, a clock that fell behind on a
// busy client), for too many of the last window's ticks loses its seat,
// as an idle player does (close code 5). The check also marks the room
// played.
func (r *room) checkSeats() {
	now := r.sim.Now()
	for _, mem := range r.members {
		q := r.queues.Get(mem.entity)
		used := q.Used + q.LateRun
		r.markPlayed(used)
		if missed, ticks, broken := r.seats.Check(&mem.covered, now, used); broken && !mem.kicked {
			r.srv.m.kicked.Inc(kickCoverage)
			r.kick(mem, protocol.CloseIdle, coverageReason(missed, ticks, r.cfg.InputCoverage, r.cfg.InputCoverageWindow))
		}
	}
}

func coverageReason(missed, ticks int64, share float64, window time.Duration) string {
	return fmt.Sprintf("too few inputs: none in time (or late enough to run) for %d of the last %d ticks; a seat needs them for %g%% of every %v",
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
			if shooter != nil {
				shooter.stats.Hits++
			}
			if s.Disputed {
				r.disputed(shooter, target, s)
			} else {
				m.hits.Inc(0)
			}
		} else {
			e.Kind, e.Damage, e.Reason = protocol.EventNoDamage, float32(s.Damage), uint8(s.NoDamage)
			m.hits.Inc(s.NoDamage)
			if shooter != nil {
				shooter.stats.NoDamage++
			}
		}
		if shooter != nil {
			r.event(shooter, e)
			shooter.repl.Confirm(&e)
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
		m.shotsRejected.Inc(rj.Reason)
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
		m.clamped.Inc(c.Reason)
		if mem := r.byEnt[c.Shooter]; mem != nil {
			mem.stats.Clamped++
			mem.log.Debug().Stringer("reason", c.Reason).Uint32("shot", c.Shot).Uint16("weapon", c.Weapon).
				Float64("claimed_ticks", c.Claimed).Float64("granted_ticks", c.Granted).Int64("tick", c.Tick).Msg("view lag clamped")
		}
	}
}

// disputed counts a disputed hit (ecs.ShotEvent.Disputed) for its shooter
// and its target (nil: no longer members), and logs it.
func (r *room) disputed(shooter, target *member, s *ecs.ShotEvent) {
	r.srv.m.disputed.Inc()
	if target != nil {
		target.stats.DisputedTaken++
	}
	if shooter != nil {
		shooter.stats.Disputed++
		shooter.log.Debug().Uint32("shot", s.Shot).Uint16("weapon", s.Weapon).Uint32("victim", netID(s.Target)).
			Int64("view_tick", s.ViewTime.Tick).Int64("tick", s.Tick).Msg("disputed hit")
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
		r.srv.m.kicked.Inc(kickSlow)
		r.kick(m, protocol.CloseSlow, "control stream not read")
	}
}

// kick closes a member's connection with a code and reason; its session then
// leaves the room. Closing writes to the network: never on the room's
// goroutine.
func (r *room) kick(m *member, code quic.ApplicationErrorCode, reason string) {
	m.kicked = true
	m.log.Info().Str("reason", reason).Msg("kicked")
	m.sess.closeWith(code, reason)
	closes := r.sealCloses(code, reason, m)
	r.srv.wg.Add(1)
	go func() {
		defer r.srv.wg.Done()
		r.writeCloses(closes)
		m.sess.conn.CloseWithError(code, reason)
	}()
}

// sealCloses seals the Close datagrams that go before mems' connections'
// CONNECTION_CLOSE (replication.Channel.AppendClose); nil when there are
// none. The room seals (it owns its sealers' sequence numbers);
// writeCloses writes, off its goroutine.
func (r *room) sealCloses(code quic.ApplicationErrorCode, reason string, mems ...*member) *channel.Batch {
	b := new(channel.Batch)
	payload := protocol.AppendClose(nil, protocol.Close{Code: uint8(code), Reason: reason})
	for _, m := range mems {
		m.sess.snapshots.AppendClose(b, payload)
	}
	if b.Len() == 0 {
		return nil
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
	r.sealer.Begin()
	at := time.Now()
	for _, mem := range r.members {
		if mem.repl.Due(tick) {
			r.snapshot(mem, at)
		}
	}
	r.sealer.Flush()
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

// snapshot sends a member its snapshot of r.world, sent at at.
func (r *room) snapshot(mem *member, at time.Time) {
	tf, h, life, queue, arsenal, lag, vel, mo := r.body.Get(mem.entity)
	hdr := protocol.SnapshotHeader{InputAck: protocol.NoTick,
		Own: protocol.OwnState{Flags: protocol.OwnFlags(!life.Dead, mo.Crouched, mo.JumpHeld), Pos: tf.Pos.Array(), Vel: vel.V.Array(),
			Health: float32(h.Current), Shots: arsenal.Fired}}
	if queue.Applied >= 0 {
		hdr.InputAck = uint32(queue.Applied)
	}
	hdr.Own.NSlots = min(arsenal.Count, protocol.MaxSlots)
	for i := range hdr.Own.NSlots {
		w := &arsenal.Slots[i]
		hdr.Own.Slots[i] = protocol.WeaponSlot{Ready: uint32(max(w.Ready, 0)), Ammo: uint16(min(max(w.Ammo, 0), math.MaxUint16)),
			Reloading: w.Reloading, Reloaded: uint32(max(w.Reloaded, 0))}
	}
	sent := mem.repl.Snapshot(&hdr, &r.world, at)
	switch sent.Drop {
	case replication.DropNotOpen, replication.DropNoBuffer:
	default: // a snapshot encoded: sent, or lost in a full queue
		r.srv.m.viewLag.Observe(lag.Ticks / float64(r.cfg.TickRate))
	}
	if sent.Drop.Lost() {
		r.srv.m.drop(dropSendQueue)
		mem.stats.SnapshotsDropped++
		return
	}
	if sent.Drop != replication.DropNone {
		return
	}
	r.srv.m.dgOut.Inc()
	r.srv.m.snapshotBytes.Observe(float64(sent.Bytes))
	mem.stats.Snapshots++
	mem.stats.SnapshotBytes += uint64(sent.Bytes)
	if sent.Full {
		mem.stats.FullSnapshots++
	}
}

// finish ends the match: the room leaves the server, every client is told
// why its connection closes, and the match's result is written (results
// file, log) before the room's goroutine returns.
func (r *room) finish(why endReason) {
	// Counted before the room leaves the registry: whoever sees it gone
	// (the admin API, a test) sees its match counted.
	r.srv.m.matches.Inc(why)
	r.srv.mu.Lock()
	r.srv.removeRoomLocked(r, why)
	r.srv.mu.Unlock()
	code, reason := quic.ApplicationErrorCode(protocol.CloseShutdown), "server shutting down"
	switch why {
	case endFinished:
		code, reason = protocol.CloseMatchOver, "match over"
	case endDrainTimeout:
		reason = "server shutting down: the match did not finish within drain_timeout"
	case endInterrupted:
		reason = "server shutting down: stopped by its operator"
	}
	for _, mem := range r.members {
		r.fold(mem)
		r.srv.m.players.Dec()
		r.srv.agones.playerLeft(mem.user)
		mem.sess.closeWith(code, reason)
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
			r.srv.m.resultsWriteErrors.Inc()
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
		p := r.tally[user]
		res.Players = append(res.Players, *p)
		res.Hits += p.Hits
		res.Disputed += p.Disputed
	}
	return res
}
