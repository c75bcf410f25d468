// Package names holds the rule for players' display names: one rule for
// the name a Join gives on a server in open development mode and for the
// name a connect token grants (package token), so that a name the server
// shows every player in a room (the Joined events, the scoreboard, the kill
// feed) is one it can show: printable, visible, and not built to pass for
// another.
//
// A name is 1 to MaxLen bytes of UTF-8 in Unicode normalization form C
// (NFC), and none of its characters is:
//
//   - a control character (Unicode category Cc): new lines, ESC, NUL, …;
//   - a format character (Cf): zero-width space, word joiner, soft hyphen,
//     byte order mark, the bidi embeddings, overrides and isolates, LRM and
//     RLM, tag characters, …; except the zero-width joiner and non-joiner
//     where a script or an emoji needs them (below);
//   - a line or paragraph separator (Zl, Zp), or a space other than U+0020
//     (Zs: no-break, em, ideographic, … spaces);
//   - a private-use character (Co), a noncharacter, or a code point not
//     assigned in the Unicode version of Go's unicode package;
//   - default-ignorable (the Default_Ignorable_Code_Point property of
//     Unicode's DerivedCoreProperties.txt: characters that render as
//     nothing, such as the Hangul fillers U+115F, U+1160, U+3164 and
//     U+FFA0, the combining grapheme joiner and the variation selectors),
//     or one of the other characters known to render blank, U+2800 BRAILLE
//     PATTERN BLANK and U+1D159 MUSICAL SYMBOL NULL NOTEHEAD.
//
// Spaces: U+0020 only, not first, not last and never two in a row, so that
// what separates words is visible and cannot make two names that look
// alike.
//
// Combining marks: not first (a mark there would combine with whatever a
// client shows before the name), never the same nonspacing mark twice in a
// row, and at most 4 nonspacing marks in a row: the limits of Unicode
// Technical Standard #39, section 5.4, against marks that stack into a
// lookalike or out of the line.
//
// Emoji: the zero-width joiner U+200D may join two symbols (category So or
// Sm, as emoji are, the first optionally followed by U+FE0F or a skin tone
// modifier), so that emoji ZWJ sequences such as a family or a rainbow flag
// are names; U+FE0E and U+FE0F (text and emoji presentation) may follow a
// symbol. Tag sequences (the flags of England, Scotland and Wales) are
// refused: tag characters are invisible format characters. Scripts: U+200C and U+200D may follow a virama (canonical
// combining class 9), where they choose between a conjunct and its
// separate forms in Devanagari and other Indic scripts, as RFC 5892
// (Appendix A) allows them in domain names. Anywhere else they are
// invisible, and refused.
//
// The rule cannot tell two different names that look alike (Latin "a" and
// Cyrillic "а"): that needs the confusables of Unicode Technical Standard
// #39 and every name in use, which a matchmaker has and a game server does
// not (docs/tokens.md).
package names
