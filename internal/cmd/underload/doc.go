// Command underload runs a command while CPU hogs hold the machine's load
// average at a target (8 by default), and says what load the command saw:
//
//	go run ./internal/cmd/underload -- go test -count=1 ./...
//
// The project's rule is that timing-sensitive tests hold on a busy machine:
// load 8 on 2 cores. underload makes that machine. Its hogs are child
// processes of its own binary, each one goroutine spinning with GOMAXPROCS 1:
// one runnable thread each, which is what the kernel's load average counts.
//
// The load average is the machine's, not the hogs': the command under test,
// and anything else the machine runs, count towards it. Every second
// underload reads the runnable tasks (/proc/stat's procs_running and
// procs_blocked, which the kernel's load average averages), takes off its own
// hogs to learn what the rest of the machine adds, and runs target minus that
// many hogs, plus the 1-minute average's shortfall from the target so that
// a slow average catches up (the kernel's 1-minute average closes only 63%
// of a gap a minute). Before the command starts it waits until the 1-minute
// average is near the target (-warmup, at most -warmup-max), so the command
// runs under the load from its first second. -hogs runs a fixed number of
// hogs instead.
//
// When the command ends, underload prints the 1-minute load average it saw
// (sampled every second: minimum, mean, maximum) and the hogs it ran, stops
// them, and exits with the command's status. A hog also exits on its own
// when underload goes away by any means (even SIGKILL): it reads its
// standard input, a pipe from underload, and stops at its end. On SIGINT or
// SIGTERM underload passes the signal on to the command, waits for it, and
// stops the hogs.
//
// It needs Linux's /proc (loadavg, stat).
package main
