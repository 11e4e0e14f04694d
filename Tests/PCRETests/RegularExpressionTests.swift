// SPDX-License-Identifier: GPL-3.0-or-later

import PCRE
import Testing

struct RegularExpressionTests {
    @Test(arguments: [
        ("^A", "Alpha", true),
        ("^A", "beta", false),
        ("ph", "Alpha", true),
        ("a.b", "a\nb", true),
        ("", "", true),
        ("", "x", true),
        ("^$", "", true),
        ("(?<n>x)\\k<n>", "xx", true),
        ("^.$", "é", false),
        ("^..$", "é", true),
        ("^\\w$", "é", false),
        ("\\x{e9}", "é", false),
    ])
    func mpdOptions(pattern: String, text: String, matches: Bool) throws {
        #expect(try RegularExpression(pattern).matches(text) == matches)
    }

    @Test(arguments: [
        ("^a", "Alpha", true),
        ("STRA", "straße", true),
        ("É", "é", false),
        ("é", "É", false),
    ])
    func caselessIsASCIIOnly(pattern: String, text: String, matches: Bool) throws {
        #expect(try RegularExpression(pattern, options: .mpdFilterCaseless).matches(text) == matches)
    }

    @Test func utfOptionChangesDot() throws {
        #expect(try RegularExpression("^.$", options: [.utf, .dotAll]).matches("é"))
    }

    @Test(arguments: [
        ("(", "Error in regex at offset 1: missing closing parenthesis"),
        ("[", "Error in regex at offset 1: missing terminating ] for character class"),
        ("a{2,1}", "Error in regex at offset 5: numbers out of order in {} quantifier"),
    ])
    func compileErrorsUseMPDText(pattern: String, message: String) {
        #expect(throws: RegularExpressionError.self) { try RegularExpression(pattern) }
        do {
            _ = try RegularExpression(pattern)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func patternEndsAtNUL() throws {
        let expression = try RegularExpression("^ab\u{0}c")
        #expect(expression.matches("abx"))
    }

    @Test func concurrentMatchingSharesOneExpression() async throws {
        let expression = try RegularExpression("^(a|b)+c$")
        let texts = (0..<200).map { $0 % 2 == 0 ? String(repeating: "ab", count: $0 + 1) + "c" : "abd\($0)" }
        let counts = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask { texts.reduce(0) { $0 + (expression.matches($1) ? 1 : 0) } }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(counts == Array(repeating: 100, count: 8))
    }
}
