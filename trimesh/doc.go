// Package trimesh is a level's static collision geometry: a triangle mesh
// in a bounding-volume hierarchy, with the exact queries that movement and
// lag compensation need: a ray, a swept sphere and a swept capsule (first
// contact along a motion), and a capsule overlap (every triangle within the
// radius, for depenetration).
//
// Units are metres and Y is up, as in package geom. A direction given to a
// query is a unit vector and the travel distance is passed separately, so a
// returned t is a distance in metres.
//
// # Triangles
//
// A [Triangle] is two-sided: its winding only fixes which side is "front"
// where a query must pick one (a shape lying exactly in its plane). A
// triangle of zero area has no plane and no inside: no query's definition can
// report it, so [New] leaves it out of the tree and [Mesh.Degenerate] counts
// it, for a level inspector to warn about. Each triangle carries a [Mask] of
// bits the caller defines (a level uses one for "blocks movement" and one for
// "blocks shots"); a query considers only triangles whose mask shares a bit
// with the query's.
//
// # Results
//
// Every query is exact: it returns the first contact along the motion, not a
// sampled one, so a fast shape cannot tunnel through a thin wall. A [Hit]
// has the distance t in [0, maxT], the contact normal (unit, pointing from
// the triangle toward the query shape: the direction that pushes the shape
// out) and the index of the triangle in the slice given to New. Between
// triangles hit at the same t the lowest index wins, so results are the same
// whatever the tree's shape.
//
// A sweep (sphere or capsule) that starts within its radius of a triangle,
// touching included, reports t = 0 with the normal of the closest-point
// direction (from the closest point of the triangle to the closest point of
// the shape's core), the same push-out direction [Mesh.OverlapCapsule] gives.
// A controller therefore keeps a small gap (a skin) between its capsule and
// the level, and resolves overlaps with OverlapCapsule.
//
// # Exactness and determinism
//
// The tree only decides which triangles a query looks at; the answer for
// each triangle comes from the same per-triangle function whatever the tree,
// and a triangle is only skipped when its padded box proves it cannot be
// touched within the best distance so far. So a query gives, bit for bit,
// the answer of the brute-force loop over all triangles (the tests check
// it). The per-triangle functions use + − × ÷, math.Sqrt and math.FMA only,
// whose results Go defines exactly, so the same inputs give the same bits on
// one machine.
//
// Across processors the last bits of a query's t and normal can differ: the
// Go specification lets the compiler fuse a multiplication and an addition
// into one rounding, and it does on arm64 (and on amd64 from GOAMD64=v3), as
// it can in the movement code (docs/protocol.md tells client authors the
// same, and to compare with a tolerance). Where fusion would break a
// guarantee rather than move a last bit, explicit conversions forbid it:
// in New, so that the same triangles are kept, with the same normals, on
// every processor, and in the ray test, whose watertightness needs a vertex
// moved the same way in every triangle that shares it (its edge functions
// use math.FMA explicitly, which is exact everywhere).
//
// # Short queries
//
// Most queries of a running match are short and touch nothing: a
// projectile's step of a metre or two through open air. Besides the tree,
// New builds a coarse grid over the mesh's extent on X and Z holding, per
// cell and per mask bit, the range of heights of the triangles whose boxes
// reach into it, and the same for a quarter metre's sub-cells; a query
// whose swept box covers at most 16 cells and meets none of those ranges
// (in a cell whose range it meets, none of the sub-cells') is answered
// (nothing) without the tree. The grid only ever rules out what the tree
// would not report (a triangle's range covers the padded box the traversal
// tests), so answers are the same.
//
// # A character's neighbourhood
//
// A character's controller asks about the same square metre three or four
// times a tick, and the next tick about the one beside it; on a large level
// descending the tree from the root is most of each query's cost. A [Near]
// caches the triangles around where its queries have been: it gathers those
// whose boxes meet a query's swept box grown by a margin, answers every
// query that stays inside that box from the list, and gathers again when
// one leaves it (further ahead on the side it left across). It also answers a capsule sweep that only repeats its last
// one longer or shorter (a snap down, then the next tick's ground probe from
// the same feet) from that one's answer, except where a length or the
// contact lies within rounding's reach of the other. Its answers are the
// tree's, bit for bit: the list holds every triangle the tree could report,
// and the answer does not depend on the order of the tests.
//
// The queries allocate nothing (OverlapCapsule appends to the caller's
// slice), and a Mesh is never modified after New, so any number of
// goroutines may query one at once.
package trimesh
