// Package session is the client SDK shaped for a game engine's frame loop,
// and the core of librewind, its C library.
//
// A game engine owns its main thread and calls into libraries once a frame,
// at whatever rate it renders; it cannot lend a thread to a blocking network
// loop or take callbacks from another runtime's threads. So a Session runs
// the connection and the client's fixed-rate tick loop (package client:
// prediction, reconciliation, interpolation) on goroutines of its own, and
// the engine polls it:
//
//   - Start connects in the background and returns at once; Status says
//     when the player is in (Playing) or why it is not (Closed, Err).
//   - SetIntent gives what the player does (sticks, aim, buttons, weapon)
//     whenever the engine reads its input; each client tick takes the
//     latest, and a button pressed and released between two ticks still
//     counts once (a tap is never lost to a high frame rate).
//   - Frame fills what to draw now: the local player's smoothed pose, the
//     remote players' and projectiles' render poses, blended between the
//     client's last two ticks by the time since the newer (so motion is
//     smooth at any frame rate, one client tick behind), and the time they
//     are shown at.
//   - Events drains what happened (hit markers, damage taken, kills,
//     respawns, players joining and leaving, the end of the session with
//     its reason), Stats reads the counters (round trip, snapshot loss).
//
// Frame, Events, SetIntent and Stats allocate nothing once the session has
// seen its largest room, take no lock the tick loop holds for more than a
// copy, and never block on the network. A Session may be used from any one
// goroutine at a time per method; Close may be called from any.
package session
