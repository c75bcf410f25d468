// Package server hosts Rewind matches over QUIC.
//
// A [Server] listens for QUIC connections (ALPN "rewind/2"), reads each
// client's Join from its control stream and admits it: a connect token
// signed by the matchmaker (package token) says who the player is and which
// room it joins, and per-source caps (package limits) bound what one address
// may hold; without the matchmaker's keys the server runs in an open
// development mode, on loopback only. A room is one goroutine that owns one
// systems.Simulation (one arche World, Dino Squad's "one physics scene per
// room"): it ticks at the configured rate, takes inputs from its sessions'
// input slots, bounds every claimed view lag by what the server measured of
// the client, and sends every client a delta-compressed snapshot of the
// world and the game events that concern it. What the room knows of each
// client beyond the world (baselines, round trips, the view-lag bound,
// margins, confirmations, the halved rate) and the two datagram channels
// its snapshots take are package replication's; the room owns the world
// and its members. Nothing in the tick blocks on the network: sessions have
// their own goroutines and bounded queues, and whatever does not fit is
// dropped and counted.
//
// A seat is held by playing: a player that sends no input, or inputs for
// too few of the ticks (package coverage), loses it. A room closes when its
// match ends (match.duration), when it has been empty for
// match.empty_timeout (match.unplayed_timeout for one a join created that
// nobody has played in), or when the server drains or shuts down; it then
// writes its result (package results). Under Agones (package
// agones) the server reports Ready, Health while its room loops tick, opens
// the allocated match's room, reports players and, serving one match,
// shuts the GameServer down after it.
//
// Configuration comes from defaults, a TOML or YAML file, REWIND_*
// environment variables and flags, in that order ([LoadConfig]); the admin
// HTTP port serves Prometheus metrics, health, readiness and the rooms API,
// and Go's profiler has a listener of its own.
package server
