// Package splitmix provides the SplitMix64 finalizer, the bit mixer behind
// the pellet spread every client must reproduce (docs/protocol.md) and the
// network shim's seeded streams.
package splitmix

// Mix is the SplitMix64 finalizer: a cheap bijective mixing of x's bits.
func Mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
