package replay

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/systems"
)

// RecorderConfig configures a Recorder.
type RecorderConfig struct {
	// Writer receives the recording; the Recorder does not close it. When
	// Writer is nil, Path names a file created for it (never over an
	// existing file: that is an error, os.ErrExist), synced every
	// FlushInterval and closed by Close.
	Writer io.Writer
	Path   string
	// Setup is the match's setup (NewSetup), written in the header.
	Setup Setup
	// FlushInterval is the longest recorded ticks wait in the writer's
	// buffer before they are written out, and a file the Recorder created
	// synced to disk (default 1 s): what a crash loses.
	FlushInterval time.Duration
	// QueueTicks is how many finished ticks may wait for the writer
	// (default 256: 12.8 s at 20 Hz). A tick that finds the queue full is
	// dropped, and the recording is incomplete from there.
	QueueTicks int
}

// Recorder writes a match's recording while its room plays. Its recording
// methods (SpawnPlayer, SpawnStatic, SpawnShield, Despawn, Input, Step,
// End, Close) must be called from one goroutine, the room's, in the order
// the room calls the simulation; Err and Dropped from any. A nil *Recorder
// records nothing, so a room can call it unconditionally.
//
// The recording methods append to the present tick's buffer; Step hands
// the buffer to a writer goroutine and never waits: the disk cannot stall
// the room. Buffers come back to a pool, so a recording allocates nothing
// tick after tick once the pool holds a few.
type Recorder struct {
	// The room's goroutine only.
	cur     []byte // the present tick's records
	payload []byte // the record being encoded
	digest  Digester
	tab     *crc32.Table
	// prev is every player's last input recorded, by entity index: the
	// next is stored as it differs from it.
	prev   []prevInput
	closed bool
	// broken: a tick was dropped. Nothing more is recorded (a replay cannot
	// cross a gap); the Incomplete record says from which tick.
	broken     bool
	firstGap   int64
	gapWritten bool
	ended      bool   // End was called
	endReason  string // End's reason
	endResult  []byte // End's result

	queue   chan []byte   // finished ticks, to the writer
	free    chan []byte   // emptied buffers, back from the writer
	wake    chan struct{} // the queue is half full: drain it now
	closing chan struct{}
	done    chan struct{}

	dropped atomic.Int64
	failed  atomic.Bool // the writer hit an error: stop encoding
	errOnce sync.Once
	err     error // the first write error; read after failed or done

	w          io.Writer
	file       *os.File
	header     []byte
	flushEvery time.Duration
}

// Defaults of RecorderConfig.
const (
	defaultFlushInterval = time.Second
	defaultQueueTicks    = 256
)

// NewRecorder encodes the setup and starts the writer goroutine. The
// header reaches the writer at once; the error is the setup's, or the
// file's.
func NewRecorder(cfg RecorderConfig) (*Recorder, error) {
	if err := cfg.Setup.checkFinite(); err != nil {
		return nil, err
	}
	setup, err := json.Marshal(&cfg.Setup)
	if err != nil {
		return nil, fmt.Errorf("replay: setup: %w", err)
	}
	if len(setup) > MaxSetupLen {
		return nil, fmt.Errorf("replay: setup: %d bytes of JSON, at most %d", len(setup), MaxSetupLen)
	}
	var lvl []byte
	if cfg.Setup.Level != nil {
		lvl = cfg.Setup.Level.Canonical()
		if len(lvl) > MaxLevelLen {
			return nil, fmt.Errorf("replay: setup: level: %d bytes encoded, at most %d", len(lvl), MaxLevelLen)
		}
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = defaultFlushInterval
	}
	if cfg.QueueTicks <= 0 {
		cfg.QueueTicks = defaultQueueTicks
	}
	r := &Recorder{
		tab:        newCRCTable(),
		queue:      make(chan []byte, cfg.QueueTicks),
		free:       make(chan []byte, cfg.QueueTicks+2), // every buffer fits: see take
		wake:       make(chan struct{}, 1),
		closing:    make(chan struct{}),
		done:       make(chan struct{}),
		w:          cfg.Writer,
		flushEvery: cfg.FlushInterval,
	}
	r.header = appendHeader(nil, setup, lvl, r.tab)
	if r.w == nil {
		if cfg.Path == "" {
			return nil, errors.New("replay: recorder: neither a writer nor a path")
		}
		f, err := os.OpenFile(cfg.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, fmt.Errorf("replay: recorder: %w", err)
		}
		r.w, r.file = f, f
	}
	r.cur = r.take()
	go r.run()
	return r, nil
}

// appendHeader appends the header: the magic, the version, the setup's
// length and JSON, the level's length and canonical encoding, and the
// CRC-32C of all but the magic.
func appendHeader(b, setup, lvl []byte, tab *crc32.Table) []byte {
	b = append(b, Magic...)
	start := len(b)
	b = binary.LittleEndian.AppendUint16(b, Version)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(setup)))
	b = append(b, setup...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(lvl)))
	b = append(b, lvl...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], tab))
}

// take returns an empty buffer from the pool, or a new one. Outside the
// pool there are at most the queue's buffers and the one being written, so
// at most QueueTicks+2 are ever made, and the pool holds them all.
func (r *Recorder) take() []byte {
	select {
	case b := <-r.free:
		return b[:0]
	default:
		return make([]byte, 0, 4096)
	}
}

// recording reports whether records are kept: not after Close, a dropped
// tick or a write error.
func (r *Recorder) recording() bool {
	return r != nil && !r.closed && !r.broken && !r.failed.Load()
}

// record frames the encoded payload into the present tick's buffer.
func (r *Recorder) record(t RecordType) {
	if len(r.payload) > MaxPayloadLen {
		r.fail(fmt.Errorf("replay: recorder: a %v record of %d bytes, at most %d", t, len(r.payload), MaxPayloadLen))
		return
	}
	r.cur = appendRecord(r.cur, t, r.payload, r.tab)
}

// SpawnPlayer records Simulation.SpawnPlayer(spec), which returned e.
func (r *Recorder) SpawnPlayer(spec systems.PlayerSpec, e ecs.Entity) {
	if !r.recording() {
		return
	}
	r.payload = appendSpawnPlayer(r.payload[:0], EntityOf(e), &spec)
	r.record(RecordSpawnPlayer)
}

// SpawnShield records Simulation.SpawnShield(owner, team, box, expires),
// which returned e. A failed spawn is not recorded.
func (r *Recorder) SpawnShield(owner ecs.Entity, team uint8, box geom.AABB, expires int64, e ecs.Entity) {
	if !r.recording() {
		return
	}
	r.payload = appendSpawnShield(r.payload[:0], EntityOf(e), EntityOf(owner), team, box, expires)
	r.record(RecordSpawnShield)
}

// Despawn records Simulation.Despawn(e).
func (r *Recorder) Despawn(e ecs.Entity) {
	if !r.recording() {
		return
	}
	r.payload = appendEntity(r.payload[:0], EntityOf(e))
	r.record(RecordDespawn)
	if i := int(e.ID()); i < len(r.prev) {
		r.prev[i] = prevInput{}
	}
}

// Input records Simulation.QueueInput(e, in), which returned v. Only
// queued and late inputs are recorded: the other verdicts leave the
// simulation as it was, and clients resend every input until it is
// acknowledged, so duplicates are most of what a room receives. A late
// input is recorded where it came, between the steps it came between, so
// a replay runs it late at the same tick.
func (r *Recorder) Input(e ecs.Entity, in ecs.Input, v systems.InputVerdict) {
	if (v != systems.InputQueued && v != systems.InputLate) || !r.recording() {
		return
	}
	i := int(e.ID())
	for i >= len(r.prev) {
		r.prev = append(r.prev, prevInput{})
	}
	p := &r.prev[i]
	if p.gen != e.Generation() { // another entity at that index: its first input
		*p = prevInput{gen: e.Generation()}
	}
	r.payload = appendInput(r.payload[:0], EntityOf(e), &in, &p.in)
	p.in = in
	r.record(RecordInput)
}

// Step records Simulation.Step, which simulated tick and produced ev (the
// simulation's Events), and hands the tick's records to the writer. When
// the writer is QueueTicks behind, the tick is dropped instead, and the
// recording ends there (Dropped counts the ticks it misses).
func (r *Recorder) Step(tick int64, ev *ecs.Events) {
	if r == nil || r.closed || r.failed.Load() {
		return
	}
	if r.broken {
		r.dropped.Add(1)
		r.sendGap()
		return
	}
	d := r.digest.Of(ev)
	r.payload = appendStep(r.payload[:0], tick, &d)
	r.record(RecordStep)
	select {
	case r.queue <- r.cur:
		r.cur = r.take()
		if len(r.queue) >= cap(r.queue)/2 { // a burst, or a slow disk: no waiting for the timer
			select {
			case r.wake <- struct{}{}:
			default:
			}
		}
	default:
		r.broken, r.firstGap = true, tick
		r.dropped.Add(1)
		r.sendGap()
	}
}

// Pending returns how many ticks wait for the writer: a disk falling behind
// shows here before ticks are dropped.
func (r *Recorder) Pending() int {
	if r == nil {
		return 0
	}
	return len(r.queue)
}

// sendGap tries to queue the Incomplete record, once, without waiting:
// should the process die before Close, the recording still says it is
// incomplete.
func (r *Recorder) sendGap() {
	if r.gapWritten {
		return
	}
	r.payload = appendIncomplete(r.payload[:0], r.firstGap, r.dropped.Load())
	r.cur = appendRecord(r.cur[:0], RecordIncomplete, r.payload, r.tab)
	select {
	case r.queue <- r.cur:
		r.cur = r.take()
		r.gapWritten = true
	default:
		r.cur = r.cur[:0]
	}
}

// End records why the match ended (free-form: "finished", "empty"…) and
// its result (the results file's JSON line, or nil); Close writes it last.
// A recording that ended early (a dropped tick, a write error) still gets
// its End record if the writer can write at all: the result is never lost
// with the ticks.
func (r *Recorder) End(reason string, result []byte) {
	if r == nil || r.closed {
		return
	}
	r.ended, r.endReason, r.endResult = true, reason, append([]byte(nil), result...)
}

// Dropped returns how many ticks the recording misses because the writer
// fell behind.
func (r *Recorder) Dropped() int64 {
	if r == nil {
		return 0
	}
	return r.dropped.Load()
}

// Err returns the first write error so far, or nil.
func (r *Recorder) Err() error {
	if r == nil || !r.failed.Load() {
		return nil
	}
	return r.err
}

// fail keeps the first error and stops the recording.
func (r *Recorder) fail(err error) {
	r.errOnce.Do(func() {
		r.err = err
		r.failed.Store(true)
	})
}

// Close writes what is left (records after the last Step, the Incomplete
// record with the final count if ticks were dropped, the End record),
// waits for the writer to write and flush everything, syncs and closes the
// file if the Recorder created it, and returns the first error. It waits
// for the disk: call it when the room is done, or from another goroutine
// after the room's last call. Calling it again returns the same error.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	if !r.closed {
		r.closed = true
		if r.broken {
			r.payload = appendIncomplete(r.payload[:0], r.firstGap, r.dropped.Load())
			r.cur = appendRecord(r.cur[:0], RecordIncomplete, r.payload, r.tab)
		}
		if r.ended {
			r.payload = appendString(appendString(r.payload[:0], r.endReason), string(r.endResult))
			r.record(RecordEnd)
		}
		if len(r.cur) > 0 {
			r.queue <- r.cur // may wait: the writer drains the queue
			r.cur = nil
		}
		close(r.closing)
		<-r.done
	}
	if r.failed.Load() {
		return r.err
	}
	return nil
}

// run is the writer goroutine: it writes the header, then, on its own
// timer, every tick queued since, through a bufio.Writer flushed at least
// every FlushInterval. A room's Step wakes it only when the queue is half
// full: handing a tick over is a send on a buffered channel nobody waits
// on, where a wake-up would cost the room a system call a tick. After an error it only drains the
// queue, so the room never waits for it.
func (r *Recorder) run() {
	defer close(r.done)
	bw := bufio.NewWriterSize(r.w, 64<<10)
	write := func(b []byte) {
		if r.failed.Load() {
			return
		}
		if _, err := bw.Write(b); err != nil {
			r.fail(fmt.Errorf("replay: recorder: write: %w", err))
		}
	}
	flush := func() {
		if r.failed.Load() {
			return
		}
		if err := bw.Flush(); err != nil {
			r.fail(fmt.Errorf("replay: recorder: write: %w", err))
		}
	}
	drain := func() {
		for {
			select {
			case b := <-r.queue:
				write(b)
				select {
				case r.free <- b[:0]:
				default: // cannot happen: the pool holds every buffer
				}
			default:
				return
			}
		}
	}
	write(r.header)
	flush() // a recording with a header exists as soon as the room does
	// The queue holds seconds of ticks: draining it ten times a flush
	// interval (at most every 100 ms) keeps it short.
	t := time.NewTicker(min(max(r.flushEvery/10, 10*time.Millisecond), 100*time.Millisecond))
	defer t.Stop()
	flushed := time.Now()
	for {
		select {
		case <-r.closing:
			drain()
			flush()
			r.closeFile()
			return
		case <-r.wake:
			drain()
		case now := <-t.C:
			drain()
			if bw.Buffered() > 0 && now.Sub(flushed) >= r.flushEvery {
				flush()
				r.sync()
				flushed = now
			}
		}
	}
}

// sync writes the file the Recorder created to disk: a crash of the
// machine, not only of the process, then loses at most a flush interval.
func (r *Recorder) sync() {
	if r.file == nil || r.failed.Load() {
		return
	}
	if err := r.file.Sync(); err != nil {
		r.fail(fmt.Errorf("replay: recorder: sync: %w", err))
	}
}

// closeFile syncs and closes the file the Recorder created.
func (r *Recorder) closeFile() {
	if r.file == nil {
		return
	}
	r.sync()
	if err := r.file.Close(); err != nil {
		r.fail(fmt.Errorf("replay: recorder: close: %w", err))
	}
}

// Extension is a recording file's extension.
const Extension = ".rwr"

// MatchFile returns the path of the recording of a match of room that
// started at started, in dir: room-20061102T150405.000Z.rwr, and
// room-20061102T150405.000Z-n.rwr for n > 0 (a name already taken). The
// names of one room's matches sort by time.
func MatchFile(dir, room string, started time.Time, n int) string {
	name := room + "-" + started.UTC().Format("20060102T150405.000Z")
	if n > 0 {
		name += fmt.Sprintf("-%d", n)
	}
	return filepath.Join(dir, name+Extension)
}

// prevInput is an entity's last input recorded (the zero Input before its
// first), kept by entity index.
type prevInput struct {
	gen uint32
	in  ecs.Input
}
