package tests

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/server"
)

// A seat is held by playing. With a 2 s coverage window (half of it to be
// covered) and an input timeout of 4 s, squatters that send a packet now
// and then, often enough never to be idle, fill a room of three:
//   - one input a second: it covers one tick in twenty;
//   - 32 inputs (the most a packet carries, for the ticks ahead) every 3 s:
//     it covers 32 ticks of 60;
//   - 32 inputs every 1.2 s: it covers every tick, as a player would.
//
// The first two lose their seats within a few seconds, with close code 5
// and a reason saying what they missed; the third keeps its own: it gives
// the server an input for every tick, which is all the server can see of
// playing. An honest player refused while the room was full then joins.
func TestTrickleSquattersLoseTheirSeats(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c *server.Config) {
		c.MaxPlayers, c.InputTimeout, c.InputCoverageWindow = 3, 4*time.Second, 2*time.Second
	})
	squat := func(name string, period time.Duration, n int) *squatter {
		return &squatter{rawPlayer: joinRaw(t, srv, srv.Addr().String(), protocol.Join{Room: "squat", Name: name}), period: period, n: n}
	}
	trickle := squat("trickle", time.Second, 1)
	rare := squat("rare-32", 3*time.Second, protocol.MaxInputs)
	often := squat("often-32", 1200*time.Millisecond, protocol.MaxInputs)
	// Before any input: nobody is judged yet, and the room is full.
	if _, rj := answer(t, srv, "127.0.0.1", protocol.Join{Room: "squat", Name: "honest"}); rj == nil || rj.Code != protocol.RejectFull {
		t.Fatalf("a fourth player in a room of three: %+v, want full", rj)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, s := range []*squatter{trickle, rare, often} {
		wg.Add(1)
		go func() { defer wg.Done(); s.run(ctx) }()
	}
	defer func() { cancel(); wg.Wait() }()
	for _, s := range []*squatter{trickle, rare} {
		code, reason := s.closed(t, 20*time.Second)
		if code != protocol.CloseIdle || !strings.HasPrefix(reason, "too few inputs: none in time (or late enough to run) for ") ||
			!strings.HasSuffix(reason, "; a seat needs them for 50% of every 2s") {
			t.Errorf("%s: closed with %d %q, want %d and the inputs it missed", s.welcome.Name, code, reason, protocol.CloseIdle)
		}
	}
	waitPlayersBelow(t, srv, "squat", 2)
	waitTicks(t, srv, "squat", 60) // another window and a half
	if players := roomStats(t, srv, "squat").Players; len(players) != 1 || players[0].ID != often.welcome.Player {
		t.Errorf("the room holds %+v, want only the squatter that covers every tick", players)
	}
	if c, i := kicks(t, srv); c != 2 || i != 0 {
		t.Errorf("kicked for coverage %v, idle %v; want 2 and 0", c, i)
	}
	if _, rj := answer(t, srv, "127.0.0.1", protocol.Join{Room: "squat", Name: "honest"}); rj != nil {
		t.Errorf("the honest player, once the squatters are gone: %+v", rj)
	}
}

// kicks returns how many players lost their seats to the seat rule
// (coverage) and to the input timeout (idle).
func kicks(t *testing.T, srv *server.Server) (coverage, idle float64) {
	t.Helper()
	m := gather(t, srv)
	return m.value("rewind_players_kicked_total", "reason", "coverage"), m.value("rewind_players_kicked_total", "reason", "idle")
}
