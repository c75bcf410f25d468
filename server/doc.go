// Package server hosts Rewind matches over QUIC.
//
// A [Server] listens for QUIC connections (ALPN "rewind/1"), reads each
// client's Join from its control stream and places it in a room, created on
// demand. A room is one goroutine that owns one systems.Simulation (one arche
// World, Dino Squad's "one physics scene per room"): it ticks at the
// configured rate, takes inputs from its sessions through a channel, and
// sends every client a delta-compressed snapshot of the world and the game
// events that concern it. Nothing in the tick blocks on the network: sessions
// have their own goroutines and bounded queues, and whatever does not fit is
// dropped and counted.
//
// Configuration comes from defaults, a TOML or YAML file, REWIND_*
// environment variables and flags, in that order ([LoadConfig]); the admin
// HTTP port serves Prometheus metrics and pprof.
package server
