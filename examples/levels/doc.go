// Package levels holds the sample maps of examples/levels, built into any
// program that imports it: `rewind demo` plays courtyard from any directory.
// Each map's readable source is NAME.toml beside its NAME.glb, which
// `go run ./examples/levels/gen` writes from it (docs/levels.md).
package levels
