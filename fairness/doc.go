// Package fairness judges lag-compensated hits from the victim's side: a
// hit is disputed when it dealt damage to a victim that, in its own present
// at the server tick that resolved it, was out of the shooter's line of
// sight or out of the weapon's reach, and the same shot would not have hit
// it in the present (without rewinding). Those are the hits a victim
// experiences as "shot behind the wall", the price of granting shooters
// their view (docs/tuning.md).
//
// OutOfSight is the one test of sight and reach: the server's live count
// (package systems marks ecs.ShotEvent.Disputed as it resolves hits) and the
// tuning sweep's offline count over recordings (package tune) both call it.
package fairness
