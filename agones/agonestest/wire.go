package agonestest

import (
	"maps"
	"slices"
	"strconv"
)

// The wire types encode the SDK's messages as the SDK server's grpc-gateway
// does (pkg/util/runtime/runtime.go, NewServerMux): field names as in the
// .proto files (UseProtoNames), every field present (EmitUnpopulated: empty
// maps as {}, empty lists as [], unset messages as null), int64 values as
// JSON strings, int32 values as numbers.

type wireGameServer struct {
	ObjectMeta wireObjectMeta `json:"object_meta"`
	Spec       wireSpec       `json:"spec"`
	Status     wireGSStatus   `json:"status"`
}

type wireObjectMeta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace"`
	UID               string            `json:"uid"`
	ResourceVersion   string            `json:"resource_version"`
	Generation        int64             `json:"generation,string"`
	CreationTimestamp int64             `json:"creation_timestamp,string"`
	DeletionTimestamp int64             `json:"deletion_timestamp,string"`
	Annotations       map[string]string `json:"annotations"`
	Labels            map[string]string `json:"labels"`
}

type wireSpec struct {
	Health wireHealth `json:"health"`
}

// wireHealth holds Agones' default health check settings.
type wireHealth struct {
	Disabled            bool  `json:"disabled"`
	PeriodSeconds       int32 `json:"period_seconds"`
	FailureThreshold    int32 `json:"failure_threshold"`
	InitialDelaySeconds int32 `json:"initial_delay_seconds"`
}

type wireGSStatus struct {
	State     string                    `json:"state"`
	Address   string                    `json:"address"`
	Addresses []wireAddress             `json:"addresses"`
	Ports     []wirePort                `json:"ports"`
	Players   *wirePlayerStatus         `json:"players"`
	Counters  map[string]wireCounter    `json:"counters"`
	Lists     map[string]wireListStatus `json:"lists"`
}

type wireAddress struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

type wirePort struct {
	Name string `json:"name"`
	Port int32  `json:"port"`
}

type wirePlayerStatus struct {
	Count    int64    `json:"count,string"`
	Capacity int64    `json:"capacity,string"`
	IDs      []string `json:"ids"`
}

type wireCounter struct {
	Count    int64 `json:"count,string"`
	Capacity int64 `json:"capacity,string"`
}

type wireListStatus struct {
	Capacity int64    `json:"capacity,string"`
	Values   []string `json:"values"`
}

// wireStatus is a google.rpc.Status.
type wireStatus struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Details []any  `json:"details"`
}

// wireBool is alpha.Bool.
type wireBool struct {
	Bool bool `json:"bool"`
}

// wireCount is alpha.Count.
type wireCount struct {
	Count int64 `json:"count,string"`
}

// wirePlayerIDList is alpha.PlayerIDList.
type wirePlayerIDList struct {
	List []string `json:"list"`
}

// wireCounterMsg is beta.Counter.
type wireCounterMsg struct {
	Name     string `json:"name"`
	Count    int64  `json:"count,string"`
	Capacity int64  `json:"capacity,string"`
}

// wireList is beta.List.
type wireList struct {
	Name     string   `json:"name"`
	Capacity int64    `json:"capacity,string"`
	Values   []string `json:"values"`
}

// creationTimestamp is the creation time of the fake's GameServer, in Unix
// seconds (the one of the example in the REST documentation).
const creationTimestamp = 1531795395

// wireLocked returns the GameServer as the SDK server encodes it.
func (s *Server) wireLocked() wireGameServer {
	gs := &s.gs
	w := wireGameServer{
		ObjectMeta: wireObjectMeta{
			Name:              gs.name,
			Namespace:         gs.namespace,
			UID:               gs.uid,
			ResourceVersion:   strconv.FormatInt(gs.resourceVersion, 10),
			Generation:        1,
			CreationTimestamp: creationTimestamp,
			Annotations:       cloneMap(gs.annotations),
			Labels:            cloneMap(gs.labels),
		},
		Spec: wireSpec{Health: wireHealth{PeriodSeconds: 5, FailureThreshold: 3, InitialDelaySeconds: 5}},
		Status: wireGSStatus{
			State:     gs.state,
			Address:   gs.address,
			Addresses: []wireAddress{{Type: "InternalIP", Address: gs.address}},
			Ports:     []wirePort{},
			Players: &wirePlayerStatus{
				Count:    int64(len(gs.players)),
				Capacity: gs.playerCapacity,
				IDs:      nonNil(slices.Clone(gs.players)),
			},
			Counters: map[string]wireCounter{},
			Lists:    map[string]wireListStatus{},
		},
	}
	for _, p := range gs.ports {
		w.Status.Ports = append(w.Status.Ports, wirePort{Name: p.Name, Port: p.Port})
	}
	for name, c := range gs.counters {
		w.Status.Counters[name] = wireCounter{Count: c.count, Capacity: c.capacity}
	}
	for name, l := range gs.lists {
		w.Status.Lists[name] = wireListStatus{Capacity: l.capacity, Values: nonNil(slices.Clone(l.values))}
	}
	return w
}

// cloneMap returns a copy of m, never nil.
func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}
