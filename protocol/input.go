package protocol

import "github.com/rewind-gg/rewind/input"

// Datagram types, the second byte of every datagram.
const (
	DatagramInput    = 1 // client → server
	DatagramSnapshot = 2 // server → client
	DatagramClose    = 3 // server → client, on the sealed channel: the connection closes
	// DatagramPathChallenge and DatagramPathResponse validate a client's new
	// address on the sealed channel (path.go).
	DatagramPathChallenge = 4 // server → client
	DatagramPathResponse  = 5 // client → server
)

// MaxInputs is the most inputs one input datagram carries (the redundancy cap).
const MaxInputs = 32

// inputHeader and inputSize are the input datagram's fixed part and the size
// of one input, in bytes.
const (
	inputHeader = 11
	inputSize   = 12
)

// Input is one tick's input, quantised as on the wire.
type Input struct {
	MoveX, MoveZ int8   // strafe right, forward (see AxisValue)
	Yaw          uint16 // see YawValue
	Pitch        int16  // see PitchValue
	Buttons      uint8
	Weapon       uint8
	Shot         uint16 // the client's shot counter, echoed in hit events
	ViewLag      uint16 // ticks behind this input's tick the client was rendering, in 1/256 tick
}

// Value is the simulation's input of the given tick: exactly what the server
// applies, so what a client predicts with.
func (q *Input) Value(tick int64) input.Input {
	return input.Input{Tick: tick, MoveX: AxisValue(q.MoveX), MoveZ: AxisValue(q.MoveZ),
		Yaw: YawValue(q.Yaw), Pitch: PitchValue(q.Pitch), Buttons: q.Buttons,
		Weapon: uint16(q.Weapon), Shot: uint32(q.Shot), ViewTime: input.ViewTimeOf(float64(tick) - LagValue(q.ViewLag))}
}

// InputPacket is an input datagram: the inputs for ticks Newest−Count+1 ..
// Newest (oldest first), every one the server has not acknowledged yet, up to
// MaxInputs; and the newest snapshot the client has received.
type InputPacket struct {
	Newest      uint32 // the tick of the last input
	SnapshotAck uint32 // the newest snapshot tick received, NoTick for none
	Count       int
	Inputs      [MaxInputs]Input
}

// Tick returns the tick of Inputs[i].
func (p *InputPacket) Tick(i int) uint32 { return p.Newest - uint32(p.Count-1-i) }

// AppendInputPacket appends an input datagram.
func AppendInputPacket(b []byte, p *InputPacket) []byte {
	n := min(max(p.Count, 0), MaxInputs)
	b = append(b, Version, DatagramInput)
	b = appendU32(b, p.Newest)
	b = appendU32(b, p.SnapshotAck)
	b = append(b, uint8(n))
	for i := range n {
		in := &p.Inputs[i]
		b = append(b, byte(in.MoveX), byte(in.MoveZ))
		b = appendU16(b, in.Yaw)
		b = appendU16(b, uint16(in.Pitch))
		b = append(b, in.Buttons, in.Weapon)
		b = appendU16(b, in.Shot)
		b = appendU16(b, in.ViewLag)
	}
	return b
}

// DatagramType checks a datagram's version and returns its type.
func DatagramType(d []byte) (uint8, error) {
	switch {
	case len(d) < 2:
		return 0, fail(ReasonShort, "datagram")
	case len(d) > MaxDatagram:
		return 0, fail(ReasonLong, "datagram")
	case d[0] != Version:
		return 0, fail(ReasonVersion, "datagram")
	case d[1] < DatagramInput || d[1] > DatagramPathResponse:
		return 0, fail(ReasonType, "datagram")
	}
	return d[1], nil
}

// DecodeInputPacket decodes an input datagram into p.
func DecodeInputPacket(d []byte, p *InputPacket) error {
	typ, err := DatagramType(d)
	if err != nil {
		return err
	}
	if typ != DatagramInput {
		return fail(ReasonType, "input")
	}
	r := reader{b: d[2:], msg: "input"}
	p.Newest = r.u32("newest")
	p.SnapshotAck = r.u32("snapshot_ack")
	p.Count = int(r.u8("count"))
	if r.err == nil && (p.Count == 0 || p.Count > MaxInputs) {
		return fail(ReasonValue, "input.count")
	}
	if r.err == nil && p.Newest < uint32(p.Count-1) {
		return fail(ReasonValue, "input.newest")
	}
	for i := 0; i < p.Count && r.err == nil; i++ {
		in := &p.Inputs[i]
		in.MoveX, in.MoveZ = int8(r.u8("move_x")), int8(r.u8("move_z"))
		in.Yaw, in.Pitch = r.u16("yaw"), int16(r.u16("pitch"))
		in.Buttons, in.Weapon = r.u8("buttons"), r.u8("weapon")
		in.Shot, in.ViewLag = r.u16("shot"), r.u16("view_lag")
	}
	return r.end()
}
