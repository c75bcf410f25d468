// Package ticks converts spans of time between durations and the ticks of
// a fixed-rate simulation, and reads a span given either way: settings that
// were once counted in ticks (a lag-compensation window of 30 ticks is 1.5 s
// at 20 Hz but 0.5 s at 60 Hz) are durations now, and a bare number still
// means ticks so that older command lines keep working.
package ticks
