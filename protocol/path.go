package protocol

// PathDataSize is the size of a path challenge's data.
const PathDataSize = 8

// PathData is a path challenge's unpredictable data, which only a receiver
// at the challenged address learns (RFC 9000, section 8.2).
type PathData [PathDataSize]byte

// pathDatagramSize is a path challenge's or response's size: version,
// type, data.
const pathDatagramSize = 2 + PathDataSize

// AppendPathChallenge appends the path challenge datagram carrying data: the
// server asks whether the client receives at the address a packet of its
// came from.
func AppendPathChallenge(b []byte, data PathData) []byte {
	return append(append(b, Version, DatagramPathChallenge), data[:]...)
}

// AppendPathResponse appends the path response datagram: the client echoes
// a challenge's data.
func AppendPathResponse(b []byte, data PathData) []byte {
	return append(append(b, Version, DatagramPathResponse), data[:]...)
}

// DecodePath decodes a path challenge or response datagram: its type and
// data.
func DecodePath(d []byte) (uint8, PathData, error) {
	typ, err := DatagramType(d)
	if err != nil {
		return 0, PathData{}, err
	}
	if typ != DatagramPathChallenge && typ != DatagramPathResponse {
		return 0, PathData{}, fail(ReasonType, "path")
	}
	var data PathData
	switch {
	case len(d) < pathDatagramSize:
		return 0, PathData{}, fail(ReasonShort, "path.data")
	case len(d) > pathDatagramSize:
		return 0, PathData{}, fail(ReasonLong, "path")
	}
	copy(data[:], d[2:])
	return typ, data, nil
}
