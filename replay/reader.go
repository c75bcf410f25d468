package replay

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/systems"
)

// Record is one record of a recording. Which fields are set depends on
// Type; the others keep the values of earlier records.
type Record struct {
	Type   RecordType
	Offset int64 // the byte offset of the record's first byte

	Entity EntityID           // spawns, Despawn, Input: the entity
	Player systems.PlayerSpec // SpawnPlayer
	Box    geom.AABB          // SpawnShield
	Owner  EntityID           // SpawnShield
	Team   uint8              // SpawnShield
	// Expires is SpawnShield's expiry tick (0: until despawned).
	Expires int64
	Input   ecs.Input // Input: exactly as queued
	// Tick is the tick Step simulated; for Incomplete the first tick the
	// recording misses.
	Tick    int64
	Digest  Digest // Step: the tick's events
	Dropped int64  // Incomplete: how many ticks the recording misses
	Reason  string // End: why the match ended
	Result  []byte // End: the match's result (JSON), if recorded
}

// Reader reads a recording: its header at once, then its records one by
// one.
type Reader struct {
	br      *bufio.Reader
	off     int64 // bytes consumed
	version uint16
	setup   Setup
	tab     *crc32.Table
	buf     []byte  // the present record's payload
	typ     [1]byte // its type, for the checksum
	rec     Record
	err     error // sticky: the first error
	// prev is every player's last input read: the next is stored as it
	// differs from it.
	prev map[EntityID]ecs.Input
}

// NewReader reads the header of the recording r holds. A bad header is a
// *HeaderError naming the part at fault.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{br: bufio.NewReaderSize(r, 64<<10), tab: newCRCTable(), prev: map[EntityID]ecs.Input{}}
	bad := func(field string, format string, args ...any) (*Reader, error) {
		return nil, &HeaderError{Field: field, Err: fmt.Errorf(format, args...)}
	}
	var fixed [len(Magic) + 2 + 4]byte
	if n, err := io.ReadFull(rd.br, fixed[:len(Magic)]); err != nil {
		return bad("magic", "%d bytes: not a recording (%v)", n, noEOF(err))
	}
	if string(fixed[:len(Magic)]) != Magic {
		return bad("magic", "%q is not a recording's %q", fixed[:len(Magic)], Magic)
	}
	if _, err := io.ReadFull(rd.br, fixed[len(Magic):len(Magic)+2]); err != nil {
		return bad("version", "%v", noEOF(err))
	}
	rd.version = binary.LittleEndian.Uint16(fixed[len(Magic):])
	if rd.version == 1 {
		return bad("version", "version 1 was recorded before levels: its map is boxes, which this build no longer "+
			"simulates (it judges shots against a level's triangles, whose answers differ in the last bits); "+
			"replay it with a build of before levels (this reader reads version %d)", Version)
	}
	if rd.version == 2 {
		return bad("version", "version 2 was recorded before the character controller: its players moved flat, "+
			"which this build no longer simulates; replay it with a build of before the controller (this reader reads version %d)", Version)
	}
	if rd.version < oldestVersion || rd.version > Version {
		return bad("version", "version %d is not supported (this reader reads versions %d to %d)", rd.version, oldestVersion, Version)
	}
	if _, err := io.ReadFull(rd.br, fixed[len(Magic)+2:]); err != nil {
		return bad("setup_length", "%v", noEOF(err))
	}
	n := binary.LittleEndian.Uint32(fixed[len(Magic)+2:])
	if n > MaxSetupLen {
		return bad("setup_length", "%d bytes, at most %d", n, MaxSetupLen)
	}
	setup := make([]byte, n+4)
	if _, err := io.ReadFull(rd.br, setup); err != nil {
		return bad("setup", "%d bytes of JSON announced: %v", n, noEOF(err))
	}
	ln := binary.LittleEndian.Uint32(setup[n:])
	if ln > MaxLevelLen {
		return bad("level_length", "%d bytes, at most %d", ln, MaxLevelLen)
	}
	lvl := make([]byte, ln+4)
	if _, err := io.ReadFull(rd.br, lvl); err != nil {
		return bad("level", "%d bytes of level announced: %v", ln, noEOF(err))
	}
	sum := crc32.Update(crc32.Update(crc32.Checksum(fixed[len(Magic):], rd.tab), rd.tab, setup[:n+4]), rd.tab, lvl[:ln])
	if got := binary.LittleEndian.Uint32(lvl[ln:]); got != sum {
		return bad("checksum", "%08x, computed %08x: the header is damaged", got, sum)
	}
	dec := json.NewDecoder(bytes.NewReader(setup[:n]))
	dec.DisallowUnknownFields() // a field this version does not know could change the simulation
	if err := dec.Decode(&rd.setup); err != nil {
		return bad("setup", "bad JSON: %w", err)
	}
	if dec.More() {
		return bad("setup", "bad JSON: data after the setup object")
	}
	if err := rd.setup.decodeLevel(lvl[:ln]); err != nil {
		return bad("level", "%v", err)
	}
	rd.off = int64(len(fixed)) + int64(n) + 4 + int64(ln) + 4
	return rd, nil
}

// noEOF turns a short read's EOF into ErrUnexpectedEOF: the data ended
// where more was due.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Setup returns the recorded setup.
func (rd *Reader) Setup() Setup { return rd.setup }

// Version returns the recording's format version.
func (rd *Reader) Version() uint16 { return rd.version }

// Offset returns the byte offset of the next record: past the last whole
// record read.
func (rd *Reader) Offset() int64 { return rd.off }

// Next returns the next record, valid until the following call. At the end
// of the recording it returns io.EOF; a record it cannot use is a
// *RecordError naming its offset, and so is every later call. Ancillary
// records of unknown types are skipped.
func (rd *Reader) Next() (*Record, error) {
	for rd.err == nil {
		t, ok := rd.read()
		if !ok {
			break
		}
		if rd.decode(t) {
			return &rd.rec, nil
		}
	}
	return nil, rd.err
}

// read reads one record's frame into rd.buf and checks its checksum. The
// offset moves past the record only once it is whole, so that a reader
// stopped inside a record cut short (a recording still being written) can
// Resume at its start.
func (rd *Reader) read() (RecordType, bool) {
	start := rd.off
	fail := func(t RecordType, err error) (RecordType, bool) {
		rd.err = &RecordError{Offset: start, Type: t, Err: err}
		return t, false
	}
	b, err := rd.br.ReadByte()
	if err == io.EOF {
		rd.err = io.EOF
		return 0, false
	} else if err != nil {
		return fail(0, err)
	}
	t := RecordType(b)
	n, err := binary.ReadUvarint(rd.br)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return fail(t, errTruncated)
	case err != nil:
		return fail(t, fmt.Errorf("length: %w", err))
	case n > MaxPayloadLen:
		return fail(t, fmt.Errorf("length: %d bytes, at most %d: the record is damaged", n, MaxPayloadLen))
	}
	if cap(rd.buf) < int(n)+4 {
		rd.buf = make([]byte, n+4)
	}
	rd.buf = rd.buf[:n+4]
	if _, err := io.ReadFull(rd.br, rd.buf); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fail(t, errTruncated)
		}
		return fail(t, err)
	}
	rd.typ[0] = b
	sum := crc32.Update(crc32.Update(0, rd.tab, rd.typ[:]), rd.tab, rd.buf[:n])
	if binary.LittleEndian.Uint32(rd.buf[n:]) != sum {
		return fail(t, errChecksum)
	}
	rd.off += 1 + int64(uvarintLen(n)) + int64(n) + 4
	rd.buf = rd.buf[:n]
	rd.rec.Type, rd.rec.Offset = t, start
	return t, true
}

// Truncated reports whether err is a record cut short by the end of the
// recording: the tail of a recording still being written, or of one whose
// writer died.
func Truncated(err error) bool { return errors.Is(err, errTruncated) }

// Resume continues a reader that stopped at the end of what the recording
// held (Next returned io.EOF, or a record cut short): r must read the
// recording from byte Offset() on, such as the file reopened, or seeked,
// there. A reader that stopped for any other reason (a damaged record) does
// not resume: Resume returns that error.
func (rd *Reader) Resume(r io.Reader) error {
	if rd.err != nil && rd.err != io.EOF && !Truncated(rd.err) {
		return rd.err
	}
	rd.br.Reset(r)
	rd.err = nil
	return nil
}

// decode decodes the payload of a record of type t into rd.rec; false for
// an ancillary record it skips, or an error.
func (rd *Reader) decode(t RecordType) bool {
	d := decoder{b: rd.buf, version: rd.version}
	rec := &rd.rec
	switch t {
	case RecordSpawnPlayer:
		d.spawnPlayer(rec)
	case RecordSpawnShield:
		rec.Entity = d.entity("entity")
		rec.Owner = d.entity("owner")
		rec.Team = d.u8("team")
		rec.Box = d.box("box")
		rec.Expires = d.varint("expires")
	case RecordDespawn:
		rec.Entity = d.entity("entity")
		delete(rd.prev, rec.Entity)
	case RecordInput:
		d.input(rec, rd.prev)
	case RecordStep:
		d.step(rec)
	case RecordIncomplete:
		rec.Tick = d.varint("first_missing")
		rec.Dropped = int64(d.uvarint("dropped", 1<<62))
	case RecordEnd:
		rec.Reason = d.str("reason")
		rec.Result = append(rec.Result[:0], d.str("result")...)
	default:
		if t >= 0x80 {
			return false // ancillary: a later version's, safe to skip
		}
		d.err = errors.New("unknown critical record type: written by a later version?")
	}
	if err := d.end(); err != nil {
		rd.err = &RecordError{Offset: rec.Offset, Type: t, Err: fmt.Errorf("payload: %w", err)}
		return false
	}
	return true
}

// uvarintLen returns how many bytes n takes as a uvarint.
func uvarintLen(n uint64) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}
