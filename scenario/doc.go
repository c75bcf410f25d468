// Package scenario runs lag-compensation scenarios: scripted matches in the
// JSON format of docs/scenario.md (the public contract). A scenario scripts
// where every player stands at every tick, how far behind each one sees, and
// the shots fired; [Run] drives the real simulation (package systems: the
// same World, systems, history, time machine and buckets as the server) with
// those inputs and reports, for every shot, what the server decided.
//
// [Parse] validates strictly: every error names the offending field, such as
// shots[3].weapon: unknown weapon "rockt".
package scenario
