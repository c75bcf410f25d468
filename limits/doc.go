// Package limits caps what one network source (an IP address) may hold and
// do on a server: connections still in their handshake or before their
// Join, joined players, rooms its joins created that are still open, and
// the rate of joins. A source over a cap is refused at once; nothing it
// does costs a player from another source its seat.
//
// Sources are IP addresses, not ports: one client reconnecting, or many
// behind one NAT, are one source (set the caps for the largest group of
// players that may share an address: a LAN, a mobile carrier's NAT).
package limits
