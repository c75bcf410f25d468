// Package netshim is a packet-level network impairment relay: a UDP relay on
// loopback that sits between QUIC clients and a QUIC server and adds latency,
// jitter, loss and reordering, configured separately for each direction.
//
// Clients dial [Shim.Addr] instead of the server. For every client address the
// shim opens its own socket towards the server, so the server sees one peer
// per client, exactly as it would without the shim. Random decisions come
// from a seeded generator, so a run with the same seed and the same packet
// arrival order makes the same decisions.
//
// The shim exists for tests and for the `rewind demo` command. It is not a
// general-purpose proxy: both the address it listens on and the server it
// relays to must be loopback addresses, and it never sends a packet anywhere
// else.
package netshim
