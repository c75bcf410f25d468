// Package bench holds the capacity benchmark: how many 6v6 rooms one core
// of a server holds, measured as production sees it. The server runs in a
// process of its own with GOMAXPROCS=1 (pinned to one CPU where the
// platform allows), and the clients in other processes, each client on its
// own random phase within the tick (package internal/loadgen). The same run
// measures the floors of the same traffic: a plain UDP echo and a minimal
// quic-go DATAGRAM echo.
//
//	go test ./bench -run '^$' -bench Capacity -benchtime 1x
//
// docs/deploy.md ("Capacity") explains the figures.
package bench
