package systems

import "github.com/rewind-gg/rewind/ecs"

// InputVerdict says what QueueInput did with an input.
type InputVerdict uint8

const (
	// InputQueued: the input waits for its tick.
	InputQueued InputVerdict = iota
	// InputStale: its tick has already been simulated without it: the player
	// was rooted then.
	InputStale
	// InputDuplicate: the tick's input is already queued, or was applied (a
	// redundant copy).
	InputDuplicate
	// InputTooEarly: the tick is further ahead than the queue holds, so the
	// player cannot run ahead of server time; dropped.
	InputTooEarly
	// InputNoPlayer: the entity is gone or is not a controlled player.
	InputNoPlayer
)

// String names the verdict, as metrics and logs label it.
func (v InputVerdict) String() string {
	return [...]string{"queued", "stale", "duplicate", "too_early", "no_player"}[v]
}

// QueueInput hands a player the input for in.Tick. Each tick's input is
// applied once, at that tick: copies of an input already queued or applied
// are duplicates, inputs for ticks simulated without them are stale, and
// inputs more than ecs.InputQueueLen−1 ticks ahead are dropped.
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
		if age := now - 1 - in.Tick; age < 64 && queue.Recent>>age&1 == 1 {
			return InputDuplicate
		}
		return InputStale
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
