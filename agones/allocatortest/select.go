package allocatortest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/rewind-gg/rewind/agones"
)

// selection is a validated request's search: Agones' GameServerAllocation
// after ConvertAllocationRequestToGSA, ApplyDefaults and Converter.
type selection struct {
	namespace  string
	packed     bool
	priorities []prio
	selectors  []sel
}

type prio struct {
	list       bool // a List's; else a Counter's
	key        string
	descending bool
}

type sel struct {
	labels   map[string]string
	state    string // "Ready" or "Allocated"
	counters map[string]counterSelector
	lists    map[string]listSelector
}

// unsupported names the first thing in the request the fake does not
// implement, or returns "".
func (r *request) unsupported() string {
	if r.MultiClusterSetting != nil && r.MultiClusterSetting.Enabled {
		return "multi-cluster allocation (multiClusterSetting.enabled)"
	}
	for _, name := range sortedKeys(r.Counters) {
		c := r.Counters[name]
		if c.Capacity != nil {
			return fmt.Sprintf("a Counter capacity action (counters.%s.capacity)", name)
		}
		if c.Action != nil && *c.Action == "Decrement" {
			return fmt.Sprintf("the Counter action Decrement (counters.%s.action)", name)
		}
	}
	for _, name := range sortedKeys(r.Lists) {
		l := r.Lists[name]
		if l.Capacity != nil {
			return fmt.Sprintf("a List capacity action (lists.%s.capacity)", name)
		}
		if len(l.DeleteValues) > 0 {
			return fmt.Sprintf("the List action deleteValues (lists.%s.deleteValues)", name)
		}
	}
	return ""
}

// metadata returns the metadata the allocation applies: metadata, or the
// deprecated metaPatch if metadata is not set.
func (r *request) metadata() *metaPatch {
	if r.Metadata != nil {
		return r.Metadata
	}
	return r.MetaPatch
}

// selection resolves the request's enums and returns its search; an error
// is one protojson would refuse the request with.
func (r *request) selection() (selection, error) {
	s := selection{namespace: r.Namespace}
	scheduling, err := r.Scheduling.resolve("scheduling", schedulingNames)
	if err != nil {
		return s, err
	}
	s.packed = scheduling == 0
	for _, p := range r.Priorities {
		t, err := p.Type.resolve("type", priorityTypes)
		if err != nil {
			return s, err
		}
		o, err := p.Order.resolve("order", priorityOrders)
		if err != nil {
			return s, err
		}
		s.priorities = append(s.priorities, prio{list: t == 1, key: p.Key, descending: o == 1})
	}
	for _, n := range r.selectors() {
		state, err := n.sel.GameServerState.resolve("gameServerState", stateNames)
		if err != nil {
			return s, err
		}
		s.selectors = append(s.selectors, sel{labels: n.sel.MatchLabels, state: []string{"Ready", "Allocated"}[state],
			counters: n.sel.Counters, lists: n.sel.Lists})
	}
	return s, nil
}

// namedSelector is a selector and its field path in GameServerAllocation.
type namedSelector struct {
	path string
	sel  selector
}

// selectors returns the selectors: gameServerSelectors, else the
// deprecated preferred ones and the required one
// (GameServerAllocation.Converter).
func (r *request) selectors() []namedSelector {
	var sels []namedSelector
	if len(r.GameServerSelectors) > 0 {
		for i, x := range r.GameServerSelectors {
			sels = append(sels, namedSelector{fmt.Sprintf("spec.selectors[%d]", i), x})
		}
		return sels
	}
	for i, x := range r.PreferredGameServerSelectors {
		sels = append(sels, namedSelector{fmt.Sprintf("spec.preferred[%d]", i), x})
	}
	req := selector{}
	if r.RequiredGameServerSelector != nil {
		req = *r.RequiredGameServerSelector
	}
	return append(sels, namedSelector{"spec.required", req})
}

// validate returns the errors of GameServerAllocation's Validate, each as
// Kubernetes' field.Error prints it.
func (r *request) validate() []string {
	var errs []string
	invalid := func(path string, value any, detail string) {
		if s, ok := value.(string); ok {
			value = fmt.Sprintf("%q", s)
		}
		errs = append(errs, fmt.Sprintf("%s: Invalid value: %v: %s", path, value, detail))
	}
	const negative = "must be greater than or equal to 0"

	for i, p := range r.Priorities {
		if p.Key == "" {
			t, _ := p.Type.resolve("type", priorityTypes)
			invalid(fmt.Sprintf("spec.priorities[%d]", i), priorityTypes[t], "key must not be nil")
		}
	}
	for _, n := range r.selectors() {
		for _, key := range sortedKeys(n.sel.MatchLabels) {
			if msg := qualifiedNameError(key); msg != "" {
				invalid(n.path+".labelSelector", key, "Error converting label selector: "+msg)
			}
		}
		for _, name := range sortedKeys(n.sel.Counters) {
			c, path := n.sel.Counters[name], fmt.Sprintf("%s.counters[%s]", n.path, name)
			for _, f := range []struct {
				field string
				v     int64s
			}{{"minCount", c.MinCount}, {"maxCount", c.MaxCount}, {"minAvailable", c.MinAvailable}, {"maxAvailable", c.MaxAvailable}} {
				if f.v < 0 {
					invalid(path+"."+f.field, int64(f.v), negative)
				}
			}
			if c.MaxCount < c.MinCount && c.MaxCount != 0 {
				invalid(path, int64(c.MaxCount), fmt.Sprintf("maxCount must zero or greater than minCount %d", c.MinCount))
			}
			if c.MaxAvailable < c.MinAvailable && c.MaxAvailable != 0 {
				invalid(path, int64(c.MaxAvailable), fmt.Sprintf("maxAvailable must zero or greater than minAvailable %d", c.MinAvailable))
			}
		}
		for _, name := range sortedKeys(n.sel.Lists) {
			l, path := n.sel.Lists[name], fmt.Sprintf("%s.lists[%s]", n.path, name)
			if l.MinAvailable < 0 {
				invalid(path+".minAvailable", int64(l.MinAvailable), negative)
			}
			if l.MaxAvailable < 0 {
				invalid(path+".maxAvailable", int64(l.MaxAvailable), negative)
			}
			if l.MaxAvailable < l.MinAvailable && l.MaxAvailable != 0 {
				invalid(path, int64(l.MaxAvailable), fmt.Sprintf("maxAvailable must zero or greater than minAvailable %d", l.MinAvailable))
			}
		}
	}

	for _, name := range sortedKeys(r.Counters) {
		c, path := r.Counters[name], fmt.Sprintf("spec.counters[%s]", name)
		switch {
		case c.Amount != nil && *c.Amount < 0:
			invalid(path+".amount", int64(*c.Amount), negative)
		case c.Amount != nil && c.Action == nil:
			invalid(path, "null", `action must be "Increment" or "Decrement" if the amount is not nil`)
		case c.Amount == nil && c.Action != nil:
			invalid(path, "null", "amount must not be nil if action is not nil")
		case c.Action != nil && *c.Action != "Increment" && *c.Action != "Decrement":
			// Stricter than the allocator, which allocates and records a
			// warning event (GameServer.UpdateCount fails).
			errs = append(errs, fmt.Sprintf(`%s.action: Unsupported value: %q: supported values: "Increment", "Decrement"`, path, *c.Action))
		}
	}

	if md := r.metadata(); md != nil {
		for _, key := range sortedKeys(md.Labels) {
			if msg := qualifiedNameError(key); msg != "" {
				invalid("spec.metadata.labels", key, msg)
			}
			if v := md.Labels[key]; len(v) > 63 || (v != "" && !qualifiedName.MatchString(v)) {
				invalid("spec.metadata.labels", v, "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character")
			}
		}
		for _, key := range sortedKeys(md.Annotations) {
			if msg := qualifiedNameError(strings.ToLower(key)); msg != "" {
				invalid("spec.metadata.annotations", key, msg)
			}
		}
	}
	return errs
}

// matches reports whether a GameServer with labels matches s
// (GameServerSelector.Matches, with the CountsAndLists feature on).
func (s sel) matches(gs agones.GameServer, labels map[string]string) bool {
	for k, v := range s.labels {
		if have, ok := labels[k]; !ok || have != v {
			return false
		}
	}
	if gs.State != s.state {
		return false
	}
	for name, cs := range s.counters {
		c, ok := gs.Counters[name]
		if !ok {
			return false
		}
		available := c.Capacity - c.Count
		if available < int64(cs.MinAvailable) || (cs.MaxAvailable != 0 && available > int64(cs.MaxAvailable)) ||
			c.Count < int64(cs.MinCount) || (cs.MaxCount != 0 && c.Count > int64(cs.MaxCount)) {
			return false
		}
	}
	for name, ls := range s.lists {
		l, ok := gs.Lists[name]
		if !ok {
			return false
		}
		available := l.Capacity - int64(len(l.Values))
		if available < int64(ls.MinAvailable) || (ls.MaxAvailable != 0 && available > int64(ls.MaxAvailable)) ||
			(ls.ContainsValue != "" && !slices.Contains(l.Values, ls.ContainsValue)) {
			return false
		}
	}
	return true
}

// comparePriorities orders x and y by the priorities
// (GameServer.CompareCountAndListPriorities): by available capacity,
// the least first (Ascending) or the most (Descending); a GameServer with
// the Counter or List before one without it.
func (s selection) comparePriorities(x, y agones.GameServer) int {
	for _, p := range s.priorities {
		ax, okx := available(x, p)
		ay, oky := available(y, p)
		c := 0
		switch {
		case okx && oky && ax < ay:
			c = -1
		case okx && oky && ax > ay:
			c = 1
		case okx && !oky:
			return -1 // with the priority first, whatever the order
		case !okx && oky:
			return 1
		}
		if p.descending {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// available returns a GameServer's available capacity on p's Counter or
// List, and whether it has it.
func available(gs agones.GameServer, p prio) (int64, bool) {
	if p.list {
		l, ok := gs.Lists[p.key]
		return l.Capacity - int64(len(l.Values)), ok
	}
	c, ok := gs.Counters[p.key]
	return c.Capacity - c.Count, ok
}

var (
	qualifiedName    = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
	dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// qualifiedNameError returns why key is not a Kubernetes qualified name (a
// label or annotation key: validation.IsQualifiedName), or "".
func qualifiedNameError(key string) string {
	name := key
	if prefix, rest, found := strings.Cut(key, "/"); found {
		if prefix == "" || len(prefix) > 253 || !dns1123Subdomain.MatchString(prefix) {
			return "prefix part must be a non-empty lowercase RFC 1123 subdomain"
		}
		name = rest
	}
	if name == "" || len(name) > 63 || !qualifiedName.MatchString(name) {
		return "name part must be 1 to 63 characters, alphanumeric, '-', '_' or '.', starting and ending with an alphanumeric character"
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
