// Package arsenal provides the rules of carrying and using weapons: what a
// player carries, and when a weapon may fire (its fire interval or
// cooldown, its magazine, its reload). The server enforces them on every
// fire command, and a client runs the same functions to predict what the
// server will accept, so that it never sends a shot the server would
// refuse.
//
// It is plain data and plain functions, and imports nothing of the server.
package arsenal
