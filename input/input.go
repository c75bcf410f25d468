package input

import (
	"math"

	"github.com/rewind-gg/rewind/movement"
)

// Buttons of an Input.
const (
	ButtonFire uint8 = 1 << iota
	ButtonReload
	ButtonJump   // held: a jump when pressed on the ground (movement.Input.Jump)
	ButtonCrouch // held: crouched while down (movement.Input.Crouch)
	ButtonSprint // held: sprint speed with the stick forward (movement.Input.Sprint)
)

// Input is a player's input for one tick: State(n) + Input(n) = State(n+1).
type Input struct {
	Tick         int64   // the server tick the input is for
	MoveX, MoveZ float64 // strafe right and forward, each in [−1, 1]
	Yaw, Pitch   float64 // aim, radians
	Buttons      uint8
	Weapon       uint16 // selected weapon, a catalogue id
	Shot         uint32 // the client's shot counter, echoed in events
	// ViewTime is the server time the client was rendering remote entities
	// at when it produced the input (its interpolation time), as it claims.
	ViewTime ViewTime
	// Earliest is the earliest view time the server grants this input, in
	// ticks: what it measured of the client when the input arrived (0: no
	// bound but the room's cap and the window).
	Earliest float64
}

// Movement returns what the input asks of the player's movement: the
// stick, the aim and the jump, crouch and sprint buttons. The server moves
// a player with it, and a client predicts with it.
func (in *Input) Movement() movement.Input {
	return movement.Input{MoveX: in.MoveX, MoveZ: in.MoveZ, Yaw: in.Yaw, Pitch: in.Pitch,
		Jump: in.Buttons&ButtonJump != 0, Crouch: in.Buttons&ButtonCrouch != 0, Sprint: in.Buttons&ButtonSprint != 0}
}

// ViewTime is a server time, a tick plus a fraction of the next tick, at which
// an entity is resolved: the present minus its view lag, clamped to the
// rewind window and rounded to the view resolution (see lagcomp.ViewTimeAt).
// Lag-compensated entities with equal ViewTime share one rewind.
//
// Span and Back name the two snapshots the client interpolated between
// when they were not one tick apart (a snapshot rate below the tick rate,
// or flow control's halved rate): Tick−Back and Tick−Back+Span. The world
// at the time is then the line between those two ticks' states, at
// (Back+Frac)/Span of the way, as the client drew it, not the path the
// server's ticks in between took. Span 0 (or 1, with Back 0) is one tick:
// ⌊t⌋ and ⌊t⌋+1.
type ViewTime struct {
	Tick int64   // whole server tick
	Frac float64 // fraction in [0, 1) of the way to Tick+1
	Back uint8   // Tick − the earlier snapshot's tick (Span > 1)
	Span uint8   // ticks between the two snapshots; 0 or 1: one tick
}

// Spanned reports whether the time is between two snapshots more than a
// tick apart (Span, Back).
func (v ViewTime) Spanned() bool { return v.Span > 1 }

// Between returns the ticks of the two states the time lies between and
// the fraction of the way from the first to the second: ⌊t⌋, ⌊t⌋+1 and
// Frac, or, spanned, the snapshots' ticks and (Back+Frac)/Span, computed
// as a client computes it ((t − a)/(b − a) in float64: t − a is exact), so
// that a server interpolating with it draws the world the client drew.
func (v ViewTime) Between() (a, b int64, frac float64) {
	if !v.Spanned() {
		return v.Tick, v.Tick + 1, v.Frac
	}
	a = v.Tick - int64(v.Back)
	return a, a + int64(v.Span), (float64(v.Back) + v.Frac) / float64(v.Span)
}

// ViewTimeOf splits a time in ticks into tick and fraction. The split is
// exact: ViewTimeOf(t).Ticks() == t for every finite t below 2^52.
func ViewTimeOf(ticks float64) ViewTime {
	f := math.Floor(ticks)
	return ViewTime{Tick: int64(f), Frac: ticks - f}
}

// Ticks returns the time in ticks as one number.
func (v ViewTime) Ticks() float64 { return float64(v.Tick) + v.Frac }

// Less reports whether v is earlier than w.
func (v ViewTime) Less(w ViewTime) bool {
	if v.Tick != w.Tick || v.Frac != w.Frac {
		return v.Tick < w.Tick || (v.Tick == w.Tick && v.Frac < w.Frac)
	}
	// The same time between other snapshots: an order, so that buckets
	// sort the same every run.
	return v.Span < w.Span || (v.Span == w.Span && v.Back < w.Back)
}
