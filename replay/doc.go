// Package replay records a room's match as a log of the operations that
// drove its simulation, and re-simulates a recording exactly.
//
// A room's simulation (package systems) is deterministic: the same
// configuration and the same calls (SpawnPlayer, SpawnShield, Despawn,
// QueueInput, Step), in the same order, give the same states and events,
// bit for bit. A recording is therefore only the setup (what systems.New
// needs that is data, the level included: its canonical encoding, from
// which a replay builds the room's mesh again) and those calls: a [Recorder] writes it
// while the room plays, a [Reader] reads it back, and [Run] feeds it to a
// fresh systems.Simulation, checking after every tick that the events are
// the ones recorded (a [Digest]: their counts and a 64-bit hash).
//
// A replay may also judge the match's shots under other lag-compensation
// settings ([Variant]): each variant is a simulation of its own beside the
// match's, whose players are set to the match's state before every tick,
// so that the world stays the recorded one and only what lag compensation
// decides differs. A callback sees every tick's simulations (Config.OnTick);
// packages tune and view are built on it.
//
// docs/replay.md describes the file byte by byte: a header (magic,
// version, the setup as JSON, the level's canonical encoding), then framed
// records (type, length, payload,
// CRC-32C), so that a truncated or damaged tail is detected, reported with
// its byte offset, and everything before it still replays.
//
// # Recording from a room
//
// The Recorder's methods are called on the room's goroutine, each right
// after the simulation call it mirrors. They never wait for the disk: each
// tick's records go to a writer goroutine through a bounded queue, handed
// over without waking it (it drains the queue on its own timer, or when the
// queue is half full), and a tick that finds the queue full is dropped. A
// recording with a dropped tick cannot be re-simulated past it, so from
// then on the Recorder records nothing more and marks the recording
// incomplete; Run stops there and says so in its [Result]. The writer
// flushes and syncs at least once a second (RecorderConfig.FlushInterval),
// so a crash loses about the last second. Write errors (a full disk) are
// reported by Close and Err, never by a panic, and stop the recording.
//
// # What cannot be recorded
//
//   - Weapon kinds registered in code (weapons.Registry.Register). Their
//     definitions are recorded, with the kind by name, but not their Go
//     code: a replay needs a registry that registers the same kinds in the
//     same order (Config.Kinds), and fails naming the kind otherwise.
//   - Anything done to the simulation other than through the API above:
//     components written directly (a scenario placing its uncontrolled
//     players, scripted fire commands in Simulation.Commands), or systems
//     switched at run time. The server's rooms do none of this.
//   - Non-finite numbers in the setup (JSON has none); setups with one are
//     refused when the Recorder is created.
package replay
