// Package bots provides players that play by themselves and the scoring of
// their shots: a Bot (an input source for the client SDK that navigates a
// level's waypoints, aims and fires) and a Tally (which enemy each shot hit
// on the player's screen, and whether the server agreed). The demo, `rewind
// bots`, the soak and the tests run them; a game client needs neither.
package bots
