// Package client is Rewind's Go client SDK: it connects to a server,
// verifies it (a CA, or the certificate hash the matchmaker handed out),
// joins with its connect token and plays at the server's tick rate, on the
// level it holds (Config.Level): a server whose Welcome names another
// level's digest is refused with a [LevelError].
//
// Every client tick it asks an [InputSource] what the player does, predicts
// the local player with the server's own movement code (movement.Move: the
// character the Welcome describes, on the level's mesh) and keeps the input
// and the predicted state in a 1024-slot ring; it sends the
// inputs the server has not acknowledged yet (up to Redundancy of them) with
// the time it was showing remote entities at (its view time), which the
// server's lag compensation rewinds to. On every snapshot it compares the
// server's movement state after the snapshot's tick (position, velocity,
// crouched, jump held) with its own prediction of that tick; on a
// difference it rewinds to the server's state and replays the buffered
// inputs (ticks the server rooted as empty ones; seed 001), and smooths the visible correction (snap
// beyond 2 m, else the display error decays by 10% a tick). Remote entities
// are interpolated between snapshots at the interpolation delay behind the
// newest snapshot, never across a teleport. The pellets of its shots are
// the server's (package spread): it predicts them from the match's seed and
// takes the server's count of its shots from every snapshot.
//
// It imports only what a client needs (the wire, the channel, the level,
// the movement and the arsenal rules it predicts with), nothing of the
// server; it logs through log/slog (Config.Log). OnShot shows each shot as
// fired and seen, so that a program can score its own shots: package
// bots's Tally does, for the demo, and package bots's Bot is an InputSource
// that plays by itself.
package client
