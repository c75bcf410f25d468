// Package view shows a recorded match's lag compensation in a browser: the
// level from above (its triangles shaded by height, from the level the
// recording carries), the players' hitboxes in the present, and for every
// shot the hitboxes as the server rewound them, the shot's ray or path and
// its result, on a timeline that steps tick by tick or shot by shot.
//
// A Builder turns a replay (package replay) into a Match: per tick, the
// living players' positions, the projectiles and the shields; per shot
// decision, its shooter, weapon, result, view time, origin and point, its
// path (projectiles), and every hitbox where the server's time machine put
// it for the shot (lagcomp.History.PosesAt, the positions the shooter's
// client drew), whether it killed, and whether it is a disputed hit (a
// damaging hit on a target out of the shooter's sight or reach in its own
// present, that a replay without rewind, run beside, did not make:
// tune.OutOfSight); per tick, every player's view lag and measured bound. A
// Config can judge the shots under another window than the recorded one (a
// replay variant). Handler serves the page (plain HTML and JavaScript,
// embedded) and the Match as JSON, from a Source: a whole recording (rewind
// view FILE, LoadWith), or one still being written (Follow: the admin
// port's live view of a running room).
package view
