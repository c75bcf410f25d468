package names

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/rangetable"
)

// Names people have, in many scripts, are accepted.
func TestOrdinaryNamesAccepted(t *testing.T) {
	for _, name := range []string{
		"Alice", "bot-01", "x_X.42", "O'Brien", "Ana María", "Dr. J",
		"José", "Zoë", "Łukasz", "Ærøskøbing", "Nguyễn Văn An", "Ðặng", "Ǆemal",
		"Дмитрий", "Αλέξανδρος", "Արամ", "ნინო",
		"山田太郎", "さくら", "サクラ", "김민수", "王小明",
		"محمد", "علی رضا", "דוד", "שָׁלוֹם",
		"नमस्ते", "देवनागरी", "क्‍ष", "क्‌ष", "தமிழ்", "สมชาย", "ພາສາລາວ",
		"😀", "👍🏽", "❤️", "Alice 🎯", "🇫🇷 Jean",
		"👨‍👩‍👧",            // family: man ZWJ woman ZWJ girl
		"🏳️‍🌈",             // rainbow flag: white flag VS16 ZWJ rainbow
		"🧑🏽‍🚀",             // astronaut, medium skin tone
		"❤️‍🔥",             // heart on fire
		"🙂‍↔️",             // head shaking horizontally: an Sm arrow
		"1⃣",               // a keycap without VS16
		"ÅÅÅÅÅÅÅÅÅÅÅÅÅÅÅÅ", // 32 bytes
		strings.Repeat("n", MaxLen),
	} {
		if err := Check(name); err != nil {
			t.Errorf("Check(%q): %v", name, err)
		}
	}
}

// Each kind of character, and each place, the rule refuses is refused
// with a message that says what and where.
func TestRefused(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"", "empty"},
		{strings.Repeat("n", MaxLen+1), "33 bytes, over 32"},
		{strings.Repeat("é", 17), "34 bytes, over 32"},
		{"Al\xffice", "not UTF-8 at byte 3"},
		{"Alic\xc3", "not UTF-8 at byte 5"},
		// Control characters (Cc).
		{"Al\nice", "character 3 is U+000A, a control character"},
		{"\x1b[31mRed", "character 1 is U+001B, a control character"},
		{"Al\x00ice", "character 3 is U+0000, a control character"},
		{"Al\tice", "character 3 is U+0009, a control character"},
		{"Al\x7fice", "character 3 is U+007F, a control character"},
		{"Al\u0085ice", "character 3 is U+0085, a control character"},
		{"日本\r", "character 3 is U+000D, a control character"},
		// Bidi controls.
		{"Al\u202Eice", "character 3 is U+202E (RIGHT-TO-LEFT OVERRIDE), a bidi control"},
		{"\u202Dx", "character 1 is U+202D (LEFT-TO-RIGHT OVERRIDE), a bidi control"},
		{"Al\u202Bice", "character 3 is U+202B (RIGHT-TO-LEFT EMBEDDING), a bidi control"},
		{"Al\u2066ice", "character 3 is U+2066 (LEFT-TO-RIGHT ISOLATE), a bidi control"},
		{"Al\u2069ice", "character 3 is U+2069 (POP DIRECTIONAL ISOLATE), a bidi control"},
		{"Al\u200Eice", "character 3 is U+200E (LEFT-TO-RIGHT MARK), a bidi control"},
		{"Al\u200Fice", "character 3 is U+200F (RIGHT-TO-LEFT MARK), a bidi control"},
		{"محمد\u061C", "character 5 is U+061C (ARABIC LETTER MARK), a bidi control"},
		// Other format characters (Cf).
		{"Al\u200Bice", "character 3 is U+200B (ZERO WIDTH SPACE), an invisible format character"},
		{"Al\u2060ice", "character 3 is U+2060 (WORD JOINER), an invisible format character"},
		{"\uFEFFAlice", "character 1 is U+FEFF (ZERO WIDTH NO-BREAK SPACE), an invisible format character"},
		{"Al\u00ADice", "character 3 is U+00AD (SOFT HYPHEN), an invisible format character"},
		{"Al\u180Eice", "character 3 is U+180E (MONGOLIAN VOWEL SEPARATOR), an invisible format character"},
		{"Al\u2062ice", "character 3 is U+2062 (INVISIBLE TIMES), an invisible format character"},
		{"Al\U000E0041ice", "character 3 is U+E0041 (TAG LATIN CAPITAL LETTER A), an invisible format character"},
		{"🏴\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F", "character 2 is U+E0067 (TAG LATIN SMALL LETTER G), an invisible format character"},
		// Joiners outside emoji sequences and viramas.
		{"Al\u200Dice", "character 3 is U+200D (ZERO WIDTH JOINER), a zero-width joiner, allowed only between two emoji (symbols) and after a virama"},
		{"\u200D😀", "character 1 is U+200D (ZERO WIDTH JOINER), a zero-width joiner, allowed only between two emoji (symbols) and after a virama"},
		{"😀\u200D", "character 2 is U+200D (ZERO WIDTH JOINER), a zero-width joiner, allowed only between two emoji (symbols) and after a virama"},
		{"😀\u200Da", "character 2 is U+200D (ZERO WIDTH JOINER), a zero-width joiner, allowed only between two emoji (symbols) and after a virama"},
		{"😀\u200D\u200D😀", "character 2 is U+200D (ZERO WIDTH JOINER), a zero-width joiner, allowed only between two emoji (symbols) and after a virama"},
		{"Al\u200Cice", "character 3 is U+200C (ZERO WIDTH NON-JOINER), a zero-width non-joiner, allowed only after a virama"},
		{"می\u200Cخواهم", "character 3 is U+200C (ZERO WIDTH NON-JOINER), a zero-width non-joiner, allowed only after a virama"},
		{"😀\u200C😀", "character 2 is U+200C (ZERO WIDTH NON-JOINER), a zero-width non-joiner, allowed only after a virama"},
		// Variation selectors.
		{"A\uFE0F", "character 2 is U+FE0F (VARIATION SELECTOR-16), a variation selector, allowed only as U+FE0E or U+FE0F after a symbol"},
		{"\uFE0F😀", "character 1 is U+FE0F (VARIATION SELECTOR-16), a variation selector, allowed only as U+FE0E or U+FE0F after a symbol"},
		{"1\uFE0F\u20E3", "character 2 is U+FE0F (VARIATION SELECTOR-16), a variation selector, allowed only as U+FE0E or U+FE0F after a symbol"},
		{"❤\uFE00", "character 2 is U+FE00 (VARIATION SELECTOR-1), a variation selector, allowed only as U+FE0E or U+FE0F after a symbol"},
		{"葛\U000E0100", "character 2 is U+E0100 (VARIATION SELECTOR-17), a variation selector, allowed only as U+FE0E or U+FE0F after a symbol"},
		// Separators and spaces.
		{"Al\u2028ice", "character 3 is U+2028 (LINE SEPARATOR), a line or paragraph separator"},
		{"Al\u2029ice", "character 3 is U+2029 (PARAGRAPH SEPARATOR), a line or paragraph separator"},
		{"Ana\u00A0María", "character 4 is U+00A0 (NO-BREAK SPACE), a space other than U+0020"},
		{"山田\u3000太郎", "character 3 is U+3000 (IDEOGRAPHIC SPACE), a space other than U+0020"},
		{"Al\u2003ice", "character 3 is U+2003 (EM SPACE), a space other than U+0020"},
		{" Alice", "begins with a space"},
		{"Alice ", "ends with a space"},
		{" ", "begins with a space"},
		{"Ana  María", "characters 4 and 5 are two spaces in a row"},
		// Private use, noncharacters, unassigned.
		{"Al\uE000ice", "character 3 is U+E000, a private-use character"},
		{"Al\U000F0000", "character 3 is U+F0000, a private-use character"},
		{"Al\uFDD0ice", "character 3 is U+FDD0, a noncharacter"},
		{"Al\uFFFEice", "character 3 is U+FFFE, a noncharacter"},
		{"Al\U0010FFFF", "character 3 is U+10FFFF, a noncharacter"},
		{"Al\u0378ice", "character 3 is U+0378, not assigned in Unicode " + unicode.Version},
		// Invisible letters and marks.
		{"\u3164", "character 1 is U+3164 (HANGUL FILLER), default-ignorable: it renders as nothing"},
		{"Al\u115Fice", "character 3 is U+115F (HANGUL CHOSEONG FILLER), default-ignorable: it renders as nothing"},
		{"Al\u1160ice", "character 3 is U+1160 (HANGUL JUNGSEONG FILLER), default-ignorable: it renders as nothing"},
		{"Al\uFFA0ice", "character 3 is U+FFA0 (HALFWIDTH HANGUL FILLER), default-ignorable: it renders as nothing"},
		{"Al\u034Fice", "character 3 is U+034F (COMBINING GRAPHEME JOINER), default-ignorable: it renders as nothing"},
		{"ក\u17B4", "character 2 is U+17B4 (KHMER VOWEL INHERENT AQ), default-ignorable: it renders as nothing"},
		{"\u2800", "character 1 is U+2800 (BRAILLE PATTERN BLANK), blank: it renders as nothing"},
		{"Al\U0001D159ice", "character 3 is U+1D159 (MUSICAL SYMBOL NULL NOTEHEAD), blank: it renders as nothing"},
		// Combining marks.
		{"\u0301Alice", "character 1 is U+0301 (COMBINING ACUTE ACCENT), a combining mark first: it would combine with whatever is shown before the name"},
		{"\u0903x", "character 1 is U+0903 (DEVANAGARI SIGN VISARGA), a combining mark first: it would combine with whatever is shown before the name"},
		{"\u20E3", "character 1 is U+20E3 (COMBINING ENCLOSING KEYCAP), a combining mark first: it would combine with whatever is shown before the name"},
		{"e\u0301\u0301", "character 3 is U+0301 (COMBINING ACUTE ACCENT), the same nonspacing mark as the character before"},
		{"a\u0300\u0301\u0302\u0303\u0304", "character 6 is U+0304 (COMBINING MACRON), nonspacing mark 5 in a row, over 4"},
		// Not in NFC.
		{"Jose\u0301", "not in Unicode normalization form C (NFC), from character 4"},
		{"\u212Bngström", "not in Unicode normalization form C (NFC), from character 1"}, // ANGSTROM SIGN
		{"a\uF900", "not in Unicode normalization form C (NFC), from character 2"},       // a CJK compatibility ideograph
	} {
		err := Check(tt.name)
		if want := "name: " + tt.want; err == nil || err.Error() != want {
			t.Errorf("Check(%q) = %v, want %q", tt.name, err, want)
		}
	}
}

// Every character of a refused kind is refused, wherever it is in the
// tables: the categories Cc, Cf, Zl, Zp, Zs (but U+0020), Co, the
// noncharacters, the unassigned code points (Cn), and every
// Default_Ignorable_Code_Point (Other_Default_Ignorable_Code_Point, Cf and
// the variation selectors, less some of them: Unicode's
// DerivedCoreProperties.txt).
func TestEveryCharacterOfARefusedKind(t *testing.T) {
	tables := map[string]*unicode.RangeTable{
		"Cc": unicode.Cc, "Cf": unicode.Cf, "Cn": unicode.Cn, "Zl": unicode.Zl, "Zp": unicode.Zp, "Zs": unicode.Zs, "Co": unicode.Co,
		"Noncharacter_Code_Point":            unicode.Noncharacter_Code_Point,
		"Other_Default_Ignorable_Code_Point": unicode.Other_Default_Ignorable_Code_Point,
		"Variation_Selector":                 unicode.Variation_Selector,
	}
	refused := func(r rune, kind string) {
		// Between letters: neither a symbol nor a virama is near.
		err := Check("a" + string(r) + "b")
		if want := fmt.Sprintf("name: character 2 is U+%04X", r); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s U+%04X: Check = %v, want %q…", kind, r, err, want)
		}
	}
	for kind, tab := range tables {
		rangetable.Visit(tab, func(r rune) {
			if r != ' ' {
				refused(r, kind)
			}
		})
	}
}
