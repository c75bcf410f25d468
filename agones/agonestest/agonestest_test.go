package agonestest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/agones/agonestest"
)

// do sends a request to the fake and returns the status and the body.
func do(t *testing.T, fake *agonestest.Server, method, path, body string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, "http://"+fake.Addr()+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestAnswers checks the fake's answers, in order, against the SDK server's:
// status, and body as the grpc-gateway writes it.
func TestAnswers(t *testing.T) {
	fake := agonestest.New(t)
	fake.SetList("l", 2, "x")
	fake.SetCounter("rooms", 1, 3)
	const (
		methodNotAllowed = `{"code":12,"message":"Method Not Allowed","details":[]}`
		notFound         = `{"code":5,"message":"Not Found","details":[]}`
	)
	steps := []struct {
		method, path, body string
		status             int
		want               string // the body; a prefix if it ends with "…"
	}{
		// Routing (runtime.ServeMux).
		{"GET", "/ready", "", 501, methodNotAllowed},
		{"DELETE", "/metadata/label", "", 501, methodNotAllowed},
		{"POST", "/gameserver", "{}", 501, methodNotAllowed},
		{"GET", "/nope", "", 404, notFound},
		{"POST", "/ready:now", "{}", 404, notFound},
		// GET /v1beta1/lists/{name} takes "l:sortValues" for a name.
		{"POST", "/v1beta1/lists/l:sortValues", `{"value":"x"}`, 501, methodNotAllowed},

		// Bodies: a JSON object with exactly the documented fields.
		{"POST", "/ready", "", 400, `{"code":3,"message":"agonestest: no body: POST /ready takes a JSON object","details":[]}`},
		{"POST", "/health", "", 400, ``},
		{"POST", "/ready", "[]", 400, `{"code":3,"message":"agonestest: the body is not a JSON object: []","details":[]}`},
		{"POST", "/ready", `{"now":true}`, 400, `{"code":3,"message":"agonestest: unknown field \"now\" in the body of POST /ready","details":[]}`},
		{"PUT", "/metadata/label", `{"value":"v"}`, 400, `{"code":3,"message":"agonestest: missing field \"key\" in the body of PUT /metadata/label","details":[]}`},
		{"PUT", "/metadata/label", `{"key":5,"value":"v"}`, 400, `{"code":3,"message":"agonestest: field \"key\": 5 is not a string","details":[]}`},
		{"PUT", "/metadata/label", `{"key":"","value":"v"}`, 400, `{"code":3,"message":"invalid label key \"\": name part must be non-empty","details":[]}`},
		{"PUT", "/metadata/label", `{"key":"k","value":"not valid"}`, 400, `{"code":3,"message":"invalid label value \"not valid\" for key \"k\": …`},
		{"PUT", "/metadata/annotation", `{"key":"a/b/c","value":"any thing"}`, 400, `{"code":3,"message":"invalid annotation key \"a/b/c\": name part …`},
		{"POST", "/reserve", `{}`, 400, `{"code":3,"message":"agonestest: missing field \"seconds\" in the body of POST /reserve","details":[]}`},
		{"POST", "/reserve", `{"seconds":"five"}`, 400, `{"code":3,"message":"agonestest: field \"seconds\": \"five\" is not an int64","details":[]}`},

		// Lifecycle and metadata.
		{"POST", "/ready", `{ }`, 200, `{}`},
		{"POST", "/health", `{}`, 200, `{}`},
		{"POST", "/reserve", `{"seconds":"5"}`, 200, `{}`},
		{"POST", "/reserve", `{"seconds":5}`, 200, `{}`},
		{"POST", "/allocate", `{}`, 200, `{}`},
		{"PUT", "/metadata/label", `{"key":"k","value":""}`, 200, `{}`},
		{"PUT", "/metadata/annotation", `{"key":"example.com/k","value":"any thing"}`, 200, `{}`},

		// Player tracking.
		{"POST", "/alpha/player/connect", `{"playerID":"a"}`, 500, `{"code":2,"message":"players are already at capacity","details":[]}`},
		{"PUT", "/alpha/player/capacity", `{"count":5}`, 200, `{}`},
		{"GET", "/alpha/player/capacity", ``, 200, `{"count":"5"}`},
		{"POST", "/alpha/player/connect", `{"playerID":"a"}`, 200, `{"bool":true}`},
		{"POST", "/alpha/player/connect", `{"playerID":"a"}`, 200, `{"bool":false}`},
		{"POST", "/alpha/player/connect", `{"playerId":"b"}`, 400, `{"code":3,"message":"agonestest: unknown field \"playerId\" in the body of POST /alpha/player/connect","details":[]}`},
		{"GET", "/alpha/player/count", ``, 200, `{"count":"1"}`},
		{"GET", "/alpha/player/connected", ``, 200, `{"list":["a"]}`},
		{"GET", "/alpha/player/connected/a", ``, 200, `{"bool":true}`},
		{"GET", "/alpha/player/connected/b", ``, 200, `{"bool":false}`},
		{"POST", "/alpha/player/disconnect", `{"playerID":"b"}`, 200, `{"bool":false}`},
		{"POST", "/alpha/player/disconnect", `{"playerID":"a"}`, 200, `{"bool":true}`},
		{"GET", "/alpha/player/connected", ``, 200, `{"list":[]}`},

		// Lists.
		{"GET", "/v1beta1/lists/players", ``, 500, `{"code":2,"message":"list not found: players","details":[]}`},
		{"GET", "/v1beta1/lists/l", ``, 200, `{"name":"l","capacity":"2","values":["x"]}`},
		{"POST", "/v1beta1/lists/l:addValue", `{"value":"x"}`, 500, `{"code":2,"message":"already exists. Value: x already in List: l","details":[]}`},
		{"POST", "/v1beta1/lists/l:addValue", `{"value":"y"}`, 200, `{"name":"l","capacity":"2","values":["x","y"]}`},
		{"POST", "/v1beta1/lists/l:addValue", `{"value":"z"}`, 500, `{"code":2,"message":"out of range. No available capacity. Current Capacity: 2, List Size: 2","details":[]}`},
		{"POST", "/v1beta1/lists/l:removeValue", `{"value":"z"}`, 500, `{"code":2,"message":"not found: value z not in list l","details":[]}`},
		{"POST", "/v1beta1/lists/l:removeValue", `{"value":"x"}`, 200, `{"name":"l","capacity":"2","values":["y"]}`},
		{"POST", "/v1beta1/lists/l:addValue", `{"name":"l","value":"w"}`, 400, `{"code":3,"message":"agonestest: unknown field \"name\" in the body of POST /v1beta1/lists/{name}:addValue","details":[]}`},
		// The gateway takes "l:addValue" for the name of GET's {name}.
		{"GET", "/v1beta1/lists/l:addValue", ``, 500, `{"code":2,"message":"list not found: l:addValue","details":[]}`},

		// Counters (the fake's Counter rooms is declared below, with a
		// count of 1 and a capacity of 3).
		{"PATCH", "/v1beta1/counters/none", `{"countDiff":"1"}`, 500, `{"code":2,"message":"counter not found: none","details":[]}`},
		{"PATCH", "/v1beta1/counters/rooms", `{}`, 500, `{"code":2,"message":"invalid argument. Malformed CounterUpdateRequest: name:\"rooms\"","details":[]}`},
		{"PATCH", "/v1beta1/counters/rooms", `{"countDiff":"-2"}`, 500, `{"code":2,"message":"out of range. Count must be within range [0,Capacity]. Found Count: -1, Capacity: 3","details":[]}`},
		{"PATCH", "/v1beta1/counters/rooms", `{"countDiff":"1"}`, 200, `{"name":"rooms","count":"2","capacity":"3"}`},
		{"PATCH", "/v1beta1/counters/rooms", `{"capacity":"2","countDiff":-1}`, 200, `{"name":"rooms","count":"1","capacity":"2"}`},
		{"PATCH", "/v1beta1/counters/rooms", `{"countDiff":"1"}`, 200, `{"name":"rooms","count":"2","capacity":"2"}`},
		// A capacity below the count truncates it.
		{"PATCH", "/v1beta1/counters/rooms", `{"capacity":"1"}`, 200, `{"name":"rooms","count":"1","capacity":"1"}`},
		{"PATCH", "/v1beta1/counters/rooms", `{"count":"0","capacity":"5"}`, 200, `{"name":"rooms","count":"0","capacity":"5"}`},
		{"PATCH", "/v1beta1/counters/rooms", `{"count_diff":"1"}`, 400, `{"code":3,"message":"agonestest: unknown field \"count_diff\" in the body of PATCH /v1beta1/counters/{name}","details":[]}`},
		{"GET", "/v1beta1/counters/rooms", ``, 200, `{"name":"rooms","count":"0","capacity":"5"}`},

		{"POST", "/shutdown", `{}`, 200, `{}`},
	}
	for _, s := range steps {
		status, body := do(t, fake, s.method, s.path, s.body)
		prefix, isPrefix := strings.CutSuffix(s.want, "…")
		if status != s.status || !isPrefix && body != s.want || isPrefix && !strings.HasPrefix(body, prefix) {
			t.Errorf("%s %s %s: %d %s\nwant %d %s", s.method, s.path, s.body, status, body, s.status, s.want)
		}
	}

	calls := fake.Calls()
	if len(calls) != len(steps) {
		t.Fatalf("%d calls, want %d", len(calls), len(steps))
	}
	for i, s := range steps {
		want := agonestest.Call{Method: s.method, Path: s.path, Body: strings.ReplaceAll(s.body, " ", "")}
		if strings.Contains(s.body, "any thing") || strings.Contains(s.body, "not valid") {
			want.Body = s.body
		}
		if calls[i] != want {
			t.Errorf("call %d: %+v, want %+v", i, calls[i], want)
		}
	}

	gs := fake.GameServer()
	if gs.State != "Shutdown" || gs.Labels["agones.dev/sdk-k"] != "" || len(gs.Labels) != 1 ||
		!reflect.DeepEqual(gs.Annotations, map[string]string{"agones.dev/sdk-example.com/k": "any thing"}) {
		t.Errorf("GameServer %+v", gs)
	}
	if got := fake.ListValues("l"); !reflect.DeepEqual(got, []string{"y"}) {
		t.Errorf("list values %q", got)
	}
	if got := fake.Players(); len(got) != 0 {
		t.Errorf("players %q", got)
	}
}

// TestGameServerJSON pins the GameServer document, as the SDK server's
// gateway writes it: proto field names, every field, int64s as strings.
func TestGameServerJSON(t *testing.T) {
	fake := agonestest.New(t)
	fake.SetList("l", 3)
	const want = `{"object_meta":{"name":"local","namespace":"default","uid":"1234","resource_version":"2","generation":"1",` +
		`"creation_timestamp":"1531795395","deletion_timestamp":"0","annotations":{},"labels":{}},` +
		`"spec":{"health":{"disabled":false,"period_seconds":5,"failure_threshold":3,"initial_delay_seconds":5}},` +
		`"status":{"state":"Scheduled","address":"127.0.0.1","addresses":[{"type":"InternalIP","address":"127.0.0.1"}],` +
		`"ports":[{"name":"default","port":7777}],"players":{"count":"0","capacity":"0","ids":[]},"counters":{},` +
		`"lists":{"l":{"capacity":"3","values":[]}}}}`
	status, body := do(t, fake, "GET", "/gameserver", "")
	if status != 200 || body != want {
		t.Errorf("GET /gameserver: %d %s\nwant 200 %s", status, body, want)
	}
}

func TestWatch(t *testing.T) {
	fake := agonestest.New(t)
	req, err := http.NewRequestWithContext(t.Context(), "GET", "http://"+fake.Addr()+"/watch/gameserver", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s %v", resp.Status, resp.Header)
	}
	lines := bufio.NewReader(resp.Body)
	next := func() (state string, labels map[string]string) {
		t.Helper()
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var chunk struct {
			Result struct {
				ObjectMeta struct {
					Name   string            `json:"name"`
					Labels map[string]string `json:"labels"`
				} `json:"object_meta"`
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &chunk); err != nil || chunk.Result.ObjectMeta.Name != "local" {
			t.Fatalf("chunk %s: %v", line, err)
		}
		return chunk.Result.Status.State, chunk.Result.ObjectMeta.Labels
	}
	if state, _ := next(); state != "Scheduled" {
		t.Errorf("first state %q", state)
	}
	fake.SetState("Ready")
	if state, _ := next(); state != "Ready" {
		t.Errorf("state %q", state)
	}
	fake.Allocate(map[string]string{"a": "1"}, nil)
	if state, labels := next(); state != "Allocated" || labels["a"] != "1" {
		t.Errorf("state %q, labels %v", state, labels)
	}
	fake.Close()
	if rest, err := io.ReadAll(resp.Body); err != nil || len(rest) != 0 {
		t.Errorf("after Close: %q, %v", rest, err)
	}
}

func TestAwait(t *testing.T) {
	fake := agonestest.New(t)
	go func() {
		for range 3 {
			req, _ := http.NewRequest("POST", "http://"+fake.Addr()+"/health", strings.NewReader("{}"))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := fake.Await(ctx, "POST", "/health", 3); err != nil {
		t.Fatal(err)
	}

	ctx, cancel = context.WithCancel(t.Context())
	cancel()
	err := fake.Await(ctx, "POST", "/health", 4)
	if want := "agonestest: awaiting 4 calls POST /health, have 3: context canceled"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

func TestClose(t *testing.T) {
	fake := agonestest.New(t)
	addr := fake.Addr()
	if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
		t.Errorf("address %s, want loopback", addr)
	}
	if status, _ := do(t, fake, "POST", "/ready", "{}"); status != 200 {
		t.Fatalf("status %d", status)
	}
	fake.Close()
	fake.Close()
	// The port is free now, and another process may take it: what tells
	// that the fake no longer answers is that it records no call.
	client := &http.Client{Transport: &http.Transport{}}
	if resp, err := client.Post("http://"+addr+"/ready", "application/json", strings.NewReader("{}")); err == nil {
		resp.Body.Close()
	}
	if calls := fake.Calls(); len(calls) != 1 {
		t.Errorf("calls after Close: %+v", calls[1:])
	}
}
