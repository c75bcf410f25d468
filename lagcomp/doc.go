// Package lagcomp is Rewind's lag-compensation engine, after Dino Squad's
// (Pixonic) design: the server checks a shot against the world as its shooter
// saw it.
//
//   - [History] records every rewindable collider's pose per tick, over a
//     window of ticks, including who existed at each tick.
//   - [CollisionWorld] is the room's collision scene: player hitboxes
//     (capsules, rewound), the level's geometry (a triangle mesh, package
//     trimesh, shared by the rooms) and shields (boxes), neither rewound, a
//     uniform-grid broadphase for shields and a sort-and-sweep list for
//     hitboxes, and the queries weapons use (ray, swept sphere, sphere and
//     capsule overlap) with filters for the shooter's own colliders and
//     teams.
//   - [TimeMachine] puts the collision world into the state of a (possibly
//     fractional) past time: existing colliders moved, missing ones created,
//     extra ones removed, poses interpolated between the two recorded ticks;
//     and back to the present.
//   - [Buckets] group lag-compensated items by view time, and [Compensator]
//     rewinds once per bucket, runs every [Resolver] over the bucket and
//     restores the present. With bucketing off it rewinds once per item: the
//     baseline the benchmarks compare against.
//
// The package knows poses, times and entity ids, not weapons or networking.
package lagcomp
