// Package weapons defines weapons and abilities as data, and the systems that
// fire them and resolve them under lag compensation.
//
// A weapon is a [Definition] of a kind. A [Kind] is Go code: it spawns the
// lag-compensated entity of a shot ([Kind.Spawn]) and resolves such entities
// inside a lag-compensation bucket, against the collision world rewound to
// the bucket's view time ([lagcomp.Resolver]). The built-in kinds are
// hitscan (a ray), projectile (a sphere flying one step per tick in its
// shooter's time, Dino Squad's option 1) and melee (an overlap sphere).
// Adding a weapon is a definition; adding a kind is a type implementing Kind
// plus one [Registry.Register] call.
package weapons
