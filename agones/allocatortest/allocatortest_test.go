package allocatortest_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/agones"
	"github.com/rewind-gg/rewind/agones/agonestest"
	"github.com/rewind-gg/rewind/agones/allocatortest"
)

// httpClient returns a client that verifies the fake with its CA and shows
// cert (none if empty).
func httpClient(a *allocatortest.Allocator, cert tls.Certificate) *http.Client {
	roots := x509.NewCertPool()
	roots.AddCert(a.CA())
	tc := &tls.Config{RootCAs: roots}
	if len(cert.Certificate) > 0 {
		tc.Certificates = []tls.Certificate{cert}
	}
	// HTTP/1.1: over HTTP/2, a refused handshake shows as "http2: client
	// conn could not be established", without the TLS alert.
	return &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
}

// allowed returns a client with a certificate the fake accepts.
func allowed(t *testing.T, a *allocatortest.Allocator) *http.Client {
	t.Helper()
	cert, err := a.ClientCertificate()
	if err != nil {
		t.Fatal(err)
	}
	return httpClient(a, cert)
}

func do(t *testing.T, hc *http.Client, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	return resp.StatusCode, string(b)
}

// readyGameServer is an SDK fake whose GameServer is Ready, declaring what
// deploy/agones/fleet-density.yaml declares (the Counter rooms and the List
// matches, 3 of each).
func readyGameServer(t *testing.T) *agonestest.Server {
	t.Helper()
	sdk := agonestest.New(t)
	sdk.SetCounter("rooms", 0, 3)
	sdk.SetList("matches", 3)
	sdk.SetState("Ready")
	return sdk
}

// TestAnswers checks the fake's answers against the allocator's: routing,
// decoding, validation and the no-GameServer answer, each with its status
// and body as the grpc-gateway writes them.
func TestAnswers(t *testing.T) {
	a := allocatortest.New(t)
	a.Add(allocatortest.GameServer{Name: "gs-1", Labels: map[string]string{"agones.dev/fleet": "rewind"}, SDK: readyGameServer(t)})
	hc := allowed(t, a)
	base := "https://" + a.Addr()
	invalid := `{"code":422,"message":"GameServerAllocation.allocation.agones.dev \"\" is invalid: `
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		want                     string // the body; a prefix if it ends with "…"
	}{
		{"method", "GET", "/gameserverallocation", "", 501, `{"code":12,"message":"Method Not Allowed","details":[]}`},
		{"path", "POST", "/allocate", "{}", 404, `{"code":5,"message":"Not Found","details":[]}`},
		{"not JSON", "POST", "/gameserverallocation", "{", 400, `{"code":3,"message":"unexpected end of JSON input","details":[]}`},
		{"unknown field", "POST", "/gameserverallocation", `{"namespace":"default","gameServerSelector":[]}`, 400,
			`{"code":3,"message":"unknown field \"gameServerSelector\" at the top level (the allocator ignores unknown fields; allocatortest refuses them…`},
		{"field in another case", "POST", "/gameserverallocation", `{"gameServerSelectors":[{"MatchLabels":{}}]}`, 400,
			`{"code":3,"message":"unknown field \"MatchLabels\" at gameServerSelectors[0] …`},
		{"bad enum", "POST", "/gameserverallocation", `{"gameServerSelectors":[{"gameServerState":"Allocated"}]}`, 400,
			`{"code":3,"message":"invalid value for enum field gameServerState: \"Allocated\"","details":[]}`},
		{"negative amount", "POST", "/gameserverallocation", `{"counters":{"rooms":{"action":"Increment","amount":"-1"}}}`, 500,
			invalid + `spec.counters[rooms].amount: Invalid value: -1: must be greater than or equal to 0","details":[]}`},
		{"action in lower case", "POST", "/gameserverallocation", `{"counters":{"rooms":{"action":"increment","amount":1}}}`, 500,
			invalid + `spec.counters[rooms].action: Unsupported value: \"increment\": supported values: \"Increment\", \"Decrement\"","details":[]}`},
		{"two errors", "POST", "/gameserverallocation", `{"gameServerSelectors":[{"counters":{"rooms":{"minAvailable":"2","maxAvailable":"1"}},"lists":{"matches":{"minAvailable":-1}}}]}`, 500,
			invalid + `[spec.selectors[0].counters[rooms]: Invalid value: 1: maxAvailable must zero or greater than minAvailable 2, spec.selectors[0].lists[matches].minAvailable: Invalid value: -1: must be greater than or equal to 0]","details":[]}`},
		{"Decrement", "POST", "/gameserverallocation", `{"counters":{"rooms":{"action":"Decrement","amount":"1"}}}`, 501,
			`{"code":12,"message":"allocatortest: the Counter action Decrement (counters.rooms.action) is not supported by the fake","details":[]}`},
		{"empty body: namespace \"\"", "POST", "/gameserverallocation", "", 429,
			`{"code":8,"message":"there is no available GameServer to allocate","details":[]}`},
		{"another Fleet", "POST", "/gameserverallocation", `{"namespace":"default","gameServerSelectors":[{"matchLabels":{"agones.dev/fleet":"other"}}]}`, 429,
			`{"code":8,"message":"there is no available GameServer to allocate","details":[]}`},
		{"Allocated only", "POST", "/gameserverallocation", `{"namespace":"default","gameServerSelectors":[{"gameServerState":"ALLOCATED"}]}`, 429,
			`{"code":8,"message":"there is no available GameServer to allocate","details":[]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := do(t, hc, c.method, base+c.path, c.body)
			prefix, isPrefix := strings.CutSuffix(c.want, "…")
			if status != c.status || (isPrefix && !strings.HasPrefix(body, prefix)) || (!isPrefix && body != c.want) {
				t.Errorf("%s %s %s: %d %s\nwant %d %s", c.method, c.path, c.body, status, body, c.status, c.want)
			}
		})
	}
}

// An allocation answers with every field of AllocationResponse, the
// GameServer as the allocation left it, and changes the SDK fake's
// GameServer: Allocated, the metadata, the Counter and the List.
func TestAllocation(t *testing.T) {
	a := allocatortest.New(t)
	sdk := readyGameServer(t)
	sdk.SetList("players", 12)
	a.Add(allocatortest.GameServer{Name: "gs-1", Labels: map[string]string{"agones.dev/fleet": "rewind"},
		Address: "203.0.113.10", Ports: []agones.Port{{Name: "default", Port: 7342}}, NodeName: "node-3", SDK: sdk})
	status, body := do(t, allowed(t, a), "POST", a.URL(), `{
		"namespace": "default",
		"gameServerSelectors": [{"matchLabels": {"agones.dev/fleet": "rewind"}, "counters": {"rooms": {"minAvailable": "1"}}}],
		"metadata": {"annotations": {"rewind.gg/match": "m-1"}},
		"counters": {"rooms": {"action": "Increment", "amount": "1"}},
		"lists": {"matches": {"addValues": ["m-1"]}}}`)
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	annotations := got["metadata"].(map[string]any)["annotations"].(map[string]any)
	if _, ok := annotations["agones.dev/last-allocated"]; !ok {
		t.Errorf("no annotation agones.dev/last-allocated: %s", body)
	}
	delete(annotations, "agones.dev/last-allocated")
	var want map[string]any
	if err := json.Unmarshal([]byte(`{
		"gameServerName": "gs-1",
		"ports": [{"name": "default", "port": 7342}],
		"address": "203.0.113.10",
		"addresses": [{"type": "InternalIP", "address": "203.0.113.10"}],
		"nodeName": "node-3",
		"source": "local",
		"metadata": {"labels": {"agones.dev/fleet": "rewind"}, "annotations": {"rewind.gg/match": "m-1"}},
		"counters": {"rooms": {"count": "1", "capacity": "3"}},
		"lists": {"matches": {"values": ["m-1"], "capacity": "3"}, "players": {"values": [], "capacity": "12"}}}`), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("answer\n%s\nwant (but agones.dev/last-allocated)\n%v", body, want)
	}
	gs := sdk.GameServer()
	if gs.State != "Allocated" || gs.Annotations["rewind.gg/match"] != "m-1" || gs.Counters["rooms"].Count != 1 || !reflect.DeepEqual(gs.Lists["matches"].Values, []string{"m-1"}) {
		t.Errorf("the SDK fake's GameServer after the allocation: %+v", gs)
	}
	if got := a.Requests(); len(got) != 1 || !strings.Contains(got[0], `"rewind.gg/match": "m-1"`) {
		t.Errorf("Requests() = %q", got)
	}
}

// highDensity is deploy/agones/allocation-density.yaml as a request, with
// the matches List selector: an Allocated GameServer with a free slot
// first, the fullest first, else a Ready one.
func highDensity(match string) string {
	free := `"matchLabels": {"agones.dev/fleet": "rewind"}, "counters": {"rooms": {"minAvailable": "1"}}, "lists": {"matches": {"minAvailable": "1"}}`
	return `{"namespace": "default", "scheduling": "Packed",
		"priorities": [{"type": "Counter", "key": "rooms", "order": "Ascending"}],
		"gameServerSelectors": [{"gameServerState": "ALLOCATED", ` + free + `}, {"gameServerState": "READY", ` + free + `}],
		"counters": {"rooms": {"action": "Increment", "amount": "1"}},
		"lists": {"matches": {"addValues": ["` + match + `"]}}}`
}

// The selectors and priorities choose as the allocator does: an Allocated
// GameServer with room before a Ready one, the fullest first, a Ready one
// once the Allocated are full, and none once all are.
func TestHighDensitySelection(t *testing.T) {
	a := allocatortest.New(t)
	sdks := map[string]*agonestest.Server{}
	for _, name := range []string{"gs-b", "gs-a"} { // added out of order: the name breaks ties
		sdks[name] = readyGameServer(t)
		a.Add(allocatortest.GameServer{Name: name, Labels: map[string]string{"agones.dev/fleet": "rewind"}, SDK: sdks[name]})
	}
	hc := allowed(t, a)
	allocate := func(match string) string {
		t.Helper()
		status, body := do(t, hc, "POST", a.URL(), highDensity(match))
		if status == http.StatusTooManyRequests {
			return ""
		}
		var resp struct{ GameServerName string }
		if status != 200 || json.Unmarshal([]byte(body), &resp) != nil {
			t.Fatalf("%d %s", status, body)
		}
		return resp.GameServerName
	}
	// Both Ready: the first by name. Then gs-a, Allocated with room, until
	// it is full; then gs-b.
	for i, want := range []string{"gs-a", "gs-a", "gs-a", "gs-b"} {
		if got := allocate("m-" + string(rune('1'+i))); got != want {
			t.Fatalf("allocation %d went to %q, want %q", i+1, got, want)
		}
	}
	// A match of gs-a ends: gs-a has 1 slot free, gs-b 2. The fullest
	// first (Ascending): gs-a.
	sdks["gs-a"].SetCounter("rooms", 2, 3)
	sdks["gs-a"].SetList("matches", 3, "m-1", "m-2")
	if got := allocate("m-5"); got != "gs-a" {
		t.Errorf("with gs-a at 2/3 and gs-b at 1/3, the allocation went to %q, want gs-a (the fullest)", got)
	}
	if got := allocate("m-6"); got != "gs-b" {
		t.Errorf("with gs-a full, the allocation went to %q, want gs-b", got)
	}
	if got := allocate("m-7"); got != "gs-b" {
		t.Errorf("the allocation went to %q, want gs-b", got)
	}
	if got := allocate("m-8"); got != "" {
		t.Errorf("every GameServer full, the allocation went to %q, want 429", got)
	}
	if got := sdks["gs-b"].ListValues("matches"); !reflect.DeepEqual(got, []string{"m-4", "m-6", "m-7"}) {
		t.Errorf("gs-b's matches %q", got)
	}
}

// The fake requires a client certificate signed by its client CA, for
// client authentication, as the allocator does; and shows a certificate
// that verifies with CA for 127.0.0.1.
func TestMutualTLS(t *testing.T) {
	a := allocatortest.New(t)
	good, err := a.ClientCertificate()
	if err != nil {
		t.Fatal(err)
	}
	other := allocatortest.New(t) // its client CA is not a's
	stranger, err := other.ClientCertificate()
	if err != nil {
		t.Fatal(err)
	}
	post := func(hc *http.Client) error {
		req, err := http.NewRequestWithContext(t.Context(), "POST", a.URL(), strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := post(httpClient(a, good)); err != nil {
		t.Errorf("with a certificate of the client CA: %v", err)
	}
	for name, cert := range map[string]tls.Certificate{"no certificate": {}, "another CA's": stranger} {
		err := post(httpClient(a, cert))
		var op *net.OpError
		if !errors.As(err, &op) || op.Op != "remote error" {
			t.Errorf("%s: %v, want the server's TLS alert", name, err)
		}
	}
	// The server's certificate does not verify with another CA.
	roots := x509.NewCertPool()
	roots.AddCert(other.CA())
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{good}}}}
	var verify *tls.CertificateVerificationError
	if err := post(hc); !errors.As(err, &verify) {
		t.Errorf("verified with another CA: %v, want a CertificateVerificationError", err)
	}
}
