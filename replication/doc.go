// Package replication is what a room knows of each client beyond the
// world it simulates, and what it sends the client: the replication layer
// between a room's Simulation and a session's datagram channel.
//
// A [Replicator] holds a room's settings ([Config]); each seated player has
// a [Client], which
//
//   - keeps the client's delta baselines: the states its last
//     protocol.Baselines snapshots would have left it with, when each went
//     out, and the newest it acknowledged (docs/protocol.md, "Snapshots");
//   - measures the client's round trip from a snapshot to the first input
//     that acknowledges it, smoothed as RFC 6298 smooths TCP's ([RTT]), and
//     grants no more than QUIC's own estimate plus a margin, flagging a
//     client whose two estimates disagree for long (a fake-lag signature);
//   - bounds the view lag each input may claim from what the server
//     measured of the client at the input's arrival ([Client.OnInput],
//     docs/protocol.md, "View lag");
//   - reports the margin of the client's inputs' first arrivals, which the
//     client steers its clock by;
//   - repeats hit confirmations in its snapshots until one that carried
//     them is acknowledged ([Client.Confirm]);
//   - halves the snapshot rate while flow control ([Flow]) finds the path
//     bad;
//   - encodes each snapshot against the newest acknowledged baseline and
//     sends it on its [Channel].
//
// A Channel is one of the two datagram channels of package channel as the
// room sends on it: QUIC DATAGRAMs, through a session's [Queue] of
// buffers, or the sealed channel, through the room's [Sealer], which seals
// a tick's snapshots into one channel.Batch. The room does not tell them
// apart. Input datagrams reach the room through a session's [Slot].
//
// Nothing here blocks, and the per-tick path allocates nothing. A Client
// and the Replicator belong to the room's goroutine; a Slot and a Queue
// are shared with a session's goroutines, a Flow belongs to its receiver.
package replication
