// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

struct FilterCaseFoldTests {
    /// Expected values come from ICU 72's `u_strFoldCase` with mpd's 2×-UTF-16 buffer, checked against mpd 0.23.12
    /// for every code point on its own and for 100,000 random strings, and against the real daemon with `search`.
    @Test(arguments: [
        ("", ""),
        ("abc", "abc"),
        ("ABC Def", "abc def"),
        ("Straße", "strasse"),
        ("STRASSE", "strasse"),
        ("SS", "ss"),
        ("İstanbul", "i\u{307}stanbul"),
        ("ΣΊΣΥΦΟΣ", "σίσυφοσ"),
        ("σίσυφος", "σίσυφοσ"),
        ("ＡＢＣ", "ａｂｃ"),
        ("Ꭰ", "Ꭰ"),
        ("ꭰ", "Ꭰ"),
        ("É", "é"),
        ("E\u{301}", "e\u{301}"),
        ("\u{212A}elvin", "kelvin"),
        ("Ǆ", "ǆ"),
        ("ǅ", "ǆ"),
        ("ΣΣ", "σσ"),
        ("ſ", "s"),
        ("Ωmega", "ωmega"),
        ("𐐀x", "𐐨x"),
    ])
    func folds(text: String, folded: String) {
        #expect(Array(FilterCaseFold.fold(text).unicodeScalars) == Array(folded.unicodeScalars))
    }

    /// When the folded text needs 2× the source's UTF-16 length or more, mpd keeps the source unfolded.
    @Test(arguments: ["ß", "ẞ", "ﬁ", "ﬃ", "ﬃx", "İ", "ŉ", "ΐ", "ΐa", "ΐA", "ßß", "ᾈ"])
    func textThatFillsMPDsBufferStaysUnfolded(text: String) {
        #expect(Array(FilterCaseFold.fold(text).unicodeScalars) == Array(text.unicodeScalars))
    }

    @Test func foldedTextComparesBytesNotCanonicalEquivalence() {
        #expect(FoldedText(folding: "É") != FoldedText(folding: "E\u{301}"))
        #expect(FoldedText(folding: "ABC") == FoldedText(alreadyFolded: "abc"))
        #expect(Set([FoldedText(folding: "é"), FoldedText(folding: "e\u{301}")]).count == 2)
    }
}
