package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rewind-gg/rewind/ticks"
	"github.com/rewind-gg/rewind/view"
)

func newViewCmd(stdout io.Writer) *cobra.Command {
	var listen string
	var window ticks.Span
	cmd := &cobra.Command{
		Use:   "view FILE",
		Short: "See a recorded match's lag compensation in the browser",
		Long: `Replay a recorded match and serve a page that draws it from above: the players'
hitboxes in the present, and for every shot the hitboxes as the server rewound
them (what the shooter's screen showed), the shot's ray or flight and its
result. A timeline steps tick by tick or shot by shot (keys: ← → tick, [ ] shot,
space play, k kill-cam), marked with the hits, kills, clamps and disputed hits;
#shot=N (the Nth shot, from 1) or #tick=N in the address opens one.

--window judges the shots under another lag-compensation window than the
recorded one (a duration such as 150ms; a bare number counts ticks), as
rewind tune does: the match as it would have gone.

A running server shows the same view of its rooms live on its admin port, at
/view/, when it records (record.dir).`,
		Example: `  rewind view rec/demo-20261124T101530.123Z.rwr
  rewind view rec/demo-20261124T101530.123Z.rwr --listen 127.0.0.1:9000
  rewind view rec/demo-20261124T101530.123Z.rwr --window 150ms   # the shots under a 150 ms window`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg := view.Config{}
			if cmd.Flags().Changed("window") {
				cfg.Window = &window
			}
			return runView(ctx, args[0], listen, cfg, stdout, nil)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8077", "address to serve the page on")
	cmd.Flags().Var(&window, "window", "judge the shots under this lag-compensation window instead of the recorded one: a duration such as 150ms; a bare number counts ticks")
	return cmd
}

// runView serves the view of the recording at path until ctx ends; ready,
// when set, gets the page's address once it is served.
func runView(ctx context.Context, path, listen string, cfg view.Config, stdout io.Writer, ready func(addr string)) error {
	start := time.Now()
	src, err := view.LoadWith(path, cfg)
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	m, _ := src.Match(0)
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return &exitError{code: 1, msg: "view: --listen: " + err.Error()}
	}
	srv := &http.Server{Handler: view.Handler(src), ReadHeaderTimeout: 5 * time.Second}
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(stdout, "%s: %d ticks, %d players, %d shot decisions, replayed in %v\n", path, m.Ticks, len(m.Players), len(m.Shots),
		time.Since(start).Round(time.Millisecond))
	if m.Recorded != nil {
		fmt.Fprintf(stdout, "the shots judged under a window of %d ticks (%v at %d Hz; recorded: %d ticks)\n", m.Window,
			ticks.Duration(float64(m.Window), m.TickRate), m.TickRate, *m.Recorded)
	}
	if m.Error != "" {
		fmt.Fprintf(stdout, "the recording stops early: %s\n", m.Error)
	}
	fmt.Fprintf(stdout, "serving %s (Ctrl-C to stop)\n", url)
	if ready != nil {
		ready(url)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return &exitError{code: 1, msg: "view: " + err.Error()}
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return &exitError{code: 1, msg: "view: " + err.Error()}
	}
	return nil
}
