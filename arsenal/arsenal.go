package arsenal

// MaxLoadout is the most weapons a player carries.
const MaxLoadout = 8

// Arsenal is what a player carries and the state of each weapon: the
// server-side rules (fire rate, ammo, reload, cooldown) read and write it,
// so a client cannot use a weapon faster than its definition allows.
type Arsenal struct {
	Slots [MaxLoadout]WeaponState
	Count int // slots in use
	// Fired counts the shots the rules let through, over the whole match
	// (a respawn does not reset it): the next shot's index in the player's
	// spread sequence, which the server advances and the client cannot
	// choose or skip in.
	Fired uint32
}

// WeaponState is one carried weapon.
type WeaponState struct {
	Weapon    uint16 // catalogue id
	Ready     int64  // the first tick it may fire again (fire interval, cooldown)
	Ammo      int    // rounds left in the magazine (unused when the magazine is 0: unlimited)
	Reloading bool   // a reload is under way
	Reloaded  int64  // while reloading, the tick the magazine is full again
}

// Rules are the numbers of a weapon's definition that decide when it fires
// (docs/weapons.md): the server's weapon definitions carry them, and the
// Welcome gives them to the client.
type Rules struct {
	FireInterval int // ticks between uses (at least 1)
	Magazine     int // rounds per magazine, 0: unlimited
	ReloadTicks  int // ticks a reload takes
}

// RejectReason says why a use was refused.
type RejectReason uint8

// Reasons a use is refused.
const (
	RejectCooldown   RejectReason = iota + 1 // before its fire interval or cooldown has passed
	RejectEmpty                              // no ammo (it reloads by itself)
	RejectReloading                          // reloading
	RejectNotCarried                         // not in the player's loadout
)

// String returns the reason's metric label.
func (r RejectReason) String() string {
	switch r {
	case RejectCooldown:
		return "cooldown"
	case RejectEmpty:
		return "empty"
	case RejectReloading:
		return "reloading"
	case RejectNotCarried:
		return "not_carried"
	}
	return "unknown"
}

// Use applies the rules to one use of weapon at tick now: it must be
// carried, past its fire interval (or cooldown), loaded and not reloading.
// On success it spends the round (starting a reload when the magazine runs
// dry), counts the shot in a.Fired and returns 0; otherwise it returns why
// not, and an empty magazine starts reloading.
func Use(a *Arsenal, weapon uint16, r Rules, now int64) RejectReason {
	st := slot(a, weapon)
	if st == nil {
		return RejectNotCarried
	}
	if st.Reloading {
		if now < st.Reloaded {
			return RejectReloading
		}
		st.Ammo, st.Reloading = r.Magazine, false
	}
	if now < st.Ready {
		return RejectCooldown
	}
	if r.Magazine > 0 && st.Ammo <= 0 {
		st.Reloading, st.Reloaded = true, now+int64(r.ReloadTicks)
		return RejectEmpty
	}
	st.Ready = now + int64(max(r.FireInterval, 1))
	a.Fired++
	if r.Magazine > 0 {
		st.Ammo--
		if st.Ammo == 0 {
			st.Reloading, st.Reloaded = true, now+int64(r.ReloadTicks)
		}
	}
	return 0
}

// Reload starts reloading weapon if it has a magazine that is not full and
// is not reloading already.
func Reload(a *Arsenal, weapon uint16, r Rules, now int64) {
	st := slot(a, weapon)
	if st == nil || r.Magazine == 0 || st.Reloading || st.Ammo >= r.Magazine {
		return
	}
	st.Reloading, st.Reloaded = true, now+int64(r.ReloadTicks)
}

// Arm returns an arsenal carrying the weapons ids (the first MaxLoadout of
// them), refilled; magazine returns a weapon id's magazine size.
func Arm(ids []uint16, magazine func(weapon uint16) int) Arsenal {
	var a Arsenal
	for i, id := range ids[:min(len(ids), MaxLoadout)] {
		a.Slots[i].Weapon = id
		a.Count++
	}
	Refill(&a, magazine)
	return a
}

// Refill gives every weapon of the arsenal a full magazine, with no cooldown
// or reload under way: a fresh life. magazine returns a weapon id's
// magazine size.
func Refill(a *Arsenal, magazine func(weapon uint16) int) {
	for i := range a.Count {
		st := &a.Slots[i]
		*st = WeaponState{Weapon: st.Weapon, Ammo: magazine(st.Weapon)}
	}
}

func slot(a *Arsenal, weapon uint16) *WeaponState {
	for i := range a.Count {
		if a.Slots[i].Weapon == weapon {
			return &a.Slots[i]
		}
	}
	return nil
}
