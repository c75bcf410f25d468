// Package shotjoin joins what clients saw of their hitscan shots (the bots'
// records: package bots, Tally.KeepShots) with what the server decided of
// each, replayed from the match's recording (package replay), and names
// for every hit lost and every false positive the first difference
// between the two that explains it: the shot never ran on the server, its
// view time was clamped, it ran late, the shooter's eye or the target was
// somewhere else on the server than on the screen, or the server's
// reconstruction of the screen (its view time trusted, no caps) still
// disagrees with the screen.
//
// This is the per-shot evidence a hit rate alone cannot give: the client's
// record of a shot and the server's verdict, side by side.
package shotjoin
