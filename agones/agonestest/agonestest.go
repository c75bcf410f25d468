// Package agonestest provides a fake Agones SDK server for tests: it answers
// the SDK server's REST (HTTP/JSON) gateway as the Agones documentation, the
// SDK's .proto files and the SDK server describe it (see ../REST.md), records
// every call, and keeps a GameServer that the calls change.
//
// The fake is strict where the real server is lenient, so that a client that
// passes against it sends what the documentation says: a call that takes a
// body must send a JSON object with exactly the documented fields (the real
// gateway accepts an empty body, ignores unknown fields and takes a missing
// field for its zero value), and is otherwise answered 400. Everything else
// follows the real server: the same status codes and error bodies
// ({"code": …, "message": …, "details": []}), the same watch stream, the
// "agones.dev/sdk-" prefix on SDK labels and annotations.
//
// The fake changes state at once where Agones takes a moment (Ready is
// reached without RequestReady, player and list changes show in the
// GameServer without the SDK server's one-second batching), and a
// reservation does not end by itself.
package agonestest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/agones"
)

// Call is a request the fake received.
type Call struct {
	Method, Path string
	Body         string // the raw JSON received, compacted ("" if none, as received if not JSON)
}

// Server is a fake Agones SDK server listening on loopback. Its methods may
// be called from several goroutines at once.
type Server struct {
	srv       *httptest.Server
	done      chan struct{} // closed by Close: the watch streams end
	closeOnce sync.Once

	mu          sync.Mutex
	calls       []Call
	times       []time.Time   // when each call was received
	changed     chan struct{} // closed and replaced whenever a call is recorded
	gs          gameServer
	watchers    map[*watcher]struct{}
	outage      bool // every call is answered 503, as the gateway answers gRPC Unavailable
	allocations int
}

// gameServer is the state of the fake's GameServer.
type gameServer struct {
	name, namespace, uid string
	resourceVersion      int64
	labels, annotations  map[string]string
	state, address       string
	ports                []agones.Port
	playerCapacity       int64
	players              []string
	lists                map[string]*list
	counters             map[string]*counter
}

// counter is a counter of the GameServer's status.counters.
type counter struct {
	count, capacity int64
}

// list is a list of the GameServer's status.lists.
type list struct {
	capacity int64
	values   []string
}

// watcher is a GET /watch/gameserver stream.
type watcher struct {
	queue  [][]byte      // chunks not sent yet, under Server.mu
	ended  bool          // an outage ended the stream, under Server.mu
	signal chan struct{} // capacity 1: queue has chunks, or ended
}

// metadataPrefix is the prefix the SDK server gives the keys of the labels
// and annotations set through the SDK (pkg/sdkserver/sdk.go).
const metadataPrefix = "agones.dev/sdk-"

// maxBody bounds the request bodies the fake reads.
const maxBody = 1 << 20

// New starts a fake SDK server on 127.0.0.1 on a free port, and closes it when
// the test ends. Its GameServer is "local" in the namespace "default", in the
// state "Scheduled" (the state in which a GameServer's process starts),
// with the address "127.0.0.1", one port "default" 7777, no labels or
// annotations, a player capacity of 0 and no lists (see SetList).
func New(t testing.TB) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("agonestest: %v", err)
	}
	s := &Server{
		done:     make(chan struct{}),
		changed:  make(chan struct{}),
		watchers: make(map[*watcher]struct{}),
		gs: gameServer{
			name:            "local",
			namespace:       "default",
			uid:             "1234",
			resourceVersion: 1,
			labels:          map[string]string{},
			annotations:     map[string]string{},
			state:           "Scheduled",
			address:         "127.0.0.1",
			ports:           []agones.Port{{Name: "default", Port: 7777}},
			lists:           map[string]*list{},
			counters:        map[string]*counter{},
		},
	}
	s.srv = &httptest.Server{
		Listener: l,
		Config:   &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second},
	}
	s.srv.Start()
	t.Cleanup(s.Close)
	return s
}

// Addr returns the host:port the fake listens on.
func (s *Server) Addr() string {
	return s.srv.Listener.Addr().String()
}

// Close stops the fake: the watch streams end, the connections close and the
// port is no longer listened on, so the SDK server becomes unreachable. Close
// may be called more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// Calls returns every call received so far, in the order received.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// CallTimes returns when the calls with method and path were received, in
// order.
func (s *Server) CallTimes(method, path string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var at []time.Time
	for i, c := range s.calls {
		if c.Method == method && c.Path == path {
			at = append(at, s.times[i])
		}
	}
	return at
}

// Await waits until the fake has received at least n calls with method and
// path, or ctx ends. A call is counted once its effect on the GameServer is
// made.
func (s *Server) Await(ctx context.Context, method, path string, n int) error {
	for {
		s.mu.Lock()
		have := 0
		for _, c := range s.calls {
			if c.Method == method && c.Path == path {
				have++
			}
		}
		changed := s.changed
		s.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("agonestest: awaiting %d calls %s %s, have %d: %w", n, method, path, have, ctx.Err())
		}
	}
}

// GameServer returns the fake's GameServer as the client sees it.
func (s *Server) GameServer() agones.GameServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	gs := s.gs
	out := agones.GameServer{
		Name:        gs.name,
		Namespace:   gs.namespace,
		Labels:      cloneNonEmpty(gs.labels),
		Annotations: cloneNonEmpty(gs.annotations),
		State:       gs.state,
		Address:     gs.address,
		Ports:       slices.Clone(gs.ports),
	}
	// As the client decodes the wire: nil when empty.
	if len(gs.players) > 0 {
		out.Players = slices.Clone(gs.players)
	}
	for name, c := range gs.counters {
		if out.Counters == nil {
			out.Counters = map[string]agones.Counter{}
		}
		out.Counters[name] = agones.Counter{Count: c.count, Capacity: c.capacity}
	}
	for name, l := range gs.lists {
		if out.Lists == nil {
			out.Lists = map[string]agones.List{}
		}
		out.Lists[name] = agones.List{Capacity: l.capacity, Values: nonNil(slices.Clone(l.values))}
	}
	return out
}

// Allocation is what a GameServerAllocation does to the GameServer it
// selects (allocation.agones.dev/v1, spec.metadata, spec.counters and
// spec.lists; pkg/apis/allocation/v1/gameserverallocation.go,
// CounterActions and ListActions): metadata merged in, Counters incremented,
// values appended to Lists.
type Allocation struct {
	Labels, Annotations map[string]string
	// Increment is, by Counter, the amount of an Increment action. Like
	// Agones, the fake skips an action the Counter cannot take (past its
	// capacity, or an undeclared Counter) and allocates all the same.
	Increment map[string]int64
	// AddValues are, by List, the values of an addValues action.
	// Duplicates are ignored, as are values past the List's capacity.
	AddValues map[string][]string
}

// AllocateWith allocates the GameServer as a GameServerAllocation that
// selected it does: the state becomes Allocated (a re-allocation of an
// Allocated GameServer, Agones' high-density pattern, keeps it), the
// annotation agones.dev/last-allocated is set to a new value, and a's
// metadata and Counter and List actions are applied, in one update of the
// GameServer, which every watch stream receives.
func (s *Server) AllocateWith(a Allocation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.allocations++
	s.gs.state = "Allocated"
	s.gs.annotations["agones.dev/last-allocated"] = time.Unix(creationTimestamp+int64(s.allocations), 0).UTC().Format(time.RFC3339)
	maps.Copy(s.gs.labels, a.Labels)
	maps.Copy(s.gs.annotations, a.Annotations)
	for name, n := range a.Increment {
		if c, ok := s.gs.counters[name]; ok && c.count+n <= c.capacity {
			c.count += n
		}
	}
	for name, values := range a.AddValues {
		l, ok := s.gs.lists[name]
		if !ok {
			continue
		}
		for _, v := range values {
			if !slices.Contains(l.values, v) && int64(len(l.values)) < l.capacity {
				l.values = append(l.values, v)
			}
		}
	}
	s.publishLocked()
}

// SetCounter declares the Counter name in the GameServer with count and
// capacity, as spec.counters would. Every watch stream receives the
// GameServer.
func (s *Server) SetCounter(name string, count, capacity int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gs.counters[name] = &counter{count: count, capacity: capacity}
	s.publishLocked()
}

// Counter returns the count and capacity of the Counter name, and whether
// there is one.
func (s *Server) Counter(name string) (count, capacity int64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.gs.counters[name]
	if !ok {
		return 0, 0, false
	}
	return c.count, c.capacity, true
}

// SetOutage starts (true) or ends an outage of the SDK server, as when its
// sidecar restarts: meanwhile every call is answered 503 with gRPC code 14
// Unavailable (grpc-gateway's HTTPStatusFromCode) and recorded, and the
// watch streams end. The GameServer keeps its state.
func (s *Server) SetOutage(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outage = down
	if down {
		for w := range s.watchers {
			w.ended = true
			select {
			case w.signal <- struct{}{}:
			default:
			}
		}
	}
}

// Allocate does what an allocation (a GameServerAllocation) does to the
// GameServer: AllocateWith with labels and annotations (merged into its
// metadata without the SDK's prefix) and no Counter or List action.
func (s *Server) Allocate(labels, annotations map[string]string) {
	s.AllocateWith(Allocation{Labels: labels, Annotations: annotations})
}

// SetState sets the GameServer's state, as Agones does outside the SDK (e.g.
// "Unhealthy", or "Shutdown" on a scale down). Every watch stream receives
// the GameServer.
func (s *Server) SetState(state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gs.state = state
	s.publishLocked()
}

// SetList declares the list name in the GameServer, with capacity and values,
// as spec.lists would (a list must be declared before values are added to
// it). Every watch stream receives the GameServer.
func (s *Server) SetList(name string, capacity int64, values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gs.lists[name] = &list{capacity: capacity, values: slices.Clone(values)}
	s.publishLocked()
}

// Players returns the ids of the connected players (alpha player tracking),
// in the order they connected.
func (s *Server) Players() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.gs.players)
}

// ListValues returns the values of the list name, or nil if there is no such
// list.
func (s *Server) ListValues(name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.gs.lists[name]; ok {
		return slices.Clone(l.values)
	}
	return nil
}

// serve answers a request.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	call := Call{Method: r.Method, Path: r.URL.Path, Body: compact(raw)}
	if err != nil {
		s.answer(w, call, fail(codeInvalidArgument, "reading the body: %v", err))
		return
	}
	s.mu.Lock()
	down := s.outage
	s.mu.Unlock()
	if down {
		s.answer(w, call, fail(codeUnavailable, "agonestest: the SDK server is unavailable (an outage)"))
		return
	}
	e, param, miss := route(r.Method, r.URL.Path)
	if e == nil {
		s.answer(w, call, miss)
		return
	}
	if e.watch {
		s.watch(w, r, call)
		return
	}
	var a args
	if e.fields != nil {
		if rep, bad := e.decode(raw, &a); bad {
			s.answer(w, call, rep)
			return
		}
	}
	a.param = param
	s.mu.Lock()
	s.recordLocked(call)
	rep := e.serve(s, a)
	s.mu.Unlock()
	rep.write(w)
}

// answer records call and writes rep.
func (s *Server) answer(w http.ResponseWriter, call Call, rep reply) {
	s.mu.Lock()
	s.recordLocked(call)
	s.mu.Unlock()
	rep.write(w)
}

// recordLocked records call and wakes Await.
func (s *Server) recordLocked(call Call) {
	s.calls = append(s.calls, call)
	s.times = append(s.times, time.Now())
	close(s.changed)
	s.changed = make(chan struct{})
}

// publishLocked records a change of the GameServer and sends it to every watch
// stream.
func (s *Server) publishLocked() {
	s.gs.resourceVersion++
	chunk := s.chunkLocked()
	for w := range s.watchers {
		w.queue = append(w.queue, chunk)
		select {
		case w.signal <- struct{}{}:
		default:
		}
	}
}

// chunkLocked returns the GameServer as a chunk of the watch stream.
func (s *Server) chunkLocked() []byte {
	b, err := json.Marshal(struct {
		Result wireGameServer `json:"result"`
	}{s.wireLocked()})
	if err != nil {
		panic(err) // only strings, numbers, maps and slices
	}
	return append(b, '\n')
}

// watch serves GET /watch/gameserver: the grpc-gateway writes each message of
// the server stream as {"result": GameServer} and a newline, and flushes it
// (runtime.ForwardResponseStream). The SDK server sends the current
// GameServer first, then every update (pkg/sdkserver/sdkserver.go,
// WatchGameServer). The stream lasts until the client goes or Close.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, call Call) {
	wt := &watcher{signal: make(chan struct{}, 1)}
	s.mu.Lock()
	s.recordLocked(call)
	wt.queue = append(wt.queue, s.chunkLocked())
	wt.signal <- struct{}{}
	s.watchers[wt] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.watchers, wt)
		s.mu.Unlock()
	}()

	w.Header().Set("Content-Type", "application/json")
	rc := http.NewResponseController(w)
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case <-wt.signal:
		}
		s.mu.Lock()
		queue, ended := wt.queue, wt.ended
		wt.queue = nil
		s.mu.Unlock()
		if ended {
			return
		}
		for _, chunk := range queue {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// compact returns the JSON b compacted, or b as it is if it is not JSON.
func compact(b []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return string(b)
	}
	return buf.String()
}

// cloneNonEmpty returns a copy of m, or nil if m is empty.
func cloneNonEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

// The gRPC status codes the fake answers with (google.golang.org/grpc/codes).
const (
	codeUnknown         = 2
	codeInvalidArgument = 3
	codeNotFound        = 5
	codeUnimplemented   = 12
	codeUnavailable     = 14
)

// reply is an answer: a status and a body encoded as JSON (none if nil).
type reply struct {
	status int
	body   any
}

// ok is a 200 answer with body.
func ok(body any) reply {
	return reply{http.StatusOK, body}
}

// fail is an error answer as the grpc-gateway writes it
// (runtime.DefaultHTTPErrorHandler): a google.rpc.Status, with every field
// (EmitUnpopulated), and the HTTP status of its code (runtime.HTTPStatusFromCode).
func fail(code int, format string, args ...any) reply {
	status := map[int]int{
		codeUnknown:         http.StatusInternalServerError,
		codeInvalidArgument: http.StatusBadRequest,
		codeNotFound:        http.StatusNotFound,
		codeUnimplemented:   http.StatusNotImplemented,
		codeUnavailable:     http.StatusServiceUnavailable,
	}[code]
	return reply{status, wireStatus{Code: code, Message: fmt.Sprintf(format, args...), Details: []any{}}}
}

func (rep reply) write(w http.ResponseWriter) {
	if rep.body == nil {
		w.WriteHeader(rep.status)
		return
	}
	b, err := json.Marshal(rep.body)
	if err != nil {
		panic(err) // only strings, numbers, maps and slices
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	w.Write(b)
}

// qualifiedNameError returns why key is not a valid label or annotation key
// (k8s.io/apimachinery/pkg/util/validation.IsQualifiedName, which the SDK
// server applies to the key before it adds its prefix), or "".
func qualifiedNameError(key string) string {
	name := key
	if prefix, n, found := strings.Cut(key, "/"); found {
		switch {
		case prefix == "":
			return "prefix part must be non-empty"
		case len(prefix) > 253 || !dns1123Subdomain.MatchString(prefix):
			return "prefix part must be a lowercase RFC 1123 subdomain"
		}
		name = n
	}
	switch {
	case name == "":
		return "name part must be non-empty"
	case len(name) > 63:
		return "name part must be no more than 63 characters"
	case !qualifiedName.MatchString(name):
		return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	}
	return ""
}

// labelValueError returns why value is not a valid label value
// (validation.IsValidLabelValue), or "".
func labelValueError(value string) string {
	switch {
	case len(value) > 63:
		return "must be no more than 63 characters"
	case value != "" && !qualifiedName.MatchString(value):
		return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	}
	return ""
}
