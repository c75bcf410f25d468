package coverage

// Steps is how many steps a window spans at most.
const Steps = 16

// Rule is a room's seat rule.
type Rule struct {
	step   int64 // ticks between two checks
	steps  int64 // steps in the window judged
	missed int64 // ticks of a window a player may miss; −1: the rule is off
}

// NewRule returns the rule that a player's inputs cover at least share of
// the ticks of any window of window ticks. share 0 turns it off (Check
// then only records); window is at least 1. The window judged is a whole
// number of steps, up to a step shorter than asked: never longer.
func NewRule(share float64, window int64) Rule {
	window = max(window, 1)
	r := Rule{step: (window + Steps - 1) / Steps}
	r.steps = max(window/r.step, 1)
	r.missed = int64((1 - share) * float64(r.steps*r.step))
	if share <= 0 {
		r.missed = -1
	}
	return r
}

// Step returns the ticks between two checks: Check wants a tick that is a
// multiple of it.
func (r Rule) Step() int64 { return r.step }

// Window returns the ticks a window judged spans.
func (r Rule) Window() int64 { return r.steps * r.step }

// Player is one player's record: where its judgement starts, and what it
// had covered at each of the last steps.
type Player struct {
	from   int64 // the step judging starts from; −1: no input yet
	marks  [Steps + 1]uint64
	broken bool
}

// NewPlayer returns the record of a player that has just joined.
func NewPlayer() Player { return Player{from: -1} }

// Check records that the player's inputs covered covered ticks in all by
// tick now (a multiple of Step: the ticks before now simulated), and
// returns the ticks it missed over the window (since its first input, if
// that is later: judging starts at the first check after it) and the
// ticks judged. broken reports that it missed more than the rule allows,
// once: the check that finds it.
func (r Rule) Check(p *Player, now int64, covered uint64) (missed, ticks int64, broken bool) {
	k := now / r.step
	n := int64(len(p.marks))
	if p.from < 0 {
		if covered > 0 {
			p.from = k
			p.marks[k%n] = covered
		}
		return 0, 0, false
	}
	p.marks[k%n] = covered
	from := max(k-r.steps, p.from)
	ticks = (k - from) * r.step
	missed = ticks - int64(covered-p.marks[from%n])
	if r.missed >= 0 && missed > r.missed && !p.broken {
		p.broken = true
		return missed, ticks, true
	}
	return missed, ticks, false
}
