package main

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/pflag"

	"github.com/rewind-gg/rewind/client"
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
	err   error
}

// fleet runs bots and reports on them.
type fleet struct {
	bots []*bot
	wg   sync.WaitGroup
	hold atomic.Bool // set near the end: the bots stop firing so every hit event arrives
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
func (fc *fleetConfig) flags(fs *pflag.FlagSet, classes []string, seedHelp string) {
	fs.StringSliceVar(&fc.classes, "classes", classes, "classes the bots take in turn (empty: the server's first)")
	fs.Float64Var(&fc.aimError, "aim-error", 0.03, "bots' aim error, radians (standard deviation)")
	fs.Uint64Var(&fc.seed, "seed", 1, seedHelp)
	fs.IntVar(&fc.redundancy, "redundancy", 32, "inputs per datagram at most (1: no redundancy)")
	fs.DurationVar(&fc.interp, "interp", 100*time.Millisecond, "interpolation delay of remote entities")
}

type fleetConfig struct {
	room       string
	key        ed25519.PrivateKey // signs each bot's connect token; nil: open development mode
	certSHA256 []byte             // the server's certificate to pin; nil: verify against the system's roots
	insecure   bool               // skip verifying the server (development)
	classes    []string           // assigned to the bots in turn; empty: the server's first class
	aimError   float64
	seed       uint64
	redundancy int
	interp     time.Duration
}

// connect joins every bot to the room.
func (f *fleet) connect(ctx context.Context, fc fleetConfig) error {
	for i, b := range f.bots {
		if len(fc.classes) > 0 {
			b.class = fc.classes[i%len(fc.classes)]
		}
		cc := client.Config{Addr: b.addr, Room: fc.room, Name: b.name, Team: b.team, Class: b.class}
		if fc.key != nil { // the token says who the bot is
			tok, err := mint(fc.key, fc.room, b.name, b.name, b.team, b.class, time.Minute)
			if err != nil {
				return fmt.Errorf("%s: token: %w", b.name, err)
			}
			cc = client.Config{Addr: b.addr, Token: tok}
		}
		c, err := client.Dial(ctx, client.Config{
			Addr: cc.Addr, Token: cc.Token, Room: cc.Room, Name: cc.Name, Team: cc.Team, Class: cc.Class,
			Input:            client.HoldFire{Source: client.NewBot(client.BotConfig{AimError: fc.aimError, Seed: fc.seed + uint64(i)}), Hold: &f.hold},
			Redundancy:       fc.redundancy,
			InterpDelay:      fc.interp,
			ServerCertSHA256: fc.certSHA256, InsecureSkipVerify: fc.insecure,
		})
		if err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
		b.c = c
	}
	return nil
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
		s := b.c.Stats()
		shots += s.ShotsFired
		seen += s.HitsSeen
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
	fmt.Fprintln(tw, "bot\tteam\tclass\tRTT set\tRTT seen\tinputs sent\tapplied\t%\tcorrections\tshots\thits seen\tafter death\tconfirmed\tconfirmed %\tno damage\tclamped\tK/D\tkbit/s\t")
	var sent, applied, shots, seen, dead, confirmed, seenConf, noDamage, clamped, bytes uint64
	for _, b := range f.bots {
		s := b.c.Stats()
		set := "—"
		if b.rtt > 0 {
			set = b.rtt.Round(time.Millisecond).String()
		}
		app, pct, clamp := "—", "—", "—"
		if p, ok := players[b.c.ID()]; ok {
			app = fmt.Sprint(p.Applied)
			pct = fmt.Sprintf("%.1f", 100*float64(p.Applied)/float64(max(s.Ticks, 1)))
			clamp = fmt.Sprint(p.Clamped)
			applied += p.Applied
			clamped += p.Clamped
		}
		sc := "—"
		if live := s.HitsSeen - s.HitsSeenAfterDeath; live > 0 {
			sc = fmt.Sprintf("%.0f", 100*float64(s.SeenConfirmed)/float64(live))
		}
		kbps := float64(s.BytesIn) * 8 / 1000 / elapsed.Seconds()
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.1fms\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%s\t%d/%d\t%.1f\t\n", b.name, b.team, b.c.Welcome().Class, set,
			float64(s.RTT.Microseconds())/1000, s.Ticks, app, pct, s.Corrections, s.ShotsFired, s.HitsSeen, s.HitsSeenAfterDeath,
			s.HitsConfirmed, sc, s.NoDamage, clamp, s.Kills, s.Deaths, kbps)
		noDamage += s.NoDamage
		dead += s.HitsSeenAfterDeath
		sent += s.Ticks
		shots, seen, confirmed, seenConf, bytes = shots+s.ShotsFired, seen+s.HitsSeen, confirmed+s.HitsConfirmed, seenConf+s.SeenConfirmed, bytes+s.BytesIn
	}
	tw.Flush()
	fmt.Fprintf(w, "\ntotal: %d inputs sent", sent)
	if players != nil {
		fmt.Fprintf(w, ", %d applied (%.1f%%)", applied, 100*float64(applied)/float64(max(sent, 1)))
	}
	fmt.Fprintf(w, "; %d shots, %d hits seen by the shooters, %d confirmed by the server", shots, seen, confirmed)
	fmt.Fprintf(w, " (and %d registered on targets that took no damage: invulnerable or already dead)", noDamage)
	if live := seen - dead; live > 0 {
		fmt.Fprintf(w, ".\nOf the %d hits seen by live shooters, %.1f%% were confirmed on the same target by lag compensation;"+
			" %d more were fired by bots the server had already killed (they learn it a round trip later, and the dead do not shoot)",
			live, 100*float64(seenConf)/float64(live), dead)
	}
	if players != nil {
		fmt.Fprintf(w, ".\nView lag: %d shots were resolved with less view lag than their shooter claimed (rewind_view_lag_clamped_total)", clamped)
	}
	fmt.Fprintf(w, ".\nSnapshots: %.1f kbit/s per client.\n", float64(bytes)*8/1000/elapsed.Seconds()/float64(max(len(f.bots), 1)))
}
