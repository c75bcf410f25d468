package token

import "fmt"

// Reason classifies why a token is rejected, for logs and metrics.
type Reason uint8

// Reasons a token is rejected.
const (
	Malformed    Reason = iota + 1 // truncated, oversized, a bad field, an unknown version, trailing bytes
	UnknownKey                     // the key id is not among the verifier's keys
	BadSignature                   // the signature does not verify with the key the token names
	Expired                        // now >= expires + skew
	NotYetValid                    // now < not_before - skew
	TooLong                        // expires - not_before > MaxLifetime
	Replayed                       // the nonce was seen before, in a token that has not yet expired
	CacheFull                      // the verifier holds Capacity unexpired nonces and will not forget one
)

// String returns the reason's metric label, such as "bad_signature".
func (r Reason) String() string {
	switch r {
	case Malformed:
		return "malformed"
	case UnknownKey:
		return "unknown_key"
	case BadSignature:
		return "bad_signature"
	case Expired:
		return "expired"
	case NotYetValid:
		return "not_yet_valid"
	case TooLong:
		return "too_long"
	case Replayed:
		return "replayed"
	case CacheFull:
		return "cache_full"
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// An Error is a rejected token: why, for metrics, and what exactly, for logs.
type Error struct {
	Reason Reason
	Msg    string // such as "expired 2m3s ago"
}

// Error returns "token: " followed by e.Msg.
func (e *Error) Error() string { return "token: " + e.Msg }

// reject returns an *Error; its result is an error so that a nil check on
// it never meets a typed nil.
func reject(r Reason, format string, args ...any) error {
	return &Error{Reason: r, Msg: fmt.Sprintf(format, args...)}
}

func malformed(format string, args ...any) error {
	return reject(Malformed, format, args...)
}
