// Package input provides a player's input for one tick as the server
// applies it (the sticks, the aim, the buttons, the weapon and the shot
// counter) and the view time a client claims with it.
//
// It is plain data shared by the server's systems, the wire (package
// protocol) and the client SDK, and imports nothing of the server: a client
// builds with it alone.
package input
