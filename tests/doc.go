// Package tests holds Rewind's end-to-end tests: a real server, real Go
// clients and bots, real QUIC on loopback, network conditions from the
// netshim relay. They use only the public APIs.
package tests
