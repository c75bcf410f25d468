// Package replay records a room's match as a log of the operations that
// drove its simulation, and re-simulates a recording exactly.
//
// A room's simulation (package systems) is deterministic: the same
// configuration and the same calls (SpawnPlayer, SpawnStatic, SpawnShield,
// Despawn, QueueInput, Step), in the same order, give the same states and
// events, bit for bit. A recording is therefore only the setup (what
// systems.New needs that is data) and those calls: a [Recorder] writes it
// while the room plays, a [Reader] reads it back, and [Replay] feeds it to a
// fresh systems.Simulation, checking after every tick that the events are
// the ones recorded (a [Digest]: their counts and a 64-bit hash). A replay
// may also change the lag-compensation settings, to see what a match would
// have been with another window or view resolution, and lets a caller look
// at the simulation after every tick.
//
// FORMAT.md describes the file byte by byte: a header (magic, version, the
// setup as JSON), then framed records (type, length, payload, CRC-32C), so
// that a truncated or damaged tail is detected, reported with its byte
// offset, and everything before it still replays.
//
// # Recording from a room
//
// The Recorder's methods are called on the room's goroutine, each right
// after the simulation call it mirrors. They never wait for the disk: each
// tick's records go to a writer goroutine through a bounded queue, and a
// tick that finds the queue full is dropped. A recording with a dropped
// tick cannot be re-simulated past it, so from then on the Recorder records
// nothing more and marks the recording incomplete (an Incomplete record,
// written as soon as the queue has room, and again by Close with the final
// count); Replay stops there and says so in its [Result]. The writer
// flushes at least once a second (RecorderConfig.FlushInterval), so a crash
// of the process loses about the last second. Write errors (a full disk)
// are reported by Close and Err, never by a panic, and stop the recording.
//
// # What cannot be recorded
//
//   - Weapon kinds registered in code (weapons.Registry.Register). Their
//     definitions are recorded, with the kind by name, but not their Go
//     code: Replay needs a registry that registers the same kinds in the
//     same order (ReplayConfig.Kinds), and fails naming the kind otherwise.
//   - Anything done to the simulation other than through the API above:
//     components written directly (a scenario placing its uncontrolled
//     players, scripted fire commands in Simulation.Commands), or systems
//     switched at run time. The server's rooms do none of this.
//   - Non-finite numbers in the setup (JSON has none); setups with one are
//     refused when the Recorder is created.
//
// A replay's checks hold only with the recorded lag-compensation settings:
// with others the events differ (that is the point), entity ids may be
// allocated differently and spread patterns, keyed by the shooter's entity,
// with them; Replay then counts the ticks whose events differ instead of
// failing.
package replay
