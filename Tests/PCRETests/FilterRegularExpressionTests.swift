// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import PCRE
import Testing

/// `RegularExpression` as Model's `FilterRegularExpression`: the engine behind `=~` and `!~` filters.
struct FilterRegularExpressionTests {
    /// Compiles through the protocol, as the filter parser does.
    private func compile(
        _ pattern: String, caseless: Bool, engine: any FilterRegularExpression.Type = RegularExpression.self
    ) throws(FilterRegularExpressionError) -> any FilterRegularExpression {
        try engine.init(filterPattern: pattern, caseless: caseless)
    }

    @Test func caselessSelectsMPDsCaselessOptions() throws {
        #expect(try !self.compile("STRA", caseless: false).matches("Straße"))
        #expect(try self.compile("STRA", caseless: true).matches("Straße"))
        #expect(try !self.compile("É", caseless: true).matches("é"))
        #expect(try self.compile("a.b", caseless: false).matches("a\nb"))
    }

    @Test func compileErrorsCarryMPDsText() {
        #expect(throws: FilterRegularExpressionError("Error in regex at offset 1: missing closing parenthesis")) {
            try self.compile("(", caseless: false)
        }
    }

    @Test func aFilterOperandMatchesThroughTheEngine() throws {
        let matcher = try StringMatcher(regex: "^b", foldCase: true, negated: true, using: RegularExpression.self)
        #expect(matcher.operatorText == "!~")
        #expect(!matcher.matches("Beta"))
        #expect(matcher.matches("alpha"))
    }
}
