package server

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/rewind-gg/rewind/channel"
	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/internal/buildinfo"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/systems"
)

// Every value of the server's own reasons has a label of its own.
func TestReasonLabels(t *testing.T) {
	distinct(t, "drop", span(dropNone, dropReasons-1), dropReason.String)
	distinct(t, "kick", span(kickIdle, kickReasons-1), kickReason.String)
	distinct(t, "recording", span(recordComplete, recordOutcomes-1), recordOutcome.String)
	distinct(t, "end", span(endFinished, endReasons-1), endReason.String)
}

func distinct[K ~uint8](t *testing.T, what string, values []K, label func(K) string) {
	t.Helper()
	seen := map[string]K{}
	for _, k := range values {
		l := label(k)
		if l == "" || l == "invalid" {
			t.Errorf("%s reason %d has no label", what, k)
		}
		if o, ok := seen[l]; ok {
			t.Errorf("%s reasons %d and %d share the label %q", what, o, k, l)
		}
		seen[l] = k
	}
	if l := label(K(len(values) + 64)); l != "invalid" {
		t.Errorf("a %s reason past the last is labelled %q", what, l)
	}
}

// labelled is every value of K from first on that its String labels
// (the first labelled fallback ends them).
func labelled[K ~uint8](first K, label func(K) string, fallback string) []K {
	var v []K
	for k := first; label(k) != fallback; k++ {
		v = append(v, k)
	}
	return v
}

// Every reason package protocol or channel gives a datagram dropped maps
// to the server's reason of the same label.
func TestDropReasonsMap(t *testing.T) {
	for _, r := range labelled(protocol.ReasonShort, protocol.Reason.String, "unknown") {
		if d := protocolDrop(r); d.String() != r.String() {
			t.Errorf("protocol reason %v counts as %v", r, d)
		}
	}
	for _, r := range labelled(channel.ReasonShort, channel.Reason.String, "sealed_unknown") {
		if d := channelDrop(r); d.String() != r.String() {
			t.Errorf("channel reason %v counts as %v", r, d)
		}
	}
	if protocolDrop(200) != dropUnknown || channelDrop(200) != dropSealedUnknown {
		t.Error("a reason past the last is not counted as unknown")
	}
}

// Every reason the metrics count by has its counter, labelled as the
// reason is: a labelled value added to ecs, channel or systems without
// its counter fails here. A value past them counts nothing, and does not
// panic.
func TestMetricsCountEveryReason(t *testing.T) {
	m := newMetrics(buildinfo.Info{})
	has(t, "clamped", m.clamped, labelled(ecs.ClampMeasured, ecs.ClampReason.String, "none"), ecs.ClampReason.String)
	has(t, "hits", m.hits, labelled(0, hitLabel, "none"), hitLabel)
	has(t, "shots rejected", m.shotsRejected, labelled(ecs.RejectCooldown, ecs.RejectReason.String, "unknown"), ecs.RejectReason.String)
	has(t, "paths", m.paths, labelled(channel.PathChallenged, channel.PathEvent.String, "unknown"), channel.PathEvent.String)
	has(t, "inputs", m.inputs, span(systems.InputQueued, systems.InputNoPlayer), systems.InputVerdict.String)
	has(t, "dropped", m.dropped, span(dropNone+1, dropReasons-1), dropReason.String)
	has(t, "kicked", m.kicked, span(kickIdle, kickReasons-1), kickReason.String)
	has(t, "matches", m.matches, span(endFinished, endReasons-1), endReason.String)
	has(t, "recordings", m.recordings, span(recordComplete, recordOutcomes-1), recordOutcome.String)
	m.clamped.Inc(200)
	m.dropped.Inc(dropReasons)
	m.drop(dropNone) // kept: counted nowhere
}

func has[K ~uint8](t *testing.T, what string, c counters[K], values []K, label func(K) string) {
	t.Helper()
	if len(values) == 0 {
		t.Fatalf("%s: no values", what)
	}
	for _, k := range values {
		if int(k) >= len(c) || c[k] == nil {
			t.Errorf("%s: no counter for %q", what, label(k))
			continue
		}
		if got := counterLabel(c[k]); got != label(k) {
			t.Errorf("%s: the counter of %d is labelled %q, want %q", what, k, got, label(k))
		}
	}
}

func counterLabel(c prometheus.Counter) string {
	var m dto.Metric
	c.Write(&m)
	if len(m.Label) != 1 {
		return ""
	}
	return m.Label[0].GetValue()
}
