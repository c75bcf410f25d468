package main

// Tests of the operators' dashboard and alert rules (deploy/grafana,
// deploy/prometheus): every metric they name is one a running server
// serves, every metric the server registers is on the dashboard, the
// Agones ones are alerted on (or said not to be), every dashboard query
// is scoped by the dashboard's variables, every rule has a `for`, and the
// rules and the dashboard's queries are PromQL Prometheus accepts, whose
// thresholds fire where alerts_test.yaml says (promtool check rules and
// promtool test rules, when promtool is installed: Debian's prometheus
// package has it).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	kyaml "github.com/knadh/koanf/parsers/yaml"

	"github.com/rewind-gg/rewind/agones/agonestest"
	"github.com/rewind-gg/rewind/internal/servertest"
	"github.com/rewind-gg/rewind/server"
)

// monitoringDashboard and monitoringAlerts are the files under test;
// monitoringAlertTests are the alert rules' unit tests.
var (
	monitoringDashboard  = filepath.Join(deployRoot, "deploy", "grafana", "rewind.json")
	monitoringAlerts     = filepath.Join(deployRoot, "deploy", "prometheus", "alerts.yaml")
	monitoringAlertTests = filepath.Join(deployRoot, "deploy", "prometheus", "alerts_test.yaml")
)

// monitoringNotAlerted are the Agones metrics no alert rule uses, and why.
var monitoringNotAlerted = map[string]string{
	"rewind_agones_matches": "a gauge of load, as rewind_rooms: the dashboard shows it, and the Fleet's autoscaler acts on the Counter it mirrors",
}

// monitoringScope is what every metric selector of the dashboard holds:
// its variables, namespace and instance.
var monitoringScope = []string{`namespace=~"$namespace"`, `instance=~"$instance"`}

// monitoringQuery is one PromQL expression and where it is.
type monitoringQuery struct{ where, expr string }

// monitoringVariable is one of the dashboard's template variables.
type monitoringVariable struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Query      any    `json:"query"`
	Multi      bool   `json:"multi"`
	IncludeAll bool   `json:"includeAll"`
	AllValue   string `json:"allValue"`
}

// monitoringRule is one alert rule.
type monitoringRule struct {
	Alert       string            `koanf:"alert"`
	Expr        string            `koanf:"expr"`
	For         string            `koanf:"for"`
	Labels      map[string]string `koanf:"labels"`
	Annotations map[string]string `koanf:"annotations"`
}

// monitoringReadDashboard returns the dashboard's queries and variables.
func monitoringReadDashboard(t *testing.T) ([]monitoringQuery, []monitoringVariable) {
	t.Helper()
	data, err := os.ReadFile(monitoringDashboard)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Templating struct {
			List []monitoringVariable `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", monitoringDashboard, err)
	}
	var queries []monitoringQuery
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			queries = append(queries, monitoringQuery{"panel " + p.Title, tg.Expr})
		}
	}
	if len(queries) < 20 {
		t.Fatalf("%d dashboard queries: the file lost its content", len(queries))
	}
	return queries, d.Templating.List
}

// monitoringReadRules returns the alert rules.
func monitoringReadRules(t *testing.T) []monitoringRule {
	t.Helper()
	data, err := os.ReadFile(monitoringAlerts)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := kyaml.Parser().Unmarshal(data)
	if err != nil {
		t.Fatalf("%s: %v", monitoringAlerts, err)
	}
	var rules []monitoringRule
	groups, _ := doc["groups"].([]any)
	for _, g := range groups {
		rs, _ := g.(map[string]any)["rules"].([]any)
		for _, r := range rs {
			m, _ := r.(map[string]any)
			rule := monitoringRule{Labels: map[string]string{}, Annotations: map[string]string{}}
			rule.Alert, _ = m["alert"].(string)
			rule.Expr, _ = m["expr"].(string)
			rule.For, _ = m["for"].(string)
			for k, v := range monitoringStrings(m["labels"]) {
				rule.Labels[k] = v
			}
			for k, v := range monitoringStrings(m["annotations"]) {
				rule.Annotations[k] = v
			}
			rules = append(rules, rule)
		}
	}
	if len(rules) < 5 {
		t.Fatalf("%d alert rules: the file lost its content", len(rules))
	}
	return rules
}

// monitoringStrings returns a YAML map's string values.
func monitoringStrings(v any) map[string]string {
	out := map[string]string{}
	m, _ := v.(map[string]any)
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// monitoringQueries returns the dashboard's queries and the alert rules'.
func monitoringQueries(t *testing.T) (dashboard, alerts []monitoringQuery) {
	t.Helper()
	dashboard, _ = monitoringReadDashboard(t)
	for _, r := range monitoringReadRules(t) {
		alerts = append(alerts, monitoringQuery{"alert " + r.Alert, r.Expr})
	}
	return dashboard, alerts
}

// monitoringServed returns the names of the series a running server's
// /metrics serves (a histogram's _bucket, _sum and _count). The server runs
// under a fake Agones SDK server, and is made to refuse an allocation and
// to fail a call, so that the Agones metrics labelled by reason and by call
// have series too.
func monitoringServed(t *testing.T) map[string]bool {
	t.Helper()
	fake := agonestest.New(t)
	fake.SetCounter("rooms", 0, 2)
	fake.SetList("matches", 2)
	srv := servertest.Start(t, func(c *server.Config) {
		c.Admin.Listen = "127.0.0.1:0"
		c.Agones.Mode, c.Agones.SDKAddress = "on", fake.Addr()
		c.Agones.Matches, c.Agones.MaxMatches, c.Agones.Players = "list", 2, "none"
	})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	// An id that is no room name: refused (invalid), and taken off the
	// List after the refusal is counted.
	fake.AllocateWith(agonestest.Allocation{AddValues: map[string][]string{"matches": {"not a room"}}})
	if err := fake.Await(ctx, "POST", "/v1beta1/lists/matches:removeValue", 1); err != nil {
		t.Fatal(err)
	}
	// An outage ends the watch, which the server counts before it watches
	// again.
	watches := len(fake.CallTimes("GET", "/watch/gameserver"))
	fake.SetOutage(true)
	err := fake.Await(ctx, "GET", "/watch/gameserver", watches+1)
	fake.SetOutage(false)
	if err != nil {
		t.Fatal(err)
	}

	res, err := http.Get("http://" + srv.AdminAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	served := map[string]bool{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		served[line[:strings.IndexAny(line, "{ ")]] = true
	}
	if err := sc.Err(); err != nil || len(served) < 30 {
		t.Fatalf("/metrics: %d series names, %v", len(served), err)
	}
	for _, n := range []string{"rewind_agones_allocations_refused_total", "rewind_agones_call_errors_total"} {
		if !served[n] {
			t.Fatalf("/metrics has no %s after a refused allocation and an outage", n)
		}
	}
	return served
}

// monitoringRegistered returns the names of the metrics the server
// registers, from its source (server/metrics.go, server/agones.go): a
// labelled metric has no series until it counts something, so /metrics
// does not list them all.
func monitoringRegistered(t *testing.T) map[string]bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(deployRoot, "server", "*.go"))
	names := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range monitoringRegistration.FindAllSubmatch(b, -1) {
			names[string(m[1])] = true
		}
	}
	if len(names) < 30 || !names["rewind_agones_matches"] {
		t.Fatalf("found %d metric names in server/*.go: %v", len(names), slices.Sorted(maps.Keys(names)))
	}
	return names
}

// monitoringRegistration matches a metric's name where it is made.
var monitoringRegistration = regexp.MustCompile(`Name:\s*"(rewind_[a-z0-9_]+)"`)

// monitoringName matches the server's metric names in PromQL.
var monitoringName = regexp.MustCompile(`\brewind_[a-zA-Z0-9_]+`)

// monitoringBase returns the metric a series name belongs to: a
// histogram's series without _bucket, _sum or _count.
func monitoringBase(name string, registered map[string]bool) string {
	for _, s := range []string{"_bucket", "_sum", "_count"} {
		if b, ok := strings.CutSuffix(name, s); ok && registered[b] {
			return b
		}
	}
	return name
}

// Every metric the dashboard and the alert rules name is one the server
// serves; every query names one.
func TestMonitoringNamesServedMetrics(t *testing.T) {
	dashboard, alerts := monitoringQueries(t)
	served := monitoringServed(t)
	for _, q := range slices.Concat(dashboard, alerts) {
		names := monitoringName.FindAllString(q.expr, -1)
		if len(names) == 0 {
			t.Errorf("%s: %q names no rewind metric", q.where, q.expr)
		}
		for _, n := range names {
			if !served[n] {
				t.Errorf("%s: %s is not a metric the server serves", q.where, n)
			}
		}
	}
}

// Every metric the server registers is on the dashboard, and every Agones
// one is in an alert rule, or in monitoringNotAlerted with the reason.
func TestMonitoringCoversMetrics(t *testing.T) {
	dashboard, alerts := monitoringQueries(t)
	registered := monitoringRegistered(t)
	used := func(qs []monitoringQuery) map[string]bool {
		m := map[string]bool{}
		for _, q := range qs {
			for _, n := range monitoringName.FindAllString(q.expr, -1) {
				m[monitoringBase(n, registered)] = true
			}
		}
		return m
	}
	onDashboard, alerted := used(dashboard), used(alerts)
	for _, n := range slices.Sorted(maps.Keys(registered)) {
		if !onDashboard[n] {
			t.Errorf("%s: the server registers it, no dashboard panel shows it", n)
		}
		if !strings.HasPrefix(n, "rewind_agones_") {
			continue
		}
		why, exempt := monitoringNotAlerted[n]
		switch {
		case !alerted[n] && !exempt:
			t.Errorf("%s: no alert rule uses it; add one, or say in monitoringNotAlerted why not", n)
		case alerted[n] && exempt:
			t.Errorf("%s: an alert rule uses it, and monitoringNotAlerted says %q", n, why)
		}
	}
	for n := range monitoringNotAlerted {
		if !registered[n] {
			t.Errorf("monitoringNotAlerted names %s, which the server does not register", n)
		}
	}
}

// The dashboard has the variables namespace and instance, and every metric
// selector of every query holds both.
func TestMonitoringDashboardScoped(t *testing.T) {
	queries, vars := monitoringReadDashboard(t)
	for _, name := range []string{"namespace", "instance"} {
		i := slices.IndexFunc(vars, func(v monitoringVariable) bool { return v.Name == name })
		if i < 0 {
			t.Errorf("the dashboard has no variable %s", name)
			continue
		}
		v := vars[i]
		q, _ := v.Query.(string)
		if v.Type != "query" || !strings.HasPrefix(q, "label_values(") || !v.Multi || !v.IncludeAll || v.AllValue != ".*" {
			t.Errorf("variable %s: %+v; want a query of label_values, multi-valued, with All as .* (which also matches series without the label)", name, v)
		}
	}
	for _, q := range queries {
		for _, loc := range monitoringName.FindAllStringIndex(q.expr, -1) {
			rest := q.expr[loc[1]:]
			end := strings.IndexByte(rest, '}')
			if !strings.HasPrefix(rest, "{") || end < 0 {
				t.Errorf("%s: %s has no selector: want {%s}", q.where, q.expr[loc[0]:loc[1]], strings.Join(monitoringScope, ", "))
				continue
			}
			for _, m := range monitoringScope {
				if !strings.Contains(rest[:end], m) {
					t.Errorf("%s: %s%s lacks %s", q.where, q.expr[loc[0]:loc[1]], rest[:end+1], m)
				}
			}
		}
	}
}

// Every alert rule has a `for` of a minute at least, a severity, a summary
// and a description, and groups by namespace wherever it aggregates, so
// that an alert says where it comes from.
func TestMonitoringAlertRules(t *testing.T) {
	// An aggregation operator, and the labels it groups by.
	aggregation := regexp.MustCompile(`\b(?:sum|avg|min|max|count|group|stddev|stdvar|topk|bottomk|quantile|count_values)\s*(?:(by|without)\s*\(([^)]*)\))?\s*\(`)
	for _, r := range monitoringReadRules(t) {
		if r.Alert == "" {
			t.Errorf("a rule that is no alert: %q", r.Expr)
			continue
		}
		if d, err := time.ParseDuration(r.For); err != nil || d < time.Minute {
			t.Errorf("%s: for %q; want one, of a minute at least (%v)", r.Alert, r.For, err)
		}
		if s := r.Labels["severity"]; s != "info" && s != "warning" && s != "critical" {
			t.Errorf("%s: severity %q; want info, warning or critical", r.Alert, s)
		}
		if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("%s: want a summary and a description", r.Alert)
		}
		for _, m := range aggregation.FindAllStringSubmatch(r.Expr, -1) {
			if m[1] != "by" || !slices.Contains(strings.Fields(strings.ReplaceAll(m[2], ",", " ")), "namespace") {
				t.Errorf("%s: %q; want every aggregation by namespace, among others", r.Alert, m[0])
			}
		}
	}
}

// The alert rules pass promtool check rules and their unit tests
// (alerts_test.yaml: the thresholds fire, and do not fire, where it says),
// and the dashboard's queries, its variables at All, pass promtool check
// rules as recording rules: PromQL Prometheus accepts.
func TestMonitoringPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("REWIND_REQUIRE_PROMTOOL") != "" {
			t.Fatal("promtool is not installed, and REWIND_REQUIRE_PROMTOOL is set (Debian: apt-get install prometheus)")
		}
		t.Skip("promtool is not installed (Debian: apt-get install prometheus)")
	}
	dashboard, _ := monitoringReadDashboard(t)
	all := strings.NewReplacer(`"$namespace"`, `".*"`, `"$instance"`, `".*"`)
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, q := range dashboard {
		expr, _ := json.Marshal(all.Replace(q.expr)) // a JSON string is a YAML string
		fmt.Fprintf(&b, "      - record: dashboard:query_%d\n        expr: %s\n", i, expr)
	}
	queries := filepath.Join(t.TempDir(), "dashboard-rules.yaml")
	if err := os.WriteFile(queries, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"check", "rules", monitoringAlerts},
		{"check", "rules", queries},
		{"test", "rules", monitoringAlertTests},
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
