package protocol

// MaxCloseReason is the longest reason a close datagram carries, in bytes.
const MaxCloseReason = 255

// Close is the close datagram: the server closes the connection, with the
// code and reason of its QUIC CONNECTION_CLOSE. It travels on the sealed
// channel, in copies, because a client there sends QUIC packets only for
// its keep-alive, and QUIC sends a lost CONNECTION_CLOSE again only in
// answer to one, for three probe timeouts (docs/protocol.md, "Closing").
type Close struct {
	Code   uint8
	Reason string
}

// AppendClose appends the close datagram for c to b. A reason longer than
// MaxCloseReason is cut there.
func AppendClose(b []byte, c Close) []byte {
	reason := c.Reason[:min(len(c.Reason), MaxCloseReason)]
	b = append(b, Version, DatagramClose, c.Code, uint8(len(reason)))
	return append(b, reason...)
}

// DecodeClose decodes a close datagram.
func DecodeClose(d []byte) (Close, error) {
	typ, err := DatagramType(d)
	if err != nil {
		return Close{}, err
	}
	if typ != DatagramClose {
		return Close{}, fail(ReasonType, "close")
	}
	r := reader{b: d[2:], msg: "close"}
	c := Close{Code: r.u8("code")}
	c.Reason = r.str("reason", MaxCloseReason)
	return c, r.end()
}
