// Package systems is a room's simulation: one arche World and the fixed-tick
// schedule of systems that advance it, wired to lag compensation (package
// lagcomp) and weapons (package weapons).
//
// Every tick runs, in this order:
//
//  0. LateInputs      the inputs that came after their tick was simulated
//     without them: the player's movement simulated again from its last
//     applied tick, each late input a step that fires (the rules at its own
//     tick, its own view lag) and reloads, each missing tick rooted again
//  1. ApplyInputs     each player's queued input for this tick (none: the
//     player is rooted), and its view lag from the input's view time
//  2. Movement        State(n) + Input(n) → State(n+1): movement.Move on
//     the level's mesh, the player's class's character; a rooted player
//     moves with an empty input; a player out of the level's bounds or in
//     a kill volume dies
//  3. RecordHistory   every hitbox's pose, crouched or not, into the
//     history ring; the collision world is put into the present
//  4. Weapons         fire and reload buttons, and scripted fire commands:
//     the weapons' rules (loadout, fire rate, ammo, reload), then each kind
//     spawns what a shot needs, lag-compensated entities carrying their
//     shooter's view lag
//  5. LagCompensation view times (wind-ups wait, catch-up projectiles step
//     up to the present), buckets, one rewind per bucket, every kind's
//     resolver, the present restored
//  6. Damage          hits in view-time order: streak bonuses, respawn
//     invulnerability, health, deaths; respawns
//  7. Fairness        hits that dealt damage marked disputed when their
//     victim, in its present, was out of the shooter's sight or reach and
//     the shot resolved again in the present misses it (package fairness)
//  8. Cleanup         finished shots and expired shields removed
//
// A Simulation is deterministic: the same spawns, inputs and commands give
// the same states and events. It is not safe for concurrent use; a room's
// goroutine owns it.
package systems
