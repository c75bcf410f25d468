// Package protocol is Rewind's wire format, shared by the server and the Go
// client SDK and documented byte by byte in docs/protocol.md.
//
// A client connects over QUIC (ALPN "rewind/2"), opens one bidirectional
// stream for control messages (Join, Welcome, Reject, game events), and
// exchanges unreliable QUIC DATAGRAMs (RFC 9221) of at most MaxDatagram
// bytes: inputs from the client, snapshots from the server.
//
// Every decoder bounds-checks its input and reports a *DecodeError whose
// Reason labels the drop for metrics; no input makes a decoder panic (see the
// fuzz tests). Encoders append to caller-owned buffers and allocate nothing.
package protocol
