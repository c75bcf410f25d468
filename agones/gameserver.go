package agones

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// GameServer is the part of the Agones GameServer resource that the game
// server uses, as the SDK server reports it.
//
// Labels and Annotations are nil when the GameServer has none, as is Ports.
// Labels and annotations set through the SDK carry the prefix
// "agones.dev/sdk-"; those of an allocation do not.
type GameServer struct {
	Name, Namespace     string
	Labels, Annotations map[string]string

	// State is the GameServer's state: "Scheduled", "RequestReady",
	// "Ready", "Reserved", "Allocated", "Shutdown", "Unhealthy", …
	State string

	// Address is the address players connect to (the node's address).
	Address string

	// Ports are the ports players connect to on Address.
	Ports []Port

	// Counters and Lists are the GameServer's Counters and Lists (beta,
	// feature gate CountsAndLists), by name; nil when it has none.
	Counters map[string]Counter
	Lists    map[string]List

	// Players are the ids of the connected players (alpha player
	// tracking), nil when there are none or the feature is off.
	Players []string
}

// Counter is a Counter of a GameServer: a count within a capacity.
type Counter struct {
	Count, Capacity int64
}

// List is a List of a GameServer: values (each at most once) within a
// capacity.
type List struct {
	Capacity int64
	Values   []string
}

// Port is a port of a GameServer: the name it has in the GameServer's spec
// and the port players connect to.
type Port struct {
	Name string
	Port int32
}

// The wire types decode the SDK's GameServer message as the gateway encodes
// it: field names as in the .proto file (object_meta, not objectMeta), every
// field present, int64 values as JSON strings. Fields the client does not use
// are not declared, so they are skipped whatever their type.

type wireGameServer struct {
	ObjectMeta *wireObjectMeta `json:"object_meta"`
	// ObjectMetaJSON accepts the lowerCamelCase name, which protobuf's JSON
	// mapping also allows, should a gateway be configured to emit it.
	ObjectMetaJSON *wireObjectMeta `json:"objectMeta"`
	Status         *wireGSStatus   `json:"status"`
}

type wireObjectMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type wireGSStatus struct {
	State    string                  `json:"state"`
	Address  string                  `json:"address"`
	Ports    []wirePort              `json:"ports"`
	Players  *wirePlayers            `json:"players"`
	Counters map[string]wireCounter  `json:"counters"`
	Lists    map[string]wireListBody `json:"lists"`
}

type wirePlayers struct {
	IDs []string `json:"ids"`
}

// wireCounter is a Counter in a GameServer's status, and the beta.Counter
// message the counter calls answer (which adds its name).
type wireCounter struct {
	Name     string    `json:"name"`
	Count    flexInt64 `json:"count"`
	Capacity flexInt64 `json:"capacity"`
}

// wireListBody is a List in a GameServer's status, and the beta.List
// message the list calls answer (which adds its name).
type wireListBody struct {
	Name     string    `json:"name"`
	Capacity flexInt64 `json:"capacity"`
	Values   []string  `json:"values"`
}

type wirePort struct {
	Name string    `json:"name"`
	Port flexInt32 `json:"port"`
}

// flexInt32 and flexInt64 are integers that decode from a JSON number or,
// as protobuf's JSON mapping also allows (and the gateway writes int64
// values), from a JSON string. null leaves them as they are.
type (
	flexInt32 int32
	flexInt64 int64
)

func (n *flexInt32) UnmarshalJSON(b []byte) error {
	v, set, err := parseFlexInt(b, 32)
	if set {
		*n = flexInt32(v)
	}
	return err
}

func (n *flexInt64) UnmarshalJSON(b []byte) error {
	v, set, err := parseFlexInt(b, 64)
	if set {
		*n = flexInt64(v)
	}
	return err
}

// parseFlexInt parses the JSON b, a number or a string of one, as an
// integer of bits; set is false for null or an error.
func parseFlexInt(b []byte, bits int) (v int64, set bool, err error) {
	if string(b) == "null" {
		return 0, false, nil
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return 0, false, err
		}
	}
	v, err = strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, false, fmt.Errorf("int%d %s: %w", bits, b, err)
	}
	return v, true, nil
}

// gameServer returns the GameServer w encodes.
func (w *wireGameServer) gameServer() GameServer {
	var gs GameServer
	meta := w.ObjectMeta
	if meta == nil {
		meta = w.ObjectMetaJSON
	}
	if meta != nil {
		gs.Name = meta.Name
		gs.Namespace = meta.Namespace
		gs.Labels = nonEmpty(meta.Labels)
		gs.Annotations = nonEmpty(meta.Annotations)
	}
	if st := w.Status; st != nil {
		gs.State = st.State
		gs.Address = st.Address
		for _, p := range st.Ports {
			gs.Ports = append(gs.Ports, Port{Name: p.Name, Port: int32(p.Port)})
		}
		if st.Players != nil && len(st.Players.IDs) > 0 {
			gs.Players = st.Players.IDs
		}
		for name, c := range st.Counters {
			if gs.Counters == nil {
				gs.Counters = make(map[string]Counter, len(st.Counters))
			}
			gs.Counters[name] = Counter{Count: int64(c.Count), Capacity: int64(c.Capacity)}
		}
		for name, l := range st.Lists {
			if gs.Lists == nil {
				gs.Lists = make(map[string]List, len(st.Lists))
			}
			gs.Lists[name] = List{Capacity: int64(l.Capacity), Values: l.Values}
		}
	}
	return gs
}

// nonEmpty returns m, or nil if m is empty.
func nonEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
