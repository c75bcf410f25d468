// Package movement is the character movement the server simulates and the
// client predicts with: the same function on both sides, so that a client
// that applies the same inputs to the same state reaches the same state.
//
// [Move] is a kinematic character controller on a level's triangle mesh
// (package trimesh): a capsule that walks, runs, sprints, crouches, jumps,
// climbs steps and walkable slopes, slides along walls and down slopes too
// steep to stand on, falls and lands, in the lineage of Quake's pmove and
// Source's CGameMovement. A [Character] holds a class's tuning and
// capsule, a [State] everything the next tick depends on, an [Input] what a
// player asks of one tick. docs/movement.md describes the algorithm step by
// step, every parameter and its default, what a snapshot must carry for a
// client to reconcile, and how far results agree across machines.
package movement
