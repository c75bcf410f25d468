//go:build !race

package tests

// raceEnabled says the race detector instruments the tests.
const raceEnabled = false
