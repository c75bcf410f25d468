// Command rewind is Rewind's one binary: play a demo match (rewind demo), host
// matches (rewind serve), drive bots against a server (rewind bots), run
// lag-compensation scenarios (rewind scenario FILE.json), re-simulate a
// recorded match (rewind replay), sweep lag-compensation settings over
// recorded matches (rewind tune), soak a server in rooms of bots that come
// and go and fail on growth or tick overruns (rewind soak), read and check a
// level made in an editor (rewind level inspect), make token keys and tokens
// for development (rewind keygen, rewind token), and say what it is (rewind
// version).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// exitError carries a process exit status and the one line to print for it
// (none when the command has logged why).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// run executes the command line and returns the exit status. It is main
// without the process, so tests run the real command in-process.
func run(args []string, stdout, stderr io.Writer) int {
	root := &cobra.Command{
		Use:           "rewind",
		Short:         "Rewind: an authoritative game server with lag compensation for competitive shooters",
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newScenarioCmd(stdout), newServeCmd(stdout, stderr), newBotsCmd(stdout, stderr), newDemoCmd(stdout, stderr),
		newReplayCmd(stdout), newTuneCmd(stdout, stderr), newViewCmd(stdout), newSoakCmd(stdout, stderr),
		newLevelCmd(stdout), newKeygenCmd(stdout), newTokenCmd(stdout), newVersionCmd(stdout))
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, ee.msg)
		}
		return ee.code
	}
	// Usage errors (unknown command or flag, bad flag value).
	fmt.Fprintf(stderr, "rewind: %v\n", err)
	return 2
}
