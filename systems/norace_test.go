//go:build !race

package systems

const raceEnabled = false
