// Command librewind is the Rewind client as a C library: rewind.h's API
// over package session.
//
// Build it with
//
//	go build -buildmode=c-shared -o librewind.so ./cmd/librewind  # Linux, Android; rewind.dll, librewind.dylib elsewhere
//	go build -buildmode=c-archive -o librewind.a ./cmd/librewind  # iOS, static linking
//
// and compile against rewind.h (not the header the Go tool writes beside the
// library, which declares nothing: the API is C). docs/engines.md is the
// guide.
//
// The library has two halves. The API (core.c) is C: a game's calls read
// and write a session's mailbox in C memory and queue connect and close
// requests, and never run Go code on the game's threads. This file is the
// other half: a goroutine takes the requests, and each session's own
// goroutines fill its mailbox at every client tick (OnTick), so the game
// reads a frame without waiting for the network or meeting Go's runtime.
package main

/*
#cgo !windows LDFLAGS: -lm
#include <stdlib.h>
#include "core.h"
*/
import "C"

import (
	"context"
	"errors"
	"time"
	"unsafe"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/session"
)

func main() {} // a library: c-shared and c-archive need a main package

func init() {
	C.rwcore_fix_gc_signals()
	go serve()
}

// serve takes the API's requests, in order, for as long as the library is
// loaded.
func serve() {
	live := map[*C.rwcore_mailbox]*session.Session{}
	for {
		var kind C.int
		mb := C.rwcore_next_request(&kind)
		switch kind {
		case C.RWCORE_CONNECT:
			m := &mirror{mb: mb}
			s, err := session.Start(m.config())
			if err != nil {
				m.closed(session.Event{Kind: session.EventClosed, Code: session.CloseError, Name: err.Error()}, err)
				C.rwcore_release(mb) // the Go half's
				break
			}
			m.s, live[mb] = s, s
			go m.run()
		case C.RWCORE_CLOSE:
			if s := live[mb]; s != nil {
				s.Close()
				delete(live, mb)
			}
		}
		C.rwcore_release(mb) // the request's
	}
}

// mirror copies a session into its mailbox.
type mirror struct {
	mb      *C.rwcore_mailbox
	s       *session.Session
	matched bool
	players []C.rw_player
	objects []C.rw_object
	events  []session.Event
	ev      C.rw_event
}

// config is the session's config from the mailbox's copy of the game's.
func (m *mirror) config() session.Config {
	c := &m.mb.cfg
	sc := session.Config{Config: client.Config{
		Addr: C.GoString(c.addr), Token: goString(c.token), Room: goString(c.room), Name: goString(c.name),
		Class: goString(c.class_name), Team: uint8(c.team), InsecureSkipVerify: c.insecure_skip_verify != 0,
		Level: goString(c.level_name), InterpDelay: time.Duration(c.interp_delay_ms) * time.Millisecond,
	}, DialTimeout: time.Duration(c.dial_timeout_ms) * time.Millisecond, Events: int(c.events), OnTick: m.tick}
	if c.has_cert != 0 {
		sc.ServerCertSHA256 = C.GoBytes(unsafe.Pointer(&c.cert[0]), C.int(len(c.cert)))
	}
	if c.level_data != nil {
		sc.LevelData = C.GoBytes(unsafe.Pointer(c.level_data), C.int(c.level_size))
	}
	if c.quic_datagrams_only != 0 {
		sc.Channel = "quic"
	}
	return sc
}

func goString(s *C.char) string {
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

// run waits for the session to end, and leaves its last events and why it
// ended in the mailbox.
func (m *mirror) run() {
	m.s.Wait(context.Background())
	m.drain()
	m.closed(session.Event{Kind: session.EventClosed, Name: "closed"}, m.s.Err())
	C.rwcore_release(m.mb) // the Go half's
}

// tick runs on the session's tick loop: the game's intent in, the view,
// the events, the counters and (once) the match out.
func (m *mirror) tick(v *client.View) {
	var in C.rw_intent
	C.rwcore_take_intent(m.mb, &in)
	m.s.SetIntent(session.Intent{MoveX: float64(in.move_x), MoveZ: float64(in.move_z), Yaw: float64(in.yaw), Pitch: float64(in.pitch),
		Weapon: uint8(in.weapon), Fire: in.fire != 0, Reload: in.reload != 0, Jump: in.jump != 0, Crouch: in.crouch != 0, Sprint: in.sprint != 0})
	if !m.matched {
		m.match()
	}
	m.publish(v)
	m.drain()
	st := m.s.Stats()
	cs := C.rw_stats{status: C.int32_t(st.Status), rtt_ms: C.double(float64(st.RTT) / 1e6), snapshot_loss: C.double(st.SnapshotLoss),
		server_tick: C.uint32_t(st.ServerTick), ticks: C.uint64_t(st.Ticks), snapshots: C.uint64_t(st.Snapshots),
		snapshots_dropped: C.uint64_t(st.SnapshotsDropped), corrections: C.uint64_t(st.Corrections), shots_fired: C.uint64_t(st.ShotsFired),
		hits_confirmed: C.uint64_t(st.HitsConfirmed), hits_clamped: C.uint64_t(st.HitsClamped), kills: C.uint64_t(st.Kills),
		deaths: C.uint64_t(st.Deaths), bytes_in: C.uint64_t(st.BytesIn), bytes_out: C.uint64_t(st.BytesOut),
		interp_ms: C.double(float64(st.Interp) / 1e6)}
	C.rwcore_set_stats(m.mb, &cs)
}

// publish copies the view the client shows into the mailbox.
func (m *mirror) publish(v *client.View) {
	m.players = m.players[:0]
	for _, p := range v.Players {
		m.players = append(m.players, C.rw_player{id: C.uint32_t(p.ID), team: C.uint8_t(p.Team), alive: flag(p.Alive),
			crouched: flag(p.Crouched), health: C.uint8_t(p.Health), pos: vec3(p.Pos.Array()), yaw: C.double(p.Yaw), pitch: C.double(p.Pitch)})
	}
	m.objects = m.objects[:0]
	for _, o := range v.Objects {
		m.objects = append(m.objects, C.rw_object{id: C.uint32_t(o.ID), owner: C.uint32_t(o.Owner), kind: C.uint8_t(o.Kind),
			team: C.uint8_t(o.Team), weapon: C.uint8_t(o.Weapon), pos: vec3(o.Pos.Array()), vel: vec3(o.Vel.Array())})
	}
	mo := &v.Self.Motion
	rate := max(int(v.Welcome.TickRate), 1)
	hdr := C.rwcore_view{tick: C.int64_t(v.Tick), dt_ns: C.int64_t(time.Second / time.Duration(rate)), render_time: C.double(v.RenderTime),
		tick_rate: C.int32_t(rate), self: C.rw_self{id: C.uint32_t(v.Self.ID), team: C.uint8_t(v.Self.Team), alive: flag(v.Self.Alive),
			crouched: flag(mo.Crouched), on_ground: flag(mo.OnGround), health: C.float(v.Self.Health), pos: vec3(v.Self.Pos.Array()),
			vel: vec3(mo.Vel.Array()), yaw: C.double(v.Self.Yaw), pitch: C.double(v.Self.Pitch)}}
	var pp *C.rw_player
	if len(m.players) > 0 {
		pp = &m.players[0]
	}
	var op *C.rw_object
	if len(m.objects) > 0 {
		op = &m.objects[0]
	}
	C.rwcore_publish(m.mb, &hdr, pp, C.int32_t(len(m.players)), op, C.int32_t(len(m.objects)))
}

// match leaves the match joined in the mailbox, once the session plays.
func (m *mirror) match() {
	w, ok := m.s.Welcome()
	if !ok {
		return
	}
	cm := C.rw_match{player: C.uint32_t(w.Player), team: C.uint8_t(w.Team), tick_rate: C.int32_t(w.TickRate),
		radius: C.double(w.Radius), height: C.double(w.Height), crouch_height: C.double(w.CrouchHeight), head_height: C.double(w.HeadHeight),
		eye_height: C.double(w.EyeHeight), crouch_eye_height: C.double(w.CrouchEyeHeight), weapons: C.int32_t(len(w.Weapons))}
	for i, id := range w.Loadout[:min(len(w.Loadout), len(cm.loadout))] {
		cm.loadout[i] = C.uint8_t(id)
		cm.loadout_count++
	}
	writeString(cm.level[:], w.Level)
	writeString(cm.room[:], w.Room)
	writeString(cm.class_name[:], w.Class)
	weapons := make([]C.rw_weapon, max(len(w.Weapons), 1))
	for i, wi := range w.Weapons {
		weapons[i] = C.rw_weapon{damage: C.double(wi.Damage), hit_range: C.double(wi.Range), speed: C.double(wi.Speed),
			spread: C.double(wi.Spread), pellets: C.int32_t(max(wi.Pellets, 1)), fire_interval_ticks: C.int32_t(wi.FireInterval),
			magazine: C.int32_t(wi.Magazine), reload_ticks: C.int32_t(wi.ReloadTicks)}
		writeString(weapons[i].name[:], wi.Name)
		writeString(weapons[i].kind[:], wi.Kind)
	}
	C.rwcore_set_match(m.mb, &cm, &weapons[0], C.int32_t(len(w.Weapons)))
	m.matched = true
}

// drain moves the session's events, but the last (Closed), to the mailbox.
func (m *mirror) drain() {
	if m.events == nil {
		m.events = make([]session.Event, 64)
	}
	for {
		n := m.s.Events(m.events)
		if n == 0 {
			return
		}
		for _, ev := range m.events[:n] {
			if ev.Kind == session.EventClosed {
				continue // run leaves it, with the error
			}
			m.event(&ev)
			C.rwcore_push_event(m.mb, &m.ev)
		}
	}
}

// event fills m.ev with ev.
func (m *mirror) event(ev *session.Event) {
	m.ev = C.rw_event{kind: C.uint8_t(ev.Kind), weapon: C.uint8_t(ev.Weapon), flags: C.uint8_t(ev.Flags), reason: C.uint8_t(ev.Reason),
		via_snapshot: flag(ev.ViaSnapshot), team: C.uint8_t(ev.Team), shot: C.uint16_t(ev.Shot), tick: C.uint32_t(ev.Tick),
		player: C.uint32_t(ev.Player), other: C.uint32_t(ev.Other), damage: C.float(ev.Damage), pos: vec3(ev.Pos.Array()),
		yaw: C.double(ev.Yaw), code: C.uint64_t(ev.Code)}
	writeString(m.ev.name[:], ev.Name)
}

// closed leaves the end of the session in the mailbox: the Closed event,
// with the server's close code and reason, or CloseError and err's text.
func (m *mirror) closed(ev session.Event, err error) {
	var ce *client.CloseError
	switch {
	case errors.As(err, &ce):
		ev.Code, ev.Name = ce.Code, ce.Reason
	case err != nil:
		ev.Code, ev.Name = session.CloseError, err.Error()
	}
	m.event(&ev)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	cmsg := C.CString(msg)
	defer C.free(unsafe.Pointer(cmsg))
	C.rwcore_close(m.mb, &m.ev, cmsg, C.size_t(len(msg)))
}

// writeString copies s into a C char array, NUL-terminated and cut to fit.
func writeString(buf []C.char, s string) {
	n := min(len(s), len(buf)-1)
	for i := range n {
		buf[i] = C.char(s[i])
	}
	buf[n] = 0
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
