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
	clamped       counters[ecs.ClampReason] // shots granted less view lag than claimed
	viewLag       prometheus.Histogram
	hits          counters[ecs.NoDamageReason] // hits registered: [0] dealt damage, else why none
	disputed      prometheus.Counter           // hits that dealt damage and were disputed: not in hits[0]
	kicked        counters[kickReason]
	snapshotBytes prometheus.Histogram // its _sum is the snapshot bytes sent
	eventsDropped prometheus.Counter

	resultsWriteErrors prometheus.Counter // match results results.file did not take

	dgIn             prometheus.Counter             // inputs received (the only type a client sends)
	dgOut            prometheus.Counter             // snapshots sent
	dropped          counters[dropReason]           // datagrams dropped
	inputs           counters[systems.InputVerdict] // inputs by verdict
	rejected         map[uint8]prometheus.Counter   // joins refused, by protocol reject code
	shotsRejected    counters[ecs.RejectReason]
	matches          counters[endReason] // matches ended
	clientRTT        prometheus.Histogram
	clientLoss       prometheus.Histogram
	flowHalved       prometheus.Counter          // clients whose snapshot rate flow control halved
	rttDisagreements prometheus.Counter          // players whose acknowledgements' round trip exceeded QUIC's
	migrations       prometheus.Counter          // sealed-channel address changes
	paths            counters[channel.PathEvent] // steps of new addresses' validations
	channels         map[uint8]prometheus.Counter

	recordings       counters[recordOutcome] // match recordings closed
	recordingDropped prometheus.Counter      // ticks recordings missed (the disk fell behind)
}

// counters are a labelled metric's counters by the values of an enum K,
// each made with its label when the metrics are. A value without one (a
// value added to K but not to the list the metrics are made from) counts
// nothing: a room's tick never indexes past them.
type counters[K ~uint8] []prometheus.Counter

// newCounters makes vec's counters for values, labelled by label.
func newCounters[K ~uint8](vec *prometheus.CounterVec, label func(K) string, values ...K) counters[K] {
	var c counters[K]
	for _, k := range values {
		for int(k) >= len(c) {
			c = append(c, nil)
		}
		c[k] = vec.WithLabelValues(label(k))
	}
	return c
}

// span is the values from first to last.
func span[K ~uint8](first, last K) []K {
	var v []K
	for k := first; k <= last; k++ {
		v = append(v, k)
	}
	return v
}

// Inc counts one of k.
func (c counters[K]) Inc(k K) {
	if int(k) < len(c) && c[k] != nil {
		c[k].Inc()
	}
}

// recordOutcome is how a match recording ended.
type recordOutcome uint8

// Outcomes of a match recording.
const (
	recordComplete   recordOutcome = iota // every tick written
	recordIncomplete                      // the writer fell behind: it stops at the first tick dropped
	recordFailed                          // it could not be created, or a write failed
	recordOutcomes                        // the number of outcomes
)

func (o recordOutcome) String() string { return label(recordLabels[:], o) }

var recordLabels = [recordOutcomes]string{recordComplete: "complete", recordIncomplete: "incomplete", recordFailed: "failed"}

// kickReason is why the server disconnects a player.
type kickReason uint8

// Why the server disconnects a player.
const (
	kickIdle     kickReason = iota // no input for input_timeout
	kickCoverage                   // inputs for too few ticks (input_coverage)
	kickSlow                       // its control stream was not read
	kickReplaced                   // the same user joined again
	kickReasons                    // the number of reasons
)

func (k kickReason) String() string { return label(kickLabels[:], k) }

var kickLabels = [kickReasons]string{kickIdle: "idle", kickCoverage: "coverage", kickSlow: "slow", kickReplaced: "replaced"}

// dropReason is why the server dropped a datagram: a protocol.Reason (it
// did not decode), a channel.Reason (a sealed packet that did not open, or
// a QUIC packet the Demux could not queue), or the server's own.
type dropReason uint8

// Why a datagram is dropped.
const (
	dropNone dropReason = iota // kept
	// protocol.Reason's.
	dropTruncated
	dropOversized
	dropVersion
	dropType
	dropValue
	dropBaseline
	dropUnknown // an error of no known reason
	// channel.Reason's.
	dropSealedShort
	dropSealedVersion
	dropSealedSession
	dropSealedAuth
	dropSealedReplay
	dropSealedQueue
	dropQUICQueue
	dropSealedUnknown
	// The server's own.
	dropFlood      // over max_datagram_rate
	dropInbox      // the session's input slot was full
	dropSendQueue  // the client's send queue was full, or its room's batches all in flight
	dropSendFailed // the network refused a sealed snapshot
	dropWrongType  // a server-to-client type sent by a client
	dropReasons    // the number of reasons
)

func (d dropReason) String() string { return label(dropLabels[:], d) }

// dropLabels are the reasons' labels: protocol.Reason's and
// channel.Reason's own, and the server's.
var dropLabels = [dropReasons]string{dropNone: "none",
	dropTruncated: "truncated", dropOversized: "oversized", dropVersion: "version", dropType: "type", dropValue: "value",
	dropBaseline: "baseline", dropUnknown: "unknown",
	dropSealedShort: "sealed_short", dropSealedVersion: "sealed_version", dropSealedSession: "sealed_session",
	dropSealedAuth: "sealed_auth", dropSealedReplay: "sealed_replay", dropSealedQueue: "sealed_queue", dropQUICQueue: "quic_queue",
	dropSealedUnknown: "sealed_unknown",
	dropFlood:         "flood", dropInbox: "room_busy", dropSendQueue: "send_queue", dropSendFailed: "send_failed", dropWrongType: "direction"}

// protocolDrops and channelDrops map the packages' reasons to the
// server's (a test holds their labels equal).
var (
	protocolDrops = [...]dropReason{protocol.ReasonShort: dropTruncated, protocol.ReasonLong: dropOversized,
		protocol.ReasonVersion: dropVersion, protocol.ReasonType: dropType, protocol.ReasonValue: dropValue,
		protocol.ReasonBaseline: dropBaseline}
	channelDrops = [...]dropReason{channel.ReasonShort: dropSealedShort, channel.ReasonMarker: dropSealedVersion,
		channel.ReasonSession: dropSealedSession, channel.ReasonAuth: dropSealedAuth, channel.ReasonReplay: dropSealedReplay,
		channel.ReasonQueue: dropSealedQueue, channel.ReasonQUICQueue: dropQUICQueue}
)

// protocolDrop is the drop reason of a datagram that did not decode.
func protocolDrop(r protocol.Reason) dropReason {
	if int(r) < len(protocolDrops) && protocolDrops[r] != dropNone {
		return protocolDrops[r]
	}
	return dropUnknown
}

// channelDrop is the drop reason of a packet the sealed channel refused.
func channelDrop(r channel.Reason) dropReason {
	if int(r) < len(channelDrops) && channelDrops[r] != dropNone {
		return channelDrops[r]
	}
	return dropSealedUnknown
}

// label is labels[k], or "invalid" past them.
func label[K ~uint8](labels []string, k K) string {
	if int(k) < len(labels) {
		return labels[k]
	}
	return "invalid"
}

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
		Help: "Hits lag compensation registered, by outcome (each hit once): damage; disputed (damage dealt to a victim that, in its own present at the server tick, was out of the shooter's line of sight or the weapon's reach, and that the shot would not have hit without rewinding: a hit its victim sees as shot behind cover, docs/tuning.md); or why none was dealt (invulnerable, dead, zero)."}, []string{"outcome"})
	kicked := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_players_kicked_total",
		Help: "Players the server disconnected, by reason: idle (no input for input_timeout), coverage (inputs in time for too few ticks: input_coverage), slow (control stream not read), replaced (the same user joined again)."}, []string{"reason"})
	m.snapshotBytes = f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rewind_snapshot_bytes",
		Help:    "Size of snapshot datagrams sent. Its _sum is the bytes sent: divide its rate by rewind_players for bytes per client per second.",
		Buckets: prometheus.LinearBuckets(50, 100, 12)})).(prometheus.Histogram)
	m.resultsWriteErrors = f(prometheus.NewCounter(prometheus.CounterOpts{Name: "rewind_results_write_errors_total",
		Help: "Match results not written to results.file (the write or its sync failed: a full or broken disk). The result is still in the log line room closed."})).(prometheus.Counter)
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
		Help: "Matches that ended, by reason: finished, empty, drain_timeout, shutdown, unplayed (a room a join created, left before anybody played), interrupted (a drain its operator cut short: a second Ctrl-C)."}, []string{"reason"})
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
	m.paths = newCounters(paths, channel.PathEvent.String, span(channel.PathChallenged, channel.PathAbandoned)...)
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
	m.recordings = newCounters(recordings, recordOutcome.String, span(recordComplete, recordOutcomes-1)...)
	m.recordingDropped = f(prometheus.NewCounter(prometheus.CounterOpts{Name: "rewind_recording_ticks_dropped_total",
		Help: "Ticks match recordings missed because their writer fell behind the room (a recording stops at its first)."})).(prometheus.Counter)
	reg.MustRegister(in, out, drop, inputs, rejected, shots, clamped, hits, kicked, matches, buildInfo, recordings)
	m.rejected = map[uint8]prometheus.Counter{}
	for _, code := range protocol.RejectCodes {
		m.rejected[code] = rejected.WithLabelValues(protocol.RejectLabel(code))
	}
	m.matches = newCounters(matches, endReason.String, span(endFinished, endReasons-1)...)
	m.clamped = newCounters(clamped, ecs.ClampReason.String, span(ecs.ClampMeasured, ecs.ClampFuture)...)
	m.hits = newCounters(hits, hitLabel, span(0, ecs.NoDamageZero)...)
	m.disputed = hits.WithLabelValues("disputed")
	m.kicked = newCounters(kicked, kickReason.String, span(kickIdle, kickReasons-1)...)
	m.shotsRejected = newCounters(shots, ecs.RejectReason.String, span(ecs.RejectCooldown, ecs.RejectNotCarried)...)
	m.dgIn = in.WithLabelValues("input")
	m.dgOut = out.WithLabelValues("snapshot")
	m.dropped = newCounters(drop, dropReason.String, span(dropNone+1, dropReasons-1)...)
	m.inputs = newCounters(inputs, systems.InputVerdict.String, span(systems.InputQueued, systems.InputVerdicts-1)...)
	return m
}

// hitLabel labels a registered hit: damage, or why none was dealt.
func hitLabel(r ecs.NoDamageReason) string {
	if r == 0 {
		return "damage"
	}
	return r.String()
}

// reject counts a refused join.
func (m *metrics) reject(code uint8) {
	if c, ok := m.rejected[code]; ok {
		c.Inc()
	}
}

// drop counts a dropped datagram.
func (m *metrics) drop(reason dropReason) { m.dropped.Inc(reason) }
