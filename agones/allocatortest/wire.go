package allocatortest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// The request types are allocation.proto's messages as protojson decodes
// them: field names as in the .proto file, which are its JSON names too.

type request struct {
	Namespace                    string                   `json:"namespace"`
	MultiClusterSetting          *multiClusterSetting     `json:"multiClusterSetting"`
	RequiredGameServerSelector   *selector                `json:"requiredGameServerSelector"`
	PreferredGameServerSelectors []selector               `json:"preferredGameServerSelectors"`
	Scheduling                   enum                     `json:"scheduling"`
	MetaPatch                    *metaPatch               `json:"metaPatch"`
	Metadata                     *metaPatch               `json:"metadata"`
	GameServerSelectors          []selector               `json:"gameServerSelectors"`
	Priorities                   []priority               `json:"priorities"`
	Counters                     map[string]counterAction `json:"counters"`
	Lists                        map[string]listAction    `json:"lists"`
}

type multiClusterSetting struct {
	Enabled        bool           `json:"enabled"`
	PolicySelector *labelSelector `json:"policySelector"`
}

type labelSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

type metaPatch struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type selector struct {
	MatchLabels     map[string]string          `json:"matchLabels"`
	GameServerState enum                       `json:"gameServerState"`
	Players         *playerSelector            `json:"players"`
	Counters        map[string]counterSelector `json:"counters"`
	Lists           map[string]listSelector    `json:"lists"`
}

type playerSelector struct {
	MinAvailable int64s `json:"minAvailable"`
	MaxAvailable int64s `json:"maxAvailable"`
}

type counterSelector struct {
	MinCount     int64s `json:"minCount"`
	MaxCount     int64s `json:"maxCount"`
	MinAvailable int64s `json:"minAvailable"`
	MaxAvailable int64s `json:"maxAvailable"`
}

type listSelector struct {
	ContainsValue string `json:"containsValue"`
	MinAvailable  int64s `json:"minAvailable"`
	MaxAvailable  int64s `json:"maxAvailable"`
}

type priority struct {
	Type  enum   `json:"type"`
	Key   string `json:"key"`
	Order enum   `json:"order"`
}

type counterAction struct {
	Action   *string `json:"action"`
	Amount   *int64s `json:"amount"`
	Capacity *int64s `json:"capacity"`
}

type listAction struct {
	AddValues    []string `json:"addValues"`
	Capacity     *int64s  `json:"capacity"`
	DeleteValues []string `json:"deleteValues"`
}

// The enums' value names, by number (allocation.proto).
var (
	schedulingNames = []string{"Packed", "Distributed"}
	stateNames      = []string{"READY", "ALLOCATED"}
	priorityTypes   = []string{"Counter", "List"}
	priorityOrders  = []string{"Ascending", "Descending"}
)

// enum is an enum field as protojson reads it: a value's name or its number.
// Which names are valid depends on the field; resolve checks.
type enum struct {
	name   string
	number int64
	isName bool
}

func (e *enum) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*e = enum{}
		return nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*e = enum{name: s, isName: true}
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 32)
	if err != nil {
		return fmt.Errorf("invalid enum value %s", b)
	}
	*e = enum{number: n}
	return nil
}

// resolve returns the enum's number among names, or an error naming field.
func (e enum) resolve(field string, names []string) (int, error) {
	if e.isName {
		if i := slices.Index(names, e.name); i >= 0 {
			return i, nil
		}
		return 0, fmt.Errorf("invalid value for enum field %s: %q", field, e.name)
	}
	// protojson takes any number for an open (proto3) enum; the allocator
	// then treats an unknown one as the default.
	if e.number >= 0 && e.number < int64(len(names)) {
		return int(e.number), nil
	}
	return 0, nil
}

// int64s is an int64 field as protojson reads it: a JSON number or a
// string holding one (it writes strings).
type int64s int64

func (v *int64s) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*v = 0
		return nil
	}
	s := string(b)
	if b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("invalid value for int64 field: %s", b)
	}
	*v = int64s(n)
	return nil
}

// decodeRequest decodes body as the allocator's gateway does (an empty body
// is an empty request), refusing unknown fields (see the package comment).
func decodeRequest(body []byte) (request, error) {
	var req request
	if len(bytes.TrimSpace(body)) == 0 {
		return req, nil
	}
	var raw any
	if err := json.Unmarshal(body, &raw); err != nil {
		return req, err
	}
	if err := knownFields(raw, reflect.TypeOf(req), ""); err != nil {
		return req, err
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return req, err
	}
	return req, nil
}

// knownFields checks that every object member in v is a field of t, spelt
// exactly as its JSON name (encoding/json would match any case), at any
// depth; path names where v is, for the error.
func knownFields(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil // not an object: json.Unmarshal says what is wrong
		}
		fields := map[string]reflect.Type{}
		for f := range t.Fields() {
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" {
				fields[name] = f.Type
			}
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			ft, ok := fields[k]
			if !ok {
				return fmt.Errorf("unknown field %q at %s (the allocator ignores unknown fields; allocatortest refuses them, so that a misspelt field does not pass unseen)", k, where(path))
			}
			if err := knownFields(obj[k], ft, join(path, k)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if obj, ok := v.(map[string]any); ok {
			for k, e := range obj {
				if err := knownFields(e, t.Elem(), join(path, k)); err != nil {
					return err
				}
			}
		}
	case reflect.Slice:
		if arr, ok := v.([]any); ok {
			for i, e := range arr {
				if err := knownFields(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func where(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}

// The response types are AllocationResponse as the allocator's gateway
// writes it (pkg/util/runtime NewServerMux: UseProtoNames, EmitUnpopulated):
// every field, empty lists as [], empty maps as {}, int64 wrappers as
// strings.

type response struct {
	GameServerName string                   `json:"gameServerName"`
	Ports          []port                   `json:"ports"`
	Address        string                   `json:"address"`
	Addresses      []address                `json:"addresses"`
	NodeName       string                   `json:"nodeName"`
	Source         string                   `json:"source"`
	Metadata       *gameServerMetadata      `json:"metadata"`
	Counters       map[string]counterStatus `json:"counters"`
	Lists          map[string]listStatus    `json:"lists"`
}

type port struct {
	Name string `json:"name"`
	Port int32  `json:"port"`
}

type address struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

type gameServerMetadata struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type counterStatus struct {
	Count    int64 `json:"count,string"`
	Capacity int64 `json:"capacity,string"`
}

type listStatus struct {
	Values   []string `json:"values"`
	Capacity int64    `json:"capacity,string"`
}

// status is a google.rpc.Status, the body of every error.
type status struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Details []any  `json:"details"`
}
