// Package channel carries a session's real-time datagrams (inputs up,
// snapshots down) in one of two ways, behind the Conn interface at the
// client:
//
//   - Sealed: UDP packets beside QUIC on the connection's own socket and port
//     (at the client, quic.Transport's WriteTo and ReadNonQUICPacket; at the
//     server, the Demux reads the socket), sealed with
//     AES-256-GCM under per-direction keys from the QUIC connection's TLS
//     exporter. Each packet carries the session id the Welcome gave and a
//     sequence number, which is the nonce; the receiver keeps a replay
//     window. A client whose NAT rebinds keeps playing: the server sends
//     to a new address once the client answers a path challenge from it
//     (path.go), and sends an address it has not validated nothing but
//     challenges, at most three times the bytes it received from it.
//     Nothing here is congestion-controlled: the game limits its own rate,
//     as Source, Overwatch and netcode.io do.
//   - QUIC: DATAGRAM frames (RFC 9221) on the connection, the fallback.
//
// At the server, the sealed channel is built for many sessions on one
// socket: the Demux reads the socket in batches (recvmmsg), opens each
// sealed packet on its goroutine and hands the payload to its session's
// function there, and passes the QUIC packets to the server's QUIC
// transport (quic.Transport{Conn: demux.QUIC()}); a Writer writes a Batch
// of sealed packets (a room's snapshots of a tick) in one sendmmsg.
//
// The packet layout, byte by byte, with test vectors, is in docs/protocol.md
// ("The sealed channel").
package channel
