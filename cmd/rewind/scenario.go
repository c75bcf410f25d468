package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/rewind-gg/rewind/scenario"
	"github.com/rewind-gg/rewind/ticks"
)

func newScenarioCmd(stdout io.Writer) *cobra.Command {
	var window ticks.Span
	var resolution int
	var noBuckets bool
	cmd := &cobra.Command{
		Use:   "scenario FILE.json",
		Short: "Run a lag-compensation scenario and print what the server decided for every shot",
		Long: `Run a scripted match (docs/scenario.md) through the real simulation, history,
time machine and buckets, and print one JSON object: an event per shot decision
and the lag-compensation stats. An invalid scenario exits 2 with one line on
stderr naming the field, and prints nothing on stdout.`,
		Example: `  rewind scenario examples/scenarios/rocket-lead.json
  rewind scenario examples/scenarios/rocket-lead.json --window 0
  rewind scenario examples/scenarios/buckets.json --no-buckets`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &exitError{code: 2, msg: "scenario: expected one argument, the scenario file (rewind scenario FILE.json)"}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var ov scenario.Overrides
			if cmd.Flags().Changed("window") {
				ov.Window = &window
			}
			if cmd.Flags().Changed("resolution") {
				ov.ViewResolution = &resolution
			}
			ov.NoBuckets = noBuckets
			out, err := runScenario(args[0], ov)
			if err != nil {
				return err
			}
			_, err = stdout.Write(out)
			return err
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: 2, msg: "scenario: " + err.Error()}
	})
	cmd.Flags().Var(&window, "window", "override lagcomp.window_ticks: the deepest rewind, a duration rounded up to whole ticks at the scenario's tick rate; a bare number counts ticks")
	cmd.Flags().IntVar(&resolution, "resolution", 0, "override lagcomp.view_resolution: bucket view times to 1/N tick (0: exact)")
	cmd.Flags().BoolVar(&noBuckets, "no-buckets", false, "override lagcomp.bucketing to false: one rewind per item (the baseline)")
	return cmd
}

// runScenario reads, validates and runs a scenario file and returns its
// output. Every failure to get a valid scenario is exit status 2.
func runScenario(path string, ov scenario.Overrides) ([]byte, error) {
	invalid := func(err error) error { return &exitError{code: 2, msg: "scenario: " + err.Error()} }
	sc, err := scenario.ParseFile(path)
	if err != nil {
		return nil, invalid(err)
	}
	if err := ov.Apply(sc); err != nil {
		return nil, invalid(err)
	}
	res, err := scenario.Run(sc)
	if err != nil {
		return nil, &exitError{code: 1, msg: err.Error()}
	}
	out, err := res.Marshal()
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("scenario: %v", err)}
	}
	return out, nil
}
