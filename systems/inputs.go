package systems

import "github.com/rewind-gg/rewind/ecs"

// InputVerdict says what QueueInput did with an input.
type InputVerdict uint8

const (
	// InputQueued: the input waits for its tick.
	InputQueued InputVerdict = iota
	// InputStale: its tick has already been simulated without it, and it
	// cannot run late: a later tick's input was applied, or it is older
	// than the late limit (Simulation.LateLimit), or the late queue is full.
	InputStale
	// InputDuplicate: the tick's input is already queued, or was applied (a
	// redundant copy).
	InputDuplicate
	// InputTooEarly: the tick is further ahead than the queue holds, so the
	// player cannot run ahead of server time; dropped.
	InputTooEarly
	// InputNoPlayer: the entity is gone or is not a controlled player.
	InputNoPlayer
	// InputLate: its tick was simulated without it (the player was rooted
	// then); it runs at the next tick, before that tick's own input
	// (late fire commands: Simulation.runLateInputs).
	InputLate

	// InputVerdicts is how many verdicts there are: the length of arrays
	// indexed by one.
	InputVerdicts = iota
)

// String names the verdict, as metrics and logs label it.
func (v InputVerdict) String() string {
	if int(v) >= len(verdictNames) {
		return "unknown"
	}
	return verdictNames[v]
}

var verdictNames = [InputVerdicts]string{"queued", "stale", "duplicate", "too_early", "no_player", "late"}

// QueueInput hands a player the input for in.Tick. Each tick's input is
// applied once: copies of an input already queued or applied are
// duplicates, and inputs more than ecs.InputQueueLen−1 ticks ahead are
// dropped. An input whose tick was simulated without it is late: it runs
// at the next tick if no later tick's input has been applied and it is at
// most LateLimit ticks old (else it is stale).
func (s *Simulation) QueueInput(player ecs.Entity, in ecs.Input) InputVerdict {
	if !s.World.Alive(player) {
		return InputNoPlayer
	}
	queue, _ := s.inputMap.Get(player)
	if queue == nil {
		return InputNoPlayer
	}
	now := s.Clock.Tick
	switch {
	case in.Tick < now:
		age := now - 1 - in.Tick
		if age < 64 && queue.Recent>>age&1 == 1 {
			return InputDuplicate
		}
		if in.Tick <= queue.Applied || age >= s.lateLimit {
			return InputStale
		}
		return queueLate(queue, in)
	case in.Tick >= now+ecs.InputQueueLen:
		return InputTooEarly
	}
	slot := &queue.Slots[in.Tick%ecs.InputQueueLen]
	if slot.Tick == in.Tick {
		return InputDuplicate
	}
	*slot = in
	return InputQueued
}

// queueLate puts a late input in its place among the queue's late inputs,
// which stay in tick order.
func queueLate(queue *ecs.InputQueue, in ecs.Input) InputVerdict {
	i := queue.NLate
	for i > 0 && queue.Late[i-1].Tick >= in.Tick {
		if queue.Late[i-1].Tick == in.Tick {
			return InputDuplicate
		}
		i--
	}
	if queue.NLate == len(queue.Late) {
		return InputStale
	}
	copy(queue.Late[i+1:queue.NLate+1], queue.Late[i:queue.NLate])
	queue.Late[i] = in
	queue.NLate++
	return InputLate
}

// LateLimit is how many ticks after its own an input may still run late: a
// second's (a handover's stall is shorter), at most ecs.MaxLateInputs. It
// bounds how much movement a player held back can catch up at once; a late
// shot's view lag is bounded as any shot's (the measured bound, max_unlag).
// It does not depend on the lag-compensation settings, so that a replay
// under other settings runs the same inputs and its world stays the
// match's.
func (s *Simulation) LateLimit() int64 { return s.lateLimit }
