//go:build race

package systems

const raceEnabled = true
