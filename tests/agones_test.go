package tests

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rewind-gg/rewind/agones/agonestest"
	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/server"
	"github.com/rewind-gg/rewind/token"
	"github.com/rewind-gg/rewind/weapons"
)

// stall is a weapon kind whose use blocks its room's goroutine until release
// is closed: a studio's buggy kind, to wedge a room loop.
type stall struct{ release chan struct{} }

func (k stall) Spawn(*weapons.Shot)                { <-k.release }
func (stall) Resolve(ecs.ViewTime, []lagcomp.Item) {}

// stallWeapons registers the stall kind and writes a weapons file whose
// class "staller" carries it.
func stallWeapons(t *testing.T, release chan struct{}) (*weapons.Registry, string) {
	t.Helper()
	reg := weapons.NewRegistry()
	if err := reg.Register("stall", func(*weapons.Env) weapons.Kind { return stall{release} }); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "weapons.toml")
	body := "[[weapons]]\nname = \"rifle\"\nkind = \"hitscan\"\nrange = 100.0\ndamage = 10.0\n" +
		"[[weapons]]\nname = \"jam\"\nkind = \"stall\"\n" +
		"[[classes]]\nname = \"assault\"\nweapons = [\"rifle\"]\n[[classes]]\nname = \"staller\"\nweapons = [\"jam\"]\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return reg, path
}

func await(t *testing.T, fake *agonestest.Server, method, path string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := fake.Await(ctx, method, path, n); err != nil {
		t.Fatalf("%s %s ×%d: %v", method, path, n, err)
	}
}

func count(fake *agonestest.Server, method, path string) int {
	n := 0
	for _, c := range fake.Calls() {
		if c.Method == method && c.Path == path {
			n++
		}
	}
	return n
}

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The Agones lifecycle against a fake SDK server that follows the REST
// docs: Ready once listening, the certificate's hash as an annotation,
// Health while the room loops tick and none while one is stuck, the
// allocation opening its match's room, players added to and removed from
// the players list, and Shutdown once the one match has ended.
func TestAgonesLifecycle(t *testing.T) {
	t.Parallel()
	fake := agonestest.New(t)
	fake.SetList("players", 12)
	release := make(chan struct{})
	reg, file := stallWeapons(t, release)
	srv, priv := tokenServer(t, func(c *server.Config) {
		c.Agones.Mode, c.Agones.SDKAddress, c.Agones.HealthPeriod = "on", fake.Addr(), 100*time.Millisecond
		c.Auth.Rooms = server.RoomsByOperator
		c.Kinds, c.WeaponsFile = reg, file
		c.Match.EmptyTimeout = 500 * time.Millisecond
		c.Admin.Listen = "127.0.0.1:0"
	})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	admin := "http://" + srv.AdminAddr().String()
	await(t, fake, "POST", "/ready", 1)
	await(t, fake, "PUT", "/metadata/annotation", 1)
	if got, want := fake.GameServer().Annotations["agones.dev/sdk-"+server.CertAnnotation], hex.EncodeToString(srv.CertSHA256()); got != want {
		t.Errorf("certificate annotation %q, want %q", got, want)
	}
	await(t, fake, "POST", "/health", 3)
	if code := get(t, admin+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz %d", code)
	}
	if code := get(t, admin+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz %d", code)
	}

	// The allocation names the match: its room opens, and only it.
	fake.Allocate(nil, map[string]string{"rewind.gg/match": "m-1"})
	until(t, 10*time.Second, "the allocated match's room never opened", func() bool { _, ok := findRoom(t, srv, "m-1"); return ok })
	var jam atomic.Bool
	c := claims("m-1", "alice", 1)
	c.Class = "staller"
	alice := dial(t, srv, client.Config{Addr: srv.Addr().String(), Token: token.Encode(sign(t, priv, c)),
		Input: scripted(func(v *client.View) client.Intent {
			return client.Intent{Fire: jam.Load(), Weapon: v.Welcome.Loadout[0]}
		})})
	stop := start(alice)
	defer stop()
	await(t, fake, "POST", "/v1beta1/lists/players:addValue", 1)
	if got := fake.ListValues("players"); !slices.Equal(got, []string{"alice"}) {
		t.Errorf("players list %q, want alice", got)
	}

	// A stuck room loop: no more Health, and /healthz says which room.
	jam.Store(true)
	until(t, 10*time.Second, "the stuck room never made the server unhealthy", func() bool { return srv.Healthy() != nil })
	n := count(fake, "POST", "/health")
	ctx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond) // 8 health periods
	err := fake.Await(ctx, "POST", "/health", n+2)                                 // one may have been on its way
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Health was sent while a room loop was stuck (%v)", err)
	}
	resp, err := http.Get(admin + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 256)
	nb, _ := resp.Body.Read(body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body[:nb]), "room m-1: no tick for") {
		t.Errorf("/healthz while stuck: %d %q", resp.StatusCode, body[:nb])
	}
	jam.Store(false)
	close(release)
	await(t, fake, "POST", "/health", count(fake, "POST", "/health")+2)

	// The player leaves; the room empties and closes: one match, so the
	// GameServer is shut down and the server asks to stop.
	stop()
	alice.Close()
	await(t, fake, "POST", "/v1beta1/lists/players:removeValue", 1)
	if got := fake.ListValues("players"); len(got) != 0 {
		t.Errorf("players list %q after alice left", got)
	}
	select {
	case <-srv.Stopping():
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not ask to stop after its one match")
	}
	// As rewind serve does: drain, then shut down. The Shutdown call is
	// made before the server's goroutines end.
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Drain(ctx)
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(fake, "POST", "/shutdown"); n != 1 || fake.GameServer().State != "Shutdown" {
		t.Errorf("%d Shutdown calls, state %q: want the one Shutdown, made before the server stopped", n, fake.GameServer().State)
	}
}

// A drain whose time is up ends the rooms left; one whose loop is stuck
// cannot end, and the drain does not wait for it forever.
func TestDrainDoesNotWaitForAStuckRoom(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	reg, file := stallWeapons(t, release)
	srv := startServer(t, func(c *server.Config) { c.Kinds, c.WeaponsFile = reg, file })
	var jam atomic.Bool
	p := dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "stuck", Name: "jammer", Class: "staller",
		Input: scripted(func(v *client.View) client.Intent {
			return client.Intent{Fire: jam.Load(), Weapon: v.Welcome.Loadout[0]}
		})})
	stop := start(p)
	defer stop()
	defer close(release) // before the test's Shutdown: the room can end then
	waitTicks(t, srv, "stuck", 5)
	jam.Store(true)
	until(t, 10*time.Second, "the room never got stuck", func() bool { return srv.Healthy() != nil })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	if err := srv.Drain(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("drain: %v", err)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the drain took %v with a stuck room", took)
	}
}

// Agones moving the GameServer to Shutdown (a fleet scaled down, the
// GameServer deleted) makes the server ask to stop: it drains and exits.
func TestAgonesShutdownStopsTheServer(t *testing.T) {
	t.Parallel()
	fake := agonestest.New(t)
	srv := startServer(t, func(c *server.Config) { c.Agones.Mode, c.Agones.SDKAddress = "on", fake.Addr() })
	await(t, fake, "POST", "/ready", 1)
	fake.SetState("Shutdown")
	select {
	case <-srv.Stopping():
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not ask to stop")
	}
}

// An SDK server still unreachable after agones.ready_timeout is a clear
// error at start, or, with fail_open, a logged error and a server that
// serves without Agones.
func TestAgonesUnreachable(t *testing.T) {
	t.Parallel()
	fake := agonestest.New(t)
	addr := fake.Addr()
	fake.Close()
	cfg := server.DefaultConfig()
	cfg.Listen, cfg.Admin.Listen = "127.0.0.1:0", ""
	cfg.Agones.Mode, cfg.Agones.SDKAddress, cfg.Agones.ReadyTimeout = "on", addr, 600*time.Millisecond
	srv, err := server.New(cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	err = srv.Start()
	if err == nil || !strings.Contains(err.Error(), "agones: PUT /metadata/annotation") || !strings.Contains(err.Error(), "connection refused") ||
		!strings.Contains(err.Error(), "agones.fail_open") {
		t.Errorf("start with the SDK unreachable: %v", err)
	}
	if took := time.Since(began); took < 600*time.Millisecond {
		t.Errorf("gave up after %v, before agones.ready_timeout", took)
	}
	cfg.Agones.FailOpen = true
	open := startServer(t, func(c *server.Config) { *c = cfg; c.Listen = "127.0.0.1:0" })
	p := dial(t, open, client.Config{Addr: open.Addr().String(), Room: "r", Name: "n", Input: strafer(5)})
	if p.ID() == 0 {
		t.Error("no player id")
	}
}

// Without Agones configured or in the environment, auto mode runs without
// it; mode on without an address is a configuration error.
func TestAgonesModeOnNeedsAnAddress(t *testing.T) {
	if os.Getenv("AGONES_SDK_HTTP_PORT") != "" {
		t.Skip("running under Agones")
	}
	cfg := server.DefaultConfig()
	cfg.Agones.Mode = "on"
	if _, err := server.New(cfg, zerolog.Nop()); err == nil || !strings.Contains(err.Error(), "config: agones.mode: on, but AGONES_SDK_HTTP_PORT is not set") {
		t.Errorf("got %v", err)
	}
	cfg.Agones.Mode = "auto"
	if _, err := server.New(cfg, zerolog.Nop()); err != nil {
		t.Errorf("auto without Agones: %v", err)
	}
}

// With agones.players = alpha, players are reported through Agones' player
// tracking: the capacity at start, then connect and disconnect by user id.
func TestAgonesAlphaPlayerTracking(t *testing.T) {
	t.Parallel()
	fake := agonestest.New(t)
	srv, priv := tokenServer(t, func(c *server.Config) {
		c.Agones.Mode, c.Agones.SDKAddress, c.Agones.Players = "on", fake.Addr(), "alpha"
	})
	await(t, fake, "PUT", "/alpha/player/capacity", 1)
	bob := dial(t, srv, client.Config{Addr: srv.Addr().String(), Token: token.Encode(sign(t, priv, claims("r", "bob", 2))), Input: strafer(5)})
	await(t, fake, "POST", "/alpha/player/connect", 1)
	if got := fake.Players(); !slices.Equal(got, []string{"bob"}) {
		t.Errorf("players %q", got)
	}
	bob.Close()
	await(t, fake, "POST", "/alpha/player/disconnect", 1)
	if got := fake.Players(); len(got) != 0 {
		t.Errorf("players %q after bob left", got)
	}
}
