// Package coverage keeps a room's seat rule: a seat is held by playing.
// A player is judged on the ticks the room simulated with its input, that
// is an input that reached the server before its tick was simulated
// (systems.InputQueue counts them as Used), not on its packets: a client
// that sends every tick's input, each packet repeating the inputs not yet
// acknowledged, covers nearly every tick even on a lossy path; one that
// sends a packet now and then covers at most the ticks that packet holds
// inputs for, however many it repeats.
//
// Over any window of the last Window ticks (from the player's first input
// on) a player must have covered at least Share of them; one that has
// missed more than the rest loses its seat as soon as it has. The window
// is judged in steps of a sixteenth of it, so that the rule costs a room a
// comparison a tick and a few integer operations a player a step, and
// allocates nothing.
package coverage
