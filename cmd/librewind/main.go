// Command librewind is the Rewind client as a C library: package session
// behind the C ABI that rewind.h declares.
//
// Build it with
//
//	go build -buildmode=c-shared -o librewind.so ./cmd/librewind  # Linux, Android; .dll, .dylib elsewhere
//	go build -buildmode=c-archive -o librewind.a ./cmd/librewind  # iOS, static linking
//
// and compile against rewind.h (not the header the Go tool writes beside the
// library: rewind.h is the documented, versioned one, and this file
// includes it, so the compiler holds the two to the same types).
// docs/engines.md is the guide.
package main

/*
#include <stdlib.h>
#include <string.h>
#include "rewind.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/session"
)

func main() {} // a library: c-shared and c-archive need a main package

// handles are the live sessions by handle. A handle is never reused, so a
// stale one finds nothing.
type handles struct {
	mu   sync.Mutex
	next uint64
	live map[uint64]*entry
}

// entry is a session and what the C calls need beside it: buffers the
// session writes into before they are copied out, grown to the largest
// request.
type entry struct {
	mu      sync.Mutex // serializes the calls on one session
	s       *session.Session
	players []session.Player
	objects []session.Object
	events  []session.Event
}

// table is the library's one mutable global: the C ABI names sessions by
// number, so something must map numbers to sessions.
var table = handles{live: map[uint64]*entry{}}

func (h *handles) add(s *session.Session) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	h.live[h.next] = &entry{s: s}
	return h.next
}

func (h *handles) get(id C.rw_session) *entry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.live[uint64(id)]
}

func (h *handles) remove(id C.rw_session) *entry {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.live[uint64(id)]
	delete(h.live, uint64(id))
	return e
}

// guard turns a panic into RW_ERR_INTERNAL: a fault in the library must not
// take the game down with it.
func guard(r *C.rw_result) {
	if recover() != nil {
		*r = C.RW_ERR_INTERNAL
	}
}

//export rw_api_version
func rw_api_version() C.int32_t { return C.RW_API_VERSION }

//export rw_struct_size
func rw_struct_size(id C.int32_t) C.int32_t {
	switch id {
	case C.RW_STRUCT_CONFIG:
		return C.sizeof_rw_config
	case C.RW_STRUCT_INTENT:
		return C.sizeof_rw_intent
	case C.RW_STRUCT_SELF:
		return C.sizeof_rw_self
	case C.RW_STRUCT_PLAYER:
		return C.sizeof_rw_player
	case C.RW_STRUCT_OBJECT:
		return C.sizeof_rw_object
	case C.RW_STRUCT_FRAME:
		return C.sizeof_rw_frame
	case C.RW_STRUCT_EVENT:
		return C.sizeof_rw_event
	case C.RW_STRUCT_STATS:
		return C.sizeof_rw_stats
	case C.RW_STRUCT_MATCH:
		return C.sizeof_rw_match
	case C.RW_STRUCT_WEAPON:
		return C.sizeof_rw_weapon
	}
	return 0
}

// writeString copies s into the C buffer buf of size bytes, NUL-terminated
// and cut to fit (nothing when buf is NULL or size 0).
func writeString(buf *C.char, size C.size_t, s string) {
	if buf == nil || size == 0 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(size))
	n := copy(b[:len(b)-1], s)
	b[n] = 0
}

// goString is a C string as Go's, "" for NULL.
func goString(s *C.char) string {
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

//export rw_connect
func rw_connect(cfg *C.rw_config, out *C.rw_session, errBuf *C.char, errSize C.size_t) (r C.rw_result) {
	defer guard(&r)
	fail := func(msg string) C.rw_result {
		writeString(errBuf, errSize, msg)
		return C.RW_ERR_ARGUMENT
	}
	if cfg == nil || out == nil {
		return fail("rw_connect: cfg and out must not be NULL")
	}
	sc, err := sessionConfig(cfg)
	if err != nil {
		return fail(err.Error())
	}
	s, err := session.Start(sc)
	if err != nil {
		return fail(err.Error())
	}
	*out = C.rw_session(table.add(s))
	writeString(errBuf, errSize, "")
	return C.RW_OK
}

// sessionConfig reads cfg, copying everything it points to.
func sessionConfig(cfg *C.rw_config) (session.Config, error) {
	sc := session.Config{Config: client.Config{
		Addr: goString(cfg.addr), Token: goString(cfg.token),
		Room: goString(cfg.room), Name: goString(cfg.name), Class: goString(cfg.class_name), Team: uint8(cfg.team),
		InsecureSkipVerify: cfg.insecure_skip_verify != 0,
		Level:              goString(cfg.level_name),
	}}
	if sc.Addr == "" {
		return sc, errors.New("rw_config.addr: empty")
	}
	if cfg.cert_sha256 != nil {
		sc.ServerCertSHA256 = C.GoBytes(unsafe.Pointer(cfg.cert_sha256), 32)
	}
	if cfg.level_data != nil {
		if cfg.level_size == 0 || cfg.level_size > 1<<30 {
			return sc, fmt.Errorf("rw_config.level_size: %d bytes with level_data set", cfg.level_size)
		}
		sc.LevelData = C.GoBytes(unsafe.Pointer(cfg.level_data), C.int(cfg.level_size))
	}
	for _, f := range []struct {
		name string
		v    C.int32_t
		into *time.Duration
	}{{"interp_delay_ms", cfg.interp_delay_ms, &sc.InterpDelay}, {"dial_timeout_ms", cfg.dial_timeout_ms, &sc.DialTimeout}} {
		if f.v < 0 {
			return sc, fmt.Errorf("rw_config.%s: %d is negative", f.name, f.v)
		}
		*f.into = time.Duration(f.v) * time.Millisecond
	}
	if cfg.quic_datagrams_only != 0 {
		sc.Channel = "quic"
	}
	if cfg.events < 0 {
		return sc, fmt.Errorf("rw_config.events: %d is negative", cfg.events)
	}
	sc.Events = int(cfg.events)
	return sc, nil
}

// call runs f on the session s, serialized with the other calls on it.
func call(s C.rw_session, f func(e *entry) C.rw_result) (r C.rw_result) {
	defer guard(&r)
	e := table.get(s)
	if e == nil {
		return C.RW_ERR_HANDLE
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return f(e)
}

//export rw_set_intent
func rw_set_intent(s C.rw_session, in *C.rw_intent) C.rw_result {
	if in == nil {
		return C.RW_ERR_ARGUMENT
	}
	return call(s, func(e *entry) C.rw_result {
		if e.s.Status() == session.Closed {
			return C.RW_ERR_CLOSED
		}
		e.s.SetIntent(session.Intent{MoveX: float64(in.move_x), MoveZ: float64(in.move_z), Yaw: float64(in.yaw), Pitch: float64(in.pitch),
			Weapon: uint8(in.weapon), Fire: in.fire != 0, Reload: in.reload != 0, Jump: in.jump != 0, Crouch: in.crouch != 0, Sprint: in.sprint != 0})
		return C.RW_OK
	})
}

func vec3(v [3]float64) C.rw_vec3 {
	return C.rw_vec3{x: C.double(v[0]), y: C.double(v[1]), z: C.double(v[2])}
}

func flag(b bool) C.uint8_t {
	if b {
		return 1
	}
	return 0
}

//export rw_read_frame
func rw_read_frame(s C.rw_session, f *C.rw_frame, players *C.rw_player, playersCap C.int32_t, objects *C.rw_object, objectsCap C.int32_t) C.rw_result {
	if f == nil || playersCap < 0 || objectsCap < 0 || (players == nil && playersCap > 0) || (objects == nil && objectsCap > 0) {
		return C.RW_ERR_ARGUMENT
	}
	return call(s, func(e *entry) C.rw_result {
		e.players = grow(e.players, int(playersCap))
		e.objects = grow(e.objects, int(objectsCap))
		var gf session.Frame
		np, no := e.s.Frame(&gf, e.players, e.objects)
		sf := &gf.Self
		*f = C.rw_frame{status: C.int32_t(gf.Status), tick_rate: C.int32_t(gf.TickRate), tick: C.int64_t(gf.Tick),
			alpha: C.double(gf.Alpha), render_time: C.double(gf.RenderTime), players: C.int32_t(gf.Players), objects: C.int32_t(gf.Objects),
			self: C.rw_self{id: C.uint32_t(sf.ID), team: C.uint8_t(sf.Team), alive: flag(sf.Alive), crouched: flag(sf.Crouched),
				on_ground: flag(sf.OnGround), health: C.float(sf.Health), pos: vec3(sf.Pos.Array()), vel: vec3(sf.Vel.Array()),
				yaw: C.double(sf.Yaw), pitch: C.double(sf.Pitch)}}
		if np > 0 {
			out := unsafe.Slice(players, np)
			for i, p := range e.players[:np] {
				out[i] = C.rw_player{id: C.uint32_t(p.ID), team: C.uint8_t(p.Team), alive: flag(p.Alive), crouched: flag(p.Crouched),
					health: C.uint8_t(p.Health), pos: vec3(p.Pos.Array()), yaw: C.double(p.Yaw), pitch: C.double(p.Pitch)}
			}
		}
		if no > 0 {
			out := unsafe.Slice(objects, no)
			for i, o := range e.objects[:no] {
				out[i] = C.rw_object{id: C.uint32_t(o.ID), owner: C.uint32_t(o.Owner), kind: C.uint8_t(o.Kind), team: C.uint8_t(o.Team),
					weapon: C.uint8_t(o.Weapon), pos: vec3(o.Pos.Array()), vel: vec3(o.Vel.Array())}
			}
		}
		return C.RW_OK
	})
}

// grow returns b with length n, reusing its storage when it has room. It
// is kept out of line so that its allocation, on growth only, is its own
// (TestFrameCallsDoNotEscape).
//
//go:noinline
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

//export rw_poll_events
func rw_poll_events(s C.rw_session, events *C.rw_event, capacity C.int32_t, n *C.int32_t) C.rw_result {
	if n == nil || capacity < 0 || (events == nil && capacity > 0) {
		return C.RW_ERR_ARGUMENT
	}
	*n = 0
	return call(s, func(e *entry) C.rw_result {
		e.events = grow(e.events, int(capacity))
		k := e.s.Events(e.events)
		if k == 0 {
			return C.RW_OK
		}
		out := unsafe.Slice(events, k)
		for i, ev := range e.events[:k] {
			out[i] = C.rw_event{kind: C.uint8_t(ev.Kind), weapon: C.uint8_t(ev.Weapon), flags: C.uint8_t(ev.Flags), reason: C.uint8_t(ev.Reason),
				via_snapshot: flag(ev.ViaSnapshot), team: C.uint8_t(ev.Team), shot: C.uint16_t(ev.Shot), tick: C.uint32_t(ev.Tick),
				player: C.uint32_t(ev.Player), other: C.uint32_t(ev.Other), damage: C.float(ev.Damage), pos: vec3(ev.Pos.Array()),
				yaw: C.double(ev.Yaw), code: C.uint64_t(ev.Code)}
			writeString(&out[i].name[0], C.size_t(len(out[i].name)), ev.Name)
			e.events[i] = session.Event{} // let go of the name
		}
		*n = C.int32_t(k)
		return C.RW_OK
	})
}

//export rw_read_stats
func rw_read_stats(s C.rw_session, st *C.rw_stats) C.rw_result {
	if st == nil {
		return C.RW_ERR_ARGUMENT
	}
	return call(s, func(e *entry) C.rw_result {
		gs := e.s.Stats()
		*st = C.rw_stats{status: C.int32_t(gs.Status), rtt_ms: C.double(float64(gs.RTT) / 1e6), snapshot_loss: C.double(gs.SnapshotLoss),
			server_tick: C.uint32_t(gs.ServerTick), ticks: C.uint64_t(gs.Ticks), snapshots: C.uint64_t(gs.Snapshots),
			snapshots_dropped: C.uint64_t(gs.SnapshotsDropped), corrections: C.uint64_t(gs.Corrections), shots_fired: C.uint64_t(gs.ShotsFired),
			hits_confirmed: C.uint64_t(gs.HitsConfirmed), hits_clamped: C.uint64_t(gs.HitsClamped), kills: C.uint64_t(gs.Kills),
			deaths: C.uint64_t(gs.Deaths), bytes_in: C.uint64_t(gs.BytesIn), bytes_out: C.uint64_t(gs.BytesOut),
			events_dropped: C.uint64_t(gs.EventsDropped), interp_ms: C.double(float64(gs.Interp) / 1e6)}
		return C.RW_OK
	})
}

//export rw_read_match
func rw_read_match(s C.rw_session, m *C.rw_match) C.rw_result {
	if m == nil {
		return C.RW_ERR_ARGUMENT
	}
	return call(s, func(e *entry) C.rw_result {
		w, ok := e.s.Welcome()
		if !ok {
			if e.s.Status() == session.Closed {
				return C.RW_ERR_CLOSED
			}
			return C.RW_ERR_NOT_YET
		}
		*m = C.rw_match{player: C.uint32_t(w.Player), team: C.uint8_t(w.Team), tick_rate: C.int32_t(w.TickRate),
			radius: C.double(w.Radius), height: C.double(w.Height), crouch_height: C.double(w.CrouchHeight), head_height: C.double(w.HeadHeight),
			eye_height: C.double(w.EyeHeight), crouch_eye_height: C.double(w.CrouchEyeHeight), weapons: C.int32_t(len(w.Weapons))}
		for i, id := range w.Loadout[:min(len(w.Loadout), len(m.loadout))] {
			m.loadout[i] = C.uint8_t(id)
			m.loadout_count++
		}
		writeString(&m.level[0], C.size_t(len(m.level)), w.Level)
		writeString(&m.room[0], C.size_t(len(m.room)), w.Room)
		writeString(&m.class_name[0], C.size_t(len(m.class_name)), w.Class)
		return C.RW_OK
	})
}

//export rw_read_weapon
func rw_read_weapon(s C.rw_session, id C.int32_t, wp *C.rw_weapon) C.rw_result {
	if wp == nil {
		return C.RW_ERR_ARGUMENT
	}
	return call(s, func(e *entry) C.rw_result {
		w, ok := e.s.Welcome()
		switch {
		case !ok && e.s.Status() == session.Closed:
			return C.RW_ERR_CLOSED
		case !ok:
			return C.RW_ERR_NOT_YET
		case id < 0 || int(id) >= len(w.Weapons):
			return C.RW_ERR_ARGUMENT
		}
		wi := &w.Weapons[id]
		*wp = C.rw_weapon{damage: C.double(wi.Damage), hit_range: C.double(wi.Range), speed: C.double(wi.Speed), spread: C.double(wi.Spread),
			pellets: C.int32_t(max(wi.Pellets, 1)), fire_interval_ticks: C.int32_t(wi.FireInterval), magazine: C.int32_t(wi.Magazine),
			reload_ticks: C.int32_t(wi.ReloadTicks)}
		writeString(&wp.name[0], C.size_t(len(wp.name)), wi.Name)
		writeString(&wp.kind[0], C.size_t(len(wp.kind)), wi.Kind)
		return C.RW_OK
	})
}

//export rw_session_error
func rw_session_error(s C.rw_session, buf *C.char, size C.size_t, length *C.size_t) C.rw_result {
	return call(s, func(e *entry) C.rw_result {
		msg := ""
		if err := e.s.Err(); err != nil {
			msg = err.Error()
		}
		writeString(buf, size, msg)
		if length != nil {
			*length = C.size_t(len(msg))
		}
		return C.RW_OK
	})
}

//export rw_close
func rw_close(s C.rw_session) (r C.rw_result) {
	defer guard(&r)
	e := table.remove(s)
	if e == nil {
		return C.RW_ERR_HANDLE
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.s.Close()
	return C.RW_OK
}
