package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rewind-gg/rewind/channel"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/internal/buildinfo"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/systems"
)

// metrics are a server's Prometheus metrics, on a registry of its own (no
// globals: two servers in one process, as in tests, do not collide).
type metrics struct {
	reg *prometheus.Registry

	tickSeconds   prometheus.Histogram
	tickLateness  prometheus.Histogram
	tickOverruns  prometheus.Counter
	rooms         prometheus.Gauge
	players       prometheus.Gauge
	rewinds       prometheus.Histogram
	buckets       prometheus.Histogram
	clamped       [5]prometheus.Counter // shots granted less view lag than claimed, by ecs.ClampReason
	viewLag       prometheus.Histogram
	hits          [4]prometheus.Counter // hits registered: [0] dealt damage, else by ecs.NoDamageReason
	kicked        map[string]prometheus.Counter
	snapshotBytes prometheus.Histogram
	bytesOut      prometheus.Counter
	eventsDropped prometheus.Counter

	dgIn             prometheus.Counter                        // inputs received (the only type a client sends)
	dgOut            prometheus.Counter                        // snapshots sent
	dropped          map[string]prometheus.Counter             // datagrams dropped, by reason
	inputs           [systems.InputVerdicts]prometheus.Counter // inputs by verdict
	rejected         map[uint8]prometheus.Counter              // joins refused, by protocol reject code
	shotsRejected    map[ecs.RejectReason]prometheus.Counter
	matches          [6]prometheus.Counter // matches ended, by endReason
	clientRTT        prometheus.Histogram
	clientLoss       prometheus.Histogram
	flowHalved       prometheus.Counter                            // clients whose snapshot rate flow control halved
	rttDisagreements prometheus.Counter                            // players whose acknowledgements' round trip exceeded QUIC's
	migrations       prometheus.Counter                            // sealed-channel address changes
	paths            [channel.PathAbandoned + 1]prometheus.Counter // steps of new addresses' validations, by channel.PathEvent
	channels         map[uint8]prometheus.Counter

	recordings       [3]prometheus.Counter // match recordings closed, by outcome
	recordingDropped prometheus.Counter    // ticks recordings missed (the disk fell behind)
}

// Outcomes of a match recording.
const (
	recordComplete   = iota // every tick written
	recordIncomplete        // the writer fell behind: it stops at the first tick dropped
	recordFailed            // it could not be created, or a write failed
)

// Why the server disconnects a player.
const (
	kickIdle     = "idle"     // no input for input_timeout
	kickCoverage = "coverage" // inputs for too few ticks (input_coverage)
	kickSlow     = "slow"     // its control stream was not read
	kickReplaced = "replaced" // the same user joined again
)

// Drop reasons besides protocol.Reason's.
const (
	dropFlood      = "flood"       // over max_datagram_rate
	dropInbox      = "room_busy"   // the session's input slot was full
	dropSendQueue  = "send_queue"  // the client's send queue was full, or its room's batches all in flight
	dropSendFailed = "send_failed" // the network refused a sealed snapshot
	dropWrongType  = "direction"   // a server-to-client type sent by a client
)

func newMetrics(build buildinfo.Info) *metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := func(c prometheus.Collector) prometheus.Collector { reg.MustRegister(c); return c }
	m := &metrics{reg: reg}
	m.tickSeconds = f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rewind_tick_duration_seconds",
		Help: "Time to simulate one room tick, snapshots included.", Buckets: prometheus.ExponentialBuckets(10e-6, 2, 14)})).(prometheus.Histogram)
	m.tickLateness = f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rewind_tick_lateness_seconds",
		Help:    "How late a room tick started after its scheduled time: the process's scheduling delay, which grows when it holds more rooms than its cores can run.",
		Buckets: []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25}})).(prometheus.Histogram)
	m.tickOverruns = f(prometheus.NewCounter(prometheus.CounterOpts{Name: "rewind_tick_overruns_total",
		Help: "Room ticks that took longer than the tick interval."})).(prometheus.Counter)
	m.rooms = f(prometheus.NewGauge(prometheus.GaugeOpts{Name: "rewind_rooms", Help: "Open rooms."})).(prometheus.Gauge)
	m.players = f(prometheus.NewGauge(prometheus.GaugeOpts{Name: "rewind_players", Help: "Players in rooms."})).(prometheus.Gauge)
	m.rewinds = f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rewind_rewinds_per_tick",
		Help: "Travels to a past time per room tick.", Buckets: []float64{0, 1, 2, 4, 8, 12, 16, 24, 32, 64}})).(prometheus.Histogram)
	m.buckets = f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rewind_buckets_per_tick",
		Help: "Distinct view times per room tick.", Buckets: []float64{0, 1, 2, 4, 8, 12, 16, 24, 32, 64}})).(prometheus.Histogram)
	clamped := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_view_lag_clamped_total",
		Help: "Shots resolved with less view lag than their shooter claimed, by the bound that cut the claim: measured (beyond the server's measurement of the client), max_unlag (the room's cap), weapon (the weapon's max_rewind_ticks), future (a view time after the present)."},
		[]string{"reason"})
	m.viewLag = f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rewind_view_lag_seconds",
		Help:    "The view lag granted to players (how far behind the present they see remote entities), sampled once per snapshot per player.",
		Buckets: []float64{0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.6, 0.8, 1, 1.5}})).(prometheus.Histogram)
	hits := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_hits_total",
		Help: "Hits lag compensation registered, by outcome: damage, or why none was dealt (invulnerable, dead, zero)."}, []string{"outcome"})
	kicked := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_players_kicked_total",
		Help: "Players the server disconnected, by reason: idle (no input for input_timeout), coverage (inputs in time for too few ticks: input_coverage), slow (control stream not read), replaced (the same user joined again)."}, []string{"reason"})
	m.snapshotBytes = f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rewind_snapshot_bytes",
		Help: "Size of snapshot datagrams.", Buckets: prometheus.LinearBuckets(50, 100, 12)})).(prometheus.Histogram)
	m.bytesOut = f(prometheus.NewCounter(prometheus.CounterOpts{Name: "rewind_snapshot_bytes_total",
		Help: "Snapshot bytes sent (divide its rate by rewind_players for bytes per client per second)."})).(prometheus.Counter)
	m.eventsDropped = f(prometheus.NewCounter(prometheus.CounterOpts{Name: "rewind_events_dropped_total",
		Help: "Game events not queued because a client's control queue was full (the client is then disconnected)."})).(prometheus.Counter)
	in := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_datagrams_in_total", Help: "Datagrams received, by type."}, []string{"type"})
	out := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_datagrams_out_total", Help: "Datagrams sent, by type."}, []string{"type"})
	drop := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_datagrams_dropped_total", Help: "Datagrams dropped, by reason."}, []string{"reason"})
	inputs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_inputs_total",
		Help: "Inputs received, by what the room did with them."}, []string{"verdict"})
	rejected := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_joins_rejected_total",
		Help: "Joins and connections refused, by reason (the reject codes of docs/protocol.md)."}, []string{"reason"})
	matches := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_matches_total",
		Help: "Matches that ended, by reason: finished, empty, drain_timeout, shutdown, unplayed (a room a join created, left before anybody played)."}, []string{"reason"})
	m.clientRTT = f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rewind_client_rtt_seconds",
		Help:    "Clients' round trips as their rooms measure them (from a snapshot to the first input that acknowledges it, smoothed), sampled once a second per client.",
		Buckets: []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5}})).(prometheus.Histogram)
	m.clientLoss = f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rewind_client_loss_ratio",
		Help:    "Share of the server's packets to a client that QUIC declared lost, per second per client.",
		Buckets: []float64{0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1}})).(prometheus.Histogram)
	m.flowHalved = f(prometheus.NewCounter(prometheus.CounterOpts{Name: "rewind_flow_halved_total",
		Help: "Times flow control halved a client's snapshot rate (its path's loss or round trip reached datagrams.bad_loss or bad_rtt)."})).(prometheus.Counter)
	m.rttDisagreements = f(prometheus.NewCounter(prometheus.CounterOpts{Name: "rewind_rtt_disagreements_total",
		Help: "Players whose round trip measured from their acknowledgements exceeded QUIC's own estimate plus the margin (lagcomp.rtt_margin and a tick) for 3 s in all: counted once per connection. The view lag granted follows QUIC's; a client delaying its acknowledgements to buy rewind shows here."})).(prometheus.Counter)
	m.migrations = f(prometheus.NewCounter(prometheus.CounterOpts{Name: "rewind_client_migrations_total",
		Help: "Times a client's address changed on the sealed channel (NAT rebinding): the new address answered its path challenge."})).(prometheus.Counter)
	paths := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_path_validations_total",
		Help: "Steps of the validation of a client's new address on the sealed channel, by event: challenged (a challenge sent), withheld (a challenge not sent: it would have sent the address over 3 times the bytes it sent), validated (the address answered and got the snapshots), abandoned (no answer within 3 s: a client pointing its snapshots at another host, or a path that broke)."},
		[]string{"event"})
	reg.MustRegister(paths)
	for e := channel.PathChallenged; e <= channel.PathAbandoned; e++ {
		m.paths[e] = paths.WithLabelValues(e.String())
	}
	chans := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_joins_by_channel_total",
		Help: "Players admitted, by the datagram channel they got: sealed or quic."}, []string{"channel"})
	reg.MustRegister(chans)
	m.channels = map[uint8]prometheus.Counter{protocol.ChannelSealed: chans.WithLabelValues("sealed"), protocol.ChannelQUIC: chans.WithLabelValues("quic")}
	buildInfo := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rewind_build_info",
		Help: "Always 1; its labels say what is running: the version, VCS revision, Go version and wire protocol version."},
		[]string{"version", "revision", "goversion", "protocol"})
	buildInfo.WithLabelValues(build.Version, build.Revision, build.GoVersion, build.Protocol).Set(1)
	shots := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_shots_rejected_total",
		Help: "Shots the weapon rules refused (a client firing faster than allowed, without ammo, while reloading, or a weapon it does not carry), by reason."}, []string{"reason"})
	recordings := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_recordings_total",
		Help: "Match recordings closed (record.dir), by outcome: complete, incomplete (the disk fell behind and ticks were dropped: the file replays up to the first), failed (not created, or a write failed: the file replays up to the error)."},
		[]string{"outcome"})
	for i, o := range []string{"complete", "incomplete", "failed"} {
		m.recordings[i] = recordings.WithLabelValues(o)
	}
	m.recordingDropped = f(prometheus.NewCounter(prometheus.CounterOpts{Name: "rewind_recording_ticks_dropped_total",
		Help: "Ticks match recordings missed because their writer fell behind the room (a recording stops at its first)."})).(prometheus.Counter)
	reg.MustRegister(in, out, drop, inputs, rejected, shots, clamped, hits, kicked, matches, buildInfo, recordings)
	m.rejected = map[uint8]prometheus.Counter{}
	for _, code := range protocol.RejectCodes {
		m.rejected[code] = rejected.WithLabelValues(protocol.RejectLabel(code))
	}
	for _, e := range []endReason{endFinished, endEmpty, endDrainTimeout, endShutdown, endUnplayed} {
		m.matches[e] = matches.WithLabelValues(e.String())
	}
	for _, r := range []ecs.ClampReason{ecs.ClampMeasured, ecs.ClampMaxUnlag, ecs.ClampWeapon, ecs.ClampFuture} {
		m.clamped[r] = clamped.WithLabelValues(r.String())
	}
	m.hits[0] = hits.WithLabelValues("damage")
	for _, r := range []ecs.NoDamageReason{ecs.NoDamageInvulnerable, ecs.NoDamageDead, ecs.NoDamageZero} {
		m.hits[r] = hits.WithLabelValues(r.String())
	}
	m.kicked = map[string]prometheus.Counter{}
	for _, k := range []string{kickIdle, kickCoverage, kickSlow, kickReplaced} {
		m.kicked[k] = kicked.WithLabelValues(k)
	}
	m.shotsRejected = map[ecs.RejectReason]prometheus.Counter{}
	for _, r := range []ecs.RejectReason{ecs.RejectCooldown, ecs.RejectEmpty, ecs.RejectReloading, ecs.RejectNotCarried} {
		m.shotsRejected[r] = shots.WithLabelValues(r.String())
	}
	m.dgIn = in.WithLabelValues("input")
	m.dgOut = out.WithLabelValues("snapshot")
	m.dropped = map[string]prometheus.Counter{}
	for _, r := range []protocol.Reason{protocol.ReasonShort, protocol.ReasonLong, protocol.ReasonVersion, protocol.ReasonType, protocol.ReasonValue} {
		m.dropped[r.String()] = drop.WithLabelValues(r.String())
	}
	for r := channel.ReasonShort; r <= channel.ReasonQueue; r++ {
		m.dropped[r.String()] = drop.WithLabelValues(r.String())
	}
	for _, r := range []string{dropFlood, dropInbox, dropSendQueue, dropSendFailed, dropWrongType} {
		m.dropped[r] = drop.WithLabelValues(r)
	}
	for v := range m.inputs {
		m.inputs[v] = inputs.WithLabelValues(systems.InputVerdict(v).String())
	}
	return m
}

// reject counts a refused join.
func (m *metrics) reject(code uint8) {
	if c, ok := m.rejected[code]; ok {
		c.Inc()
	}
}

// drop counts a dropped datagram.
func (m *metrics) drop(reason string) {
	if c, ok := m.dropped[reason]; ok {
		c.Inc()
	}
}
