package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == hogFlag {
		hog()
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// config is what the command line sets.
type config struct {
	target    float64       // the 1-minute load average to hold
	fixed     int           // hogs to run regardless of the load; -1: follow target
	maxHogs   int           // the most hogs ever running
	warmup    bool          // wait for the load before starting the command
	warmupMax time.Duration // the longest wait
	command   []string
	proc      procFiles
	exe       string // the binary the hogs run
}

// The controller samples the runnable tasks every sampleEvery and sets the
// hogs every adjustEvery from the mean of the last window samples.
const (
	sampleEvery = 200 * time.Millisecond
	adjustEvery = time.Second
	window      = 25 // 5 s
)

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("underload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: underload [flags] -- command [args...]")
		fs.PrintDefaults()
	}
	cfg := config{proc: linuxProc}
	fs.Float64Var(&cfg.target, "load", 8, "the 1-minute load average to hold while the command runs")
	fs.IntVar(&cfg.fixed, "hogs", -1, "run this many hogs whatever the load (-1: as many as hold -load)")
	fs.IntVar(&cfg.maxHogs, "max-hogs", 0, "the most hogs at once (0: twice -load)")
	fs.BoolVar(&cfg.warmup, "warmup", true, "start the command only once the 1-minute load average is near -load")
	fs.DurationVar(&cfg.warmupMax, "warmup-max", 3*time.Minute, "the longest -warmup waits")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg.command = fs.Args()
	if len(cfg.command) == 0 {
		fs.Usage()
		return 2
	}
	if cfg.target <= 0 {
		fmt.Fprintf(stderr, "underload: -load must be positive, not %g\n", cfg.target)
		return 2
	}
	if cfg.maxHogs <= 0 {
		cfg.maxHogs = int(2*cfg.target + 0.5)
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "underload: finding its own binary for the hogs: %v\n", err)
		return 1
	}
	cfg.exe = exe
	code, err := underload(cfg, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "underload: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// underload runs cfg.command under the load and returns its exit status.
func underload(cfg config, stdout, stderr io.Writer) (int, error) {
	if _, err := cfg.proc.loadAvg1(); err != nil {
		return 1, err
	}
	if _, err := cfg.proc.runnable(); err != nil {
		return 1, err
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)

	// The controller's goroutine owns the hogs, and stops them when it
	// returns; every way out of here waits for that.
	ctl := newController(cfg, &hogs{exe: cfg.exe})
	ctx, cancel := context.WithCancel(context.Background())
	ctlDone := make(chan error, 1)
	go func() { ctlDone <- ctl.run(ctx) }()
	stopped := false
	defer func() {
		cancel()
		if !stopped {
			<-ctlDone
		}
	}()

	if cfg.warmup {
		fmt.Fprintf(stderr, "underload: waiting (at most %v) for the 1-minute load average to reach %.1f\n", cfg.warmupMax, 0.95*cfg.target)
		deadline := time.After(cfg.warmupMax)
	wait:
		for {
			select {
			case <-ctl.warm:
				break wait
			case <-deadline:
				fmt.Fprintf(stderr, "underload: the load average is %.2f after %v; starting anyway\n", ctl.lastLoad1(), cfg.warmupMax)
				break wait
			case err := <-ctlDone:
				stopped = true
				return 1, err
			case s := <-signals:
				return 1, fmt.Errorf("%v while warming up", s)
			}
		}
	}

	cmd := exec.Command(cfg.command[0], cfg.command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	start := time.Now()
	ctl.record(true)
	if err := cmd.Start(); err != nil {
		return 1, fmt.Errorf("starting %q: %w", cfg.command[0], err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
wait2:
	for {
		select {
		case werr = <-waited:
			break wait2
		case s := <-signals:
			cmd.Process.Signal(s)
		case err := <-ctlDone:
			stopped = true
			cmd.Process.Kill()
			<-waited
			return 1, err
		}
	}
	ctl.record(false)
	cancel()
	<-ctlDone
	stopped = true

	load, hogCount := ctl.seen()
	fmt.Fprintf(stderr, "underload: %s ran %v; 1-minute load average %s (target %.1f, %d samples); hogs %s\n",
		cfg.command[0], time.Since(start).Round(time.Second), load, cfg.target, load.n, hogCount)
	code := 0
	if werr != nil {
		var exit *exec.ExitError
		if !errors.As(werr, &exit) {
			return 1, werr
		}
		code = exit.ExitCode()
		if code < 0 {
			code = 1
		}
	}
	return code, nil
}
