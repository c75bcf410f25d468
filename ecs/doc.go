// Package ecs holds Rewind's entity-component data: the component types every
// system reads and writes, the per-room resources (clock, command queues,
// events), and the construction of a room's arche World.
//
// Components are plain data, following Overwatch's ECS rules: no methods beyond
// trivial helpers, no references to systems. Behaviour lives in the systems
// (package systems) and in plain functions shared by them (packages lagcomp,
// weapons). One World belongs to one room and is touched only by that room's
// goroutine.
//
// Entity and World are aliases of the arche types, so other packages need not
// import arche's ecs package under a second name.
package ecs
