package bots

import (
	"testing"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/protocol"
)

// kit is a loadout of every kind: a rifle (hitscan, 100 m), a rocket, a
// bite (melee, 2.2 m) and a shield.
var kit = []protocol.WeaponInfo{
	{Name: "rifle", Kind: "hitscan", Range: 100},
	{Name: "rocket", Kind: "projectile"},
	{Name: "bite", Kind: "melee", Reach: 2.2},
	{Name: "shield", Kind: "placeable", FireInterval: 300},
}

// A bot with Loadout set, an enemy in sight for a minute at 20 Hz: it
// bites within reach and nothing else does; it fires every other weapon
// at range; while its pick is the bite it closes in (and fires what
// reaches meanwhile); it places its shield 5 to 15 s into the fight, then
// 20 to 30 s apart.
func TestBotUsesItsWholeLoadout(t *testing.T) {
	lvl, err := client.LoadLevel("arena", nil)
	if err != nil {
		t.Fatal(err)
	}
	w := newWalker(t, lvl, NewBot(BotConfig{Seed: 7, Loadout: true}), geom.V(0, 0, -20))
	w.welcome.Loadout, w.welcome.Weapons = []uint8{0, 1, 2, 3}, kit
	used := map[string]int{}
	var shields []int64
	charged := 0
	for tick := range int64(1200) {
		// The enemy stands 1.5 m in front of the bot for the first 10 of
		// every 40 ticks, else 20 m away.
		d := 20.0
		if tick%40 < 10 {
			d = 1.5
		}
		w.view.Players = []client.Player{{Alive: true, Team: 2, Pos: w.state.Pos.Add(geom.V(0, 0, d))}}
		in := w.step()
		if !in.Fire {
			t.Fatalf("tick %d: no fire with an enemy in sight", tick)
		}
		name := kit[in.Weapon].Name
		used[name]++
		if w.bot.charge {
			charged++
		}
		switch {
		case name == "shield":
			shields = append(shields, tick)
		case (name == "bite") != (d < 2.6):
			t.Errorf("tick %d: %s at %.1f m", tick, name, d)
		case name == "rocket" || name == "rifle":
			if w.bot.charge && d < 2.6 {
				t.Errorf("tick %d: charging at %.1f m", tick, d)
			}
		}
	}
	if used["rifle"] == 0 || used["rocket"] == 0 || used["bite"] == 0 || charged == 0 {
		t.Errorf("weapons used: %v, %d ticks charging; want every one, and a charge", used, charged)
	}
	if len(shields) < 2 || shields[0] < 100 || shields[0] > 300 {
		t.Fatalf("shields at ticks %v: want the first 5 to 15 s in, more after", shields)
	}
	for i := 1; i < len(shields); i++ {
		if gap := shields[i] - shields[i-1]; gap < 400 || gap > 600 {
			t.Errorf("shields at ticks %v: %d ticks apart, want 20 to 30 s", shields, gap)
		}
	}
}
