package protocol

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/geom"
)

func reasonOf(err error) Reason {
	var de *DecodeError
	if errors.As(err, &de) {
		return de.Reason
	}
	return 0
}

func TestQuantization(t *testing.T) {
	for _, v := range []float64{-1, -0.5, 0, 0.3, 1} {
		if got := AxisValue(QuantizeAxis(v)); math.Abs(got-v) > 0.5/127 {
			t.Errorf("axis %v → %v", v, got)
		}
	}
	if QuantizeAxis(7) != 127 || QuantizeAxis(math.NaN()) != 0 || AxisValue(-128) != -1 {
		t.Error("axis clamping")
	}
	for _, yaw := range []float64{0, 1, math.Pi, -1, 7, 2*math.Pi - 1e-9} {
		got := YawValue(QuantizeYaw(yaw))
		d := math.Remainder(got-yaw, 2*math.Pi)
		if math.Abs(d) > math.Pi/65536 {
			t.Errorf("yaw %v → %v", yaw, got)
		}
	}
	if p := PitchValue(QuantizePitch(3)); p != math.Pi/2 {
		t.Errorf("pitch clamp %v", p)
	}
	if LagValue(QuantizeLag(3.5)) != 3.5 || QuantizeLag(-2) != 0 || QuantizeLag(1e9) != 65535 {
		t.Error("lag quantization")
	}
	if PosValue(QuantizePos(1.5)) != 1.5 || QuantizePos(1e12) != math.MaxInt32 {
		t.Error("pos quantization")
	}
	// Dequantised values quantise back to themselves: the client predicts
	// with exactly what the server will apply.
	for q := -128; q < 128; q++ {
		if QuantizeAxis(AxisValue(int8(q))) != int8(max(q, -127)) {
			t.Fatalf("axis %d does not round-trip", q)
		}
	}
	for q := 0; q < 65536; q += 7 {
		if QuantizeYaw(YawValue(uint16(q))) != uint16(q) {
			t.Fatalf("yaw %d does not round-trip", q)
		}
	}
}

func TestControlRoundTrips(t *testing.T) {
	j := Join{Version: Version, Token: []byte{1, 2, 3}, Room: "arena-1", Name: "bot-7", Team: 2, Class: "assault", InterpDelay: 100}
	if got, err := DecodeJoin(AppendJoin(nil, &j)); err != nil || !reflect.DeepEqual(got, j) {
		t.Errorf("join: %+v %v", got, err)
	}
	w := Welcome{Version: Version, Player: 77, Team: 1, TickRate: 20, SnapshotRate: 20, ServerTick: 1234, ConfigDigest: 0xfeed,
		WindowTicks: 30, MaxUnlag: 30, Movement: Movement{RunSpeed: 6, SprintSpeed: 8, CrouchSpeed: 2, GroundAccel: 5, AirAccel: 12,
			AirWishSpeed: 0.75, Friction: 5, StopSpeed: 2, Gravity: 20, JumpHeight: 1.25, StepHeight: 0.5, MaxSlope: 40, Skin: 0.01},
		EyeHeight: 1.6, CrouchEyeHeight: 0.9, Radius: 0.4, Height: 1.8, CrouchHeight: 1.1, HeadHeight: 0.3,
		Spawn: [3]float64{1, 0, 2}, SpawnYaw: 0x4000, Health: 100, RespawnTicks: 60, InvulnerableTicks: 40,
		FriendlyFire: true, InterpDelay: 100, InputTimeout: 10000, SpreadSeed: 0xfeedface, Room: "arena-1", Name: "bot-7",
		Weapons: []WeaponInfo{{Name: "rifle", Kind: "hitscan", Damage: 20, Range: 100, FireInterval: 4, Magazine: 30, ReloadTicks: 40, Pellets: 1, Spread: 0.01,
			HeadMultiplier: 2, Falloff: [3]float64{40, 90, 0.6}, StreakHits: 3, StreakWindow: 10, StreakBonus: 0.5, MaxRewind: 12},
			{Name: "needle", Kind: "projectile", Speed: 60, Gravity: 9.81, CatchUp: true, Pellets: 1, Splash: [3]float64{3, 40, 0.2}}},
		Level: "courtyard", LevelDigest: [32]byte{1, 2, 3, 31: 0xff},
		Class: "assault", Loadout: []uint8{1, 0}}
	if got, err := DecodeWelcome(AppendWelcome(nil, &w)); err != nil || !reflect.DeepEqual(got, w) {
		t.Errorf("welcome: %+v %v", got, err)
	}
	rj := Reject{Code: RejectFull, Reason: "room arena-1 is full"}
	if got, err := DecodeReject(AppendReject(nil, &rj)); err != nil || got != rj {
		t.Errorf("reject: %+v %v", got, err)
	}
	for _, e := range []Event{
		{Kind: EventHit, Tick: 9, Player: 1, Other: 2, Shot: 5, Weapon: 1, Flags: HitHead | HitStreak, Damage: 40, ViewTick: 6, ViewFrac: 32768},
		{Kind: EventNoDamage, Tick: 9, Player: 1, Other: 2, Shot: 6, Weapon: 1, Damage: 20, ViewTick: 6, Reason: NoDamageInvulnerable},
		{Kind: EventKill, Tick: 9, Player: 1, Other: 2, Weapon: 1},
		{Kind: EventRespawn, Tick: 70, Player: 2, Pos: [3]float64{1, 0, -3}},
		{Kind: EventJoined, Tick: 1, Player: 3, Team: 2, Name: "amy"},
		{Kind: EventLeft, Tick: 100, Player: 3},
	} {
		if got, err := DecodeEvent(AppendEvent(nil, &e)); err != nil || got != e {
			t.Errorf("event %v: %+v %v", e.Kind, got, err)
		}
	}
	var buf bytes.Buffer
	if _, err := WriteFrame(&buf, nil, MsgJoin, AppendJoin(nil, &j)); err != nil {
		t.Fatal(err)
	}
	typ, p, _, err := ReadFrame(&buf, nil)
	if err != nil || typ != MsgJoin {
		t.Fatal(typ, err)
	}
	if got, _ := DecodeJoin(p); !reflect.DeepEqual(got, j) {
		t.Errorf("framed join %+v", got)
	}
}

func TestMalformedControl(t *testing.T) {
	j := AppendJoin(nil, &Join{Version: Version, Room: "r", Name: "n"})
	if _, err := DecodeJoin(j[:len(j)-1]); reasonOf(err) != ReasonShort {
		t.Errorf("truncated join: %v", err)
	}
	if _, err := DecodeJoin(append(j, 0)); reasonOf(err) != ReasonLong {
		t.Errorf("join with trailing bytes: %v", err)
	}
	long := AppendJoin(nil, &Join{Version: Version, Room: "r"})
	long[4] = 200 // room length beyond MaxRoomLen
	if _, err := DecodeJoin(long); reasonOf(err) != ReasonValue {
		t.Errorf("room too long: %v", err)
	}
	tok := AppendJoin(nil, &Join{Version: Version, Room: "r"})
	tok[2], tok[3] = 0xff, 0xff // a token length beyond MaxToken
	if _, err := DecodeJoin(tok); reasonOf(err) != ReasonValue {
		t.Errorf("token too long: %v", err)
	}
	if m, err := DecodeJoin(AppendJoin(nil, &Join{Version: 1, Room: "r", Name: "n"})); reasonOf(err) != ReasonVersion || m.Version != 1 {
		t.Errorf("a version-1 join: %+v %v", m, err)
	}
	hit := AppendEvent(nil, &Event{Kind: EventHit})
	hit[16] = 0x80 // an unknown hit flag
	if _, err := DecodeEvent(hit); reasonOf(err) != ReasonValue {
		t.Errorf("unknown hit flag: %v", err)
	}
	nd := AppendEvent(nil, &Event{Kind: EventNoDamage, Reason: NoDamageDead})
	nd[len(nd)-1] = 9
	if _, err := DecodeEvent(nd); reasonOf(err) != ReasonValue {
		t.Errorf("unknown no-damage reason: %v", err)
	}
	if _, err := DecodeEvent([]byte{9, 0, 0, 0, 0, 0, 0, 0, 0}); reasonOf(err) != ReasonType {
		t.Errorf("unknown event kind: %v", err)
	}
	w := AppendWelcome(nil, &Welcome{Version: Version, TickRate: 20})
	copy(w[33:41], []byte{0x7f, 0xf8, 0, 0, 0, 0, 0, 1}) // a NaN speed
	if _, err := DecodeWelcome(w); reasonOf(err) != ReasonValue {
		t.Errorf("NaN speed: %v", err)
	}
	if _, _, _, err := ReadFrame(bytes.NewReader([]byte{0, 0}), nil); reasonOf(err) != ReasonShort {
		t.Errorf("empty frame: %v", err)
	}
}

func TestInputPacket(t *testing.T) {
	p := InputPacket{Newest: 100, SnapshotAck: 97, Count: 3}
	for i := range 3 {
		p.Inputs[i] = Input{MoveX: int8(i), MoveZ: -127, Yaw: 65535, Pitch: -32768, Buttons: 1, Weapon: 2, Shot: uint16(i * 1000), ViewLag: 900}
	}
	d := AppendInputPacket(nil, &p)
	if len(d) != inputHeader+3*inputSize {
		t.Errorf("%d bytes", len(d))
	}
	var got InputPacket
	if err := DecodeInputPacket(d, &got); err != nil || got.Count != 3 || got.Inputs != p.Inputs || got.Tick(0) != 98 {
		t.Errorf("round trip: %+v %v", got, err)
	}
	full := InputPacket{Newest: 1000, Count: MaxInputs}
	if n := len(AppendInputPacket(nil, &full)); n > MaxDatagram || n != 11+32*12 {
		t.Errorf("a full input packet is %d bytes", n)
	}
	for _, tt := range []struct {
		d    []byte
		want Reason
	}{
		{d[:1], ReasonShort},
		{d[:len(d)-1], ReasonShort},
		{append(slices.Clone(d), 0), ReasonLong},
		{append([]byte{1}, d[1:]...), ReasonVersion},
		{append([]byte{Version, 9}, d[2:]...), ReasonType},
		{append([]byte{Version, 2}, d[2:]...), ReasonType},
		{func() []byte { c := slices.Clone(d); c[10] = 0; return c }(), ReasonValue},
		{func() []byte { c := slices.Clone(d); c[10] = 33; return c }(), ReasonValue},
		{func() []byte { c := slices.Clone(d); c[2], c[3], c[4], c[5] = 0, 0, 0, 1; return c }(), ReasonValue},
		{make([]byte, MaxDatagram+1), ReasonLong},
	} {
		if err := DecodeInputPacket(tt.d, &got); reasonOf(err) != tt.want {
			t.Errorf("%x: %v, want %v", tt.d, err, tt.want)
		}
	}
}

func randomWorld(rng *rand.Rand, tick uint32, prev *State) *State {
	s := &State{Tick: tick}
	ids := map[uint32]bool{}
	if prev != nil { // evolve: move, keep, drop
		for _, e := range prev.Players {
			if rng.IntN(20) > 0 {
				e.State.Pos[0] += int32(rng.IntN(200) - 100)
				if rng.IntN(3) == 0 {
					e.State.Yaw += uint16(rng.IntN(500))
				}
				if rng.IntN(10) == 0 {
					e.State.Health -= 20
				}
				s.Players = append(s.Players, e)
				ids[e.ID] = true
			}
		}
		for _, e := range prev.Objects {
			if rng.IntN(8) > 0 {
				s.Objects = append(s.Objects, e)
				ids[e.ID] = true
			}
		}
	}
	for len(s.Players) < 12 {
		id := uint32(1 + rng.IntN(40))
		if ids[id] {
			continue
		}
		ids[id] = true
		s.Players = append(s.Players, Entity{ID: id, State: EntityState{Kind: KindPlayer, Team: uint8(1 + id%2), Flags: FlagAlive,
			Health: 100, Yaw: uint16(rng.Uint32()), Pos: [3]int32{rng.Int32N(20000) - 10000, 0, rng.Int32N(20000) - 10000}}})
	}
	for range rng.IntN(12) {
		id := uint32(1000 + rng.IntN(100000))
		if ids[id] {
			continue
		}
		ids[id] = true
		kind := uint8(KindProjectile)
		if rng.IntN(10) == 0 {
			kind = KindShield
		}
		s.Objects = append(s.Objects, Entity{ID: id, State: EntityState{Kind: kind, Team: 1, Owner: uint32(1 + rng.IntN(12)),
			Weapon: 1, Start: tick, Pos: [3]int32{rng.Int32N(20000) - 10000, 300, rng.Int32N(20000) - 10000},
			Vel: [3]int32{rng.Int32N(10000) - 5000, 0, rng.Int32N(10000) - 5000}}})
	}
	byID := func(a, b Entity) int { return int(a.ID) - int(b.ID) }
	slices.SortFunc(s.Players, byID)
	slices.SortFunc(s.Objects, byID)
	return s
}

// TestSnapshotDeltaConverges plays a server and a client over a lossy link:
// every snapshot is encoded against the newest state the client
// acknowledged; the client decodes against its copy. What the client
// decodes must always equal what the server recorded as known, the
// datagram must never exceed MaxDatagram, and once the world settles the
// client's state must equal the world's.
func TestSnapshotDeltaConverges(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	serverKnown := map[uint32]*State{} // what the client has if it got tick T
	clientHas := map[uint32]*State{}
	acked := uint32(NoTick)
	var world *State
	var full, deltas, bytesSent int
	buf := make([]byte, 0, SnapshotBufferSize)
	for tick := uint32(1); tick <= 400; tick++ {
		if tick <= 350 {
			world = randomWorld(rng, tick, world)
		} else {
			world.Tick = tick // settle: nothing changes any more
		}
		var base *State
		h := SnapshotHeader{Tick: tick, Baseline: NoTick, InputAck: tick - 1, Interval: 1}
		if b, ok := serverKnown[acked]; ok {
			base, h.Baseline = b, acked
			deltas++
		} else {
			full++
		}
		known := &State{}
		d := AppendSnapshot(buf[:0], &h, base, world, known)
		if len(d) > MaxDatagram {
			t.Fatalf("tick %d: %d bytes", tick, len(d))
		}
		if cap(d) != SnapshotBufferSize {
			t.Fatalf("tick %d: AppendSnapshot grew the buffer", tick)
		}
		bytesSent += len(d)
		serverKnown[tick] = known
		if rng.IntN(4) == 0 && tick < 380 {
			continue // lost
		}
		var gh SnapshotHeader
		if err := DecodeSnapshotHeader(d, &gh); err != nil {
			t.Fatal(err)
		}
		var cbase *State
		if gh.Baseline != NoTick {
			cbase = clientHas[gh.Baseline]
		}
		got := &State{}
		if err := DecodeSnapshot(d, cbase, &gh, got); err != nil {
			t.Fatalf("tick %d: %v", tick, err)
		}
		if !equalState(got, known) {
			t.Fatalf("tick %d: client decoded %d+%d entities, server thinks %d+%d", tick, len(got.Players), len(got.Objects), len(known.Players), len(known.Objects))
		}
		clientHas[tick] = got
		if rng.IntN(3) > 0 { // the ack arrives (or not)
			acked = tick
		}
	}
	last := clientHas[400]
	if last == nil || !equalState(last, world) {
		t.Fatal("the client did not converge to the world")
	}
	t.Logf("%d full, %d delta snapshots, %d bytes on average", full, deltas, bytesSent/400)
	if deltas < 300 {
		t.Errorf("only %d delta snapshots", deltas)
	}
}

func equalState(a, b *State) bool {
	return a.Tick == b.Tick && slices.Equal(a.Players, b.Players) && slices.Equal(a.Objects, b.Objects)
}

// TestSnapshotBudget fills a world with far more than one datagram holds: the
// first snapshot carries what fits (players first) and later ones the rest.
func TestSnapshotBudget(t *testing.T) {
	world := &State{Tick: 10}
	for i := range 12 {
		world.Players = append(world.Players, Entity{ID: uint32(i + 1), State: EntityState{Kind: KindPlayer, Pos: [3]int32{100000, 0, -100000}}})
	}
	for i := range 300 {
		world.Objects = append(world.Objects, Entity{ID: uint32(1000 + i), State: EntityState{Kind: KindProjectile, Owner: 3,
			Pos: [3]int32{1 << 20, 1 << 10, -1 << 20}, Vel: [3]int32{-1 << 14, 0, 1 << 14}, Start: 9}})
	}
	buf := make([]byte, 0, SnapshotBufferSize)
	var base *State
	h := SnapshotHeader{Baseline: NoTick, Interval: 1}
	for round := 1; ; round++ {
		h.Tick = uint32(10 + round)
		world.Tick = h.Tick
		known := &State{}
		d := AppendSnapshot(buf[:0], &h, base, world, known)
		if len(d) > MaxDatagram {
			t.Fatalf("%d bytes", len(d))
		}
		if round == 1 && (len(known.Players) != 12 || len(known.Objects) == 300 || len(known.Objects) == 0) {
			t.Fatalf("first snapshot: %d players, %d objects", len(known.Players), len(known.Objects))
		}
		var got State
		if err := DecodeSnapshot(d, base, &h, &got); err != nil {
			t.Fatal(err)
		}
		if equalState(&got, world) {
			if round < 3 {
				t.Errorf("300 projectiles in %d datagrams?", round)
			}
			break
		}
		if round > 20 {
			t.Fatal("never converged")
		}
		base, h.Baseline = known, h.Tick
	}
}

func TestSnapshotAllocatesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	a := randomWorld(rng, 1, nil)
	b := randomWorld(rng, 2, a)
	known := &State{Players: make([]Entity, 0, 64), Objects: make([]Entity, 0, 64)}
	buf := make([]byte, 0, SnapshotBufferSize)
	h := SnapshotHeader{Tick: 2, Baseline: 1, Interval: 1}
	out := &State{Players: make([]Entity, 0, 64), Objects: make([]Entity, 0, 64)}
	allocs := testing.AllocsPerRun(100, func() {
		d := AppendSnapshot(buf[:0], &h, a, b, known)
		if err := DecodeSnapshot(d, a, &h, out); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per encode and decode", allocs)
	}
}

func TestMalformedSnapshots(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	a := randomWorld(rng, 1, nil)
	b := randomWorld(rng, 2, a)
	h := SnapshotHeader{Tick: 2, Baseline: 1, Interval: 1}
	d := AppendSnapshot(nil, &h, a, b, &State{})
	var gh SnapshotHeader
	var out State
	if err := DecodeSnapshot(d, nil, &gh, &out); reasonOf(err) != ReasonBaseline {
		t.Errorf("missing baseline: %v", err)
	}
	if err := DecodeSnapshot(d, &State{Tick: 7}, &gh, &out); reasonOf(err) != ReasonBaseline {
		t.Errorf("wrong baseline: %v", err)
	}
	if err := DecodeSnapshot(d[:len(d)-1], a, &gh, &out); reasonOf(err) != ReasonShort {
		t.Errorf("truncated: %v", err)
	}
	bad := slices.Clone(d)
	bad[6], bad[7], bad[8], bad[9] = 0, 0, 0, 5 // baseline after the tick
	if err := DecodeSnapshotHeader(bad, &gh); reasonOf(err) != ReasonValue {
		t.Errorf("baseline after tick: %v", err)
	}
}

// Fuzz targets: no input may panic a decoder, and whatever decodes must
// re-encode to what decodes the same.

func FuzzDecodeInputPacket(f *testing.F) {
	p := InputPacket{Newest: 50, SnapshotAck: 40, Count: 2}
	f.Add(AppendInputPacket(nil, &p))
	f.Add([]byte{Version, 1, 0, 0, 0, 1, 255, 255, 255, 255, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, d []byte) {
		var p InputPacket
		if err := DecodeInputPacket(d, &p); err != nil {
			if reasonOf(err) == 0 {
				t.Fatalf("error without a reason: %v", err)
			}
			return
		}
		if !bytes.Equal(AppendInputPacket(nil, &p), d) {
			t.Fatal("decoded packet does not re-encode to the same bytes")
		}
	})
}

func FuzzDecodeSnapshot(f *testing.F) {
	rng := rand.New(rand.NewPCG(9, 10))
	a := randomWorld(rng, 1, nil)
	b := randomWorld(rng, 2, a)
	f.Add(AppendSnapshot(nil, &SnapshotHeader{Tick: 2, Baseline: 1, Interval: 1}, a, b, &State{}), true)
	f.Add(AppendSnapshot(nil, &SnapshotHeader{Tick: 2, Baseline: NoTick, Interval: 1}, nil, b, &State{}), false)
	f.Fuzz(func(t *testing.T, d []byte, withBase bool) {
		var h SnapshotHeader
		var out State
		var base *State
		if withBase {
			base = a
		}
		if err := DecodeSnapshot(d, base, &h, &out); err != nil {
			if reasonOf(err) == 0 {
				t.Fatalf("error without a reason: %v", err)
			}
			return
		}
		for _, sec := range [][]Entity{out.Players, out.Objects} {
			for i := 1; i < len(sec); i++ {
				if sec[i].ID <= sec[i-1].ID {
					t.Fatal("decoded entities not sorted by id")
				}
			}
		}
	})
}

func FuzzDecodeControl(f *testing.F) {
	f.Add(uint8(MsgJoin), AppendJoin(nil, &Join{Version: Version, Token: []byte("tok"), Room: "a", Name: "b"}))
	f.Add(uint8(MsgWelcome), AppendWelcome(nil, &Welcome{Version: Version, TickRate: 20, Weapons: []WeaponInfo{{Name: "r"}}, Level: "l", Loadout: []uint8{0}}))
	f.Add(uint8(MsgReject), AppendReject(nil, &Reject{Code: 1, Reason: "x"}))
	f.Add(uint8(MsgEvent), AppendEvent(nil, &Event{Kind: EventHit}))
	f.Add(uint8(MsgEvent), AppendEvent(nil, &Event{Kind: EventNoDamage, Reason: NoDamageDead}))
	f.Add(uint8(MsgEvent), AppendEvent(nil, &Event{Kind: EventJoined, Name: "z"}))
	f.Fuzz(func(t *testing.T, typ uint8, p []byte) {
		var err error
		switch typ % 4 {
		case 0:
			var m Join
			if m, err = DecodeJoin(p); err == nil && !bytes.Equal(AppendJoin(nil, &m), p) {
				t.Fatal("join does not re-encode")
			}
		case 1:
			var m Welcome
			if m, err = DecodeWelcome(p); err == nil && !bytes.Equal(AppendWelcome(nil, &m), p) {
				t.Fatal("welcome does not re-encode")
			}
		case 2:
			_, err = DecodeReject(p)
		case 3:
			var e Event
			if e, err = DecodeEvent(p); err == nil && !bytes.Equal(AppendEvent(nil, &e), p) {
				t.Fatal("event does not re-encode")
			}
		}
		if err != nil && reasonOf(err) == 0 {
			t.Fatalf("error without a reason: %v", err)
		}
		var buf bytes.Buffer
		buf.Write(p)
		_, _, _, _ = ReadFrame(&buf, nil)
	})
}

// The server records lag-compensation poses rounded by geom.Vec3.Round at
// PosScale (systems.Config.PoseScale): exactly the positions a snapshot
// carries, or a rewind would put hitboxes a quantum from where clients drew
// them.
func TestPoseRoundingIsTheWiresQuantum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		v := geom.V((rng.Float64()-0.5)*200, (rng.Float64()-0.5)*20, (rng.Float64()-0.5)*200)
		if got, want := v.Round(PosScale), VecValue(QuantizeVec(v)); got != want {
			t.Fatalf("%v: rounded %v, the wire's %v", v, got, want)
		}
	}
}

func TestCloseDatagram(t *testing.T) {
	long := strings.Repeat("x", 300)
	c, err := DecodeClose(AppendClose(nil, Close{Code: CloseIdle, Reason: long}))
	if err != nil || c.Code != CloseIdle || c.Reason != long[:MaxCloseReason] {
		t.Errorf("a long reason: %+v, %v; want it cut at %d bytes", c, err, MaxCloseReason)
	}
	good := AppendClose(nil, Close{Code: CloseMatchOver, Reason: "match over"})
	for _, tc := range []struct {
		name string
		d    []byte
		want Reason
	}{
		{"cut in the reason", good[:len(good)-1], ReasonShort},
		{"no reason length", good[:3], ReasonShort},
		{"a byte after the reason", append(slices.Clone(good), 0), ReasonLong},
		{"a snapshot", []byte{Version, DatagramSnapshot, 0, 0}, ReasonType},
		{"another version", append([]byte{Version + 1}, good[1:]...), ReasonVersion},
	} {
		var de *DecodeError
		if _, err := DecodeClose(tc.d); !errors.As(err, &de) || de.Reason != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}
