package limits

import (
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"
)

var (
	a = netip.MustParseAddr("127.0.0.1")
	b = netip.MustParseAddr("127.0.0.2")
)

func newLimiter(t *testing.T, cfg Config) *Limiter {
	t.Helper()
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestHandshakeCapIsPerSource(t *testing.T) {
	l := newLimiter(t, Config{Handshakes: 2, Players: 1, Rooms: 1, JoinRate: 1, JoinBurst: 1})
	r1, ok1 := l.Handshake(a)
	_, ok2 := l.Handshake(a)
	if _, ok3 := l.Handshake(a); !ok1 || !ok2 || ok3 {
		t.Fatalf("source a: %v %v %v, want the third refused", ok1, ok2, ok3)
	}
	if _, ok := l.Handshake(b); !ok {
		t.Error("another source is refused because of the first")
	}
	if l.Pending() != 3 {
		t.Errorf("%d pending", l.Pending())
	}
	r1()
	r1() // twice: released once
	if _, ok := l.Handshake(a); !ok {
		t.Error("a released slot is not free again")
	}
	if _, ok := l.Handshake(a); ok {
		t.Error("releasing twice freed two slots")
	}
}

// A source holds at most its cap of players, and of rooms its joins
// created; another source is not refused for it, and a release frees one.
func TestPlayerAndRoomCaps(t *testing.T) {
	l := newLimiter(t, Config{Handshakes: 1, Players: 2, Rooms: 2, JoinRate: 1, JoinBurst: 1})
	for _, hold := range []struct {
		what string
		take func(netip.Addr) (func(), bool)
	}{{"player", l.Player}, {"room", l.Room}} {
		r, _ := hold.take(a)
		hold.take(a)
		if _, ok := hold.take(a); ok {
			t.Fatalf("a third %s of a source admitted", hold.what)
		}
		if _, ok := hold.take(b); !ok {
			t.Fatalf("%s: another source refused", hold.what)
		}
		r()
		if _, ok := hold.take(a); !ok {
			t.Fatalf("a freed %s is not free", hold.what)
		}
	}
}

func TestJoinRate(t *testing.T) {
	l := newLimiter(t, Config{Handshakes: 1, Players: 1, Rooms: 1, JoinRate: 2, JoinBurst: 3})
	t0 := time.Unix(1000, 0)
	for i := range 3 {
		if !l.Join(a, t0) {
			t.Fatalf("join %d of the burst refused", i)
		}
	}
	if l.Join(a, t0) {
		t.Fatal("a join beyond the burst admitted")
	}
	if !l.Join(b, t0) {
		t.Fatal("another source refused")
	}
	if l.Join(a, t0.Add(400*time.Millisecond)) {
		t.Error("a join before the rate has refilled one admitted")
	}
	if !l.Join(a, t0.Add(600*time.Millisecond)) {
		t.Error("half a second at 2 a second should refill one join")
	}
}

// Sources that hold nothing and have their full join budget are forgotten:
// memory follows the sources active now.
func TestIdleSourcesAreForgotten(t *testing.T) {
	l := newLimiter(t, Config{Handshakes: 4, Players: 4, Rooms: 4, JoinRate: 1000, JoinBurst: 1})
	for i := range 100 {
		src := netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})
		r, _ := l.Handshake(src)
		p, _ := l.Player(src)
		rm, _ := l.Room(src)
		r()
		p()
		rm()
	}
	if n := l.Sources(); n != 0 {
		t.Errorf("%d sources tracked after all released", n)
	}
	l.Join(a, time.Now()) // spends the burst: remembered until it refills
	if l.Sources() != 1 {
		t.Error("a source with a spent join budget must be remembered")
	}
}

func TestConcurrent(t *testing.T) {
	l := newLimiter(t, Config{Handshakes: 10, Players: 10, Rooms: 10, JoinRate: 1e6, JoinBurst: 1e6})
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := 0
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, ok := l.Handshake(a); ok {
				mu.Lock()
				admitted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if admitted != 10 {
		t.Errorf("%d admitted, want exactly the cap of 10", admitted)
	}
}

func TestSource(t *testing.T) {
	for _, tt := range []struct {
		addr net.Addr
		want string
	}{
		{&net.UDPAddr{IP: net.ParseIP("127.0.0.1"), Port: 4433}, "127.0.0.1"},
		{&net.UDPAddr{IP: net.ParseIP("::ffff:10.1.2.3"), Port: 1}, "10.1.2.3"},
		{&net.UDPAddr{IP: net.ParseIP("::1"), Port: 1}, "::1"},
	} {
		if got := Source(tt.addr); got.String() != tt.want {
			t.Errorf("%v: %v, want %s", tt.addr, got, tt.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{Handshakes: 0, Players: 1, Rooms: 1, JoinRate: 1, JoinBurst: 1}, "limits: handshakes_per_source: 0 is below 1"},
		{Config{Handshakes: 1, Players: 1, Rooms: 0, JoinRate: 1, JoinBurst: 1}, "limits: rooms_per_source: 0 is below 1"},
	} {
		if _, err := New(tt.cfg); err == nil || err.Error() != tt.want {
			t.Errorf("%+v: got %v, want %s", tt.cfg, err, tt.want)
		}
	}
}
