// Package tune shows what a lag-compensation setting trades, on recorded
// matches: for each setting of a sweep (windows, and weapons' max_rewind
// caps), how many of the hits shooters saw the server confirms, and how
// many of its hits a victim could dispute; and which window to choose.
//
// A sweep replays each recording (package replay) with one variant per
// setting, and two more: "seen", which grants every shot the view time
// its client claimed, however deep (what the shooter's screen showed), and
// "present", with no rewind at all (what the victim's own screen showed
// at the server tick). Variants keep the recorded world: every shot is the
// one the match had, judged again, so the settings are compared on the
// same shots. Windows are durations, each recording's ticks at its own
// tick rate. For every setting, over all and by weapon, player, view-lag
// band, phase and recording, the counts docs/tuning.md defines (shots,
// shot decisions, seen hits, confirmed, server hits, unseen, damaging,
// disputed, clamped) with Wilson intervals for the shares; every disputed
// hit, named; the distribution of the view lag players claimed; and a
// recommendation: the smallest window that confirms a target share.
//
// CountFile counts one recording under its own recorded lag compensation:
// the counts rewind demo and rewind view print. A Report renders as a
// terminal table, CSV and plots (gonum/plot).
package tune
