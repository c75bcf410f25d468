// Package soak runs a server under a steady, changing load for a set time
// and says whether anything grew that should not have: the soak test of
// `rewind soak` and CI.
//
// A [Soak] starts a server in this process (open development mode,
// loopback only, per-source limits raised for the bots, which all come from
// 127.0.0.1), fills Rooms rooms with Players bots each (real [client.Client]s
// driven by [bots.NewBot], over real QUIC on loopback) and keeps them
// playing for Duration. Meanwhile it churns: Churn times a second a bot
// leaves (its client closes) and a new one joins its room in its place, so
// that sessions, room entities, connections and goroutines are created and
// torn down all the time, as on a server in production.
//
// Every Interval it takes a [Sample]: the goroutines, the live heap after a
// collection, the server's tick overruns (rewind_tick_overruns_total), the
// inputs the rooms applied (from [server.Server.Stats]), joins, leaves and
// the players in the rooms. The [Report] holds the samples and its
// [Report.Verdict] fails the soak on any tick overrun, on goroutines or
// live heap grown between the warm-up and the end beyond [Bounds], on
// inputs applied that stopped growing (overall or in a room), and on bots
// that failed to join or were disconnected by the server.
package soak
