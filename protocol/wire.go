package protocol

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Version is the protocol version: the first byte of every datagram and a
// field of Join and Welcome. A peer speaking another version is refused.
const Version = 6

// ALPN is the TLS application protocol a Rewind connection negotiates.
const ALPN = "rewind/6"

// Datagram channels, as bits of Join.Channels and values of
// Welcome.Channel: how inputs and snapshots travel.
const (
	// ChannelQUIC carries them as QUIC DATAGRAM frames (RFC 9221): the
	// fallback, under QUIC's congestion control.
	ChannelQUIC = 1 << 0
	// ChannelSealed carries them as UDP packets beside QUIC on the same
	// socket, sealed with AES-256-GCM under keys from the connection's TLS
	// exporter (docs/protocol.md, "The sealed channel"; package channel).
	ChannelSealed = 1 << 1
)

// MaxDatagram is the largest datagram either side sends, in bytes: it fits a
// QUIC packet on any path with the IPv6 minimum MTU.
const MaxDatagram = 1200

// NoTick marks an absent tick (no snapshot received, no input processed).
const NoTick = math.MaxUint32

// Reason classifies a malformed message, for the drop counters.
type Reason uint8

// Reasons a message is dropped.
const (
	ReasonShort    Reason = iota + 1 // shorter than its fields
	ReasonLong                       // longer than its fields, or over MaxDatagram
	ReasonVersion                    // another protocol version
	ReasonType                       // unknown message type
	ReasonValue                      // a field out of range
	ReasonBaseline                   // a snapshot against a baseline the client does not have
)

// String returns the reason's metric label.
func (r Reason) String() string {
	switch r {
	case ReasonShort:
		return "truncated"
	case ReasonLong:
		return "oversized"
	case ReasonVersion:
		return "version"
	case ReasonType:
		return "type"
	case ReasonValue:
		return "value"
	case ReasonBaseline:
		return "baseline"
	}
	return "unknown"
}

// DecodeError is a malformed message.
type DecodeError struct {
	Reason Reason
	What   string // the message or field, for logs
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("protocol: %s: %s", e.What, e.Reason)
}

func fail(r Reason, what string) error { return &DecodeError{Reason: r, What: what} }

// reader reads fields from a message. The first failure sticks: later reads
// return zero values, and err reports the first.
type reader struct {
	b   []byte
	off int
	err error
	msg string
}

func (r *reader) fail(reason Reason, field string) {
	if r.err == nil {
		r.err = fail(reason, r.msg+"."+field)
	}
}

func (r *reader) take(n int, field string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b)-r.off < n {
		r.fail(ReasonShort, field)
		return nil
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p
}

func (r *reader) u8(field string) uint8 {
	if p := r.take(1, field); p != nil {
		return p[0]
	}
	return 0
}

// bool reads a byte that must be 0 or 1.
func (r *reader) bool(field string) bool {
	switch r.u8(field) {
	case 0:
		return false
	case 1:
		return true
	}
	r.fail(ReasonValue, field)
	return false
}

func (r *reader) u16(field string) uint16 {
	if p := r.take(2, field); p != nil {
		return binary.BigEndian.Uint16(p)
	}
	return 0
}

func (r *reader) u32(field string) uint32 {
	if p := r.take(4, field); p != nil {
		return binary.BigEndian.Uint32(p)
	}
	return 0
}

func (r *reader) u64(field string) uint64 {
	if p := r.take(8, field); p != nil {
		return binary.BigEndian.Uint64(p)
	}
	return 0
}

// f64 reads a float64 and refuses NaN and infinities.
func (r *reader) f64(field string) float64 {
	f := math.Float64frombits(r.u64(field))
	if math.IsNaN(f) || math.IsInf(f, 0) {
		r.fail(ReasonValue, field)
		return 0
	}
	return f
}

func (r *reader) f32(field string) float32 {
	f := math.Float32frombits(r.u32(field))
	if f != f || math.IsInf(float64(f), 0) {
		r.fail(ReasonValue, field)
		return 0
	}
	return f
}

func (r *reader) uvarint(field string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		if n == 0 {
			r.fail(ReasonShort, field)
		} else {
			r.fail(ReasonValue, field)
		}
		return 0
	}
	r.off += n
	return v
}

func (r *reader) varint(field string) int64 {
	u := r.uvarint(field)
	return int64(u>>1) ^ -int64(u&1)
}

// i32 reads a zigzag varint that must fit an int32.
func (r *reader) i32(field string) int32 {
	v := r.varint(field)
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.fail(ReasonValue, field)
		return 0
	}
	return int32(v)
}

// bytes16 reads bytes of at most max, prefixed by their length as a u16.
func (r *reader) bytes16(field string, max int) []byte {
	n := int(r.u16(field))
	if n > max {
		r.fail(ReasonValue, field)
		return nil
	}
	return r.take(n, field)
}

// str reads a string of at most max bytes, prefixed by its length as a u8.
func (r *reader) str(field string, max int) string {
	n := int(r.u8(field))
	if n > max {
		r.fail(ReasonValue, field)
		return ""
	}
	return string(r.take(n, field))
}

// end reports trailing bytes as an error.
func (r *reader) end() error {
	if r.err == nil && r.off != len(r.b) {
		r.err = fail(ReasonLong, r.msg)
	}
	return r.err
}

func appendU16(b []byte, v uint16) []byte   { return binary.BigEndian.AppendUint16(b, v) }
func appendU32(b []byte, v uint32) []byte   { return binary.BigEndian.AppendUint32(b, v) }
func appendU64(b []byte, v uint64) []byte   { return binary.BigEndian.AppendUint64(b, v) }
func appendF64(b []byte, f float64) []byte  { return appendU64(b, math.Float64bits(f)) }
func appendF32(b []byte, f float32) []byte  { return appendU32(b, math.Float32bits(f)) }
func appendVarint(b []byte, v int64) []byte { return binary.AppendUvarint(b, uint64(v<<1^(v>>63))) }

// appendStr appends a u8-length-prefixed string, truncated to max bytes.
func appendStr(b []byte, s string, max int) []byte {
	if len(s) > max {
		s = s[:max]
	}
	b = append(b, uint8(len(s)))
	return append(b, s...)
}
