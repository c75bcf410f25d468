package matchmaker

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/rewind-gg/rewind/client"
	"github.com/rewind-gg/rewind/protocol"
)

// Report tells the matchmaker that the server refused a join, and returns
// the ticket to try next: Matchmaker.Refused in the matchmaker's process;
// in a game, a call to the studio's backend, which calls Refused.
type Report func(context.Context, Refusal) (Ticket, error)

// maxDials bounds Dial's attempts, whatever report answers.
const maxDials = 32

// Dial joins a player with the Go client, as a game client does with a
// ticket: it dials the ticket's address, pins its certificate and sends its
// token (cfg's Addr, Token and ServerCertSHA256 are set from the ticket;
// the rest of cfg is the client's). When the server refuses the join with
// wrong_room or full, Dial reports the refusal and dials the ticket report
// returns, after its WaitMS, until it joins, report fails, or ctx ends. It
// returns the client and the ticket it joined with.
func Dial(ctx context.Context, t Ticket, cfg client.Config, report Report) (*client.Client, Ticket, error) {
	for range maxDials {
		pin, err := hex.DecodeString(t.CertSHA256)
		if err != nil {
			return nil, t, fmt.Errorf("matchmaker: ticket: cert_sha256 %q: %w", t.CertSHA256, err)
		}
		cfg.Addr, cfg.Token, cfg.ServerCertSHA256 = t.Addr, t.Token, pin
		c, err := client.Dial(ctx, cfg)
		var rj *client.RejectError
		switch {
		case err == nil:
			return c, t, nil
		case !errors.As(err, &rj) || (rj.Code != protocol.RejectWrongRoom && rj.Code != protocol.RejectFull):
			return nil, t, fmt.Errorf("matchmaker: joining room %s at %s: %w", t.Room, t.Addr, err)
		}
		next, err := report(ctx, Refusal{Match: t.Match, Room: t.Room, User: t.User, Code: rj.Code, Reason: rj.Reason})
		if err != nil {
			return nil, t, fmt.Errorf("matchmaker: room %s refused the join (%s: %s), and reporting it failed: %w",
				t.Room, protocol.RejectLabel(rj.Code), rj.Reason, err)
		}
		t = next
		if t.WaitMS > 0 {
			timer := time.NewTimer(time.Duration(t.WaitMS) * time.Millisecond)
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil, t, fmt.Errorf("matchmaker: waiting to join room %s: %w", t.Room, ctx.Err())
			case <-timer.C:
			}
		}
	}
	return nil, t, fmt.Errorf("matchmaker: %d refused joins: giving up", maxDials)
}
