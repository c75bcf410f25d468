package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/systems"
)

// metrics are a server's Prometheus metrics, on a registry of its own (no
// globals: two servers in one process, as in tests, do not collide).
type metrics struct {
	reg *prometheus.Registry

	tickSeconds   prometheus.Histogram
	tickOverruns  prometheus.Counter
	rooms         prometheus.Gauge
	players       prometheus.Gauge
	rewinds       prometheus.Histogram
	buckets       prometheus.Histogram
	clamped       prometheus.Counter
	snapshotBytes prometheus.Histogram
	bytesOut      prometheus.Counter
	eventsDropped prometheus.Counter

	dgIn          prometheus.Counter            // inputs received (the only type a client sends)
	dgOut         prometheus.Counter            // snapshots sent
	dropped       map[string]prometheus.Counter // datagrams dropped, by reason
	inputs        [5]prometheus.Counter         // inputs by verdict
	rejected      *prometheus.CounterVec        // joins refused, by reason
	shotsRejected map[ecs.RejectReason]prometheus.Counter
}

// Drop reasons besides protocol.Reason's.
const (
	dropFlood     = "flood"      // over max_datagram_rate
	dropInbox     = "room_busy"  // the room's inbox was full
	dropNoRoom    = "no_room"    // before the client joined
	dropSendQueue = "send_queue" // the client's send queue was full
	dropWrongType = "direction"  // a server-to-client type sent by a client
)

func newMetrics() *metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := func(c prometheus.Collector) prometheus.Collector { reg.MustRegister(c); return c }
	m := &metrics{reg: reg}
	m.tickSeconds = f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rewind_tick_duration_seconds",
		Help: "Time to simulate one room tick, snapshots included.", Buckets: prometheus.ExponentialBuckets(10e-6, 2, 14)})).(prometheus.Histogram)
	m.tickOverruns = f(prometheus.NewCounter(prometheus.CounterOpts{Name: "rewind_tick_overruns_total",
		Help: "Room ticks that took longer than the tick interval."})).(prometheus.Counter)
	m.rooms = f(prometheus.NewGauge(prometheus.GaugeOpts{Name: "rewind_rooms", Help: "Open rooms."})).(prometheus.Gauge)
	m.players = f(prometheus.NewGauge(prometheus.GaugeOpts{Name: "rewind_players", Help: "Players in rooms."})).(prometheus.Gauge)
	m.rewinds = f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rewind_rewinds_per_tick",
		Help: "Travels to a past time per room tick.", Buckets: []float64{0, 1, 2, 4, 8, 12, 16, 24, 32, 64}})).(prometheus.Histogram)
	m.buckets = f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rewind_buckets_per_tick",
		Help: "Distinct view times per room tick.", Buckets: []float64{0, 1, 2, 4, 8, 12, 16, 24, 32, 64}})).(prometheus.Histogram)
	m.clamped = f(prometheus.NewCounter(prometheus.CounterOpts{Name: "rewind_view_times_clamped_total",
		Help: "Inputs whose view time was outside [present − window, present] and was clamped."})).(prometheus.Counter)
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
	m.rejected = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_joins_rejected_total", Help: "Joins refused, by reason."}, []string{"reason"})
	shots := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rewind_shots_rejected_total",
		Help: "Shots the weapon rules refused (a client firing faster than allowed, without ammo, while reloading, or a weapon it does not carry), by reason."}, []string{"reason"})
	reg.MustRegister(in, out, drop, inputs, m.rejected, shots)
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
	for _, r := range []string{dropFlood, dropInbox, dropNoRoom, dropSendQueue, dropWrongType} {
		m.dropped[r] = drop.WithLabelValues(r)
	}
	for v := range m.inputs {
		m.inputs[v] = inputs.WithLabelValues(systems.InputVerdict(v).String())
	}
	return m
}

// drop counts a dropped datagram.
func (m *metrics) drop(reason string) {
	if c, ok := m.dropped[reason]; ok {
		c.Inc()
	}
}
