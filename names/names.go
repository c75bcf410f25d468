package names

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/runenames"
)

// MaxLen is the longest name, in bytes of UTF-8.
const MaxLen = 32

// maxMarks is the most nonspacing marks in a row (UTS #39, section 5.4).
const maxMarks = 4

const (
	zwnj = '\u200C' // ZERO WIDTH NON-JOINER
	zwj  = '\u200D' // ZERO WIDTH JOINER
	vs15 = '\uFE0E' // VARIATION SELECTOR-15: text presentation
	vs16 = '\uFE0F' // VARIATION SELECTOR-16: emoji presentation

	virama = 9 // the canonical combining class of viramas
)

// blank reports the characters that render as nothing without being
// default-ignorable.
func blank(r rune) bool {
	return r == '\u2800' || // BRAILLE PATTERN BLANK
		r == '\U0001D159' // MUSICAL SYMBOL NULL NOTEHEAD
}

// Check returns nil if name is a valid display name (see the package
// comment), else an error that says what is wrong and where, counting
// characters (code points) from 1, such as
// "name: character 3 is U+202E (RIGHT-TO-LEFT OVERRIDE), a bidi control".
func Check(name string) error {
	switch {
	case name == "":
		return errors.New("name: empty")
	case len(name) > MaxLen:
		return fmt.Errorf("name: %d bytes, over %d", len(name), MaxLen)
	}
	var prev rune // the character before, 0 at the start
	marks := 0    // nonspacing marks in a row, up to this character
	n := 0        // the character's position
	for i, r := range name {
		n++
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(name[i:]); size == 1 {
				return fmt.Errorf("name: not UTF-8 at byte %d", i+1)
			}
		}
		if unicode.In(r, unicode.Mn, unicode.Me) {
			marks++
		} else {
			marks = 0
		}
		var why string
		switch {
		case r == ' ' && n == 1:
			return errors.New("name: begins with a space")
		case r == ' ' && i == len(name)-1:
			return errors.New("name: ends with a space")
		case r == ' ' && prev == ' ':
			return fmt.Errorf("name: characters %d and %d are two spaces in a row", n-1, n)
		case r == ' ':
		case unicode.Is(unicode.Cc, r):
			why = "a control character"
		case unicode.Is(unicode.Bidi_Control, r):
			why = "a bidi control"
		case r == zwj && !afterVirama(prev) && !(afterSymbol(name[:i]) && beforeSymbol(name[i+len(string(zwj)):])):
			why = "a zero-width joiner, allowed only between two emoji (symbols) and after a virama"
		case r == zwnj && !afterVirama(prev):
			why = "a zero-width non-joiner, allowed only after a virama"
		case r == zwj || r == zwnj:
		case unicode.Is(unicode.Variation_Selector, r) && !((r == vs15 || r == vs16) && isSymbol(prev)):
			why = "a variation selector, allowed only as U+FE0E or U+FE0F after a symbol"
		case unicode.Is(unicode.Cf, r):
			why = "an invisible format character"
		case unicode.In(r, unicode.Zl, unicode.Zp):
			why = "a line or paragraph separator"
		case unicode.Is(unicode.Zs, r):
			why = "a space other than U+0020"
		case unicode.Is(unicode.Co, r):
			why = "a private-use character"
		case unicode.Is(unicode.Noncharacter_Code_Point, r):
			why = "a noncharacter"
		case unicode.Is(unicode.Cn, r):
			why = "not assigned in Unicode " + unicode.Version
		case unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
			why = "default-ignorable: it renders as nothing"
		case blank(r):
			why = "blank: it renders as nothing"
		case n == 1 && unicode.Is(unicode.M, r):
			why = "a combining mark first: it would combine with whatever is shown before the name"
		case marks > 1 && r == prev:
			why = "the same nonspacing mark as the character before"
		case marks > maxMarks:
			why = fmt.Sprintf("nonspacing mark %d in a row, over %d", marks, maxMarks)
		}
		if why != "" {
			return fmt.Errorf("name: character %d is %s, %s", n, describe(r), why)
		}
		prev = r
	}
	if !norm.NFC.IsNormalString(name) {
		at := utf8.RuneCountInString(name[:norm.NFC.QuickSpanString(name)]) + 1
		return fmt.Errorf("name: not in Unicode normalization form C (NFC), from character %d", at)
	}
	return nil
}

// describe returns a character's code point and, where Unicode gives it
// one, its name: "U+202E (RIGHT-TO-LEFT OVERRIDE)", or "U+000A" for a
// control character.
func describe(r rune) string {
	name := runenames.Name(r)
	if name == "" || name[0] == '<' { // "<control>", "<CJK Ideograph>", …
		return fmt.Sprintf("U+%04X", r)
	}
	return fmt.Sprintf("U+%04X (%s)", r, name)
}

// afterVirama reports whether r is a virama, after which U+200C and U+200D
// choose how an Indic conjunct is drawn (RFC 5892, Appendix A).
func afterVirama(r rune) bool {
	return r != 0 && norm.NFC.PropertiesString(string(r)).CCC() == virama
}

// afterSymbol reports whether s ends in a symbol, followed by at most
// an emoji presentation selector or a skin tone modifier: the end of an
// emoji that a zero-width joiner may join to the next.
func afterSymbol(s string) bool {
	r, size := utf8.DecodeLastRuneInString(s)
	if r == vs16 || isSkinTone(r) {
		r, size = utf8.DecodeLastRuneInString(s[:len(s)-size])
	}
	return size > 0 && isSymbol(r)
}

// beforeSymbol reports whether s begins with a symbol.
func beforeSymbol(s string) bool {
	r, size := utf8.DecodeRuneInString(s)
	return size > 0 && isSymbol(r)
}

// isSymbol reports whether r is a symbol an emoji sequence may join: of
// category So (nearly every emoji) or Sm (the arrows U+2194 and U+2195 of
// "head shaking" emoji).
func isSymbol(r rune) bool { return unicode.In(r, unicode.So, unicode.Sm) }

// isSkinTone reports whether r is an emoji modifier, U+1F3FB to U+1F3FF.
func isSkinTone(r rune) bool { return r >= '\U0001F3FB' && r <= '\U0001F3FF' }
