package matchmaker

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// The request and response of the allocator service's REST API: the JSON of
// allocation.proto's AllocationRequest and AllocationResponse. Field names
// are the .proto file's; 64-bit integers are JSON strings, as the Swagger
// file (pkg/allocation/go/allocation.swagger.json) types them; enums are
// their names.

type allocationRequest struct {
	Namespace           string                   `json:"namespace"`
	Scheduling          string                   `json:"scheduling,omitempty"`
	Priorities          []priority               `json:"priorities,omitempty"`
	GameServerSelectors []gameServerSelector     `json:"gameServerSelectors"`
	Metadata            *metaPatch               `json:"metadata,omitempty"`
	Counters            map[string]counterAction `json:"counters,omitempty"`
	Lists               map[string]listAction    `json:"lists,omitempty"`
}

type gameServerSelector struct {
	GameServerState string                     `json:"gameServerState"` // "READY" or "ALLOCATED"
	MatchLabels     map[string]string          `json:"matchLabels"`
	Counters        map[string]counterSelector `json:"counters,omitempty"`
	Lists           map[string]listSelector    `json:"lists,omitempty"`
}

type counterSelector struct {
	MinAvailable int64 `json:"minAvailable,string"`
}

type listSelector struct {
	MinAvailable int64 `json:"minAvailable,string"`
}

type priority struct {
	Type  string `json:"type"` // "Counter" or "List"
	Key   string `json:"key"`
	Order string `json:"order"` // "Ascending" or "Descending"
}

type metaPatch struct {
	Annotations map[string]string `json:"annotations"`
}

type counterAction struct {
	Action string `json:"action"` // "Increment" or "Decrement"
	Amount int64  `json:"amount,string"`
}

type listAction struct {
	AddValues []string `json:"addValues"`
}

type allocationResponse struct {
	GameServerName string `json:"gameServerName"`
	Ports          []struct {
		Name string `json:"name"`
		Port int32  `json:"port"`
	} `json:"ports"`
	Address  string `json:"address"`
	NodeName string `json:"nodeName"`
	Metadata *struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	// Lists is set with the CountsAndLists feature (Beta, on by default
	// since Agones 1.41).
	Lists map[string]struct {
		Values []string `json:"values"`
	} `json:"lists"`
}

// request returns the allocation request for room.
func (m *Matchmaker) request(room string) allocationRequest {
	c := &m.cfg
	fleet := map[string]string{"agones.dev/fleet": c.Fleet}
	if c.Matches == MatchesAnnotation {
		// One match a GameServer: a Ready one, named by the annotation.
		return allocationRequest{
			Namespace:           c.Namespace,
			GameServerSelectors: []gameServerSelector{{GameServerState: "READY", MatchLabels: fleet}},
			Metadata:            &metaPatch{Annotations: map[string]string{c.MatchKey: room}},
		}
	}
	// High density (deploy/agones/allocation-density.yaml): an Allocated
	// GameServer with a free slot first, the fullest first, else a Ready
	// one; one more on the rooms Counter, the room on the matches List.
	free := func(state string) gameServerSelector {
		return gameServerSelector{GameServerState: state, MatchLabels: fleet,
			Counters: map[string]counterSelector{c.RoomsCounter: {MinAvailable: 1}},
			Lists:    map[string]listSelector{c.MatchesList: {MinAvailable: 1}}}
	}
	return allocationRequest{
		Namespace:           c.Namespace,
		Scheduling:          "Packed",
		Priorities:          []priority{{Type: "Counter", Key: c.RoomsCounter, Order: "Ascending"}},
		GameServerSelectors: []gameServerSelector{free("ALLOCATED"), free("READY")},
		Counters:            map[string]counterAction{c.RoomsCounter: {Action: "Increment", Amount: 1}},
		Lists:               map[string]listAction{c.MatchesList: {AddValues: []string{room}}},
	}
}

// AllocatorError is an answer of the allocator other than 200 OK: its HTTP
// status, and the gRPC status its body carries ({"code", "message"}, as
// the allocator's grpc-gateway writes errors), if it carries one.
type AllocatorError struct {
	Status  int
	Code    int // the gRPC code (8: ResourceExhausted); 0 if the body has none
	Message string
}

func (e *AllocatorError) Error() string {
	s := fmt.Sprintf("the allocator answered %d %s", e.Status, http.StatusText(e.Status))
	if e.Code != 0 {
		s += fmt.Sprintf(" (code %d)", e.Code)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is makes errors.Is(err, ErrNoGameServer) true for the allocator's answer
// when no GameServer matched: gRPC code 8, ResourceExhausted, with HTTP
// 429, by default. The allocator's http-unallocated-status-code changes the
// status and the code with it (503 is code 14), not the message, which
// Agones' converters fix.
func (e *AllocatorError) Is(target error) bool {
	return target == ErrNoGameServer && (e.Code == codeResourceExhausted || e.Message == noGameServer)
}

// codeResourceExhausted is gRPC's code 8, and noGameServer the message of
// an allocation that found no GameServer (pkg/allocation/converters).
const (
	codeResourceExhausted = 8
	noGameServer          = "there is no available GameServer to allocate"
)

// ErrNoGameServer is the allocator's answer when no GameServer matched the
// request: none Ready (or, in high density, none with a free slot). Wait for
// the Fleet to grow, or grow it.
var ErrNoGameServer = errors.New("no GameServer available")

// post sends an allocation request and decodes the answer.
func (m *Matchmaker) post(ctx context.Context, body allocationRequest) (allocationResponse, error) {
	var out allocationResponse
	b, err := json.Marshal(body)
	if err != nil {
		return out, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url, bytes.NewReader(b))
	if err != nil {
		return out, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := m.http.Do(req)
	if err != nil {
		return out, m.transportError(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return out, fmt.Errorf("reading the allocator's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		e := &AllocatorError{Status: resp.StatusCode}
		var st struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &st) == nil {
			e.Code, e.Message = st.Code, st.Message
		} else {
			e.Message = strings.TrimSpace(string(raw))
		}
		return out, e
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("the allocator's answer is not an AllocationResponse: %w", err)
	}
	return out, nil
}

// maxAnswer bounds the allocator's answers the matchmaker reads.
const maxAnswer = 1 << 20

// transportError says what failed when no answer came.
func (m *Matchmaker) transportError(err error) error {
	var verify *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var op *net.OpError
	switch {
	case errors.As(err, &verify), errors.As(err, &unknownCA), errors.As(err, &hostname):
		name := m.cfg.ServerName
		if name == "" {
			name, _, _ = net.SplitHostPort(m.host)
		}
		return fmt.Errorf("the allocator's certificate does not verify with Config.AllocatorCA (the allocator-tls-ca Secret's tls-ca.crt) for %s: %w", name, err)
	case errors.As(err, &op) && op.Op == "remote error" && len(m.cfg.ClientCert.Certificate) == 0:
		return fmt.Errorf("the allocator refused the TLS handshake: it requires a client certificate, and Config.ClientCert is empty: %w", err)
	case errors.As(err, &op) && op.Op == "remote error":
		return fmt.Errorf("the allocator refused the TLS handshake: is Config.ClientCert signed by a CA of the allocator-client-ca Secret, for client authentication, and valid now?: %w", err)
	case errors.As(err, &op) && op.Op == "dial":
		return fmt.Errorf("the allocator %s is unreachable: %w", m.host, err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("the allocator %s did not answer in time: %w", m.host, err)
	}
	return fmt.Errorf("POST %s: %w", m.url, err)
}
