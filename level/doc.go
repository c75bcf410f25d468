// Package level is a map as data, shared by the server, the client and
// tools: the collision triangles in world space with what each blocks
// (movement, shots or both), the teams' spawn points, the playable bounds,
// kill volumes, an optional waypoint graph for bots, and a content digest
// that two programs compare to know they hold the same level.
//
// [ReadFile] reads a level from glTF 2.0 (.glb or .gltf, exported from
// Blender, Unity, Unreal or Godot) following the conventions of
// docs/levels.md: collision, spawns, bounds, kill volumes and waypoints are
// marked by glTF extras or by node-name prefixes. [Arena] builds the
// built-in arena. [Level.Check] says what is wrong with a level: errors for
// what makes it unplayable, warnings for what is suspicious.
//
// A program that plays a level puts it in canonical order
// ([Level.Canonicalize]) and builds its collision mesh ([Level.Mesh]); a
// recording carries its canonical encoding ([Level.Canonical]), which
// [Decode] turns back into the same triangles in the same order.
//
// Units are metres and Y is up, as in glTF and package geom. Positions are
// multiples of [Quantum] and spawn yaws of the wire's yaw step, so that the
// level a program holds is exactly the one its digest describes.
package level
