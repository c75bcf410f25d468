package agones_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/agones"
	"github.com/rewind-gg/rewind/agones/agonestest"
)

// guard bounds every wait of these tests, so that a broken test fails rather
// than hangs; nothing waits for it to pass.
const guard = 10 * time.Second

// receive returns the next value of ch.
func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatalf("nothing received in %v", guard)
		panic("unreachable")
	}
}

func newClient(fake *agonestest.Server) *agones.Client {
	return agones.New(agones.Config{Addr: fake.Addr()})
}

// TestCalls checks that every method sends the documented method, path and
// body, and that the fake's GameServer changes as the SDK server's would.
func TestCalls(t *testing.T) {
	fake := agonestest.New(t)
	fake.SetList("players", 10)
	fake.SetCounter("rooms", 0, 4)
	c := newClient(fake)
	ctx := t.Context()
	counter := func(count, capacity int64) func(*testing.T) {
		return func(t *testing.T) {
			if n, c, _ := fake.Counter("rooms"); n != count || c != capacity {
				t.Errorf("counter rooms %d/%d, want %d/%d", n, c, count, capacity)
			}
		}
	}
	two, three := int64(2), int64(3)

	state := func(want string) func(*testing.T) {
		return func(t *testing.T) {
			if got := fake.GameServer().State; got != want {
				t.Errorf("state %q, want %q", got, want)
			}
		}
	}
	players := func(want ...string) func(*testing.T) {
		return func(t *testing.T) {
			if got := fake.Players(); !slices.Equal(got, want) {
				t.Errorf("players %q, want %q", got, want)
			}
		}
	}
	listValues := func(want ...string) func(*testing.T) {
		return func(t *testing.T) {
			if got := fake.ListValues("players"); !slices.Equal(got, want) {
				t.Errorf("list values %q, want %q", got, want)
			}
		}
	}
	var gs agones.GameServer

	steps := []struct {
		name  string
		call  func() error
		want  agonestest.Call
		check func(*testing.T)
	}{
		{"Ready", func() error { return c.Ready(ctx) },
			agonestest.Call{Method: "POST", Path: "/ready", Body: `{}`}, state("Ready")},
		{"Health", func() error { return c.Health(ctx) },
			agonestest.Call{Method: "POST", Path: "/health", Body: `{}`}, nil},
		{"Reserve", func() error { return c.Reserve(ctx, 5*time.Second) },
			agonestest.Call{Method: "POST", Path: "/reserve", Body: `{"seconds":"5"}`}, state("Reserved")},
		{"Reserve/round up", func() error { return c.Reserve(ctx, 1500*time.Millisecond) },
			agonestest.Call{Method: "POST", Path: "/reserve", Body: `{"seconds":"2"}`}, nil},
		{"Reserve/forever", func() error { return c.Reserve(ctx, 0) },
			agonestest.Call{Method: "POST", Path: "/reserve", Body: `{"seconds":"0"}`}, nil},
		{"SetLabel", func() error { return c.SetLabel(ctx, "map", "de_dust") },
			agonestest.Call{Method: "PUT", Path: "/metadata/label", Body: `{"key":"map","value":"de_dust"}`},
			func(t *testing.T) {
				if got := fake.GameServer().Labels["agones.dev/sdk-map"]; got != "de_dust" {
					t.Errorf("label agones.dev/sdk-map = %q, want de_dust", got)
				}
			}},
		{"SetAnnotation", func() error { return c.SetAnnotation(ctx, "match", "m 42/7") },
			agonestest.Call{Method: "PUT", Path: "/metadata/annotation", Body: `{"key":"match","value":"m 42/7"}`},
			func(t *testing.T) {
				if got := fake.GameServer().Annotations["agones.dev/sdk-match"]; got != "m 42/7" {
					t.Errorf("annotation agones.dev/sdk-match = %q, want %q", got, "m 42/7")
				}
			}},
		{"SetPlayerCapacity", func() error { return c.SetPlayerCapacity(ctx, 2) },
			agonestest.Call{Method: "PUT", Path: "/alpha/player/capacity", Body: `{"count":"2"}`}, nil},
		{"PlayerConnect", func() error { return c.PlayerConnect(ctx, "uzh7i") },
			agonestest.Call{Method: "POST", Path: "/alpha/player/connect", Body: `{"playerID":"uzh7i"}`}, players("uzh7i")},
		{"PlayerConnect/again", func() error { return c.PlayerConnect(ctx, "uzh7i") },
			agonestest.Call{Method: "POST", Path: "/alpha/player/connect", Body: `{"playerID":"uzh7i"}`}, players("uzh7i")},
		{"PlayerDisconnect", func() error { return c.PlayerDisconnect(ctx, "uzh7i") },
			agonestest.Call{Method: "POST", Path: "/alpha/player/disconnect", Body: `{"playerID":"uzh7i"}`}, players()},
		{"AddListValue", func() error { return c.AddListValue(ctx, "players", "player9") },
			agonestest.Call{Method: "POST", Path: "/v1beta1/lists/players:addValue", Body: `{"value":"player9"}`}, listValues("player9")},
		{"RemoveListValue", func() error { return c.RemoveListValue(ctx, "players", "player9") },
			agonestest.Call{Method: "POST", Path: "/v1beta1/lists/players:removeValue", Body: `{"value":"player9"}`}, listValues()},
		{"UpdateCounter/diff", func() error { _, err := c.UpdateCounter(ctx, "rooms", agones.CounterUpdate{CountDiff: 1}); return err },
			agonestest.Call{Method: "PATCH", Path: "/v1beta1/counters/rooms", Body: `{"countDiff":"1"}`}, counter(1, 4)},
		{"UpdateCounter/set", func() error {
			_, err := c.UpdateCounter(ctx, "rooms", agones.CounterUpdate{Count: &two, Capacity: &three})
			return err
		},
			agonestest.Call{Method: "PATCH", Path: "/v1beta1/counters/rooms", Body: `{"count":"2","capacity":"3"}`}, counter(2, 3)},
		{"GetCounter", func() error {
			got, err := c.GetCounter(ctx, "rooms")
			if err == nil && got != (agones.Counter{Count: 2, Capacity: 3}) {
				err = fmt.Errorf("GetCounter %+v", got)
			}
			return err
		},
			agonestest.Call{Method: "GET", Path: "/v1beta1/counters/rooms", Body: ``}, nil},
		{"UpdateCounter/set", func() error {
			_, err := c.UpdateCounter(ctx, "rooms", agones.CounterUpdate{Count: new(int64), Capacity: &three})
			return err
		},
			agonestest.Call{Method: "PATCH", Path: "/v1beta1/counters/rooms", Body: `{"count":"0","capacity":"3"}`}, counter(0, 3)},
		{"GameServer", func() (err error) { gs, err = c.GameServer(ctx); return err },
			agonestest.Call{Method: "GET", Path: "/gameserver", Body: ``},
			func(t *testing.T) {
				want := agones.GameServer{
					Name: "local", Namespace: "default",
					Labels:      map[string]string{"agones.dev/sdk-map": "de_dust"},
					Annotations: map[string]string{"agones.dev/sdk-match": "m 42/7"},
					State:       "Reserved", Address: "127.0.0.1",
					Ports:    []agones.Port{{Name: "default", Port: 7777}},
					Lists:    map[string]agones.List{"players": {Capacity: 10, Values: []string{}}},
					Counters: map[string]agones.Counter{"rooms": {Count: 0, Capacity: 3}},
				}
				if !reflect.DeepEqual(gs, want) {
					t.Errorf("GameServer\n got %+v\nwant %+v", gs, want)
				}
				if fgs := fake.GameServer(); !reflect.DeepEqual(gs, fgs) {
					t.Errorf("GameServer %+v, the fake has %+v", gs, fgs)
				}
			}},
		{"Shutdown", func() error { return c.Shutdown(ctx) },
			agonestest.Call{Method: "POST", Path: "/shutdown", Body: `{}`}, state("Shutdown")},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			n := len(fake.Calls())
			if err := step.call(); err != nil {
				t.Fatal(err)
			}
			calls := fake.Calls()
			if len(calls) != n+1 {
				t.Fatalf("%d calls, want 1: %+v", len(calls)-n, calls[n:])
			}
			if calls[n] != step.want {
				t.Errorf("call %+v, want %+v", calls[n], step.want)
			}
			if step.check != nil {
				step.check(t)
			}
		})
	}
}

func TestReserveNegative(t *testing.T) {
	fake := agonestest.New(t)
	err := newClient(fake).Reserve(t.Context(), -time.Second)
	if want := "agones: POST /reserve: negative duration -1s"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	if calls := fake.Calls(); len(calls) != 0 {
		t.Errorf("calls %+v, want none", calls)
	}
}

// serveFile returns a server that answers GET path with the file name.
func serveFile(t *testing.T, path, name string) *httptest.Server {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return serveBody(t, path, string(data))
}

// serveBody returns a server that answers GET path with body.
func serveBody(t *testing.T, path, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "GET" || r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestGameServerDecoding(t *testing.T) {
	tests := []struct {
		name string
		body string // a file in testdata if it starts with "testdata/"
		want agones.GameServer
	}{{
		// The example of rest.md, "GameServer" (Agones 1.56).
		name: "docs",
		body: "testdata/gameserver-docs.json",
		want: agones.GameServer{
			Name: "local", Namespace: "default",
			Labels:      map[string]string{"islocal": "true"},
			Annotations: map[string]string{"annotation": "true"},
			State:       "Ready", Address: "127.0.0.1",
			Ports: []agones.Port{{Name: "default", Port: 7777}},
		},
	}, {
		// A GameServer of a fleet, allocated, as the SDK server writes it
		// (every field of sdk.proto's GameServer, int64s as strings).
		name: "full",
		body: "testdata/gameserver.json",
		want: agones.GameServer{
			Name: "rewind-fleet-x7k2p-9qz4d", Namespace: "games",
			Labels: map[string]string{
				"agones.dev/fleet":         "rewind-fleet",
				"agones.dev/gameserverset": "rewind-fleet-x7k2p",
				"agones.dev/sdk-map":       "de_dust",
				"mode":                     "ranked",
			},
			Annotations: map[string]string{
				"agones.dev/ready-container-id": "containerd://5b1e0c",
				"agones.dev/sdk-version":        "1.56.0",
				"agones.dev/sdk-match":          "m-42",
			},
			State: "Allocated", Address: "10.128.0.17",
			Ports:    []agones.Port{{Name: "game", Port: 7412}, {Name: "admin", Port: 7413}},
			Counters: map[string]agones.Counter{"rooms": {Count: 1, Capacity: 10}},
			Lists:    map[string]agones.List{"players": {Capacity: 100, Values: []string{"player0", "player1"}}},
			Players:  []string{"uzh7i", "3zh7i"},
		},
	}, {
		// Empty maps and lists, an unset message as null, as EmitUnpopulated
		// writes them.
		name: "unpopulated",
		body: `{"object_meta":{"name":"gs","namespace":"default","uid":"","resource_version":"","generation":"0","creation_timestamp":"0","deletion_timestamp":"0","annotations":{},"labels":{}},"spec":null,"status":{"state":"Scheduled","address":"","addresses":[],"ports":[],"players":null,"counters":{},"lists":{}}}`,
		want: agones.GameServer{Name: "gs", Namespace: "default", State: "Scheduled"},
	}, {
		// protobuf's JSON mapping also allows lowerCamelCase names and int32s
		// as strings.
		name: "camel case, int32 as string",
		body: `{"objectMeta":{"name":"gs","namespace":"ns"},"status":{"state":"Ready","ports":[{"name":"p","port":"7777"}]}}`,
		want: agones.GameServer{Name: "gs", Namespace: "ns", State: "Ready", Ports: []agones.Port{{Name: "p", Port: 7777}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var srv *httptest.Server
			if strings.HasPrefix(tt.body, "testdata/") {
				srv = serveFile(t, "/gameserver", tt.body)
			} else {
				srv = serveBody(t, "/gameserver", tt.body)
			}
			gs, err := agones.New(agones.Config{Addr: srv.Listener.Addr().String()}).GameServer(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gs, tt.want) {
				t.Errorf("GameServer\n got %+v\nwant %+v", gs, tt.want)
			}
		})
	}

	t.Run("bad port", func(t *testing.T) {
		srv := serveBody(t, "/gameserver", `{"status":{"ports":[{"name":"p","port":"x"}]}}`)
		_, err := agones.New(agones.Config{Addr: srv.Listener.Addr().String()}).GameServer(t.Context())
		if err == nil || !strings.HasPrefix(err.Error(), "agones: GET /gameserver: decoding the response: ") {
			t.Errorf("error %v, want a decoding error", err)
		}
	})
}

// TestWatchGameServerDocs reads the stream of the example of rest.md, "Watch
// GameServer", until the server ends it.
func TestWatchGameServerDocs(t *testing.T) {
	srv := serveFile(t, "/watch/gameserver", "testdata/watch-docs.jsonl")
	c := agones.New(agones.Config{Addr: srv.Listener.Addr().String()})
	var got []agones.GameServer
	err := c.WatchGameServer(t.Context(), func(gs agones.GameServer) { got = append(got, gs) })
	want := agones.GameServer{
		Name: "local", Namespace: "default",
		Labels:      map[string]string{"islocal": "true"},
		Annotations: map[string]string{"annotation": "true"},
		State:       "Ready", Address: "127.0.0.1",
		Ports: []agones.Port{{Name: "default", Port: 7777}},
	}
	if len(got) != 3 {
		t.Fatalf("%d updates, want 3", len(got))
	}
	for _, gs := range got {
		if !reflect.DeepEqual(gs, want) {
			t.Errorf("update %+v, want %+v", gs, want)
		}
	}
	if err == nil || !errors.Is(err, io.EOF) || err.Error() != "agones: GET /watch/gameserver: the SDK server ended the stream: EOF" {
		t.Errorf("error %v, want the end of the stream", err)
	}
}

// TestWatchGameServerErrorChunk checks that an error the gateway writes in the
// stream ({"error": Status}, runtime.HTTPStreamError) ends the watch.
func TestWatchGameServerErrorChunk(t *testing.T) {
	srv := serveBody(t, "/watch/gameserver",
		`{"result":{"object_meta":{"name":"gs"},"status":{"state":"Ready"}}}`+"\n"+
			`{"error":{"code":14,"message":"transport is closing","details":[]}}`+"\n")
	c := agones.New(agones.Config{Addr: srv.Listener.Addr().String()})
	n := 0
	err := c.WatchGameServer(t.Context(), func(agones.GameServer) { n++ })
	if n != 1 {
		t.Errorf("%d updates, want 1", n)
	}
	if want := "agones: GET /watch/gameserver: error in the stream: transport is closing (code 14)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

func TestWatchGameServer(t *testing.T) {
	fake := agonestest.New(t)
	c := newClient(fake)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	updates := make(chan agones.GameServer)
	done := make(chan error, 1)
	go func() {
		done <- c.WatchGameServer(ctx, func(gs agones.GameServer) {
			select {
			case updates <- gs:
			case <-ctx.Done():
			}
		})
	}()

	// The current GameServer first.
	if gs, want := receive(t, updates), fake.GameServer(); !reflect.DeepEqual(gs, want) || gs.State != "Scheduled" {
		t.Fatalf("first update %+v, want %+v", gs, want)
	}
	if err := fake.Await(ctx, "GET", "/watch/gameserver", 1); err != nil {
		t.Fatal(err)
	}
	if calls := fake.Calls(); calls[0] != (agonestest.Call{Method: "GET", Path: "/watch/gameserver"}) {
		t.Errorf("call %+v", calls[0])
	}

	// An allocation, with its metadata.
	fake.Allocate(map[string]string{"match": "m-42"}, map[string]string{"map": "de_dust"})
	gs := receive(t, updates)
	want := agones.GameServer{
		Name: "local", Namespace: "default",
		Labels:      map[string]string{"match": "m-42"},
		Annotations: map[string]string{"map": "de_dust", "agones.dev/last-allocated": "2018-07-17T02:43:16Z"},
		State:       "Allocated", Address: "127.0.0.1",
		Ports: []agones.Port{{Name: "default", Port: 7777}},
	}
	if !reflect.DeepEqual(gs, want) {
		t.Errorf("update\n got %+v\nwant %+v", gs, want)
	}

	// A change made through the SDK.
	if err := c.SetLabel(ctx, "round", "3"); err != nil {
		t.Fatal(err)
	}
	if gs := receive(t, updates); gs.Labels["agones.dev/sdk-round"] != "3" || gs.Labels["match"] != "m-42" {
		t.Errorf("labels %v after SetLabel", gs.Labels)
	}

	cancel()
	if err := receive(t, done); err != context.Canceled {
		t.Errorf("error %v, want %v", err, context.Canceled)
	}
}

// TestWatchGameServerServerGone checks that the watch ends with an error, not
// ctx's, when the SDK server goes away.
func TestWatchGameServerServerGone(t *testing.T) {
	fake := agonestest.New(t)
	c := newClient(fake)
	updates := make(chan agones.GameServer, 1)
	done := make(chan error, 1)
	go func() {
		done <- c.WatchGameServer(t.Context(), func(gs agones.GameServer) { updates <- gs })
	}()
	receive(t, updates)
	fake.Close()
	err := receive(t, done)
	if err == nil || errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "agones: GET /watch/gameserver: ") {
		t.Errorf("error %v, want the stream's", err)
	}
}

// TestWatchHasNoTimeout checks that the watch is not bound by the timeout of
// Config.HTTP, which the other calls are.
func TestWatchHasNoTimeout(t *testing.T) {
	next := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gameserver": // answers only when the client gives up
			<-r.Context().Done()
		case "/watch/gameserver":
			io.WriteString(w, `{"result":{"status":{"state":"Ready"}}}`+"\n")
			w.(http.Flusher).Flush()
			select {
			case <-next:
			case <-r.Context().Done():
				return
			}
			io.WriteString(w, `{"result":{"status":{"state":"Allocated"}}}`+"\n")
		}
	}))
	t.Cleanup(srv.Close)
	defer close(next) // before srv.Close, so the watch handler returns
	c := agones.New(agones.Config{Addr: srv.Listener.Addr().String(), HTTP: &http.Client{Timeout: time.Millisecond}})

	states := make(chan string, 2)
	done := make(chan error, 1)
	go func() {
		done <- c.WatchGameServer(t.Context(), func(gs agones.GameServer) { states <- gs.State })
	}()
	if s := receive(t, states); s != "Ready" {
		t.Fatalf("state %q", s)
	}
	// The watch is open; a call with the same client times out, so the
	// timeout has passed.
	if _, err := c.GameServer(t.Context()); err == nil || !strings.Contains(err.Error(), "Client.Timeout exceeded") {
		t.Fatalf("GameServer: error %v, want a timeout", err)
	}
	next <- struct{}{}
	if s := receive(t, states); s != "Allocated" {
		t.Errorf("state %q", s)
	}
	if err := receive(t, done); !errors.Is(err, io.EOF) {
		t.Errorf("error %v, want the end of the stream", err)
	}
}

func TestUnreachable(t *testing.T) {
	t.Run("never reached", func(t *testing.T) {
		fake := agonestest.New(t)
		addr := fake.Addr()
		fake.Close()
		err := newClient(fake).Ready(t.Context())
		if err == nil {
			t.Fatal("no error")
		}
		want := "agones: POST /ready: dial tcp " + addr + ": connect: connection refused"
		if runtime.GOOS == "linux" && err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
		var opErr *net.OpError
		if !errors.As(err, &opErr) || opErr.Op != "dial" || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("error %#v, want a refused dial", err)
		}
	})
	t.Run("gone", func(t *testing.T) {
		fake := agonestest.New(t)
		c := newClient(fake)
		if err := c.Ready(t.Context()); err != nil {
			t.Fatal(err)
		}
		fake.Close()
		err := c.Health(t.Context())
		if err == nil || !strings.HasPrefix(err.Error(), "agones: POST /health: ") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("no address", func(t *testing.T) {
		err := agones.New(agones.Config{}).Ready(t.Context())
		if want := "agones: POST /ready: no SDK server address"; err == nil || err.Error() != want {
			t.Errorf("error %v, want %s", err, want)
		}
	})
}

func TestStatusErrors(t *testing.T) {
	fake := agonestest.New(t)
	fake.SetList("players", 1, "player0")
	c := newClient(fake)
	ctx := t.Context()
	tests := []struct {
		name string
		call func() error
		want agones.StatusError
	}{{
		name: "invalid label key",
		call: func() error { return c.SetLabel(ctx, "bad key", "x") },
		want: agones.StatusError{Method: "PUT", Path: "/metadata/label", StatusCode: 400, Status: "400 Bad Request", Code: 3,
			Message: `invalid label key "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`},
	}, {
		name: "player capacity",
		call: func() error { return c.PlayerConnect(ctx, "uzh7i") },
		want: agones.StatusError{Method: "POST", Path: "/alpha/player/connect", StatusCode: 500, Status: "500 Internal Server Error", Code: 2,
			Message: "players are already at capacity"},
	}, {
		name: "undeclared list",
		call: func() error { return c.AddListValue(ctx, "rooms", "r1") },
		want: agones.StatusError{Method: "POST", Path: "/v1beta1/lists/rooms:addValue", StatusCode: 500, Status: "500 Internal Server Error", Code: 2,
			Message: "list not found: rooms"},
	}, {
		name: "full list",
		call: func() error { return c.AddListValue(ctx, "players", "player1") },
		want: agones.StatusError{Method: "POST", Path: "/v1beta1/lists/players:addValue", StatusCode: 500, Status: "500 Internal Server Error", Code: 2,
			Message: "out of range. No available capacity. Current Capacity: 1, List Size: 1"},
	}, {
		name: "value not in list",
		call: func() error { return c.RemoveListValue(ctx, "players", "player1") },
		want: agones.StatusError{Method: "POST", Path: "/v1beta1/lists/players:removeValue", StatusCode: 500, Status: "500 Internal Server Error", Code: 2,
			Message: "not found: value player1 not in list players"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var se *agones.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("error %v, want a *StatusError", err)
			}
			if *se != tt.want {
				t.Errorf("error %+v, want %+v", *se, tt.want)
			}
			if want := "agones: " + tt.want.Method + " " + tt.want.Path + ": " + tt.want.Status + ": " + tt.want.Message; err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
		})
	}

	t.Run("value already in list", func(t *testing.T) {
		fake.SetList("players", 2, "player0")
		err := c.AddListValue(ctx, "players", "player0")
		if want := "agones: POST /v1beta1/lists/players:addValue: 500 Internal Server Error: already exists. Value: player0 already in List: players"; err == nil || err.Error() != want {
			t.Errorf("error %v, want %s", err, want)
		}
	})

	t.Run("not JSON", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/ready":
				http.Error(w, "upstream connect error", http.StatusServiceUnavailable)
			default:
				w.WriteHeader(http.StatusBadGateway)
			}
		}))
		t.Cleanup(srv.Close)
		c := agones.New(agones.Config{Addr: srv.Listener.Addr().String()})
		if err, want := c.Ready(ctx), "agones: POST /ready: 503 Service Unavailable: upstream connect error"; err == nil || err.Error() != want {
			t.Errorf("error %v, want %s", err, want)
		}
		if err, want := c.Health(ctx), "agones: POST /health: 502 Bad Gateway"; err == nil || err.Error() != want {
			t.Errorf("error %v, want %s", err, want)
		}
		err := c.WatchGameServer(ctx, func(agones.GameServer) { t.Error("update") })
		var se *agones.StatusError
		if !errors.As(err, &se) || se.StatusCode != http.StatusBadGateway || se.Path != "/watch/gameserver" {
			t.Errorf("error %v, want a 502 *StatusError", err)
		}
	})
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		value   string
		want    agones.Config
		present bool
		err     string
	}{
		{value: "", present: false},
		{value: "9358", want: agones.Config{Addr: "localhost:9358"}, present: true},
		{value: "65535", want: agones.Config{Addr: "localhost:65535"}, present: true},
		{value: "0", present: true, err: `agones: AGONES_SDK_HTTP_PORT="0" is not a port number (1 to 65535)`},
		{value: "65536", present: true, err: `agones: AGONES_SDK_HTTP_PORT="65536" is not a port number (1 to 65535)`},
		{value: "-1", present: true, err: `agones: AGONES_SDK_HTTP_PORT="-1" is not a port number (1 to 65535)`},
		{value: "http", present: true, err: `agones: AGONES_SDK_HTTP_PORT="http" is not a port number (1 to 65535)`},
		{value: " 9358", present: true, err: `agones: AGONES_SDK_HTTP_PORT=" 9358" is not a port number (1 to 65535)`},
	}
	for _, tt := range tests {
		getenv := func(k string) string {
			if k == agones.EnvPort {
				return tt.value
			}
			return ""
		}
		cfg, present, err := agones.ConfigFromEnv(getenv)
		if cfg != tt.want || present != tt.present {
			t.Errorf("%s=%q: %+v, %v, want %+v, %v", agones.EnvPort, tt.value, cfg, present, tt.want, tt.present)
		}
		if (err == nil) != (tt.err == "") || err != nil && err.Error() != tt.err {
			t.Errorf("%s=%q: error %v, want %q", agones.EnvPort, tt.value, err, tt.err)
		}
	}
}
