package protocol

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/docvec"
)

// The hex test vectors of docs/protocol.md ("Messages" under "Test
// vectors"): a Welcome, a full and a delta snapshot, and one event of each
// kind, built here as Go values. TestDocVectors encodes the values and
// compares the bytes with the doc's, and decodes the doc's bytes and compares
// the result with the values.
//
// After a change of the wire format, regenerate the blocks from the values:
//
//	go test ./protocol -run TestDocVectors -update
//
// The blocks lay the bytes out a field or a record a line. The fixed fields
// (a Welcome, an event, a snapshot's header) are found in the encoding by
// flipping each field of the Go value and seeing which bytes change, and
// named after the Go field, so a field added to those needs no change here
// (give it a value in the vectors, and a name in a rename map if the Go name
// is not the doc's). Snapshot records are laid out by splitSection, which
// knows their format: a change of it fails loudly (bytes left over or
// missing) until splitSection is taught it.
var update = flag.Bool("update", false, "rewrite the vectors blocks of docs/protocol.md from the Go values")

const vectorsDoc = "../docs/protocol.md"

// docVector is one block of the doc.
type docVector struct {
	name  string
	enc   []byte                         // the Go value, encoded
	split func(*splitter)                // lays enc out, a field or a record a line
	check func(t *testing.T, doc []byte) // decodes the doc's bytes and compares them with the Go value
}

func TestDocVectors(t *testing.T) {
	vectors := docVectors(t)
	layouts := make([]*splitter, len(vectors))
	covered := map[string]int{}
	for i, v := range vectors {
		s := split(v.enc, v.split)
		if s.err != nil {
			// The bytes are still right: lay them out plainly, so that
			// -update keeps the doc's bytes true while the test fails.
			t.Errorf("%s: the layout in docvectors_test.go no longer matches the encoding: %v", v.name, s.err)
			s = split(v.enc, func(s *splitter) {
				s.comment("Not laid out by field: the layout in protocol/docvectors_test.go is out of date.")
				for len(s.b)-s.off > 0 {
					s.line("bytes", "", s.take(min(16, len(s.b)-s.off)))
				}
			})
		}
		layouts[i] = s
		for k, n := range s.seen {
			covered[k] += n
		}
	}
	if *update {
		doc, err := os.ReadFile(vectorsDoc)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vectors {
			if doc, err = docvec.Replace(doc, v.name, layouts[i].text()); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(vectorsDoc, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			rows, err := docvec.Read(vectorsDoc, v.name)
			if err != nil {
				t.Fatal(err)
			}
			var doc []byte
			for j, r := range rows {
				if len(r) < 2 {
					t.Fatalf("line %d %q: want a label, then hex", j+1, r)
				}
				b, err := hex.DecodeString(strings.Join(r[1:], ""))
				if err != nil {
					t.Fatalf("line %d %q: %v", j+1, r, err)
				}
				doc = append(doc, b...)
			}
			if !bytes.Equal(doc, v.enc) {
				t.Errorf("the doc's bytes differ from the encoding of the Go values (go test ./protocol -run TestDocVectors -update rewrites them)\ndoc: %x\nGo:  %x", doc, v.enc)
			}
			v.check(t, doc)
			// The doc's lines are the ones -update writes: the same labels,
			// the same fields.
			if want := layouts[i].rows(); !reflect.DeepEqual(rows, want) {
				t.Errorf("the doc's lines differ from the ones -update writes:\ndoc:\n%s\nwant:\n%s", joinRows(rows), joinRows(want))
			}
		})
	}
	// Together the vectors exercise every record op, every entity kind,
	// every update field group and every event kind.
	want := []string{"players.create.1", "players.update", "players.remove",
		"objects.create.2", "objects.create.3", "objects.update", "objects.remove", "unchanged"}
	for _, g := range maskNames {
		want = append(want, "mask."+g)
	}
	for k := EventHit; k <= EventNoDamage; k++ {
		want = append(want, fmt.Sprintf("event.%d", k))
	}
	for _, k := range want {
		if covered[k] == 0 {
			t.Errorf("no vector exercises %s", k)
		}
	}
}

func joinRows(rows [][]string) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// The values.

// Entity ids of the vectors: sparse, as the server's are (a player's is an
// entity index in the low 20 bits and a reuse count above them; objects count
// from 2²⁴).
const (
	vecSelf    = 0x00100002 // the Welcome's player: never in its own snapshots' players section
	vecRed     = 0x00000003
	vecBlue    = 0x00100005
	vecIdle    = 0x00100006
	vecLeaver  = 0x00100007
	vecDead    = 0x00200009
	vecNew     = 0x00300001
	vecRocket  = 0x01000000
	vecShield  = 0x01000001
	vecRocket2 = 0x01000004
)

// arenaDigest is the built-in arena's digest (docs/levels.md).
func arenaDigest() (d [32]byte) {
	hex.Decode(d[:], []byte("04311dce3736fe3efa9b1a16bef99dea1fb292c22e9640823020f017e404fdb0"))
	return d
}

func vectorWelcome() Welcome {
	return Welcome{
		Version: Version, Player: vecSelf, Team: 1, TickRate: 60, SnapshotRate: 20, ServerTick: 995,
		ConfigDigest: 0x0123456789abcdef, WindowTicks: 64, MaxUnlag: 12.5,
		Movement: Movement{RunSpeed: 6, SprintSpeed: 7.5, CrouchSpeed: 2, GroundAccel: 5.5, AirAccel: 12, AirWishSpeed: 0.76,
			Friction: 5.2, StopSpeed: 2, Gravity: 20, JumpHeight: 1, StepHeight: 0.45, MaxSlope: 45, Skin: 0.01},
		EyeHeight: 1.6, CrouchEyeHeight: 0.9, Radius: 0.4, Height: 1.8, CrouchHeight: 1.1, HeadHeight: 0.3,
		Spawn: [3]float64{-20, 0, 12.5}, SpawnYaw: 0x8000,
		Health: 100, RespawnTicks: 180, InvulnerableTicks: 60, FriendlyFire: false,
		InterpDelay: 100, InputTimeout: 10000, SpreadSeed: 0xfeedfacecafebeef,
		Room: "match-7", Name: "Alice",
		Weapons: []WeaponInfo{
			{Name: "rifle", Kind: "hitscan", Damage: 25, Range: 100, Spread: 0.004,
				FireInterval: 6, Magazine: 30, ReloadTicks: 90, Pellets: 1,
				HeadMultiplier: 2, Falloff: [3]float64{20, 60, 0.5},
				StreakHits: 3, StreakWindow: 30, StreakBonus: 0.5, MaxRewind: 12.5},
			{Name: "rocket", Kind: "projectile", Damage: 80, Speed: 25, Gravity: 4.5, Radius: 0.2,
				LifetimeTicks: 120, FireInterval: 48, Magazine: 1, ReloadTicks: 60, WindupTicks: 6, CatchUp: true,
				HeadMultiplier: 1, Splash: [3]float64{3, 80, 0.25}, MaxRewind: 6},
		},
		Level:       "arena",
		LevelDigest: arenaDigest(),
		Class:       "assault",
		Loadout:     []uint8{0, 1},
	}
}

// vectorSnapshots returns the full snapshot of tick 1001 and the delta of
// tick 1004 against it, to player vecSelf: their headers and the states they
// bring the client to.
func vectorSnapshots() (fullH SnapshotHeader, full State, deltaH SnapshotHeader, delta State) {
	player := func(id uint32, team, flags, health uint8, yaw uint16, pitch int16, pos geom.Vec3) Entity {
		return Entity{ID: id, State: EntityState{Kind: KindPlayer, Team: team, Flags: flags, Health: health,
			Yaw: yaw, Pitch: pitch, Pos: QuantizeVec(pos)}}
	}
	object := func(id uint32, kind, team uint8, owner uint32, weapon uint8, start uint32, pos, vel geom.Vec3) Entity {
		return Entity{ID: id, State: EntityState{Kind: kind, Team: team, Owner: owner, Weapon: weapon, Start: start,
			Pos: QuantizeVec(pos), Vel: QuantizeVec(vel)}}
	}
	fullH = SnapshotHeader{Tick: 1001, Baseline: NoTick, InputAck: 1001, InputLead: 2, Margin: NoMargin, Interval: 1,
		Own: OwnState{Flags: OwnAlive, Pos: [3]float64{-19.25, 0, 12.5}, Health: 100, Shots: 7,
			NSlots: 2, Slots: [MaxSlots]WeaponSlot{{Ready: 1003, Ammo: 29}, {Ready: 990, Ammo: 0, Reloading: true, Reloaded: 1030}}}}
	full = State{Tick: 1001,
		Players: []Entity{
			player(vecRed, 2, FlagAlive|TeleportFlags(1), 100, 0x4000, 0, geom.V(5.5, 0, -3.25)),
			player(vecBlue, 1, FlagAlive, 35, 0xc000, -2000, geom.V(-10, 0, 20)),
			player(vecIdle, 1, FlagAlive, 100, 0x2000, 0, geom.V(-12, 0, 18)),
			player(vecLeaver, 2, FlagAlive, 100, 0x0100, 300, geom.V(0.75, 0, 0.5)),
			player(vecDead, 2, TeleportFlags(1), 0, 0x8000, 0, geom.V(14, 0, -7.5)),
		},
		Objects: []Entity{
			object(vecRocket, KindProjectile, 2, vecRed, 1, 999, geom.V(5.5, 1.6, -3.25), geom.V(-12.5, 2, 21.65)),
			object(vecShield, KindShield, 1, vecBlue, 0, 1200, geom.V(-11, 0, 21), geom.V(2, 2.5, 0.25)),
		},
	}
	deltaH = SnapshotHeader{Tick: 1004, Baseline: 1001, InputAck: 1003, InputLead: 3, Margin: 1 << 7, MarginTick: 1005, Interval: 2, // input 1005 came half a tick early
		Own: OwnState{Flags: OwnAlive | OwnCrouched | OwnJumpHeld, Pos: [3]float64{-19.25, 0.4375, 12.8},
			Vel: [3]float64{0, 3.25, 1.5}, Health: 62.5, Shots: 8,
			NSlots: 2, Slots: [MaxSlots]WeaponSlot{{Ready: 1006, Ammo: 28}, {Ready: 990, Ammo: 0, Reloading: true, Reloaded: 1030}}},
		NConfirms: 2, Confirms: [MaxConfirms]HitConfirm{
			{Tick: 1003, Target: vecBlue, Shot: 41, Flags: HitHead, Damage: 25},
			{Tick: 1004, Target: vecDead, Shot: 42, Reason: NoDamageDead, Damage: 20},
		}}
	delta = State{Tick: 1004,
		Players: []Entity{
			player(vecRed, 2, FlagAlive|TeleportFlags(1)|FlagCrouched, 100, 0x4200, -150, geom.V(5.75, 0, -3)), // moved, turned and crouched
			player(vecBlue, 2, FlagAlive, 10, 0xc000, -2000, geom.V(-10, 0, 20)),                               // hit, and changed team
			player(vecIdle, 1, FlagAlive, 100, 0x2000, 0, geom.V(-12, 0, 18)),                                  // unchanged: no record
			player(vecDead, 2, FlagAlive|TeleportFlags(2), 100, 0x8000, 0, geom.V(-20, 0, -12.5)),              // respawned
			player(vecNew, 1, FlagAlive|TeleportFlags(1), 100, 0x0000, 0, geom.V(20, 0, -12.5)),                // joined
		},
		Objects: []Entity{
			object(vecShield, KindShield, 1, vecBlue, 0, 1300, geom.V(-11, 0, 20.5), geom.V(2, 2.5, 0.5)), // moved, grown, lasts longer
			object(vecRocket2, KindProjectile, 1, vecSelf, 1, 1003, geom.V(-19.25, 1.6, 12.5), geom.V(0, 0, 25)),
		},
	}
	return
}

func vectorEvents() []Event {
	return []Event{
		{Kind: EventHit, Tick: 1003, Player: vecSelf, Other: vecRed, Shot: 41, Weapon: 0, Flags: HitHead | HitStreak,
			Damage: 37.5, ViewTick: 996, ViewFrac: 0x8000},
		{Kind: EventKill, Tick: 1003, Player: vecSelf, Other: vecRed, Weapon: 0},
		{Kind: EventRespawn, Tick: 1003, Player: vecDead, Pos: [3]float64{-20, 0, -12.5}, Yaw: 0x8000},
		{Kind: EventJoined, Tick: 1003, Player: vecNew, Team: 1, Name: "Bob"},
		{Kind: EventLeft, Tick: 1003, Player: vecLeaver},
		{Kind: EventNoDamage, Tick: 1003, Player: vecSelf, Other: vecDead, Shot: 42, Weapon: 0, Flags: 0,
			Damage: 25, ViewTick: 997, ViewFrac: 0x4000, Reason: NoDamageInvulnerable},
	}
}

var eventNames = map[EventKind]string{EventHit: "Hit", EventKill: "Kill", EventRespawn: "Respawn",
	EventJoined: "Joined", EventLeft: "Left", EventNoDamage: "NoDamage"}

func frame(t *testing.T, typ uint8, payload []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := WriteFrame(&b, nil, typ, payload); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// readFrame reads a control frame of the given type that is all of doc.
func readFrame(t *testing.T, doc []byte, typ uint8) []byte {
	t.Helper()
	r := bytes.NewReader(doc)
	got, payload, _, err := ReadFrame(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got != typ || r.Len() != 0 {
		t.Fatalf("a frame of type %d and %d bytes after it, want type %d and nothing after", got, r.Len(), typ)
	}
	return payload
}

func docVectors(t *testing.T) []docVector {
	welcome := vectorWelcome()
	vs := []docVector{{
		name: "welcome",
		enc:  frame(t, MsgWelcome, AppendWelcome(nil, &welcome)),
		split: func(s *splitter) {
			s.comment("A Welcome control frame.")
			s.frame("Welcome")
			w := vectorWelcome()
			rename := map[string]string{"weapons[]": "weapon"}
			for _, f := range reflect.VisibleFields(reflect.TypeOf(Movement{})) {
				rename["movement."+snake(f.Name)] = snake(f.Name)
			}
			s.fields(&w, func() []byte { return AppendWelcome(nil, &w) }, nil, rename)
		},
		check: func(t *testing.T, doc []byte) {
			got, err := DecodeWelcome(readFrame(t, doc, MsgWelcome))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, welcome) {
				t.Errorf("decoded\n%+v\nwant\n%+v", got, welcome)
			}
		},
	}}

	fullH, full, deltaH, delta := vectorSnapshots()
	snapshot := func(name, what string, h SnapshotHeader, base, target *State) docVector {
		var known State
		enc := AppendSnapshot(nil, &h, base, target, &known)
		if !equalState(&known, target) {
			t.Fatalf("%s: not every record fits: the client would know\n%+v\nnot\n%+v", name, known, *target)
		}
		return docVector{name: name, enc: enc,
			split: func(s *splitter) {
				s.comment("%s: the header, then the players and the objects sections.", what)
				hh := h
				// The header is what precedes the two sections of a snapshot
				// with no records: their two counts.
				s.fields(&hh, func() []byte {
					e := AppendSnapshot(nil, &hh, nil, &State{}, &State{})
					return e[:len(e)-4]
				}, []named{{"version", 1}, {"type", 1}},
					map[string]string{"own.flags": "state", "own.pos": "pos", "own.vel": "vel", "own.health": "health", "own.shots": "shots",
						"n_confirms": "confirms", "confirms[]": "confirm"})
				s.splitSection("players", h.Tick, base)
				s.splitSection("objects", h.Tick, base)
			},
			check: func(t *testing.T, doc []byte) {
				var got SnapshotHeader
				var out State
				if err := DecodeSnapshot(doc, base, &got, &out); err != nil {
					t.Fatal(err)
				}
				if !sameExported(reflect.ValueOf(got), reflect.ValueOf(h)) {
					t.Errorf("header %+v, want %+v", got, h)
				}
				if !equalState(&out, target) {
					t.Errorf("state\n%+v\nwant\n%+v", out, *target)
				}
			}}
	}
	vs = append(vs,
		snapshot("snapshot-full", "A full snapshot datagram", fullH, nil, &full),
		snapshot("snapshot-delta", "A delta snapshot datagram, against snapshot-full", deltaH, &full, &delta))

	for _, e := range vectorEvents() {
		rename := map[string]string{"other": "target", "pos": "position", "view_frac": "view_fraction"}
		if e.Kind == EventKill {
			rename["other"] = "victim"
		}
		vs = append(vs, docVector{name: "event-" + strings.ToLower(eventNames[e.Kind]), enc: frame(t, MsgEvent, AppendEvent(nil, &e)),
			split: func(s *splitter) {
				s.comment("An Event control frame: %s.", eventNames[e.Kind])
				s.frame("Event")
				s.seen[fmt.Sprintf("event.%d", e.Kind)]++
				ev := e
				s.fields(&ev, func() []byte { return AppendEvent(nil, &ev) }, nil, rename)
			},
			check: func(t *testing.T, doc []byte) {
				got, err := DecodeEvent(readFrame(t, doc, MsgEvent))
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, e) {
					t.Errorf("decoded %+v, want %+v", got, e)
				}
			}})
	}
	closing := Close{Code: CloseShutdown, Reason: "server shutting down"}
	vs = append(vs, docVector{name: "close", enc: AppendClose(nil, closing),
		split: func(s *splitter) {
			s.comment("A close datagram (the payload a sealed packet carries): the server shutting down.")
			c := closing
			s.fields(&c, func() []byte { return AppendClose(nil, c) }, []named{{"version", 1}, {"type", 1}}, nil)
		},
		check: func(t *testing.T, doc []byte) {
			got, err := DecodeClose(doc)
			if err != nil {
				t.Fatal(err)
			}
			if got != closing {
				t.Errorf("decoded %+v, want %+v", got, closing)
			}
		}})
	for _, pv := range []struct {
		name, what string
		typ        uint8
		appendTo   func([]byte, PathData) []byte
	}{
		{"path-challenge", "A path challenge datagram: the server asks whether you receive at the address your packet came from.", DatagramPathChallenge, AppendPathChallenge},
		{"path-response", "A path response datagram: the client echoes the challenge's data.", DatagramPathResponse, AppendPathResponse},
	} {
		data := pathDoc{Data: 0x9c3b71e0a45d2f86}
		vs = append(vs, docVector{name: pv.name, enc: pv.appendTo(nil, data.bytes()),
			split: func(s *splitter) {
				s.comment("%s", pv.what)
				d := data
				s.fields(&d, func() []byte { return pv.appendTo(nil, d.bytes()) }, []named{{"version", 1}, {"type", 1}}, nil)
			},
			check: func(t *testing.T, doc []byte) {
				typ, got, err := DecodePath(doc)
				if err != nil {
					t.Fatal(err)
				}
				if typ != pv.typ || got != data.bytes() {
					t.Errorf("decoded type %d, %x; want %d, %x", typ, got, pv.typ, data.bytes())
				}
			}})
	}
	return vs
}

// pathDoc is a path datagram's data as one number, which the vectors lay
// out as one field.
type pathDoc struct{ Data uint64 }

func (p pathDoc) bytes() PathData {
	var d PathData
	binary.BigEndian.PutUint64(d[:], p.Data)
	return d
}

// sameExported compares the exported fields of two values of a type.
func sameExported(a, b reflect.Value) bool {
	if a.Kind() != reflect.Struct {
		return reflect.DeepEqual(a.Interface(), b.Interface())
	}
	for i := range a.NumField() {
		if a.Type().Field(i).IsExported() && !sameExported(a.Field(i), b.Field(i)) {
			return false
		}
	}
	return true
}

// The layout.

// splitter walks an encoding and lays it out as the lines of a block: a
// label, the hex of each field, a comment saying what it holds.
type splitter struct {
	b     []byte
	off   int
	err   error
	lines []docLine
	seen  map[string]int // what the bytes exercise
}

type docLine struct {
	comment string // a comment line, or:
	label   string
	fields  [][]byte
	note    string // the comment after the fields
}

func split(b []byte, f func(*splitter)) *splitter {
	s := &splitter{b: b, seen: map[string]int{}}
	f(s)
	if s.err == nil && s.off != len(s.b) {
		s.err = fmt.Errorf("%d bytes left after the layout, at offset %d: %x", len(s.b)-s.off, s.off, s.b[s.off:])
	}
	return s
}

// noteColumn is where comments after fields start, when the fields leave room.
const noteColumn = 44

func (s *splitter) text() []string {
	var out []string
	for _, l := range s.lines {
		if l.label == "" {
			out = append(out, "# "+l.comment)
			continue
		}
		hexes := make([]string, len(l.fields))
		for i, f := range l.fields {
			hexes[i] = hex.EncodeToString(f)
		}
		line := fmt.Sprintf("%-18s %s", l.label, strings.Join(hexes, " "))
		if l.note != "" {
			line += strings.Repeat(" ", max(noteColumn-len(line), 2)) + "# " + l.note
		}
		out = append(out, line)
	}
	return out
}

func (s *splitter) rows() [][]string {
	var rows [][]string
	for _, l := range s.lines {
		if l.label == "" {
			continue
		}
		r := []string{l.label}
		for _, f := range l.fields {
			r = append(r, hex.EncodeToString(f))
		}
		rows = append(rows, r)
	}
	return rows
}

func (s *splitter) comment(format string, args ...any) {
	s.lines = append(s.lines, docLine{comment: fmt.Sprintf(format, args...)})
}

func (s *splitter) line(label, note string, fields ...[]byte) {
	s.lines = append(s.lines, docLine{label: label, fields: fields, note: note})
}

// take returns the next n bytes; after a failure it returns zeros.
func (s *splitter) take(n int) []byte {
	if s.err == nil && len(s.b)-s.off < n {
		s.err = fmt.Errorf("%d bytes short at offset %d", n-(len(s.b)-s.off), s.off)
	}
	if s.err != nil {
		return make([]byte, n)
	}
	p := s.b[s.off : s.off+n]
	s.off += n
	return p
}

// uvarint returns the bytes of the next uvarint and its value.
func (s *splitter) uvarint() ([]byte, uint64) {
	if s.err != nil {
		return []byte{0}, 0
	}
	v, n := binary.Uvarint(s.b[s.off:])
	if n <= 0 {
		s.err = fmt.Errorf("no uvarint at offset %d", s.off)
		return []byte{0}, 0
	}
	return s.take(n), v
}

func (s *splitter) varint() ([]byte, int64) {
	b, u := s.uvarint()
	return b, int64(u>>1) ^ -int64(u&1)
}

// frame lays out a control frame's header.
func (s *splitter) frame(name string) {
	b := s.take(2)
	s.line("length", fmt.Sprintf("%d bytes follow", binary.BigEndian.Uint16(b)), b)
	t := s.take(1)
	s.line("type", fmt.Sprintf("%d: %s", t[0], name), t)
}

func fmtFloat(f float64, bits int) string { return strconv.FormatFloat(f, 'g', -1, bits) }

// A leaf is a field of a Go value that takes bytes of its own on the wire:
// a number, a bool, a string, or an array of numbers (one line).
type leaf struct {
	path   string // Go field names in snake case, dot-separated, with [i] for list elements
	v      reflect.Value
	lo, hi int // its bytes in the encoding
}

// snake converts a Go field name to the doc's style: ViewTick → view_tick.
func snake(name string) string {
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isNumber(k reflect.Kind) bool {
	return k == reflect.Bool || (k >= reflect.Int && k <= reflect.Float64)
}

// leaves lists the settable leaves of v.
func leaves(v reflect.Value, path string, out []leaf) []leaf {
	switch k := v.Kind(); {
	case k == reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			p := snake(f.Name)
			if path != "" {
				p = path + "." + p
			}
			out = leaves(v.Field(i), p, out)
		}
	case (k == reflect.Array || k == reflect.Slice) && !isNumber(v.Type().Elem().Kind()):
		for i := range v.Len() {
			out = leaves(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case k == reflect.Slice:
		for i := range v.Len() {
			out = append(out, leaf{path: fmt.Sprintf("%s[%d]", path, i), v: v.Index(i)})
		}
	case k == reflect.Array || k == reflect.String || isNumber(k):
		out = append(out, leaf{path: path, v: v})
	}
	return out
}

// flip sets every bit of a leaf to its opposite (a bool to the other, each
// byte of a string to another) and returns a function that restores it.
func flip(v reflect.Value) func() {
	old := reflect.New(v.Type()).Elem()
	old.Set(v)
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(^v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(^v.Uint())
	case reflect.Float32:
		v.SetFloat(float64(math.Float32frombits(^math.Float32bits(float32(v.Float())))))
	case reflect.Float64:
		v.SetFloat(math.Float64frombits(^math.Float64bits(v.Float())))
	case reflect.String:
		b := []byte(v.String())
		for i := range b {
			b[i] ^= 1
		}
		v.SetString(string(b))
	case reflect.Array:
		for i := range v.Len() {
			flip(v.Index(i))
		}
	}
	return func() { v.Set(old) }
}

// named is a name for bytes no field of a Go value covers.
type named struct {
	name string
	size int
}

// marker is where a field whose change changes the layout (a count, a
// kind) first changes the encoding.
type marker struct {
	at   int
	path string
}

// fields lays out the bytes that encode() (the encoding of *v, which must be
// the next bytes) gives, a field a line. A field's bytes are the ones that
// change when its bits are flipped. The bytes of no field are, in order: a
// string's length (just before it); a count or a kind, found where changing
// an integer field by one first changes the encoding; a list's count (just
// before its first element); else the next of unnamed, or "bytes". rename
// maps Go paths (without indices; "list[]" for the comment before each
// element of a list) to the doc's names.
func (s *splitter) fields(v any, encode func() []byte, unnamed []named, rename map[string]string) {
	if s.err != nil {
		return
	}
	base := bytes.Clone(encode())
	if !bytes.HasPrefix(s.b[s.off:], base) {
		s.err = fmt.Errorf("the fields at offset %d are not the encoding of %T", s.off, v)
		return
	}
	var found []leaf
	var markers []marker
	for _, l := range leaves(reflect.ValueOf(v).Elem(), "", nil) {
		restore := flip(l.v)
		e := encode()
		restore()
		if len(e) != len(base) { // a count, or a kind: the layout itself changes
			if m, ok := firstChange(l, encode, base); ok {
				markers = append(markers, m)
			}
			continue
		}
		lo := -1
		for i := range e {
			if e[i] != base[i] {
				if lo < 0 {
					lo = i
				}
				l.hi = i + 1
			}
		}
		if lo < 0 { // not on the wire (a list element beyond its count, a field of another kind), or a clamped count
			if m, ok := firstChange(l, encode, base); ok {
				markers = append(markers, m)
			}
			continue
		}
		l.lo = lo
		if k := l.v.Kind(); k != reflect.String && k != reflect.Int && k != reflect.Uint {
			l.hi = max(l.hi, lo+int(l.v.Type().Size())) // the whole field, even bytes a flip left alone
		}
		found = append(found, l)
	}
	slices.SortFunc(found, func(a, b leaf) int { return a.lo - b.lo })
	slices.SortFunc(markers, func(a, b marker) int { return a.at - b.at })
	rn := func(generic, dflt string) string {
		if r, ok := rename[generic]; ok {
			return r
		}
		return dflt
	}
	name := func(path string) string {
		dflt := path
		if i := strings.LastIndex(path, "]."); i >= 0 { // a field of a list element
			dflt = path[i+2:]
		}
		return rn(stripIndices(path), dflt)
	}
	start := s.off
	at := 0
	elem := ""
	for i := 0; i <= len(found); i++ {
		next := len(base)
		if i < len(found) {
			next = found[i].lo
			if next < at {
				s.err = fmt.Errorf("%s and the field before it share bytes", found[i].path)
				return
			}
		}
		// The bytes before the next field that belong to no field, cut
		// where markers are.
		end := next
		strLen := i < len(found) && found[i].v.Kind() == reflect.String && next > at
		if strLen {
			end--
		}
		// A list's count: the bytes before its first element.
		list := ""
		if i < len(found) {
			if j := strings.Index(found[i].path, "[0]"); j >= 0 && !strings.Contains(found[i].path[j+3:], "[") &&
				!strings.HasPrefix(elem, found[i].path[:j]+"[") {
				g := stripIndices(found[i].path[:j])
				list = rn(g, g)
			}
		}
		for at < end {
			segEnd, label := end, ""
			for _, m := range markers {
				switch {
				case m.at == at:
					label = name(m.path)
				case m.at > at && m.at < segEnd:
					segEnd = m.at
				}
			}
			if label == "" && segEnd == end && list != "" {
				label = list
			}
			for label == "" && len(unnamed) > 0 && unnamed[0].size <= segEnd-at {
				label, segEnd, unnamed = unnamed[0].name, at+unnamed[0].size, unnamed[1:]
			}
			if label == "" {
				label = "bytes"
			}
			b := s.take(segEnd - at)
			note := ""
			if m := slices.IndexFunc(markers, func(m marker) bool { return m.at == at }); m >= 0 && label != "bytes" {
				note = valueNote(leafAt(v, markers[m].path))
			} else if len(b) <= 4 {
				n := uint64(0)
				for _, c := range b {
					n = n<<8 | uint64(c)
				}
				note = strconv.FormatUint(n, 10)
			}
			s.line(label, note, b)
			at = segEnd
		}
		if i == len(found) {
			break
		}
		l := found[i]
		// A comment line before each element of a list of structs.
		if j := strings.LastIndex(l.path, "]."); j >= 0 {
			if e := l.path[:j+1]; e != elem {
				elem = e
				k := strings.LastIndex(e, "[")
				g := stripIndices(e[:k])
				s.comment("%s %s", rn(g+"[]", g), e[k+1:len(e)-1])
			}
		}
		var fields [][]byte
		if strLen {
			fields = append(fields, s.take(1))
		}
		body := s.take(l.hi - l.lo)
		if l.v.Kind() == reflect.Array && l.v.Len() > 0 && l.v.Type().Elem().Kind() != reflect.Uint8 { // bytes: one group
			n := len(body) / l.v.Len()
			for k := 0; k < len(body); k += n {
				fields = append(fields, body[k:k+n])
			}
		} else {
			fields = append(fields, body)
		}
		s.line(name(l.path), valueNote(l), fields...)
		at = l.hi
	}
	if s.off-start != len(base) {
		s.err = fmt.Errorf("laid out %d bytes of %d", s.off-start, len(base))
	}
}

// leafAt returns the leaf of *v at a path.
func leafAt(v any, path string) leaf {
	for _, l := range leaves(reflect.ValueOf(v).Elem(), "", nil) {
		if l.path == path {
			return l
		}
	}
	return leaf{}
}

// firstChange returns where adding one to an integer leaf first changes the
// encoding.
func firstChange(l leaf, encode func() []byte, base []byte) (marker, bool) {
	old := reflect.New(l.v.Type()).Elem()
	old.Set(l.v)
	switch k := l.v.Kind(); {
	case k >= reflect.Int && k <= reflect.Int64:
		l.v.SetInt(l.v.Int() + 1)
	case k >= reflect.Uint && k <= reflect.Uint64:
		l.v.SetUint(l.v.Uint() + 1)
	default:
		return marker{}, false
	}
	e := encode()
	l.v.Set(old)
	for i := range min(len(e), len(base)) {
		if e[i] != base[i] {
			return marker{at: i, path: l.path}, true
		}
	}
	return marker{}, false
}

func stripIndices(path string) string {
	var b strings.Builder
	skip := false
	for _, r := range path {
		switch {
		case r == '[':
			skip = true
		case r == ']':
			skip = false
		case !skip:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// valueNote says what a leaf holds.
func valueNote(l leaf) string {
	v := l.v
	last := l.path[strings.LastIndex(l.path, ".")+1:]
	switch x := v.Interface().(type) {
	case EventKind:
		return fmt.Sprintf("%d: %s", x, eventNames[x])
	}
	switch {
	case l.path == "own.flags":
		var names []string
		for bit, n := range []string{"alive", "crouched", "jump held"} {
			if v.Uint()&(1<<bit) != 0 {
				names = append(names, n)
			}
		}
		return strings.TrimSpace(fmt.Sprintf("0x%02x %s", v.Uint(), strings.Join(names, "|")))
	case last == "spawn_yaw" || (last == "yaw" && v.Kind() == reflect.Uint16):
		return fmt.Sprintf("0x%04x (%g°)", v.Uint(), float64(v.Uint())*360/65536)
	case last == "flags" && v.Kind() == reflect.Uint8:
		var names []string
		for bit, n := range []string{"head", "splash", "streak"} {
			if v.Uint()&(1<<bit) != 0 {
				names = append(names, n)
			}
		}
		return strings.TrimSpace(fmt.Sprintf("0x%02x %s", v.Uint(), strings.Join(names, "|")))
	case last == "view_frac" && v.Kind() == reflect.Uint16:
		return fmt.Sprintf("%d/65536", v.Uint())
	case last == "reason" && v.Kind() == reflect.Uint8:
		return fmt.Sprintf("%d: %s", v.Uint(), map[uint64]string{NoDamageInvulnerable: "invulnerable",
			NoDamageDead: "already dead", NoDamageZero: "no damage there"}[v.Uint()])
	}
	switch v.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Float32:
		return fmtFloat(v.Float(), 32)
	case reflect.Float64:
		return fmtFloat(v.Float(), 64)
	case reflect.String:
		return strconv.Quote(v.String())
	case reflect.Uint32:
		switch {
		case v.Uint() == NoTick:
			return "NoTick"
		case slices.Contains([]string{"player", "target", "other", "owner", "session"}, last):
			return fmt.Sprintf("0x%08x", v.Uint())
		}
	case reflect.Uint64:
		return fmt.Sprintf("0x%016x", v.Uint())
	case reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b := make([]byte, v.Len())
			reflect.Copy(reflect.ValueOf(b), v)
			return "SHA-256 " + hex.EncodeToString(b[:4]) + "…"
		}
		var parts []string
		for i := range v.Len() {
			parts = append(parts, valueNote(leaf{path: l.path, v: v.Index(i)}))
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return fmt.Sprint(v.Interface())
}

// playerFlags says what a player's flags hold.
func playerFlags(f uint8) string {
	alive := "dead"
	if f&FlagAlive != 0 {
		alive = "alive"
	}
	s := fmt.Sprintf("%s, teleports %d", alive, f&FlagTeleports>>1)
	if f&FlagCrouched != 0 {
		s += ", crouched"
	}
	return s
}

var kindNames = map[uint8]string{KindPlayer: "player", KindProjectile: "projectile", KindShield: "shield"}

var maskNames = [6]string{"pos", "aim", "health", "flags", "team", "motion"}

// m256 formats a quantised coordinate in metres (or metres per second).
func m256(v int64) string { return fmtFloat(float64(v)/PosScale, 64) }

// vec lays out three varints and formats them in metres.
func (s *splitter) vec(fields *[][]byte) string {
	var vals [3]string
	for k := range vals {
		b, v := s.varint()
		*fields = append(*fields, b)
		vals[k] = m256(v)
	}
	return "(" + strings.Join(vals[:], ", ") + ")"
}

// splitSection lays out a section of a snapshot of tick, a record a line;
// base is the state the snapshot is a delta against.
func (s *splitter) splitSection(name string, tick uint32, base *State) {
	b := s.take(2)
	n := binary.BigEndian.Uint16(b)
	s.line(name, fmt.Sprintf("%d records", n), b)
	var had []Entity
	if base != nil {
		had = base.Players
		if name == "objects" {
			had = base.Objects
		}
	}
	prev := uint64(0)
	for range int(n) {
		if s.err != nil {
			return
		}
		db, delta := s.uvarint()
		id := prev + delta
		for _, e := range had {
			if uint64(e.ID) > prev && uint64(e.ID) < id {
				s.seen["unchanged"]++ // an entity of the baseline with no record
			}
		}
		prev = id
		op := s.take(1)
		fields := [][]byte{db, op}
		var what []string
		label := ""
		switch op[0] & 3 {
		case opCreate:
			label = "create"
			kt := s.take(2)
			fields = append(fields, kt[:1], kt[1:])
			kind := kt[0]
			s.seen[fmt.Sprintf("%s.create.%d", name, kind)]++
			what = append(what, fmt.Sprintf("create %s, team %d", kindNames[kind], kt[1]))
			switch kind {
			case KindPlayer:
				fh := s.take(2)
				aim := s.take(4)
				fields = append(fields, fh[:1], fh[1:], aim[:2], aim[2:])
				what = append(what, fmt.Sprintf("flags 0x%02x (%s), health %d, yaw 0x%04x, pitch %d",
					fh[0], playerFlags(fh[0]), fh[1], binary.BigEndian.Uint16(aim), int16(binary.BigEndian.Uint16(aim[2:]))))
				what = append(what, "feet at "+s.vec(&fields)+" m")
			case KindProjectile, KindShield:
				ob, owner := s.uvarint()
				w := s.take(1)
				sb, start := s.varint()
				fields = append(fields, ob, w, sb)
				what = append(what, fmt.Sprintf("owner 0x%08x, weapon %d, start %d%+d = %d", owner, w[0], tick, start, int64(tick)+start))
				if kind == KindShield {
					what = append(what, "min corner "+s.vec(&fields)+" m, size "+s.vec(&fields)+" m")
				} else {
					what = append(what, "fired from "+s.vec(&fields)+" m at "+s.vec(&fields)+" m/s")
				}
			default:
				s.err = fmt.Errorf("kind %d at offset %d", kind, s.off-2)
				return
			}
		case opRemove:
			label = "remove"
			s.seen[name+".remove"]++
			what = append(what, "remove")
		case opUpdate:
			label = "update"
			s.seen[name+".update"]++
			mask := op[0] >> 2
			shield := false
			if i := slices.IndexFunc(had, func(e Entity) bool { return uint64(e.ID) == id }); i >= 0 {
				shield = had[i].State.Kind == KindShield
			}
			var groups []string
			for bit, g := range maskNames {
				if mask&(1<<bit) != 0 {
					groups = append(groups, g)
					s.seen["mask."+g]++
				}
			}
			what = append(what, "update "+strings.Join(groups, "|"))
			if mask&maskPos != 0 {
				if shield {
					what = append(what, "min corner += "+s.vec(&fields)+" m")
				} else {
					what = append(what, "position += "+s.vec(&fields)+" m")
				}
			}
			if mask&maskAim != 0 {
				aim := s.take(4)
				fields = append(fields, aim[:2], aim[2:])
				what = append(what, fmt.Sprintf("yaw 0x%04x, pitch %d", binary.BigEndian.Uint16(aim), int16(binary.BigEndian.Uint16(aim[2:]))))
			}
			for _, g := range []struct {
				bit  uint8
				name string
			}{{maskHealth, "health"}, {maskFlags, "flags"}, {maskTeam, "team"}} {
				if mask&g.bit != 0 {
					b := s.take(1)
					fields = append(fields, b)
					if g.bit == maskFlags {
						what = append(what, fmt.Sprintf("flags 0x%02x (%s)", b[0], playerFlags(b[0])))
					} else {
						what = append(what, fmt.Sprintf("%s %d", g.name, b[0]))
					}
				}
			}
			if mask&maskMotion != 0 {
				v := s.vec(&fields)
				sb, start := s.varint()
				ob, owner := s.uvarint()
				w := s.take(1)
				fields = append(fields, sb, ob, w)
				vel := "velocity += " + v + " m/s"
				if shield {
					vel = "size += " + v + " m"
				}
				what = append(what, fmt.Sprintf("%s, start %d%+d = %d, owner 0x%08x, weapon %d", vel, tick, start, int64(tick)+start, owner, w[0]))
			}
		default:
			s.err = fmt.Errorf("op 0x%02x at offset %d", op[0], s.off-1)
			return
		}
		s.comment("id 0x%08x = 0x%08x + %d: %s", id, id-delta, delta, strings.Join(what, ", "))
		s.line(label, "", fields...)
	}
}
