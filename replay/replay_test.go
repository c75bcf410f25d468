package replay

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/systems"
)

func open(t testing.TB, data []byte) *Reader {
	t.Helper()
	rd, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

// header builds a header by hand with a checksum that matches the JSON
// (so that the JSON itself is what is checked); another version is
// checked before the checksum.
func header(version uint16, setup string) []byte {
	return headerWith(version, setup, nil)
}

// headerWith is header with a level's encoding.
func headerWith(version uint16, setup string, lvl []byte) []byte {
	b := appendHeader(nil, []byte(setup), lvl, newCRCTable())
	b[len(Magic)], b[len(Magic)+1] = byte(version), byte(version>>8)
	return b
}

func TestBadHeader(t *testing.T) {
	good := header(Version, `{"tick_rate":20}`)
	if _, err := NewReader(bytes.NewReader(good)); err != nil {
		t.Fatalf("a minimal header: %v", err)
	}
	damaged := bytes.Clone(good)
	damaged[len(damaged)-10] ^= 1 // in the JSON
	arena := level.DefaultArena()
	arena.Canonicalize()
	enc := arena.Canonical()
	ref := fmt.Sprintf(`{"level":{"name":"arena","digest":"%s","triangles":58}}`, arena.Digest())
	if rd, err := NewReader(bytes.NewReader(headerWith(Version, ref, enc))); err != nil || rd.Setup().Level.Digest() != arena.Digest() {
		t.Fatalf("a header with the arena: %v", err)
	}
	huge := headerWith(Version, `{}`, nil)
	binary.LittleEndian.PutUint32(huge[len(huge)-8:], MaxLevelLen+1)
	for _, c := range []struct {
		name, field, msg string
		data             []byte
	}{
		{"empty", "magic", "not a recording", nil},
		{"text", "magic", "is not a recording", []byte("hello, this is not a recording at all")},
		{"version", "version", "version 9 is not supported", header(9, `{}`)},
		{"version 1", "version", "version 1 was recorded before levels", header(1, `{}`)},
		{"level length", "level_length", "at most", huge},
		{"level unnamed", "level", "the setup names none", headerWith(Version, `{}`, enc)},
		{"level digest", "level", "the setup names", headerWith(Version, strings.Replace(ref, `"digest":"`, `"digest":"0`, 1), enc)},
		{"level damaged", "level", "encoding", headerWith(Version, ref, enc[:len(enc)-1])},
		{"short version", "version", "unexpected EOF", []byte(Magic + "\x01")},
		{"json", "setup", "bad JSON", header(Version, `{"tick_rate":`)},
		{"unknown field", "setup", `unknown field "warp_drive"`, header(Version, `{"warp_drive":1}`)},
		{"wrong type", "setup", "tick_rate", header(Version, `{"tick_rate":"fast"}`)},
		{"checksum", "checksum", "damaged", damaged},
		{"truncated setup", "setup", "announced", good[:len(good)-8]},
	} {
		_, err := NewReader(bytes.NewReader(c.data))
		var he *HeaderError
		if !errors.As(err, &he) || he.Field != c.field || !strings.Contains(err.Error(), c.msg) ||
			!strings.Contains(err.Error(), "header: "+c.field) {
			t.Errorf("%s: %v; want a %s error saying %q", c.name, err, c.field, c.msg)
		}
	}
}

func TestReplayUnknownRecordType(t *testing.T) {
	tab := newCRCTable()
	data := header(Version, `{"tick_rate":20}`)
	data = appendRecord(data, 0x90, []byte("a later version's note"), tab) // ancillary: skipped
	at := int64(len(data))
	data = appendRecord(data, 0x42, nil, tab) // critical: refused
	rd := open(t, data)
	_, err := rd.Next()
	var re *RecordError
	if !errors.As(err, &re) || re.Offset != at || !strings.Contains(err.Error(), "unknown critical record type") {
		t.Fatalf("%v; want an unknown type at %d", err, at)
	}
}

func TestReplayEntityMismatch(t *testing.T) {
	// A recording claiming the first player got another entity than a
	// replay gives it: the simulation would not be the recorded one.
	setup := testSetup(t)
	var buf bytes.Buffer
	rec, err := NewRecorder(RecorderConfig{Writer: &buf, Setup: setup})
	if err != nil {
		t.Fatal(err)
	}
	world := ecs.NewWorld(20)
	world.NewEntity()
	rec.SpawnPlayer(systems.PlayerSpec{Name: "x", Controlled: true, Health: 100}, world.NewEntity())
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Run(open(t, buf.Bytes()), Config{})
	var de *DivergenceError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "got entity") {
		t.Fatalf("%v; want a divergence naming the entity", err)
	}
}

// An input's snapshots (ViewTime.Back, Span) survive a recording of this
// version; a version-3 input record, which has none, reads as one tick's.
func TestInputViewSpan(t *testing.T) {
	tab := newCRCTable()
	e := EntityID{ID: 3, Generation: 1}
	one := ecs.Input{Tick: 50, Buttons: ecs.ButtonFire, Shot: 2, ViewTime: ecs.ViewTime{Tick: 46, Frac: 0.25}}
	spanned := ecs.Input{Tick: 51, Buttons: ecs.ButtonFire, Shot: 3, ViewTime: ecs.ViewTime{Tick: 47, Frac: 0.5, Back: 1, Span: 2}}
	data := header(Version, `{"tick_rate":20}`)
	data = appendRecord(data, RecordInput, appendInput(nil, e, &one, &ecs.Input{}), tab)
	data = appendRecord(data, RecordInput, appendInput(nil, e, &spanned, &one), tab)
	rd := open(t, data)
	for _, want := range []ecs.Input{one, spanned} {
		rec, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		if rec.Input != want {
			t.Errorf("read %+v, want %+v", rec.Input, want)
		}
	}
	// Version 3: the same payloads without the span's byte (a header of
	// version 3 with its checksum).
	v3 := header(3, `{"tick_rate":20}`)
	binary.LittleEndian.PutUint32(v3[len(v3)-4:], crc32.Checksum(v3[len(Magic):len(v3)-4], tab))
	p := appendInput(nil, e, &one, &ecs.Input{})
	v3 = appendRecord(v3, RecordInput, p[:len(p)-1], tab)
	rec, err := open(t, v3).Next()
	if err != nil || rec.Input != one {
		t.Errorf("version 3: %+v, %v; want %+v", rec.Input, err, one)
	}
	// A span of one tick is written as none: a 1 is damage.
	bad := header(Version, `{"tick_rate":20}`)
	p = appendInput(nil, e, &one, &ecs.Input{})
	p[len(p)-1] = 1
	bad = appendRecord(bad, RecordInput, p, tab)
	if _, err := open(t, bad).Next(); err == nil || !strings.Contains(err.Error(), "view_span") {
		t.Errorf("a span of 1: %v, want an error naming view_span", err)
	}
}
