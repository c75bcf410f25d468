package allocatortest

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rewind-gg/rewind/agones"
	"github.com/rewind-gg/rewind/agones/agonestest"
)

// Path is the allocator's REST route (allocation.proto, google.api.http).
const Path = "/gameserverallocation"

// GameServer is a GameServer the fake allocates from: what Agones'
// controller gives it, and the SDK fake that holds the rest.
type GameServer struct {
	Name string
	// Labels are the GameServer's labels from its Fleet, such as
	// agones.dev/fleet; the SDK fake's labels (set through the SDK) are
	// added to them.
	Labels map[string]string
	// Address is the address players connect to (the node's), "127.0.0.1"
	// if empty; Ports the ports (the host ports Agones maps to the
	// container's; in a test, the port the game server listens on).
	Address string
	Ports   []agones.Port
	// NodeName is the node's name, "node-1" if empty.
	NodeName string
	// SDK is the GameServer's SDK server: its state, namespace,
	// annotations, Counters and Lists are the GameServer's, and an
	// allocation changes them there.
	SDK *agonestest.Server
}

// Allocator is a fake agones-allocator listening on 127.0.0.1 with HTTPS and
// mutual TLS. Its methods may be called from several goroutines at once.
type Allocator struct {
	srv      *httptest.Server
	serverCA *authority // issued the fake's server certificate
	clientCA *authority // the client certificates it accepts chain to it

	mu          sync.Mutex // held for an allocation, from choosing to answering
	gameServers []GameServer
	requests    []string
}

// maxBody bounds the request bodies the fake reads.
const maxBody = 1 << 20

// New starts a fake allocator on a free port of 127.0.0.1, with no
// GameServers, and closes it when the test ends.
func New(t testing.TB) *Allocator {
	t.Helper()
	a := &Allocator{}
	var err error
	if a.serverCA, err = newAuthority("allocation-ca"); err != nil { // the name the Helm chart's CA has
		t.Fatalf("allocatortest: %v", err)
	}
	if a.clientCA, err = newAuthority("allocator-client-ca"); err != nil {
		t.Fatalf("allocatortest: %v", err)
	}
	serverCert, err := a.serverCA.issue("127.0.0.1", x509.ExtKeyUsageServerAuth, net.IPv4(127, 0, 0, 1))
	if err != nil {
		t.Fatalf("allocatortest: %v", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(a.clientCA.cert)
	a.srv = httptest.NewUnstartedServer(http.HandlerFunc(a.serve))
	a.srv.EnableHTTP2 = true
	a.srv.TLS = &tls.Config{
		Certificates:          []tls.Certificate{serverCert},
		ClientAuth:            tls.RequireAnyClientCert,
		VerifyPeerCertificate: verifyClient(roots),
	}
	// Refused handshakes are what some tests are about: not worth a log line.
	a.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	a.srv.StartTLS()
	t.Cleanup(a.srv.Close)
	return a
}

// Addr returns the host:port the fake listens on.
func (a *Allocator) Addr() string { return a.srv.Listener.Addr().String() }

// URL returns the fake's allocation endpoint, https://ADDR/gameserverallocation.
func (a *Allocator) URL() string { return a.srv.URL + Path }

// CA returns the certificate of the authority that issued the fake's server
// certificate (for 127.0.0.1): what a client verifies the allocator with,
// as Agones' allocator-tls-ca Secret holds it.
func (a *Allocator) CA() *x509.Certificate { return a.serverCA.cert }

// ClientCertificate issues a new client certificate that the fake accepts:
// signed by its client CA, for client authentication, as Agones' Helm chart
// makes allocator-client.default.
func (a *Allocator) ClientCertificate() (tls.Certificate, error) {
	return a.clientCA.issue("allocator-client", x509.ExtKeyUsageClientAuth)
}

// Close stops the fake: the port is no longer listened on. Close may be
// called more than once.
func (a *Allocator) Close() { a.srv.Close() }

// Add adds a GameServer to those the fake allocates from.
func (a *Allocator) Add(gs GameServer) {
	if gs.Address == "" {
		gs.Address = "127.0.0.1"
	}
	if gs.NodeName == "" {
		gs.NodeName = "node-1"
	}
	gs.Labels = maps.Clone(gs.Labels)
	gs.Ports = slices.Clone(gs.Ports)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gameServers = append(a.gameServers, gs)
}

// Requests returns the body of every request received on the route, as
// received, in order.
func (a *Allocator) Requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.requests)
}

// The gRPC status codes the fake answers with (google.golang.org/grpc/codes),
// and the allocator's code for an invalid allocation (an HTTP status).
const (
	codeInvalidArgument   = 3
	codeNotFound          = 5
	codeResourceExhausted = 8
	codeUnimplemented     = 12
	codeInvalid           = 422
)

// httpStatus is grpc-gateway's HTTPStatusFromCode for the codes above: 500
// for a code it does not know, such as 422.
func httpStatus(code int) int {
	switch code {
	case codeInvalidArgument:
		return http.StatusBadRequest
	case codeNotFound:
		return http.StatusNotFound
	case codeResourceExhausted:
		return http.StatusTooManyRequests
	case codeUnimplemented:
		return http.StatusNotImplemented
	}
	return http.StatusInternalServerError
}

// fail writes an error as the gateway's DefaultHTTPErrorHandler does.
func fail(w http.ResponseWriter, code int, format string, args ...any) {
	write(w, httpStatus(code), status{Code: code, Message: fmt.Sprintf(format, args...), Details: []any{}})
}

func write(w http.ResponseWriter, httpStatus int, body any) {
	b, err := json.Marshal(body)
	if err != nil {
		panic(err) // only strings, numbers, maps and slices
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus)
	w.Write(b)
}

// serve answers a request, as the allocator's REST handler does.
func (a *Allocator) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path != Path:
		fail(w, codeNotFound, "Not Found")
		return
	case r.Method != http.MethodPost:
		fail(w, codeUnimplemented, "Method Not Allowed")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, string(body))
	if err != nil {
		fail(w, codeInvalidArgument, "reading the body: %v", err)
		return
	}
	req, err := decodeRequest(body)
	if err != nil {
		fail(w, codeInvalidArgument, "%v", err)
		return
	}
	sel, err := req.selection()
	if err != nil {
		fail(w, codeInvalidArgument, "%v", err)
		return
	}
	if errs := req.validate(); len(errs) > 0 {
		msg := errs[0]
		if len(errs) > 1 {
			msg = "[" + strings.Join(errs, ", ") + "]"
		}
		fail(w, codeInvalid, "GameServerAllocation.allocation.agones.dev \"\" is invalid: %s", msg)
		return
	}
	if msg := req.unsupported(); msg != "" {
		fail(w, codeUnimplemented, "allocatortest: %s is not supported by the fake", msg)
		return
	}
	gs, ok := a.chooseLocked(sel)
	if !ok {
		fail(w, codeResourceExhausted, "there is no available GameServer to allocate")
		return
	}
	write(w, http.StatusOK, a.allocateLocked(gs, req))
}

// view is a GameServer as the allocator sees it: the registration and the
// SDK fake's GameServer.
type view struct {
	reg    *GameServer
	gs     agones.GameServer
	labels map[string]string
}

// chooseLocked returns the GameServer the request's selectors choose, in
// the order of the allocator's findGameServerForAllocation.
func (a *Allocator) chooseLocked(sel selection) (view, bool) {
	var views []view
	for i := range a.gameServers {
		reg := &a.gameServers[i]
		gs := reg.SDK.GameServer()
		if gs.Namespace != sel.namespace {
			continue
		}
		labels := maps.Clone(reg.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, gs.Labels)
		views = append(views, view{reg: reg, gs: gs, labels: labels})
	}
	slices.SortStableFunc(views, func(x, y view) int {
		if sel.packed && x.gs.State != y.gs.State {
			switch {
			case x.gs.State == "Allocated":
				return -1
			case y.gs.State == "Allocated":
				return 1
			}
		}
		if c := sel.comparePriorities(x.gs, y.gs); c != 0 {
			return c
		}
		return cmp.Compare(x.reg.Name, y.reg.Name)
	})
	for _, s := range sel.selectors {
		for _, v := range views {
			if s.matches(v.gs, v.labels) {
				return v, true
			}
		}
	}
	return view{}, false
}

// allocateLocked allocates v as the request says and returns the answer.
func (a *Allocator) allocateLocked(v view, req request) response {
	alloc := agonestest.Allocation{Increment: map[string]int64{}, AddValues: map[string][]string{}}
	if md := req.metadata(); md != nil {
		alloc.Labels, alloc.Annotations = md.Labels, md.Annotations
	}
	for name, c := range req.Counters {
		if c.Action != nil && c.Amount != nil {
			alloc.Increment[name] = int64(*c.Amount)
		}
	}
	for name, l := range req.Lists {
		alloc.AddValues[name] = l.AddValues
	}
	v.reg.SDK.AllocateWith(alloc)

	gs := v.reg.SDK.GameServer()
	labels := maps.Clone(v.reg.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, gs.Labels)
	annotations := maps.Clone(gs.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	resp := response{
		GameServerName: v.reg.Name,
		Ports:          []port{},
		Address:        v.reg.Address,
		Addresses:      []address{{Type: "InternalIP", Address: v.reg.Address}},
		NodeName:       v.reg.NodeName,
		Source:         "local",
		Metadata:       &gameServerMetadata{Labels: labels, Annotations: annotations},
		Counters:       map[string]counterStatus{},
		Lists:          map[string]listStatus{},
	}
	for _, p := range v.reg.Ports {
		resp.Ports = append(resp.Ports, port{Name: p.Name, Port: p.Port})
	}
	for name, c := range gs.Counters {
		resp.Counters[name] = counterStatus{Count: c.Count, Capacity: c.Capacity}
	}
	for name, l := range gs.Lists {
		values := l.Values
		if values == nil {
			values = []string{}
		}
		resp.Lists[name] = listStatus{Values: values, Capacity: l.Capacity}
	}
	return resp
}
