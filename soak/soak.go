package soak

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/bots"
	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/internal/starved"
	"github.com/rewind-gg/rewind/server"
)

// Config configures a soak.
type Config struct {
	// Rooms rooms of Players bots each.
	Rooms, Players int
	// Duration is how long the soak runs once the rooms are full, rounded
	// up to a whole number of Intervals: the last sample is its end.
	Duration time.Duration
	// Churn is how many bots leave a second, over all the rooms, each
	// replaced by a new bot in its room (the rooms in turn, the oldest bot
	// of the room first); 0: none.
	Churn float64
	// Interval is the time between samples.
	Interval time.Duration
	// Warmup is the time after the start before which samples are shown
	// but not compared: the server's and the bots' pools, caches and
	// buffers fill up first.
	Warmup time.Duration
	// Bounds are the growth the verdict allows.
	Bounds Bounds
	// Seed makes the bots' choices repeatable (bot n plays with Seed+n).
	Seed uint64
	// AimError is the bots' aim error, radians (bots.BotConfig).
	AimError float64
	// FillParallel is how many bots dial at once while the rooms fill:
	// a few, so that the handshakes do not take the CPU from the rooms.
	FillParallel int
	// Log is the server's log; the zero Logger logs nothing.
	Log zerolog.Logger
	// OnStart, if set, is called once the rooms are full; OnSample with
	// each sample as it is taken. Both run on Run's goroutine.
	OnStart  func(Start)
	OnSample func(Sample)
}

// Start is what a soak says once its rooms are full.
type Start struct {
	Server string        // the server's QUIC address
	Admin  string        // its admin HTTP address: /metrics, /rooms
	Joined int           // bots that joined
	Fill   time.Duration // how long the rooms took to fill
}

// DefaultConfig is the soak CI runs: 8 rooms of 12 bots for 60 s, a bot
// replaced every half second, a sample every 5 s after 15 s of warm-up.
func DefaultConfig() Config {
	return Config{Rooms: 8, Players: 12, Duration: time.Minute, Churn: 2, Interval: 5 * time.Second,
		Warmup: 15 * time.Second, Bounds: DefaultBounds(), Seed: 1, AimError: 0.03, FillParallel: 4}
}

// Soak runs a server under bots that come and go (see the package).
type Soak struct {
	cfg Config
}

// New checks the configuration and returns a soak; Run runs it.
func New(cfg Config) (*Soak, error) {
	bad := func(format string, args ...any) (*Soak, error) {
		return nil, fmt.Errorf("soak: config: "+format, args...)
	}
	switch {
	case cfg.Rooms < 1:
		return bad("rooms: %d is below 1", cfg.Rooms)
	case cfg.Players < 1 || cfg.Players > 250:
		return bad("players: %d is outside 1..250", cfg.Players)
	case cfg.Duration <= 0:
		return bad("duration: %v is not positive", cfg.Duration)
	case cfg.Interval <= 0:
		return bad("interval: %v is not positive", cfg.Interval)
	case cfg.Warmup < 0:
		return bad("warmup: %v is negative", cfg.Warmup)
	case !(cfg.Churn >= 0) || cfg.Churn > 1000:
		return bad("churn: %v is outside 0..1000 bots a second", cfg.Churn)
	case cfg.FillParallel < 1:
		return bad("fill parallel: %d is below 1", cfg.FillParallel)
	case cfg.Bounds.GoroutineSlack < 0:
		return bad("goroutine slack: %d is negative", cfg.Bounds.GoroutineSlack)
	case !(cfg.Bounds.HeapRatio >= 1) || math.IsInf(cfg.Bounds.HeapRatio, 0):
		return bad("heap ratio: %v is below 1", cfg.Bounds.HeapRatio)
	case cfg.Bounds.HeapWindow < 1:
		return bad("heap window: %d is below 1", cfg.Bounds.HeapWindow)
	}
	if n, warm := cfg.samples(); warm < 2 {
		return bad("duration %v, interval %v and warm-up %v make %d samples, %d after the warm-up: the growth checks need 2",
			cfg.Duration, cfg.Interval, cfg.Warmup, n, warm)
	}
	return &Soak{cfg: cfg}, nil
}

// samples returns how many samples a soak takes, and how many of them are
// warm: sample k (from 1) is taken at k intervals.
func (c *Config) samples() (n, warm int) {
	n = int((c.Duration + c.Interval - 1) / c.Interval)
	cold := int((c.Warmup+c.Interval-1)/c.Interval) - 1 // samples strictly before the warm-up
	return n, max(n-max(cold, 0), 0)
}

// serverConfig is the soak's server: loopback, open development mode (the
// bots need no tokens), its admin port on a free port, and per-source caps
// raised for the bots, which all come from 127.0.0.1.
func (c *Config) serverConfig() server.Config {
	cfg := server.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Admin.Listen = "127.0.0.1:0"
	cfg.Agones.Mode = "off"
	cfg.MaxRooms = max(cfg.MaxRooms, c.Rooms)
	// A new bot joins before the one it replaces leaves, and the server
	// sees a leave a moment after the client closed: two seats of headroom
	// (one on each team) keep a churned room from refusing the join.
	cfg.MaxPlayers = c.Players + 2
	l := &cfg.Limits
	l.HandshakesPerSource = max(l.HandshakesPerSource, 2*c.FillParallel+4)
	l.PlayersPerSource = max(l.PlayersPerSource, c.Rooms*(c.Players+2))
	l.RoomsPerSource = max(l.RoomsPerSource, c.Rooms)
	// The fill joins every bot in a few seconds (the burst); then the churn
	// and the bots that replace dropped ones, one at a time.
	l.JoinBurst = max(l.JoinBurst, c.Rooms*(c.Players+2))
	l.JoinsPerSecond = max(l.JoinsPerSecond, 2*c.Churn+float64(c.Rooms))
	return cfg
}

// dialTimeout bounds one bot's dial (QUIC handshake and join) on loopback.
const dialTimeout = 10 * time.Second

// statsTimeout bounds a question to the rooms (server.Stats).
const statsTimeout = 5 * time.Second

// bot is one bot of the soak.
type bot struct {
	name string
	room int
	team uint8
	c    *client.Client
	stop context.CancelFunc
	done chan struct{} // closed when Run has returned
	err  error         // Run's, once done is closed (or sent on drops)
}

// runner is one run of a soak.
type runner struct {
	cfg       Config
	srv       *server.Server
	rep       *Report
	rooms     [][]*bot // by room, the oldest first
	seq       int      // bots created
	next      int      // the room the next churn step replaces a bot of
	drops     chan *bot
	applied   applied
	start     time.Time
	last      Sample            // the previous sample (zero before the first)
	lastRooms map[string]uint64 // the rooms' inputs applied at the previous sample
	// starved tells the overruns a busy machine causes from those a slow
	// tick causes (Sample.Starved, Report.Verdict).
	starved *starved.Probe
}

// Run starts the server, fills the rooms and plays until Duration has
// passed (or ctx ends: the report says it was interrupted), then leaves
// and shuts the server down. The error is for a soak that could not run
// (its server did not start); whether it passed is the report's Verdict.
func (s *Soak) Run(ctx context.Context) (rep *Report, err error) {
	cfg := s.cfg
	scfg := cfg.serverConfig()
	srv, err := server.New(scfg, cfg.Log)
	if err != nil {
		return nil, fmt.Errorf("soak: server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("soak: server: %w", err)
	}
	r := &runner{cfg: cfg, srv: srv, rooms: make([][]*bot, cfg.Rooms), drops: make(chan *bot),
		applied: applied{last: map[string]uint64{}, rooms: map[string]uint64{}},
		rep: &Report{Rooms: cfg.Rooms, Players: cfg.Players, Churn: cfg.Churn, Duration: cfg.Duration,
			Warmup: cfg.Warmup, Bounds: cfg.Bounds, Admin: srv.AdminAddr().String()}}
	defer func() {
		// Every bot leaves first, so the server sees clean leaves; then the
		// server stops (it waits for every goroutine of its own).
		r.leaveAll()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if serr := srv.Shutdown(sctx); serr != nil && err == nil {
			err = fmt.Errorf("soak: server shutdown: %w", serr)
		}
	}()
	// The probe runs from the server's start, as its overrun counter does,
	// to the last sample.
	r.starved = starved.ForTicks(time.Second / time.Duration(scfg.TickRate))
	defer r.starved.Stop()
	fillStart := time.Now()
	if !r.fill(ctx) {
		r.rep.Interrupted = true
		return r.rep, nil
	}
	r.start = time.Now()
	if cfg.OnStart != nil {
		cfg.OnStart(Start{Server: srv.Addr().String(), Admin: r.rep.Admin, Joined: r.rep.Joins, Fill: r.start.Sub(fillStart)})
	}
	r.play(ctx)
	return r.rep, err
}

// play churns and samples until the last sample (or ctx ends).
func (r *runner) play(ctx context.Context) {
	n, _ := r.cfg.samples()
	sample := time.NewTicker(r.cfg.Interval)
	defer sample.Stop()
	// Churn step k (from 0) is due k + ½ periods after the start: halfway
	// between samples when the period divides the interval, so that no
	// sample sees a leave the server has yet to hear of.
	var churn <-chan time.Time
	var step *time.Timer
	var period time.Duration
	if r.cfg.Churn > 0 {
		period = time.Duration(float64(time.Second) / r.cfg.Churn)
		step = time.NewTimer(period / 2)
		defer step.Stop()
		churn = step.C
	}
	for k := 1; len(r.rep.Samples) < n; {
		select {
		case <-ctx.Done():
			r.rep.Interrupted = true
			return
		case <-sample.C:
			r.sample(ctx)
		case <-churn:
			r.churn(ctx)
			step.Reset(time.Until(r.start.Add(time.Duration(k)*period + period/2)))
			k++
		case b := <-r.drops:
			r.dropped(ctx, b)
		}
	}
}

// fill joins every room's bots, FillParallel at a time; false when ctx
// ended first.
func (r *runner) fill(ctx context.Context) bool {
	type result struct {
		b   *bot
		err error
	}
	results := make(chan result)
	sem := make(chan struct{}, r.cfg.FillParallel)
	total := r.cfg.Rooms * r.cfg.Players
	for i := range total {
		room, team, seq := i%r.cfg.Rooms, uint8(1+(i/r.cfg.Rooms)%2), r.nextSeq()
		go func() {
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				results <- result{err: ctx.Err()}
				return
			}
			b, err := r.dial(ctx, room, team, seq)
			results <- result{b, err}
		}()
	}
	for range total {
		res := <-results
		switch {
		case res.err == nil:
			r.rooms[res.b.room] = append(r.rooms[res.b.room], res.b)
			r.rep.Joins++
		case ctx.Err() == nil:
			r.joinFailed(res.err)
		}
	}
	return ctx.Err() == nil
}

func (r *runner) nextSeq() int { r.seq++; return r.seq }

// roomName is the id of room i.
func roomName(i int) string { return fmt.Sprintf("soak-%02d", i+1) }

// dial connects bot seq to a room, on a team, and starts it playing.
func (r *runner) dial(ctx context.Context, room int, team uint8, seq int) (*bot, error) {
	b := &bot{name: fmt.Sprintf("bot-%05d", seq), room: room, team: team, done: make(chan struct{})}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := client.Dial(dctx, client.Config{Addr: r.srv.Addr().String(), Room: roomName(room), Name: b.name, Team: team,
		ServerCertSHA256: r.srv.CertSHA256(),
		Input:            bots.NewBot(bots.BotConfig{AimError: r.cfg.AimError, Seed: r.cfg.Seed + uint64(seq)})})
	if err != nil {
		return nil, fmt.Errorf("%s to room %s: %w", b.name, roomName(room), err)
	}
	b.c = c
	// Not ctx: the soak decides when a bot leaves.
	bctx, stop := context.WithCancel(context.Background())
	b.stop = stop
	go func() {
		defer close(b.done)
		b.err = c.Run(bctx)
		if bctx.Err() == nil { // the server closed the connection
			if b.err == nil {
				b.err = errors.New("the client stopped")
			}
			select {
			case r.drops <- b:
			case <-bctx.Done():
			}
		}
	}()
	return b, nil
}

// leave closes a bot's client and waits for it to stop.
func (b *bot) leave() {
	b.stop()
	<-b.done
}

// leaveAll closes every bot, all at once.
func (r *runner) leaveAll() {
	for _, room := range r.rooms {
		for _, b := range room {
			b.stop()
		}
	}
	for _, room := range r.rooms {
		for _, b := range room {
			<-b.done
		}
	}
	r.rooms = make([][]*bot, len(r.rooms))
}

func (r *runner) joinFailed(err error) {
	r.rep.JoinFailures++
	if r.rep.JoinError == nil {
		r.rep.JoinError = err
	}
}

// churn is one churn step: the next room's oldest bot leaves and a new one
// joins in its place, on its team. The new bot joins first, so the room
// never runs short; the inputs the old one had applied are counted just
// before it leaves. A room short of bots (a join failed, or the server
// disconnected one) only gets a new one.
func (r *runner) churn(ctx context.Context) {
	room := r.next
	r.next = (r.next + 1) % r.cfg.Rooms
	bots := r.rooms[room]
	if len(bots) < r.cfg.Players {
		r.join(ctx, room, r.shortTeam(room))
		return
	}
	old := bots[0]
	if !r.join(ctx, room, old.team) {
		return // the old bot stays: the room keeps its players
	}
	r.observe(ctx)
	old.leave()
	// Delete, not a re-slice: the array behind the slice would keep the
	// bots that left (and their clients) until the next append moved it.
	r.rooms[room] = slices.Delete(r.rooms[room], 0, 1)
	r.rep.Leaves++
}

// join dials a new bot into a room; false when it failed (counted).
func (r *runner) join(ctx context.Context, room int, team uint8) bool {
	b, err := r.dial(ctx, room, team, r.nextSeq())
	if err != nil {
		if ctx.Err() == nil {
			r.joinFailed(err)
		}
		return false
	}
	r.rooms[room] = append(r.rooms[room], b)
	r.rep.Joins++
	return true
}

// shortTeam is the team with fewer of the room's bots.
func (r *runner) shortTeam(room int) uint8 {
	n := [3]int{}
	for _, b := range r.rooms[room] {
		n[b.team]++
	}
	if n[2] < n[1] {
		return 2
	}
	return 1
}

// dropped takes out a bot the server disconnected (counted against the
// verdict) and puts a new one in its place.
func (r *runner) dropped(ctx context.Context, b *bot) {
	r.rep.Dropped++
	if r.rep.DropError == nil {
		r.rep.DropError = fmt.Errorf("%s in room %s: %w", b.name, roomName(b.room), b.err)
	}
	b.leave()
	r.rooms[b.room] = slices.DeleteFunc(r.rooms[b.room], func(x *bot) bool { return x == b })
	r.rep.Leaves++
	r.join(ctx, b.room, b.team)
}

// observe asks the rooms for their players and counts the inputs they
// applied since the last look; the rooms' players, nil if they did not
// answer.
func (r *runner) observe(ctx context.Context) []server.RoomStats {
	sctx, cancel := context.WithTimeout(ctx, statsTimeout)
	defer cancel()
	st, err := r.srv.Stats(sctx)
	if err != nil {
		return nil
	}
	r.applied.observe(st)
	return st
}

// sample takes a sample and hands it to OnSample.
func (r *runner) sample(ctx context.Context) {
	// The goroutines first: gathering the metrics starts goroutines of
	// its own for a moment.
	s := Sample{At: time.Since(r.start), Goroutines: runtime.NumGoroutine(), Joins: r.rep.Joins, Leaves: r.rep.Leaves}
	s.Warm = s.At >= r.cfg.Warmup
	st := r.observe(ctx)
	for _, rs := range st {
		s.Players += len(rs.Players)
		if len(rs.Players) > 0 && r.applied.rooms[rs.ID] <= r.lastRooms[rs.ID] {
			s.Stalled = append(s.Stalled, rs.ID)
		}
	}
	r.lastRooms = maps.Clone(r.applied.rooms)
	if st == nil { // the rooms did not answer within statsTimeout: all stalled
		for i := range r.cfg.Rooms {
			s.Stalled = append(s.Stalled, roomName(i))
		}
	}
	s.Applied = r.applied.total
	if dt := (s.At - r.last.At).Seconds(); dt > 0 {
		s.AppliedRate = float64(s.Applied-r.last.Applied) / dt
	}
	s.HeapLive = liveHeap()
	if v, err := counter(r.srv.Registry(), "rewind_tick_overruns_total"); err == nil {
		s.Overruns = uint64(v)
	}
	s.Starved = r.starved.Late()
	r.last = s
	r.rep.Samples = append(r.rep.Samples, s)
	if r.cfg.OnSample != nil {
		r.cfg.OnSample(s)
	}
}

// liveHeap collects the garbage and returns the bytes of the heap's live
// objects: a soak's sample, not a hot path. Two collections: the first
// moves what sync.Pools hold to their victim caches, the second frees
// those, so the pools' contents (which come and go with the load of the
// moment) do not count.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	m := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(m)
	if m[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return m[0].Value.Uint64()
}

// counter sums the values of a counter of the registry.
func counter(g prometheus.Gatherer, name string) (float64, error) {
	mfs, err := g.Gather()
	if err != nil {
		return 0, fmt.Errorf("soak: gather: %w", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		v := 0.0
		for _, m := range mf.GetMetric() {
			v += m.GetCounter().GetValue()
		}
		return v, nil
	}
	return 0, fmt.Errorf("soak: no metric %s", name)
}

// applied counts the inputs the rooms applied, over players that come and
// go: the server counts per player present (PlayerStats.Applied), so the
// soak adds each player's growth between its looks, and looks just before
// a bot leaves.
type applied struct {
	last  map[string]uint64 // by player name (unique in a soak): Applied when last seen
	rooms map[string]uint64 // by room: inputs applied so far
	total uint64
}

func (a *applied) observe(st []server.RoomStats) {
	seen := make(map[string]bool, len(a.last))
	for _, rs := range st {
		for _, p := range rs.Players {
			d := p.Applied
			if prev, ok := a.last[p.Name]; ok && p.Applied >= prev {
				d -= prev
			}
			a.rooms[rs.ID] += d
			a.total += d
			a.last[p.Name] = p.Applied
			seen[p.Name] = true
		}
	}
	for name := range a.last {
		if !seen[name] {
			delete(a.last, name)
		}
	}
}
