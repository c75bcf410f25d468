package protocol

import (
	"math"

	"github.com/rewind-gg/rewind/geom"
)

// Inputs travel quantised; the client predicts with the dequantised values,
// so client and server apply bit-identical inputs (Fiedler: quantise
// identically on both sides).

// QuantizeAxis maps a stick axis in [−1, 1] to a signed byte.
func QuantizeAxis(v float64) int8 {
	if !(v == v) {
		return 0
	}
	return int8(math.Round(min(max(v, -1), 1) * 127))
}

// AxisValue is a quantised axis as a float in [−1, 1] (−128 reads as −1).
func AxisValue(q int8) float64 { return max(float64(q)/127, -1) }

// QuantizeYaw maps any yaw in radians to 1/65536 of a turn.
func QuantizeYaw(yaw float64) uint16 {
	if math.IsNaN(yaw) || math.IsInf(yaw, 0) {
		return 0
	}
	turns := yaw / (2 * math.Pi)
	turns -= math.Floor(turns)
	return uint16(int64(math.Round(turns*65536)) & 0xFFFF)
}

// YawValue is a quantised yaw in radians, in [0, 2π).
func YawValue(q uint16) float64 { return float64(q) * (2 * math.Pi / 65536) }

// QuantizePitch maps a pitch in [−π/2, π/2] to a signed 16-bit value.
func QuantizePitch(pitch float64) int16 {
	if !(pitch == pitch) {
		return 0
	}
	return int16(math.Round(min(max(pitch, -math.Pi/2), math.Pi/2) / (math.Pi / 2) * 32767))
}

// PitchValue is a quantised pitch in radians (−32768 reads as −π/2).
func PitchValue(q int16) float64 { return max(float64(q)/32767, -1) * (math.Pi / 2) }

// LagScale is the quantum of view lags: 1/256 tick. A client that renders
// on this grid claims exactly the time it shows.
const LagScale = 256

// QuantizeLag maps a view lag in ticks to 1/LagScale tick, clamped to [0, 255.996].
func QuantizeLag(ticks float64) uint16 {
	if !(ticks > 0) {
		return 0
	}
	return uint16(min(math.Round(ticks*LagScale), 65535))
}

// LagValue is a quantised view lag in ticks.
func LagValue(q uint16) float64 { return float64(q) / LagScale }

// PosScale is the quantum of positions and velocities in snapshots: 1/256
// metre (and metre per second).
const PosScale = 256

// QuantizePos maps a coordinate in metres to 1/256 m, saturating at the int32
// range (±8.3 km).
func QuantizePos(v float64) int32 {
	if !(v == v) {
		return 0
	}
	return int32(min(max(math.Round(v*PosScale), math.MinInt32), math.MaxInt32))
}

// PosValue is a quantised coordinate in metres.
func PosValue(q int32) float64 { return float64(q) / PosScale }

// QuantizeVec quantises a position (or a velocity) coordinate by coordinate.
func QuantizeVec(v geom.Vec3) [3]int32 {
	return [3]int32{QuantizePos(v.X), QuantizePos(v.Y), QuantizePos(v.Z)}
}

// VecValue is a quantised position (or velocity).
func VecValue(q [3]int32) geom.Vec3 { return geom.V(PosValue(q[0]), PosValue(q[1]), PosValue(q[2])) }
