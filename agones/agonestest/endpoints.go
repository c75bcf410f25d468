package agonestest

import (
	"encoding/json"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The endpoints are those of the SDK server's grpc-gateway, from the
// google.api.http options of proto/sdk/sdk.proto, proto/sdk/alpha/alpha.proto
// and proto/sdk/beta/beta.proto (Agones 1.56), documented in
// site/content/en/docs/Guides/Client SDKs/rest.md. The bodies are the
// request messages (body: "*"), as sdks/swagger/*.swagger.json list them.
// The behaviour is that of pkg/sdkserver/sdkserver.go.

// kind is the JSON type of a body field.
type kind int

const (
	kindString kind = iota // a JSON string
	kindInt64              // an int64: a JSON string of digits (as the gateway writes it) or a JSON number
)

// field is a documented field of a request body.
type field struct {
	name     string
	kind     kind
	optional bool // may be absent (a wrapper or a zero int64 the client leaves out)
}

// args are the arguments of a call: the path parameter and the body fields.
type args struct {
	param string
	str   map[string]string
	num   map[string]int64
}

// endpoint is a method on a path pattern. In a pattern, "{name}" matches one
// path segment, and ":verb" ends the last segment, as in google.api.http.
type endpoint struct {
	method, pattern string
	// fields are the fields of the body, all required; nil if the body is
	// not read (GET, and the endpoints the fake does not model).
	fields []field
	serve  func(*Server, args) reply // called under Server.mu
	watch  bool                      // served by Server.watch instead
}

var (
	empty     = []field{}
	keyValue  = []field{{"key", kindString, false}, {"value", kindString, false}}
	playerID  = []field{{"playerID", kindString, false}}
	count     = []field{{"count", kindInt64, false}}
	listValue = []field{{"value", kindString, false}}
	// counterUpdate is beta.CounterUpdateRequest, the body of UpdateCounter
	// (its name comes from the path).
	counterUpdate = []field{{"count", kindInt64, true}, {"capacity", kindInt64, true}, {"countDiff", kindInt64, true}}
	okEmpty       = struct{}{}
	notModeled    = func(what string) func(*Server, args) reply {
		return func(*Server, args) reply {
			return fail(codeUnimplemented, "agonestest: %s is not modeled by the fake", what)
		}
	}
)

var endpoints = []endpoint{
	// sdk.proto, service SDK; rest.md "Lifecycle Management".

	// Ready: POST /ready {}. The SDK server requests Ready; the fake is Ready
	// at once.
	{method: "POST", pattern: "/ready", fields: empty, serve: func(s *Server, _ args) reply {
		return s.setStateReply("Ready")
	}},
	// Allocate: POST /allocate {} (self-allocation).
	{method: "POST", pattern: "/allocate", fields: empty, serve: func(s *Server, _ args) reply {
		return s.setStateReply("Allocated")
	}},
	// Shutdown: POST /shutdown {}.
	{method: "POST", pattern: "/shutdown", fields: empty, serve: func(s *Server, _ args) reply {
		return s.setStateReply("Shutdown")
	}},
	// Health: POST /health {} (a client stream of Empty: one ping per
	// message). cmd/sdk-server/main.go (healthCheckWrapper) answers a
	// request without a body 400 with no body; Server.serve does that.
	{method: "POST", pattern: "/health", fields: empty, serve: func(*Server, args) reply {
		return ok(okEmpty)
	}},
	// Reserve: POST /reserve {"seconds": "5"} (Duration; int64, 0 is
	// forever). The fake does not move back to Ready when the time is up.
	{method: "POST", pattern: "/reserve", fields: []field{{"seconds", kindInt64, false}}, serve: func(s *Server, _ args) reply {
		return s.setStateReply("Reserved")
	}},
	// GetGameServer: GET /gameserver, answered with the GameServer.
	{method: "GET", pattern: "/gameserver", serve: func(s *Server, _ args) reply {
		return ok(s.wireLocked())
	}},
	// WatchGameServer: GET /watch/gameserver, a stream (Server.watch).
	{method: "GET", pattern: "/watch/gameserver", watch: true},

	// rest.md "Metadata Management"; sdkserver.go SetLabel, SetAnnotation.

	// SetLabel: PUT /metadata/label {"key": …, "value": …}. The key and value
	// must be a valid label key and value (400 otherwise); the label is set
	// with the prefix agones.dev/sdk-.
	{method: "PUT", pattern: "/metadata/label", fields: keyValue, serve: func(s *Server, a args) reply {
		k, v := a.str["key"], a.str["value"]
		if msg := qualifiedNameError(k); msg != "" {
			return fail(codeInvalidArgument, "invalid label key %q: %s", k, msg)
		}
		if msg := labelValueError(v); msg != "" {
			return fail(codeInvalidArgument, "invalid label value %q for key %q: %s", v, k, msg)
		}
		s.gs.labels[metadataPrefix+k] = v
		s.publishLocked()
		return ok(okEmpty)
	}},
	// SetAnnotation: PUT /metadata/annotation {"key": …, "value": …}. The key
	// must be a valid key (400 otherwise); the value may be anything.
	{method: "PUT", pattern: "/metadata/annotation", fields: keyValue, serve: func(s *Server, a args) reply {
		k := a.str["key"]
		if msg := qualifiedNameError(k); msg != "" {
			return fail(codeInvalidArgument, "invalid annotation key %q: %s", k, msg)
		}
		s.gs.annotations[metadataPrefix+k] = a.str["value"]
		s.publishLocked()
		return ok(okEmpty)
	}},

	// alpha.proto; rest.md "Player Tracking"; sdkserver.go PlayerConnect …

	// PlayerConnect: POST /alpha/player/connect {"playerID": …}, answered
	// {"bool": true}, or {"bool": false} if the player is already connected;
	// at capacity the SDK server returns a plain error: gRPC Unknown, 500.
	{method: "POST", pattern: "/alpha/player/connect", fields: playerID, serve: func(s *Server, a args) reply {
		id := a.str["playerID"]
		if slices.Contains(s.gs.players, id) {
			return ok(wireBool{false})
		}
		if int64(len(s.gs.players)) >= s.gs.playerCapacity {
			return fail(codeUnknown, "players are already at capacity")
		}
		s.gs.players = append(s.gs.players, id)
		s.publishLocked()
		return ok(wireBool{true})
	}},
	// PlayerDisconnect: POST /alpha/player/disconnect {"playerID": …},
	// answered {"bool": true}, or {"bool": false} if it was not connected.
	{method: "POST", pattern: "/alpha/player/disconnect", fields: playerID, serve: func(s *Server, a args) reply {
		i := slices.Index(s.gs.players, a.str["playerID"])
		if i < 0 {
			return ok(wireBool{false})
		}
		s.gs.players = slices.Delete(s.gs.players, i, i+1)
		s.publishLocked()
		return ok(wireBool{true})
	}},
	// SetPlayerCapacity: PUT /alpha/player/capacity {"count": "10"}.
	{method: "PUT", pattern: "/alpha/player/capacity", fields: count, serve: func(s *Server, a args) reply {
		s.gs.playerCapacity = a.num["count"]
		s.publishLocked()
		return ok(okEmpty)
	}},
	// GetPlayerCapacity: GET /alpha/player/capacity, answered {"count": "10"}.
	{method: "GET", pattern: "/alpha/player/capacity", serve: func(s *Server, _ args) reply {
		return ok(wireCount{s.gs.playerCapacity})
	}},
	// GetPlayerCount: GET /alpha/player/count, answered {"count": "2"}.
	{method: "GET", pattern: "/alpha/player/count", serve: func(s *Server, _ args) reply {
		return ok(wireCount{int64(len(s.gs.players))})
	}},
	// GetConnectedPlayers: GET /alpha/player/connected, answered
	// {"list": [ids]}.
	{method: "GET", pattern: "/alpha/player/connected", serve: func(s *Server, _ args) reply {
		return ok(wirePlayerIDList{nonNil(slices.Clone(s.gs.players))})
	}},
	// IsPlayerConnected: GET /alpha/player/connected/{playerID}, answered
	// {"bool": …}.
	{method: "GET", pattern: "/alpha/player/connected/{playerID}", serve: func(s *Server, a args) reply {
		return ok(wireBool{slices.Contains(s.gs.players, a.param)})
	}},

	// beta.proto; rest.md "Counters and Lists"; sdkserver.go GetList,
	// AddListValue, RemoveListValue. The SDK server returns plain errors,
	// not gRPC statuses, so its failures are gRPC Unknown, HTTP 500 (the
	// .proto comments name NOT_FOUND, ALREADY_EXISTS and OUT_OF_RANGE).

	// GetList: GET /v1beta1/lists/{name}, answered with the List.
	{method: "GET", pattern: "/v1beta1/lists/{name}", serve: func(s *Server, a args) reply {
		l, found := s.gs.lists[a.param]
		if !found {
			return fail(codeUnknown, "list not found: %s", a.param)
		}
		return ok(wireList{a.param, l.capacity, nonNil(slices.Clone(l.values))})
	}},
	// AddListValue: POST /v1beta1/lists/{name}:addValue {"value": …},
	// answered with the List.
	{method: "POST", pattern: "/v1beta1/lists/{name}:addValue", fields: listValue, serve: func(s *Server, a args) reply {
		name, v := a.param, a.str["value"]
		l, found := s.gs.lists[name]
		switch {
		case !found:
			return fail(codeUnknown, "list not found: %s", name)
		case int64(len(l.values)) >= l.capacity:
			return fail(codeUnknown, "out of range. No available capacity. Current Capacity: %d, List Size: %d", l.capacity, len(l.values))
		case slices.Contains(l.values, v):
			return fail(codeUnknown, "already exists. Value: %s already in List: %s", v, name)
		}
		l.values = append(l.values, v)
		s.publishLocked()
		return ok(wireList{name, l.capacity, slices.Clone(l.values)})
	}},
	// RemoveListValue: POST /v1beta1/lists/{name}:removeValue {"value": …},
	// answered with the List.
	{method: "POST", pattern: "/v1beta1/lists/{name}:removeValue", fields: listValue, serve: func(s *Server, a args) reply {
		name, v := a.param, a.str["value"]
		l, found := s.gs.lists[name]
		if !found {
			return fail(codeUnknown, "list not found: %s", name)
		}
		i := slices.Index(l.values, v)
		if i < 0 {
			return fail(codeUnknown, "not found: value %s not in list %s", v, name)
		}
		l.values = slices.Delete(l.values, i, i+1)
		s.publishLocked()
		return ok(wireList{name, l.capacity, nonNil(slices.Clone(l.values))})
	}},
	// GetCounter: GET /v1beta1/counters/{name}, answered with the Counter.
	{method: "GET", pattern: "/v1beta1/counters/{name}", serve: func(s *Server, a args) reply {
		c, found := s.gs.counters[a.param]
		if !found {
			return fail(codeUnknown, "counter not found: %s", a.param)
		}
		return ok(wireCounterMsg{a.param, c.count, c.capacity})
	}},
	// UpdateCounter: PATCH /v1beta1/counters/{name} with the
	// CounterUpdateRequest {"count": "5", "capacity": "11", "countDiff":
	// "-1"} (count and capacity are Int64Value wrappers: absent means
	// unchanged; countDiff 0 may be left out), answered with the Counter.
	// sdkserver.go UpdateCounter: a request that changes nothing is
	// malformed; the capacity is set first (not below 0), then the count
	// (within [0, capacity]), then the difference added (the result within
	// [0, capacity]); a count left above the capacity is truncated to it
	// when the update is applied. Every failure is a plain error, so 500.
	{method: "PATCH", pattern: "/v1beta1/counters/{name}", fields: counterUpdate, serve: func(s *Server, a args) reply {
		c, found := s.gs.counters[a.param]
		count, hasCount := a.num["count"]
		capacity, hasCapacity := a.num["capacity"]
		diff := a.num["countDiff"]
		switch {
		case diff == 0 && !hasCount && !hasCapacity:
			return fail(codeUnknown, "invalid argument. Malformed CounterUpdateRequest: name:%q", a.param)
		case !found:
			return fail(codeUnknown, "counter not found: %s", a.param)
		case hasCapacity && capacity < 0:
			return fail(codeUnknown, "out of range. Capacity must be greater than or equal to 0. Found Capacity: %d", capacity)
		}
		next := *c
		if hasCapacity {
			next.capacity = capacity
		}
		if hasCount {
			if count < 0 || count > next.capacity {
				return fail(codeUnknown, "out of range. Count must be within range [0,Capacity]. Found Count: %d, Capacity: %d", count, next.capacity)
			}
			next.count = count
		}
		if diff != 0 {
			if n := next.count + diff; n < 0 || n > next.capacity {
				return fail(codeUnknown, "out of range. Count must be within range [0,Capacity]. Found Count: %d, Capacity: %d", n, next.capacity)
			}
			next.count += diff
		}
		// A capacity below the count truncates the count when the update
		// is applied (updateCounter).
		next.count = min(next.count, next.capacity)
		*c = next
		s.publishLocked()
		return ok(wireCounterMsg{a.param, c.count, c.capacity})
	}},
	// UpdateList exists, but the fake does not model it: 501.
	{method: "PATCH", pattern: "/v1beta1/lists/{name}", serve: notModeled("PATCH /v1beta1/lists/{name}")},
}

// setStateReply sets the state, publishes the GameServer and answers {}.
func (s *Server) setStateReply(state string) reply {
	s.gs.state = state
	s.publishLocked()
	return ok(okEmpty)
}

// route returns the endpoint for method and path and the value of its path
// parameter. If there is none, it returns the answer of the grpc-gateway's
// ServeMux: 404 if no endpoint has the path, 501 if only other methods do
// (runtime.DefaultRoutingErrorHandler maps 405 Method Not Allowed to gRPC
// Unimplemented, whose HTTP status is 501).
func route(method, path string) (*endpoint, string, reply) {
	if !strings.HasPrefix(path, "/") {
		return nil, "", fail(codeInvalidArgument, "Bad Request")
	}
	for i := range endpoints {
		if e := &endpoints[i]; e.method == method {
			if param, ok := e.match(path); ok {
				return e, param, reply{}
			}
		}
	}
	for i := range endpoints {
		if _, ok := endpoints[i].match(path); ok {
			return nil, "", fail(codeUnimplemented, "Method Not Allowed")
		}
	}
	return nil, "", fail(codeNotFound, "Not Found")
}

// match reports whether path matches e's pattern, and the value of its path
// parameter if it has one.
func (e *endpoint) match(path string) (string, bool) {
	pattern, verb, _ := strings.Cut(e.pattern[1:], ":")
	segs := strings.Split(pattern, "/")
	comps := strings.Split(path[1:], "/")
	if len(comps) != len(segs) {
		return "", false
	}
	if verb != "" {
		last, ok := strings.CutSuffix(comps[len(comps)-1], ":"+verb)
		if !ok || last == "" {
			return "", false
		}
		comps[len(comps)-1] = last
	}
	var param string
	for i, seg := range segs {
		switch {
		case strings.HasPrefix(seg, "{"):
			if comps[i] == "" {
				return "", false
			}
			param = comps[i]
		case seg != comps[i]:
			return "", false
		}
	}
	return param, true
}

// decode decodes the body raw into a. The body must be a JSON object with
// exactly e's fields, of their types; else decode returns the 400 answer and
// true. For POST /health, a missing body is answered 400 with no body, as
// the SDK server's healthCheckWrapper does.
func (e *endpoint) decode(raw []byte, a *args) (reply, bool) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		if e.pattern == "/health" {
			return reply{status: http.StatusBadRequest}, true
		}
		return fail(codeInvalidArgument, "agonestest: no body: %s %s takes a JSON object", e.method, e.pattern), true
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return fail(codeInvalidArgument, "agonestest: the body is not a JSON object: %s", raw), true
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !slices.ContainsFunc(e.fields, func(f field) bool { return f.name == k }) {
			return fail(codeInvalidArgument, "agonestest: unknown field %q in the body of %s %s", k, e.method, e.pattern), true
		}
	}
	a.str, a.num = map[string]string{}, map[string]int64{}
	for _, f := range e.fields {
		v, found := obj[f.name]
		if f.optional && (!found || string(v) == "null") {
			continue
		}
		if !found || string(v) == "null" {
			return fail(codeInvalidArgument, "agonestest: missing field %q in the body of %s %s", f.name, e.method, e.pattern), true
		}
		switch f.kind {
		case kindString:
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return fail(codeInvalidArgument, "agonestest: field %q: %s is not a string", f.name, v), true
			}
			a.str[f.name] = s
		case kindInt64:
			n, err := parseInt64(v)
			if err != nil {
				return fail(codeInvalidArgument, "agonestest: field %q: %s is not an int64", f.name, v), true
			}
			a.num[f.name] = n
		}
	}
	return reply{}, false
}

// parseInt64 parses an int64 as protobuf's JSON mapping takes it: a string of
// digits or a number.
func parseInt64(v json.RawMessage) (int64, error) {
	s := string(v)
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(v, &s); err != nil {
			return 0, err
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// nonNil returns s, or an empty slice if s is nil: the gateway writes empty
// repeated fields as [] (EmitUnpopulated).
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// The regular expressions of k8s.io/apimachinery/pkg/util/validation.
var (
	qualifiedName    = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
	dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)
