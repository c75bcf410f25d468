// Package tune shows what a lag-compensation setting trades, on recorded
// matches: for each setting of a sweep (windows, and weapons' max_rewind
// caps), how many of the hits shooters saw the server confirms, and how
// many of its hits a victim could dispute.
//
// A sweep replays each recording (package replay) with one variant per
// setting, and two more: "seen", which grants every shot the view time
// its client claimed, however deep (what the shooter's screen showed), and
// "present", with no rewind at all (what the victim's own screen showed
// at the server tick). Variants keep the recorded world: every shot is the
// one the match had, judged again, so the settings are compared on the
// same shots. For every setting, per weapon and over all:
//
//   - seen hits: (shot, target) pairs the "seen" variant hit;
//   - confirmed: those the setting's variant hit too (confirmation:
//     confirmed / seen);
//   - unseen hits: the setting's hits no shooter's screen showed;
//   - disputed hits: the setting's hits that dealt damage although, in the
//     victim's own present at the server tick, the target was out of the
//     shooter's line of sight or reach, and the shot would not have hit it
//     there (the "present" variant did not): the victim died behind the
//     wall;
//   - clamped shots, rewinds and buckets per tick (the setting's cost);
//
// and the distribution of the view lag players claimed. A Report renders
// as a terminal table, CSV and plots (gonum/plot).
package tune
