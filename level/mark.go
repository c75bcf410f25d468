package level

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// role is what a node is in a level (docs/levels.md, "Conventions").
type role uint8

const (
	roleNone      role = iota
	roleCollision      // its mesh (and its descendants' meshes) block mark.blocks
	roleRender         // its mesh (and its descendants') are not collision
	roleSpawn
	roleBounds
	roleKill
	roleWaypoint
)

var roleNames = map[string]role{"collision": roleCollision, "render": roleRender, "spawn": roleSpawn,
	"bounds": roleBounds, "kill": roleKill, "waypoint": roleWaypoint}

// mark is a node's role and what goes with it.
type mark struct {
	role   role
	blocks Blocks // roleCollision
	team   uint8  // roleSpawn
	id     string // roleWaypoint
	links  []link // roleWaypoint
	by     string // how it was marked: "extras" or "name"
}

// link is one waypoint link as written.
type link struct {
	to                   string
	jump, crouch, oneway bool
}

// markOf reads a node's mark from its extras, else its name. notes are
// warnings about near misses (a name that looks like a marker but is not
// one, an extras key that is not known).
func markOf(name string, extras json.RawMessage) (m mark, notes []string, err error) {
	m, notes, err = extrasMark(extras)
	if err != nil || m.role != roleNone {
		return m, notes, err
	}
	m, note, err := nameMark(name)
	if note != "" {
		notes = append(notes, note)
	}
	return m, notes, err
}

// extrasMark reads the rewind keys of a glTF extras object.
func extrasMark(extras json.RawMessage) (mark, []string, error) {
	var kv map[string]any
	if len(extras) == 0 || json.Unmarshal(extras, &kv) != nil || kv == nil {
		return mark{}, nil, nil // absent, or not an object: not ours
	}
	var notes []string
	for k := range kv {
		switch k {
		case "rewind", "rewind_blocks", "rewind_team", "rewind_id", "rewind_links":
		default:
			if strings.HasPrefix(strings.ToLower(k), "rewind") {
				notes = append(notes, fmt.Sprintf("extras key %q is not one of rewind, rewind_blocks, rewind_team, rewind_id, rewind_links: ignored", k))
			}
		}
	}
	slices.Sort(notes)
	v, ok := kv["rewind"]
	if !ok {
		return mark{}, notes, nil
	}
	s, _ := v.(string)
	r, ok := roleNames[strings.ToLower(strings.TrimSpace(s))]
	if !ok {
		return mark{}, notes, fmt.Errorf("extras rewind %v is not one of collision, render, spawn, bounds, kill, waypoint", jsonText(v))
	}
	m := mark{role: r, by: "extras"}
	switch r {
	case roleCollision:
		m.blocks = BlocksBoth
		if b, ok := kv["rewind_blocks"]; ok {
			bs, _ := b.(string)
			switch strings.ToLower(strings.TrimSpace(bs)) {
			case "both":
			case "movement":
				m.blocks = BlocksMovement
			case "shots":
				m.blocks = BlocksShots
			default:
				return mark{}, notes, fmt.Errorf("extras rewind_blocks %v is not one of both, movement, shots", jsonText(b))
			}
		}
	case roleSpawn:
		t, ok := kv["rewind_team"]
		if !ok {
			return mark{}, notes, fmt.Errorf("extras rewind spawn without rewind_team")
		}
		n, err := teamNumber(t)
		if err != nil {
			return mark{}, notes, fmt.Errorf("extras rewind_team %v: %w", jsonText(t), err)
		}
		m.team = n
	case roleWaypoint:
		if id, ok := kv["rewind_id"]; ok {
			s, _ := id.(string)
			if !validID(strings.ToLower(s)) {
				return mark{}, notes, fmt.Errorf("extras rewind_id %v is not letters, digits and '-'", jsonText(id))
			}
			m.id = strings.ToLower(s)
		}
		if ls, ok := kv["rewind_links"]; ok {
			s, _ := ls.(string)
			if _, isString := ls.(string); !isString {
				return mark{}, notes, fmt.Errorf("extras rewind_links %v is not a string", jsonText(ls))
			}
			for _, tok := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
				l, err := parseLink(tok)
				if err != nil {
					return mark{}, notes, fmt.Errorf("extras rewind_links: %w", err)
				}
				m.links = append(m.links, l)
			}
		}
	}
	return m, notes, nil
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// teamNumber reads a team from extras: a number or a string of digits
// (tools differ in which they write).
func teamNumber(v any) (uint8, error) {
	var f float64
	switch t := v.(type) {
	case float64:
		f = t
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil {
			return 0, fmt.Errorf("not a team number")
		}
		f = float64(n)
	default:
		return 0, fmt.Errorf("not a team number")
	}
	if f != math.Trunc(f) || f < 1 || f > 255 {
		return 0, fmt.Errorf("not a team in 1..255")
	}
	return uint8(f), nil
}

// nameMark reads a node's mark from its name. Names are split into words
// at every character that is not a letter or digit and compared in lower
// case, so "col_window_2", "Col-Window 2" and Blender's "col_window.001"
// mean the same.
func nameMark(name string) (mark, string, error) {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 {
		return mark{}, "", nil
	}
	m := mark{by: "name"}
	second := ""
	if len(words) > 1 {
		second = words[1]
	}
	switch words[0] {
	case "col":
		m.role, m.blocks = roleCollision, BlocksBoth
		switch second {
		case "window", "move", "clip":
			m.blocks = BlocksMovement
		case "shot", "shots":
			m.blocks = BlocksShots
		}
	case "render", "nocol":
		m.role = roleRender
	case "spawn":
		if len(second) < 2 || second[0] != 't' {
			return mark{}, "named like a spawn, but not spawn_t<team>_…: not a spawn", nil
		}
		n, err := strconv.Atoi(second[1:])
		if err != nil || n < 1 || n > 255 {
			return mark{}, "named like a spawn, but not spawn_t<team>_… with a team in 1..255: not a spawn", nil
		}
		m.role, m.team = roleSpawn, uint8(n)
	case "bounds":
		m.role = roleBounds
	case "kill", "killvolume":
		m.role = roleKill
	case "wp":
		m.role = roleWaypoint
		id, links, err := waypointName(name)
		if err != nil {
			return mark{}, "", err
		}
		m.id, m.links = id, links
	}
	return m, "", nil
}

// dupSuffix is what tools append to a duplicated object's name: Blender's
// ".001", Unity's " (1)".
var dupSuffix = regexp.MustCompile(`(\.\d+| \(\d+\))$`)

// waypointName parses wp_<id>[__<link>]…, a waypoint with its links in
// its name, for tools that cannot write extras.
func waypointName(name string) (string, []link, error) {
	s := strings.ToLower(dupSuffix.ReplaceAllString(name, ""))
	if !strings.HasPrefix(s, "wp_") {
		return "", nil, fmt.Errorf("a waypoint's name is wp_<id>[__<link>…], not %q", name)
	}
	parts := strings.Split(s[3:], "__")
	if !validID(parts[0]) {
		return "", nil, fmt.Errorf("waypoint id %q is not letters, digits and '-' (name wp_<id>[__<link>…])", parts[0])
	}
	var links []link
	for _, p := range parts[1:] {
		l, err := parseLink(p)
		if err != nil {
			return "", nil, err
		}
		links = append(links, l)
	}
	return parts[0], links, nil
}

// parseLink parses <id>[_jump][_crouch][_oneway].
func parseLink(s string) (link, error) {
	words := strings.Split(strings.ToLower(s), "_")
	l := link{to: words[0]}
	if !validID(l.to) {
		return link{}, fmt.Errorf("link %q: %q is not a waypoint id (letters, digits and '-')", s, l.to)
	}
	for _, w := range words[1:] {
		switch w {
		case "jump":
			l.jump = true
		case "crouch":
			l.crouch = true
		case "oneway":
			l.oneway = true
		default:
			return link{}, fmt.Errorf("link %q: %q is not jump, crouch or oneway", s, w)
		}
	}
	return l, nil
}

func validID(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}
