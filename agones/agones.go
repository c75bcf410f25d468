package agones

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// EnvPort is the environment variable in which Agones gives the game server
// the port of the SDK server's HTTP gateway, on localhost.
const EnvPort = "AGONES_SDK_HTTP_PORT"

// defaultTimeout bounds every request but the watch when Config.HTTP is nil,
// and every dial.
const defaultTimeout = 5 * time.Second

// maxResponse bounds the response bodies the client reads; maxErrorBody
// bounds the part of an error body it reads.
const (
	maxResponse  = 4 << 20
	maxErrorBody = 64 << 10
)

// Config configures a Client.
type Config struct {
	// Addr is the host:port of the SDK server's HTTP gateway, e.g.
	// "localhost:9358".
	Addr string

	// HTTP is the client requests are sent with. If nil, a client with a
	// 5 s timeout is used, with its own transport that never uses a proxy.
	// The watch uses a copy of the client without its timeout: it ends with
	// its context.
	HTTP *http.Client
}

// ConfigFromEnv returns the configuration from the environment, read with
// getenv (usually os.Getenv), and whether Agones is present, that is whether
// the variable EnvPort is set (to a non-empty value). The address is localhost
// on that port, as the Agones documentation prescribes. A set but invalid port
// is an error naming the variable; Agones is then reported present.
func ConfigFromEnv(getenv func(string) string) (Config, bool, error) {
	v := getenv(EnvPort)
	if v == "" {
		return Config{}, false, nil
	}
	port, err := strconv.ParseUint(v, 10, 16)
	if err != nil || port == 0 {
		return Config{}, true, fmt.Errorf("agones: %s=%q is not a port number (1 to 65535)", EnvPort, v)
	}
	return Config{Addr: net.JoinHostPort("localhost", strconv.FormatUint(port, 10))}, true, nil
}

// A Client talks to the REST gateway of an Agones SDK server. Its methods may
// be called from several goroutines at once.
type Client struct {
	addr  string
	http  *http.Client // every request but the watch
	watch *http.Client // the watch: http without its timeout
}

// New returns a client for the SDK server cfg describes. It does not connect:
// the first request does.
func New(cfg Config) *Client {
	hc := cfg.HTTP
	if hc == nil {
		hc = &http.Client{Transport: newTransport(), Timeout: defaultTimeout}
	}
	wc := *hc
	wc.Timeout = 0
	return &Client{addr: cfg.Addr, http: hc, watch: &wc}
}

// newTransport returns the transport of the default client. The SDK server is
// a sidecar reached on the pod's loopback, never through a proxy.
func newTransport() *http.Transport {
	d := &net.Dialer{Timeout: defaultTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		DialContext:         d.DialContext,
		MaxIdleConns:        4,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}
}

// empty is the body of the calls that take the SDK's Empty message.
type empty struct{}

// keyValue is the body of PUT /metadata/label and PUT /metadata/annotation.
type keyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Ready tells Agones that the game server is ready to accept players
// (POST /ready): the GameServer moves to the state RequestReady, then Ready.
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/ready", empty{}, nil)
}

// Health sends one health ping (POST /health). Agones marks the GameServer
// Unhealthy when pings stop for longer than its health check allows, so call
// it periodically, more often than spec.health.periodSeconds.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/health", empty{}, nil)
}

// Shutdown tells Agones that the session is over (POST /shutdown): the
// GameServer moves to the state Shutdown and Agones deletes it.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/shutdown", empty{}, nil)
}

// Allocate moves the GameServer to the state Allocated itself (POST
// /allocate), as an allocation would, without metadata or Counter and List
// actions: an Allocated GameServer is not deleted by a Fleet's scale down.
func (c *Client) Allocate(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/allocate", empty{}, nil)
}

// Reserve moves the GameServer to the state Reserved for d (POST /reserve),
// after which Agones moves it back to Ready; while it is reserved it is
// neither allocated nor deleted by a scale down. The SDK takes whole seconds:
// a fraction of a second is rounded up, so that a short reservation is not
// taken for 0, which means until the next state change (Ready, Allocated or
// Shutdown). A negative d is an error.
func (c *Client) Reserve(ctx context.Context, d time.Duration) error {
	const method, path = http.MethodPost, "/reserve"
	if d < 0 {
		return fmt.Errorf("agones: %s %s: negative duration %v", method, path, d)
	}
	secs := int64(d / time.Second)
	if d%time.Second != 0 {
		secs++
	}
	body := struct {
		Seconds int64 `json:"seconds,string"`
	}{secs}
	return c.do(ctx, method, path, body, nil)
}

// GameServer returns the backing GameServer (GET /gameserver).
func (c *Client) GameServer(ctx context.Context) (GameServer, error) {
	var w wireGameServer
	if err := c.do(ctx, http.MethodGet, "/gameserver", nil, &w); err != nil {
		return GameServer{}, err
	}
	return w.gameServer(), nil
}

// WatchGameServer calls fn with every GameServer update the SDK server streams
// (GET /watch/gameserver), the first being the GameServer as it is when the
// watch starts, until ctx ends (then it returns ctx's error) or the stream
// breaks (then it returns that error; the caller decides whether to watch
// again). The stream also breaks when the SDK server ends it or sends an
// error in it.
//
// fn is called on the goroutine that called WatchGameServer, one update at a
// time; the stream is not read while fn runs.
func (c *Client) WatchGameServer(ctx context.Context, fn func(GameServer)) error {
	const method, path = http.MethodGet, "/watch/gameserver"
	resp, err := c.send(ctx, c.watch, method, path, nil)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return statusError(method, path, resp)
	}
	dec := json.NewDecoder(resp.Body)
	for {
		// Each chunk is one JSON object followed by a newline: the
		// gateway's {"result": GameServer}, or {"error": Status} when the
		// stream fails.
		var chunk struct {
			Result *wireGameServer `json:"result"`
			Error  *wireStatus     `json:"error"`
		}
		err := dec.Decode(&chunk)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch {
		case err == io.EOF:
			return fmt.Errorf("agones: %s %s: the SDK server ended the stream: %w", method, path, err)
		case err != nil:
			return fmt.Errorf("agones: %s %s: %w", method, path, err)
		case chunk.Error != nil:
			return fmt.Errorf("agones: %s %s: error in the stream: %s (code %d)", method, path, chunk.Error.Message, chunk.Error.Code)
		case chunk.Result != nil:
			fn(chunk.Result.gameServer())
		}
	}
}

// SetLabel sets the label "agones.dev/sdk-"+key to value on the GameServer
// (PUT /metadata/label). Agones adds the prefix; key and value must be valid
// Kubernetes label names and values.
func (c *Client) SetLabel(ctx context.Context, key, value string) error {
	return c.do(ctx, http.MethodPut, "/metadata/label", keyValue{key, value}, nil)
}

// SetAnnotation sets the annotation "agones.dev/sdk-"+key to value on the
// GameServer (PUT /metadata/annotation). Agones adds the prefix.
func (c *Client) SetAnnotation(ctx context.Context, key, value string) error {
	return c.do(ctx, http.MethodPut, "/metadata/annotation", keyValue{key, value}, nil)
}

// playerID is the body of the player tracking calls.
type playerID struct {
	PlayerID string `json:"playerID"`
}

// PlayerConnect records that the player id connected (POST
// /alpha/player/connect): Agones adds it to the GameServer's
// status.players.ids. A player who is already connected is not an error (the
// SDK server answers false and changes nothing); a server at its player
// capacity is. It is an alpha feature, behind the feature gate PlayerTracking,
// which Agones documents as to be replaced by lists.
func (c *Client) PlayerConnect(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, "/alpha/player/connect", playerID{id}, nil)
}

// PlayerDisconnect records that the player id left (POST
// /alpha/player/disconnect). A player who is not connected is not an error
// (the SDK server answers false and changes nothing). It is an alpha feature,
// like PlayerConnect.
func (c *Client) PlayerDisconnect(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, "/alpha/player/disconnect", playerID{id}, nil)
}

// SetPlayerCapacity sets the GameServer's status.players.capacity to n (PUT
// /alpha/player/capacity); PlayerConnect fails once n players are connected.
// It is an alpha feature, like PlayerConnect.
func (c *Client) SetPlayerCapacity(ctx context.Context, n int64) error {
	body := struct {
		Count int64 `json:"count,string"`
	}{n}
	return c.do(ctx, http.MethodPut, "/alpha/player/capacity", body, nil)
}

// listValue is the body of the list value calls.
type listValue struct {
	Value string `json:"value"`
}

// AddListValue appends value to the GameServer's list named list (POST
// /v1beta1/lists/{list}:addValue). The list must be declared in the
// GameServer's spec.lists; a value already in the list and a full list are
// errors. Lists are a beta feature, behind the feature gate CountsAndLists
// (enabled by default since Agones 1.41).
func (c *Client) AddListValue(ctx context.Context, list, value string) error {
	return c.do(ctx, http.MethodPost, "/v1beta1/lists/"+url.PathEscape(list)+":addValue", listValue{value}, nil)
}

// RemoveListValue removes value from the GameServer's list named list (POST
// /v1beta1/lists/{list}:removeValue). A value not in the list is an error.
func (c *Client) RemoveListValue(ctx context.Context, list, value string) error {
	return c.do(ctx, http.MethodPost, "/v1beta1/lists/"+url.PathEscape(list)+":removeValue", listValue{value}, nil)
}

// CounterUpdate is a change of a Counter: a count and a capacity to set
// (nil: unchanged), and a difference to add to the count. The SDK server
// applies the capacity first, then the count, then the difference, and
// refuses a change that leaves the count outside [0, capacity].
type CounterUpdate struct {
	Count, Capacity *int64
	CountDiff       int64
}

// UpdateCounter changes the GameServer's Counter named name (PATCH
// /v1beta1/counters/{name}) and returns the Counter as the SDK server
// expects it once its batched updates are applied. The Counter must be
// declared in the GameServer's spec.counters. A difference is relative, so
// concurrent allocations' increments are kept; an update whose answer is
// lost may have been applied, so callers should read the Counter back (from
// the watch) before they repeat one. Counters are a beta feature, like
// lists.
func (c *Client) UpdateCounter(ctx context.Context, name string, u CounterUpdate) (Counter, error) {
	// The body is beta.CounterUpdateRequest: int64 values as strings,
	// count and capacity as Int64Value (absent: unchanged).
	body := struct {
		Count     *int64 `json:"count,omitempty,string"`
		Capacity  *int64 `json:"capacity,omitempty,string"`
		CountDiff int64  `json:"countDiff,omitempty,string"`
	}{u.Count, u.Capacity, u.CountDiff}
	var w wireCounter
	if err := c.do(ctx, http.MethodPatch, "/v1beta1/counters/"+url.PathEscape(name), body, &w); err != nil {
		return Counter{}, err
	}
	return Counter{Count: int64(w.Count), Capacity: int64(w.Capacity)}, nil
}

// GetCounter returns the GameServer's Counter named name (GET
// /v1beta1/counters/{name}), with the SDK server's batched updates applied.
func (c *Client) GetCounter(ctx context.Context, name string) (Counter, error) {
	var w wireCounter
	if err := c.do(ctx, http.MethodGet, "/v1beta1/counters/"+url.PathEscape(name), nil, &w); err != nil {
		return Counter{}, err
	}
	return Counter{Count: int64(w.Count), Capacity: int64(w.Capacity)}, nil
}

// do sends a request with body encoded as JSON (none if body is nil) and
// decodes the response into out, unless out is nil.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.send(ctx, c.http, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return statusError(method, path, resp)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return fmt.Errorf("agones: %s %s: reading the response: %w", method, path, err)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("agones: %s %s: decoding the response: %w", method, path, err)
	}
	return nil
}

// send sends a request with hc and returns the response, whatever its status.
func (c *Client) send(ctx context.Context, hc *http.Client, method, path string, body any) (*http.Response, error) {
	if c.addr == "" {
		return nil, fmt.Errorf("agones: %s %s: no SDK server address", method, path)
	}
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("agones: %s %s: %w", method, path, err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+c.addr+path, r)
	if err != nil {
		return nil, fmt.Errorf("agones: %s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		// The *url.Error repeats the method and the URL: keep its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("agones: %s %s: %w", method, path, err)
	}
	return resp, nil
}

// StatusError is the error for a response whose status is not 2xx.
//
// The SDK server's gateway answers errors with a google.rpc.Status as JSON,
// {"code": 3, "message": "…", "details": []}, and an HTTP status derived from
// the gRPC code: 400 for invalid arguments, 404 for an unknown path, 501 for a
// method a path does not take, and 500 for the errors of the SDK server
// itself, such as a full player capacity or a value already in a list.
type StatusError struct {
	Method, Path string
	StatusCode   int    // HTTP status code, e.g. 400
	Status       string // HTTP status, e.g. "400 Bad Request"
	Code         int    // gRPC status code in the body, 0 if none
	Message      string // message in the body, or its text if it is not JSON
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("agones: %s %s: %s", e.Method, e.Path, e.Status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// statusError reads the error body of resp and returns the *StatusError.
func statusError(method, path string, resp *http.Response) error {
	e := &StatusError{Method: method, Path: path, StatusCode: resp.StatusCode, Status: resp.Status}
	if e.Status == "" {
		e.Status = strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode)
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var st wireStatus
	if json.Unmarshal(data, &st) == nil {
		e.Code, e.Message = st.Code, st.Message
	} else {
		e.Message = strings.TrimSpace(strings.ToValidUTF8(string(data), "\uFFFD"))
		if r := []rune(e.Message); len(r) > 512 {
			e.Message = string(r[:512]) + "…"
		}
	}
	return e
}

// wireStatus is a google.rpc.Status as the gateway writes it.
type wireStatus struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}
