package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mlange-42/arche/generic"

	"github.com/rewind-gg/rewind/bots"
	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/server"
)

// Bots that use their whole loadout (bots.BotConfig.Loadout) fill a
// recording with every kind of weapon their classes carry: the assault's
// rifle and the breacher's shotgun (hitscan), their grenades and rockets
// and the raptor's needle (projectiles), the raptor's bite and tail
// (melee), and the assault's and breacher's shields (placeables). The
// replay counts each kind's shot decisions, and the shields that stood.
func TestBotsRecordTheirWholeLoadout(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a real match")
	}
	dir := t.TempDir()
	srv := startServer(t, func(c *server.Config) {
		c.Record.Dir = dir
		c.Match.Duration = 20 * time.Second
		c.Match.RespawnTicks, c.Match.InvulnerableTicks = 20, 10
	})
	// Two of each class a side, raptors twice: they close in on each other.
	classes := []string{"assault", "breacher", "raptor", "raptor"}
	var clients []*client.Client
	for i := range 8 {
		clients = append(clients, dial(t, srv, client.Config{Addr: srv.Addr().String(), Room: "kit", Name: fmt.Sprint("bot", i),
			Team: uint8(1 + i%2), Class: classes[i/2],
			Input: bots.NewBot(bots.BotConfig{Seed: uint64(i), AimError: 0.02, Loadout: true})}))
	}
	stop := start(clients...)
	until(t, 60*time.Second, "the match did not end", func() bool { _, open := findRoom(t, srv, "kit"); return !open })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	stop()
	files, err := filepath.Glob(filepath.Join(dir, "kit-*"+replay.Extension))
	if err != nil || len(files) != 1 {
		t.Fatalf("recordings: %v %v; want one", files, err)
	}
	kinds, weapons := map[string]int{}, map[string]int{}
	shields := map[ecs.Entity]bool{}
	var filter *generic.Filter1[ecs.Shield]
	_, err = replayFile(t, files[0], replay.Config{OnTick: func(tk *replay.Tick) error {
		sim := tk.Sim
		for _, ev := range sim.Events.Shots {
			def := sim.Catalog.At(ev.Weapon)
			kinds[def.Kind]++
			weapons[def.Name]++
		}
		if filter == nil {
			filter = generic.NewFilter1[ecs.Shield]()
		}
		q := filter.Query(sim.World)
		for q.Next() {
			shields[q.Entity()] = true
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("shot decisions by weapon: %v; %d shields placed", weapons, len(shields))
	for _, k := range []string{"hitscan", "projectile", "melee"} {
		if kinds[k] == 0 {
			t.Errorf("no %s shot in the recording (shots by weapon: %v)", k, weapons)
		}
	}
	if weapons["rocket"] == 0 {
		t.Errorf("no rocket in the recording (shots by weapon: %v)", weapons)
	}
	if len(shields) == 0 {
		t.Error("no shield placed in the recording")
	}
}
