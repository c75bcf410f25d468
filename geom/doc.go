// Package geom provides the vectors, shapes and exact intersection tests that
// lag compensation is built on: rays, swept spheres and sphere/capsule overlaps
// against capsules, spheres and axis-aligned boxes.
//
// Units are metres and Y is up. All functions are pure, allocate nothing and
// treat a direction given to a ray or sweep as a unit vector; callers
// normalise once (see [Vec3.Normalize]) and pass the travel distance
// separately, so a returned t is a distance in metres along the ray.
package geom
