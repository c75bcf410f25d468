package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/quic-go/quic-go"
	"github.com/spf13/pflag"

	"github.com/rewind-gg/rewind/bots"
	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/protocol"
	"github.com/rewind-gg/rewind/server"
)

// bot is one bot of a fleet.
type bot struct {
	name  string
	team  uint8
	class string
	addr  string        // where it connects (the server, or its network shim)
	rtt   time.Duration // the round trip the shim adds, 0: unknown
	c     *client.Client
	tally bots.Tally // its shots scored: hits seen, confirmed, false positives
	err   error
}

// fleet runs bots and reports on them.
type fleet struct {
	bots []*bot
	wg   sync.WaitGroup
	hold atomic.Bool // set near the end: the bots stop firing so every hit event arrives
	// redials counts dials made again after a timeout.
	redials atomic.Int64
}

// holdFireBefore makes the bots stop firing quiet before ctx's deadline, so
// that the report counts the server's answer to every shot.
func (f *fleet) holdFireBefore(ctx context.Context, quiet time.Duration) {
	dl, ok := ctx.Deadline()
	if !ok {
		return
	}
	t := time.AfterFunc(time.Until(dl)-quiet, func() { f.hold.Store(true) })
	context.AfterFunc(ctx, func() { t.Stop() })
}

// addBot adds the next bot: bot-01, bot-02, … on teams 1 and 2 in turn.
func (f *fleet) addBot(addr string, rtt time.Duration) {
	i := len(f.bots)
	f.bots = append(f.bots, &bot{name: fmt.Sprintf("bot-%02d", i+1), team: uint8(1 + i%2), addr: addr, rtt: rtt})
}

// flags declares the fleet's flags, with the commands' own defaults.
func (fc *fleetConfig) flags(fs *pflag.FlagSet, classes []string, seedHelp, lvl string) {
	fs.StringSliceVar(&fc.classes, "classes", classes, "classes the bots take in turn (empty: the server's first)")
	fs.Float64Var(&fc.aimError, "aim-error", 0.03, "bots' aim error, radians (standard deviation)")
	fs.Uint64Var(&fc.seed, "seed", 1, seedHelp)
	fs.IntVar(&fc.redundancy, "redundancy", 32, "inputs per datagram at most (1: no redundancy)")
	fs.DurationVar(&fc.interp, "interp", 0, "the longest interpolation delay of remote entities (0: the client's default, 250 ms); the client adapts below it")
	fs.StringVar(&fc.level, "level", lvl, "the level the server plays, a glTF file (.glb, .gltf), arena for the built-in one or courtyard for the sample map built in: the bots refuse to play on another (its digest)")
}

type fleetConfig struct {
	room       string
	key        ed25519.PrivateKey // signs each bot's connect token; nil: open development mode
	tokens     *tokenPool         // tokens minted elsewhere, one per dial, instead of key
	certSHA256 []byte             // the server's certificate to pin; nil: verify against the system's roots
	insecure   bool               // skip verifying the server (development)
	classes    []string           // assigned to the bots in turn; empty: the server's first class
	aimError   float64
	seed       uint64
	redundancy int
	interp     time.Duration
	level      string        // the level file, "arena", or a sample map's name (courtyard)
	loaded     *client.Level // level, read once, shared by the bots
}

// connect joins every bot to the room, dialing at most parallel of them at
// once (parallel < 1: all at once), and gives up when ctx ends. A dial
// that timed out (timedOut) is made again, dialAttempts in all; any other
// failure ends them all. On failure no bot stays connected.
func (f *fleet) connect(ctx context.Context, fc fleetConfig, parallel int) error {
	if parallel < 1 {
		parallel = len(f.bots)
	}
	if fc.loaded == nil {
		file, data := levelFile(fc.level)
		lvl, err := client.LoadLevel(file, data)
		if err != nil {
			return fmt.Errorf("--level: %w", err)
		}
		fc.loaded = lvl
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for i, b := range f.bots {
		if len(fc.classes) > 0 {
			b.class = fc.classes[i%len(fc.classes)]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				return
			}
			c, err := f.dial(ctx, fc, i, b)
			if err != nil {
				cancel(fmt.Errorf("%s: %w", b.name, err))
				return
			}
			b.c = c
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		for _, b := range f.bots {
			if b.c != nil {
				b.c.Close()
				b.c = nil
			}
		}
		return err
	}
	return nil
}

// dialAttempts is how many times connect dials a bot whose dials time out.
const dialAttempts = 3

// dial connects bot i, again after a timeout.
func (f *fleet) dial(ctx context.Context, fc fleetConfig, i int, b *bot) (*client.Client, error) {
	for attempt := 1; ; attempt++ {
		cc := client.Config{Addr: b.addr, Room: fc.room, Name: b.name, Team: b.team, Class: b.class,
			Input:            client.HoldFire{Source: bots.NewBot(bots.BotConfig{AimError: fc.aimError, Seed: fc.seed + uint64(i), Loadout: true}), Hold: &f.hold},
			Redundancy:       fc.redundancy,
			InterpDelay:      fc.interp,
			Loaded:           fc.loaded,
			ServerCertSHA256: fc.certSHA256, InsecureSkipVerify: fc.insecure,
		}
		b.tally.Wire(&cc)
		if fc.tokens != nil { // a matchmaker's token says who the bot is
			tok, err := fc.tokens.take()
			if err != nil {
				return nil, fmt.Errorf("token: %w", err)
			}
			cc.Token, cc.Room, cc.Name, cc.Team, cc.Class = tok.text, "", "", 0, ""
			b.team = tok.claims.Team
			if tok.claims.Name != "" {
				b.name = tok.claims.Name
			}
		}
		if fc.key != nil { // the token says who the bot is; a fresh one each dial (tokens are single-use)
			tok, err := mint(fc.key, fc.room, b.name, b.name, b.team, b.class, time.Minute)
			if err != nil {
				return nil, fmt.Errorf("token: %w", err)
			}
			cc.Token, cc.Room, cc.Name, cc.Team, cc.Class = tok, "", "", 0, ""
		}
		c, err := client.Dial(ctx, cc)
		if err == nil || ctx.Err() != nil || attempt == dialAttempts || !timedOut(err) {
			return c, err
		}
		f.redials.Add(1)
	}
}

// timedOut reports whether a dial failed for time, as a few packets lost in
// a row do at long round trips: quic-go gave the handshake up (5 s without
// an answer, 10 s in all), or the server closed the connection as a
// protocol error before it took a Join (it waits a fixed 5 s for the
// control stream and the Join). Dialling again is safe: no token was spent.
func timedOut(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var ae *quic.ApplicationError
	return errors.As(err, &ae) && ae.Remote && ae.ErrorCode == protocol.CloseProtocol
}

// run plays every bot until ctx ends.
func (f *fleet) run(ctx context.Context) {
	for _, b := range f.bots {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			b.err = b.c.Run(ctx)
		}()
	}
}

func (f *fleet) wait() { f.wg.Wait() }

// totals sums the bots' counters.
func (f *fleet) totals() (shots, seen, confirmed, bytesIn uint64) {
	for _, b := range f.bots {
		s, ts := b.c.Stats(), b.tally.Stats()
		shots += s.ShotsFired
		seen += ts.HitsSeen
		confirmed += s.HitsConfirmed
		bytesIn += s.BytesIn
	}
	return
}

// statusLoop prints one status line a second until ctx ends: in place on a
// terminal, a line each otherwise. stats, when not nil, adds the server's view.
func (f *fleet) statusLoop(ctx context.Context, w io.Writer, stats func() (tick int64, players int, rewinds int64)) {
	tty := false
	if file, ok := w.(*os.File); ok {
		tty = isatty.IsTerminal(file.Fd())
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var lastBytes uint64
	var lastTick, lastRewinds int64
	lastAt := time.Now()
	for {
		select {
		case <-ctx.Done():
			if tty {
				fmt.Fprintln(w)
			}
			return
		case now := <-t.C:
			shots, seen, confirmed, bytesIn := f.totals()
			secs := now.Sub(lastAt).Seconds()
			kbps := float64(bytesIn-lastBytes) * 8 / 1000 / secs / float64(len(f.bots))
			lastBytes, lastAt = bytesIn, now
			line := ""
			if stats != nil {
				tick, players, rewinds := stats()
				perTick := 0.0
				if tick > lastTick && lastTick > 0 {
					perTick = float64(rewinds-lastRewinds) / float64(tick-lastTick)
				}
				lastTick, lastRewinds = tick, rewinds
				line = fmt.Sprintf("tick %5d  players %2d  ", tick, players)
				line += fmt.Sprintf("shots %5d  hits %5d (seen %5d)  rewinds/tick %4.1f  %5.1f kbit/s per client", shots, confirmed, seen, perTick, kbps)
			} else {
				var tick uint32
				for _, b := range f.bots {
					tick = max(tick, b.c.Stats().ServerTick)
				}
				line = fmt.Sprintf("tick %5d  bots %2d  shots %5d  hits %5d (seen %5d)  %5.1f kbit/s per client", tick, len(f.bots), shots, confirmed, seen, kbps)
			}
			if tty {
				fmt.Fprintf(w, "\r\033[K%s", line)
			} else {
				fmt.Fprintln(w, line)
			}
		}
	}
}

// report prints the per-bot table. players, when not nil, is the server's
// view of each bot (by player id), for the inputs applied.
func (f *fleet) report(w io.Writer, elapsed time.Duration, players map[uint32]server.PlayerStats) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "bot\tteam\tclass\tRTT set\tRTT seen\tinputs sent\tapplied\t%\tlate\tcorrections\tshots sent\thits on screen\tafter death\tconfirmed to it\t%\tno damage\tclamped\tK/D\tkbit/s\t")
	var sent, applied, late, shots, seen, dead, shielded, confirmed, seenConf, noDamage, clamped, bytes, held, bytesOut, datagrams, cuts uint64
	for _, b := range f.bots {
		s, ts := b.c.Stats(), b.tally.Stats()
		set := "—"
		if b.rtt > 0 {
			set = b.rtt.Round(time.Millisecond).String()
		}
		app, pct, clamp, lateRun := "—", "—", "—", "—"
		if p, ok := players[b.c.ID()]; ok {
			app, lateRun = fmt.Sprint(p.Applied), fmt.Sprint(p.Late)
			late += p.Late
			pct = fmt.Sprintf("%.1f", 100*float64(p.Applied)/float64(max(s.Ticks, 1)))
			clamp = fmt.Sprint(p.Clamped)
			applied += p.Applied
			clamped += p.Clamped
		}
		sc := "—"
		if live := ts.HitsSeen - ts.HitsSeenAfterDeath - ts.HitsSeenShielded; live > 0 {
			sc = fmt.Sprintf("%.0f", 100*float64(ts.SeenConfirmed)/float64(live))
		}
		kbps := float64(s.BytesIn) * 8 / 1000 / elapsed.Seconds()
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.1fms\t%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%s\t%d/%d\t%.1f\t\n", b.name, b.team, b.c.Welcome().Class, set,
			float64(s.RTT.Microseconds())/1000, s.Ticks, app, pct, lateRun, s.Corrections, s.ShotsFired, ts.HitsSeen, ts.HitsSeenAfterDeath,
			s.HitsConfirmed, sc, s.NoDamage, clamp, s.Kills, s.Deaths, kbps)
		noDamage += s.NoDamage
		held += s.Held
		bytesOut, datagrams, cuts = bytesOut+s.BytesOut, datagrams+s.DatagramsSent, cuts+s.BudgetCuts
		dead += ts.HitsSeenAfterDeath
		shielded += ts.HitsSeenShielded
		sent += s.Ticks
		shots, seen, confirmed, seenConf, bytes = shots+s.ShotsFired, seen+ts.HitsSeen, confirmed+s.HitsConfirmed, seenConf+ts.SeenConfirmed, bytes+s.BytesIn
	}
	tw.Flush()
	fmt.Fprintf(w, "\ntotal: %d inputs sent", sent)
	if players != nil {
		fmt.Fprintf(w, ", %d applied in time (%.1f%%), %d more late (run at a later tick)", applied, 100*float64(applied)/float64(max(sent, 1)), late)
	}
	fmt.Fprintf(w, "; as the bots counted them: %d shots sent, %d hits on their screens, %d hits confirmed to them", shots, seen, confirmed)
	fmt.Fprintf(w, " (and %d registered on targets that took no damage: invulnerable or already dead)", noDamage)
	if live := seen - dead - shielded; live > 0 {
		fmt.Fprintf(w, ".\nOf the %d hits seen by live shooters, %.1f%% were confirmed on the same target by lag compensation;"+
			" %d more were fired by bots the server had already killed (they learn it a round trip later, and the dead do not shoot),"+
			" and %d more were stopped by a shield the screen showed only after the shot (placed after the shooter's newest snapshot: shields are never rewound)",
			live, 100*float64(seenConf)/float64(live), dead, shielded)
	}
	if players != nil {
		fmt.Fprintf(w, ".\nView lag: %d shots were resolved with less view lag than their shooter claimed (rewind_view_lag_clamped_total)", clamped)
	}
	fmt.Fprintf(w, ".\nSnapshots: %.1f kbit/s per client; remote players held at the newest snapshot (the next late) on %.2f%% of ticks",
		float64(bytes)*8/1000/elapsed.Seconds()/float64(max(len(f.bots), 1)), 100*float64(held)/float64(max(sent, 1)))
	fmt.Fprintf(w, ".\nInputs: %.1f kbit/s per client, %.0f bytes a datagram; the input budget was cut %d times by queues on the path",
		float64(bytesOut)*8/1000/elapsed.Seconds()/float64(max(len(f.bots), 1)), float64(bytesOut)/float64(max(datagrams, 1)), cuts)
	fmt.Fprint(w, ".\n\n")
	events, falsePos := f.targetReport(w)
	live := seen - dead - shielded
	pct := "n/a"
	if live > 0 {
		pct = fmt.Sprintf("%.1f%%", 100*float64(seenConf)/float64(live))
	}
	fmt.Fprintf(w, "\nhits seen by live shooters confirmed: %d of %d (%s)\n", seenConf, live, pct)
	fmt.Fprintf(w, "hits seen stopped by shields placed after the shooter's newest snapshot (not counted above): %d\n", shielded)
	fmt.Fprintf(w, "false positives: %d of %d hit events\n", falsePos, events)
	if load, ok := hostLoad(); ok {
		// A busy host delays the server's ticks and the bots' own: figures
		// from a loaded machine are not a quiet one's.
		fmt.Fprintf(w, "host load average (1, 5, 15 min): %s on %d cores\n", load, runtime.NumCPU())
	}
}

// hostLoad returns the host's load averages as /proc/loadavg gives them
// (Linux), or false.
func hostLoad() (string, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "", false
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "", false
	}
	return strings.Join(f[:3], " "), true
}

// targetReport prints the hits on each target (victim), summed over every
// shooter of the fleet, and returns the totals of hit events and false
// positives (hit events on a target that no pellet of the shot hit on the
// shooter's screen). A target that is none of the bots shows as #id.
func (f *fleet) targetReport(w io.Writer) (events, falsePos uint64) {
	sum := map[uint32]bots.TargetStats{}
	for _, b := range f.bots {
		s := b.tally.Stats()
		events, falsePos = events+s.HitEvents, falsePos+s.FalsePositives
		for id, t := range b.tally.Targets() {
			a := sum[id]
			a.HitsSeen += t.HitsSeen
			a.SeenConfirmed += t.SeenConfirmed
			a.HitEvents += t.HitEvents
			a.FalsePositives += t.FalsePositives
			sum[id] = a
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tteam\thits seen on it\tconfirmed\tconfirmed %\thit events\tfalse positives\t")
	row := func(name, team string, t bots.TargetStats) {
		pct := "—"
		if t.HitsSeen > 0 {
			pct = fmt.Sprintf("%.0f", 100*float64(t.SeenConfirmed)/float64(t.HitsSeen))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%d\t%d\t\n", name, team, t.HitsSeen, t.SeenConfirmed, pct, t.HitEvents, t.FalsePositives)
	}
	for _, b := range f.bots {
		row(b.name, fmt.Sprint(b.team), sum[b.c.ID()])
		delete(sum, b.c.ID())
	}
	for _, id := range slices.Sorted(maps.Keys(sum)) {
		row(fmt.Sprintf("#%d", id), "—", sum[id])
	}
	tw.Flush()
	fmt.Fprintln(w, "\nPer target, summed over its shooters: hits seen are shots with a pellet on it on the shooter's screen (shots of"+
		" shooters the server had already killed included), confirmed those the server registered on it; hit events are the"+
		" server's hits on it, false positives those of shots that no pellet hit it with on the shooter's screen.")
	return events, falsePos
}
