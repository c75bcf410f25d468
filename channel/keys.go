package channel

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
)

// ExporterLabel is the TLS exporter label (RFC 8446, section 7.5) the keys
// are derived with; the context is the session id, big-endian.
const ExporterLabel = "EXPORTER-rewind-sealed-channel"

// Keys derives a session's two keys from its QUIC connection's TLS state:
// client to server, then server to client. Both ends derive the same.
func Keys(cs *tls.ConnectionState, session uint32) (up, down Key, err error) {
	ctx := binary.BigEndian.AppendUint32(nil, session)
	m, err := cs.ExportKeyingMaterial(ExporterLabel, ctx, 2*KeySize)
	if err != nil {
		return up, down, fmt.Errorf("channel: keys: %w", err)
	}
	copy(up[:], m[:KeySize])
	copy(down[:], m[KeySize:])
	return up, down, nil
}
