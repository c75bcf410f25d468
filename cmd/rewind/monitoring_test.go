package main

// Tests of the operators' dashboard and alert rules (deploy/grafana,
// deploy/prometheus): every metric they name is one a running server
// serves, and the rules and the dashboard's queries are PromQL Prometheus
// accepts (promtool check rules, when promtool is installed: Debian's
// prometheus package has it).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	kyaml "github.com/knadh/koanf/parsers/yaml"

	"github.com/rewind-gg/rewind/internal/servertest"
	"github.com/rewind-gg/rewind/server"
)

// monitoringDashboard and monitoringAlerts are the files under test.
var (
	monitoringDashboard = filepath.Join(deployRoot, "deploy", "grafana", "rewind.json")
	monitoringAlerts    = filepath.Join(deployRoot, "deploy", "prometheus", "alerts.yaml")
)

// monitoringQuery is one PromQL expression and where it is.
type monitoringQuery struct{ where, expr string }

// monitoringQueries returns the dashboard's queries and the alert rules'.
func monitoringQueries(t *testing.T) (dashboard, alerts []monitoringQuery) {
	t.Helper()
	data, err := os.ReadFile(monitoringDashboard)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
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
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			dashboard = append(dashboard, monitoringQuery{"panel " + p.Title, tg.Expr})
		}
	}
	data, err = os.ReadFile(monitoringAlerts)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := kyaml.Parser().Unmarshal(data)
	if err != nil {
		t.Fatalf("%s: %v", monitoringAlerts, err)
	}
	groups, _ := doc["groups"].([]any)
	for _, g := range groups {
		rules, _ := g.(map[string]any)["rules"].([]any)
		for _, r := range rules {
			rule, _ := r.(map[string]any)
			expr, _ := rule["expr"].(string)
			alerts = append(alerts, monitoringQuery{fmt.Sprint("alert ", rule["alert"]), expr})
		}
	}
	if len(dashboard) < 20 || len(alerts) < 5 {
		t.Fatalf("%d dashboard queries, %d alert rules: the files lost their content", len(dashboard), len(alerts))
	}
	return dashboard, alerts
}

// monitoringServed returns the names of the series a running server's
// /metrics serves (a histogram's _bucket, _sum and _count).
func monitoringServed(t *testing.T) map[string]bool {
	t.Helper()
	srv := servertest.Start(t, func(c *server.Config) { c.Admin.Listen = "127.0.0.1:0" })
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
	return served
}

// monitoringName matches the server's metric names in PromQL.
var monitoringName = regexp.MustCompile(`\brewind_[a-zA-Z0-9_]+`)

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

// The alert rules pass promtool check rules, and so do the dashboard's
// queries as recording rules: PromQL Prometheus accepts.
func TestMonitoringPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("REWIND_REQUIRE_PROMTOOL") != "" {
			t.Fatal("promtool is not installed, and REWIND_REQUIRE_PROMTOOL is set (Debian: apt-get install prometheus)")
		}
		t.Skip("promtool is not installed (Debian: apt-get install prometheus)")
	}
	dashboard, _ := monitoringQueries(t)
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, q := range dashboard {
		expr, _ := json.Marshal(q.expr) // a JSON string is a YAML string
		fmt.Fprintf(&b, "      - record: dashboard:query_%d\n        expr: %s\n", i, expr)
	}
	queries := filepath.Join(t.TempDir(), "dashboard-rules.yaml")
	if err := os.WriteFile(queries, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{monitoringAlerts, queries} {
		out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput()
		if err != nil {
			t.Errorf("promtool check rules %s: %v\n%s", file, err, out)
		}
	}
}
