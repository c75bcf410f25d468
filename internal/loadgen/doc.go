// Package loadgen plays many light clients against a server from one
// process, the way production traffic reaches it: every client has its own
// QUIC connection (keep-alives as client.Client sends them) and its own
// random phase within the tick, so its packets arrive spread over the tick
// as they do from players on the internet, not in one burst.
//
// A light client does not predict or render: it joins, sends an input
// packet a tick on the sealed channel (scripted movement, aim and fire,
// every input the server has not acknowledged, with the snapshot
// acknowledgement), and reads its snapshots' headers. The server does for
// it exactly the work it does for a real client. To stay cheap enough that
// one core can load another, a Fleet sends all its clients' sealed packets
// from one UDP socket in batches (sendmmsg) and reads them in batches
// (recvmmsg); the server sees each client's sealed channel move to that
// socket after its first input (an address migration, which the protocol
// allows and counts).
//
// Echo servers and floor clients measure what the same traffic costs with
// nothing but plain UDP or quic-go DATAGRAMs: the floors a server's cost
// is compared with.
package loadgen
