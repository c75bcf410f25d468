//go:build race

package channel

// raceEnabled: the race detector's instrumentation allocates where the
// code does not.
const raceEnabled = true
