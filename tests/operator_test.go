package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/server"
)

// The SDK verifies the server by default: a self-signed certificate is
// refused without a pin, refused with another pin, accepted with its own.
func TestClientVerifiesTheServer(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	try := func(cfg client.Config) error {
		cfg.Addr, cfg.Room, cfg.Input = srv.Addr().String(), "tls", strafer(5)
		cfg.Name = "p" + time.Now().Format("150405.000000000")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := client.Dial(ctx, cfg)
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := try(client.Config{}); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("no pin, no CA: %v", err)
	}
	wrong := srv.CertSHA256()
	wrong[0] ^= 1
	if err := try(client.Config{ServerCertSHA256: wrong}); err == nil || !strings.Contains(err.Error(), "is not the pinned") {
		t.Errorf("another pin: %v", err)
	}
	if err := try(client.Config{ServerCertSHA256: srv.CertSHA256()}); err != nil {
		t.Errorf("its own pin: %v", err)
	}
	if err := try(client.Config{InsecureSkipVerify: true}); err != nil {
		t.Errorf("explicitly insecure: %v", err)
	}
}

// What operators read: the build, clients' round trips and loss, view lag,
// hits; the rooms API opens rooms and lists them.
func TestOperatorSurface(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) { c.Admin.Listen = "127.0.0.1:0" })
	admin := "http://" + srv.AdminAddr().String()
	post := func(body string) int {
		resp, err := http.Post(admin+"/rooms", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(`{"id": "ops"}`); code != http.StatusCreated {
		t.Errorf("POST /rooms: %d", code)
	}
	if code := post(`{"id": "ops"}`); code != http.StatusConflict {
		t.Errorf("POST /rooms again: %d", code)
	}
	if code := post(`{"id": "no spaces"}`); code != http.StatusBadRequest {
		t.Errorf("POST /rooms with a bad id: %d", code)
	}
	if code := post(`{"room": "x"}`); code != http.StatusBadRequest {
		t.Errorf("POST /rooms with an unknown field: %d", code)
	}
	shim := shim(t, srv, 60*time.Millisecond, 0, 0.05, 11)
	c := dial(t, srv, client.Config{Addr: shim, Room: "ops", Name: "op", Input: strafer(10)})
	stop := start(c)
	waitTicks(t, srv, "ops", 60)
	resp, err := http.Get(admin + "/rooms")
	if err != nil {
		t.Fatal(err)
	}
	var rooms []struct {
		ID      string
		Players []struct{ User string }
	}
	err = json.NewDecoder(resp.Body).Decode(&rooms)
	resp.Body.Close()
	if err != nil || len(rooms) != 1 || rooms[0].ID != "ops" || len(rooms[0].Players) != 1 || rooms[0].Players[0].User != "op" {
		t.Errorf("GET /rooms: %+v %v", rooms, err)
	}
	stop()
	m := gather(t, srv)
	for _, name := range []string{"rewind_client_rtt_seconds", "rewind_client_loss_ratio", "rewind_view_lag_seconds"} {
		f, ok := m[name]
		if !ok || f.GetMetric()[0].GetHistogram().GetSampleCount() == 0 {
			t.Errorf("%s has no samples", name)
		}
	}
	bi := m["rewind_build_info"]
	if bi == nil || bi.GetMetric()[0].GetGauge().GetValue() != 1 {
		t.Fatalf("rewind_build_info: %v", bi)
	}
	labels := map[string]string{}
	for _, l := range bi.GetMetric()[0].GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["protocol"] != fmt.Sprint(protocol.Version) || !strings.HasPrefix(labels["goversion"], "go") || labels["version"] == "" {
		t.Errorf("build info labels %v", labels)
	}
	// /metrics serves the same, in Prometheus' text format.
	resp, err = http.Get(admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	if !strings.Contains(body.String(), "rewind_build_info{") {
		t.Error("/metrics lacks rewind_build_info")
	}
	// pprof is not on the admin port.
	if resp, err := http.Get(admin + "/debug/pprof/"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("pprof on the admin port: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}

// Go's profiler answers on its own listener, when one is configured.
func TestPprofListener(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) { c.Pprof.Listen = "127.0.0.1:0" })
	resp, err := http.Get("http://" + srv.PprofAddr().String() + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/debug/pprof/: %d", resp.StatusCode)
	}
	if startServer(t, nil).PprofAddr() != nil {
		t.Error("pprof listens by default")
	}
}
