package channel

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/rewind-gg/rewind/protocol"
)

// A sealed packet is a header, then the AEAD's sealing of the payload with
// the header as additional data:
//
//	marker  u8   protocol.Version: its two high bits are 0, so QUIC stacks
//	             (quic-go, RFC 9443) see a packet that is not QUIC
//	session u32  the session id of the Welcome, big-endian
//	seq     u64  the sender's sequence number in this direction, big-endian
//	sealed  …    AES-256-GCM(key, nonce = 0x00000000 ‖ seq, ad = header)
const (
	HeaderSize = 1 + 4 + 8
	TagSize    = 16
	// Overhead is what sealing adds to a payload.
	Overhead = HeaderSize + TagSize
	// MaxPacket is the largest sealed packet: a protocol.MaxDatagram payload
	// sealed. With UDP's 8 and IPv6's 40 bytes of headers it fits the IPv6
	// minimum MTU of 1280.
	MaxPacket = protocol.MaxDatagram + Overhead
	// KeySize is the size of a direction's key.
	KeySize = 32
)

// Key is one direction's AES-256-GCM key.
type Key [KeySize]byte

// Reason is why a packet was dropped, for the drop counters.
type Reason uint8

// Reasons a sealed packet is dropped.
const (
	ReasonShort   Reason = iota + 1 // shorter than a header and a tag, or over MaxPacket
	ReasonMarker                    // another protocol version
	ReasonSession                   // no session of that id (here)
	ReasonAuth                      // it does not authenticate: tampered, or another key
	ReasonReplay                    // its sequence number was seen, or is too old
	ReasonQueue                     // authentic, but its session had no room for it (or an older one)
	// ReasonQUICQueue is a QUIC packet the Demux could not hand to the QUIC
	// transport: its queue was full (or the packet was cut).
	ReasonQUICQueue
)

// String is the reason's label in metrics.
func (r Reason) String() string {
	switch r {
	case ReasonShort:
		return "sealed_short"
	case ReasonMarker:
		return "sealed_version"
	case ReasonSession:
		return "sealed_session"
	case ReasonAuth:
		return "sealed_auth"
	case ReasonReplay:
		return "sealed_replay"
	case ReasonQueue:
		return "sealed_queue"
	case ReasonQUICQueue:
		return "quic_queue"
	}
	return "sealed_unknown"
}

// DropError is a packet that was dropped, and why.
type DropError struct{ Reason Reason }

func (e *DropError) Error() string { return "channel: packet dropped: " + e.Reason.String() }

var (
	errShort   = &DropError{ReasonShort}
	errMarker  = &DropError{ReasonMarker}
	errSession = &DropError{ReasonSession}
	errAuth    = &DropError{ReasonAuth}
	errReplay  = &DropError{ReasonReplay}
)

// ReasonOf returns the reason of a *DropError, 0 for any other error.
func ReasonOf(err error) Reason {
	var de *DropError
	if errors.As(err, &de) {
		return de.Reason
	}
	return 0
}

// Session returns the session id of a packet that looks sealed.
func Session(p []byte) (uint32, error) {
	switch {
	case len(p) < HeaderSize+TagSize || len(p) > MaxPacket:
		return 0, errShort
	case p[0] != protocol.Version:
		return 0, errMarker
	}
	return binary.BigEndian.Uint32(p[1:5]), nil
}

func newAEAD(k Key) (cipher.AEAD, error) {
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, fmt.Errorf("channel: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("channel: %w", err)
	}
	return aead, nil
}

// setNonce writes the nonce of seq into n: 4 zero bytes, then seq.
func setNonce(n *[12]byte, seq uint64) { binary.BigEndian.PutUint64(n[4:], seq) }

// Sealer seals one direction's packets of a session. It is not safe for
// concurrent use: one goroutine sends.
type Sealer struct {
	aead    cipher.AEAD
	session uint32
	seq     uint64   // the next packet's
	nonce   [12]byte // a field, not a local: passed to the AEAD, a local would escape
}

// NewSealer returns a Sealer for a session's direction.
func NewSealer(k Key, session uint32) (*Sealer, error) {
	aead, err := newAEAD(k)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead, session: session}, nil
}

// Seal appends to dst the packet carrying payload, with the next sequence
// number. It allocates nothing when dst has the room.
func (s *Sealer) Seal(dst, payload []byte) []byte {
	start := len(dst)
	dst = append(dst, protocol.Version)
	dst = binary.BigEndian.AppendUint32(dst, s.session)
	dst = binary.BigEndian.AppendUint64(dst, s.seq)
	setNonce(&s.nonce, s.seq)
	s.seq++
	return s.aead.Seal(dst, s.nonce[:], payload, dst[start:start+HeaderSize])
}

// Opener opens one direction's packets of a session, each once. It is not
// safe for concurrent use: one goroutine receives.
type Opener struct {
	aead    cipher.AEAD
	session uint32
	replay  Replay
	nonce   [12]byte
}

// NewOpener returns an Opener for a session's direction.
func NewOpener(k Key, session uint32) (*Opener, error) {
	aead, err := newAEAD(k)
	if err != nil {
		return nil, err
	}
	return &Opener{aead: aead, session: session}, nil
}

// Open authenticates a packet and appends its payload to dst, with its
// sequence number and whether it is the newest yet. A packet is opened at
// most once (the replay window); a *DropError says why one was not. It
// allocates nothing when dst has the room.
func (o *Opener) Open(dst, p []byte) ([]byte, uint64, bool, error) {
	id, err := Session(p)
	if err != nil {
		return dst, 0, false, err
	}
	if id != o.session {
		return dst, 0, false, errSession
	}
	seq := binary.BigEndian.Uint64(p[5:HeaderSize])
	if !o.replay.Fresh(seq) {
		return dst, seq, false, errReplay
	}
	setNonce(&o.nonce, seq)
	out, err := o.aead.Open(dst, o.nonce[:], p[HeaderSize:], p[:HeaderSize])
	if err != nil {
		return dst, seq, false, errAuth
	}
	newest := o.replay.Mark(seq)
	return out, seq, newest, nil
}

// ReplayWindow is how many sequence numbers back a packet may still be
// accepted (once): reordering within it is harmless.
const ReplayWindow = 256

// Replay remembers which of the last ReplayWindow sequence numbers were
// received (netcode.io's replay protection).
type Replay struct {
	newest uint64
	seen   [ReplayWindow]uint64 // seq+1 of the packet in each slot; 0: none
	any    bool
}

// Fresh reports whether seq may be accepted: not older than the window, not
// seen.
func (r *Replay) Fresh(seq uint64) bool {
	if r.any && seq+ReplayWindow <= r.newest {
		return false
	}
	return r.seen[seq%ReplayWindow] != seq+1
}

// Mark records seq as received and reports whether it is the newest yet.
func (r *Replay) Mark(seq uint64) bool {
	r.seen[seq%ReplayWindow] = seq + 1
	if !r.any || seq > r.newest {
		r.newest, r.any = seq, true
		return true
	}
	return false
}
