// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

/// A block's lines as `mpd`'s `ConfigBlock` reads them: values with their lines' numbers in the errors, and what
/// was read remembered for `option 'x' on line N was not recognized`.
struct BlockParametersTests {
    private let block = BlockParameters([
        .init(name: "type", value: "null", line: 2), .init(name: "sync", value: "maybe", line: 3),
        .init(name: "port", value: " +8000", line: 4), .init(name: "size", value: "0", line: 5),
        .init(name: "left", value: "-1", line: 6), .init(name: "bad", value: "12x", line: 7),
        .init(name: "on", value: "TRUE", line: 8),
    ])

    @Test func lookingAKeyUpMarksItReadInEveryCopy() {
        let copy = self.block
        #expect(copy["type"] == "null")
        #expect(copy["nosuch"] == nil)
        #expect(!copy.contains("nosuch") && copy.contains("sync"))
        #expect(self.block.unread.map(\.name) == ["sync", "port", "size", "left", "bad", "on"])
        #expect(self.block.line("on")?.line == 8)
        #expect(self.block.unread.map(\.name) == ["sync", "port", "size", "left", "bad"])
    }

    @Test func valuesAsMPDParsesThem() throws {
        #expect(try self.block.bool("on") == true)
        #expect(try self.block.bool("nosuch") == nil)
        #expect(try self.block.unsigned("port") == 8000)
        #expect(try self.block.positive("port") == 8000)
        #expect(try self.block.unsigned("size") == 0)
        #expect(try BlockParameters(["n": "4294967297"]).positive("n") == 1)
    }

    @Test(arguments: [
        ("sync", "bool", #"Error in setting "sync" on line 3; Not a valid boolean ("yes" or "no"): "maybe""#),
        ("size", "positive", #"Error in setting "size" on line 5; Value must be positive"#),
        ("left", "unsigned", #"Error in setting "left" on line 6; Value must not be negative"#),
        ("bad", "unsigned", #"Error in setting "bad" on line 7; Failed to parse number"#),
        ("bad", "positive", #"Error in setting "bad" on line 7; Failed to parse number"#),
    ])
    func badValuesNameTheirLine(key: String, kind: String, message: String) {
        #expect(throws: BlockValueError(message)) {
            switch kind {
            case "bool": _ = try self.block.bool(key)
            case "positive": _ = try self.block.positive(key)
            default: _ = try self.block.unsigned(key)
            }
        }
        #expect(!self.block.unread.map(\.name).contains(key))
    }

    @Test func equalityIgnoresWhatWasRead() {
        let other = BlockParameters(self.block.lines)
        _ = other["type"]
        #expect(other == self.block)
        #expect(BlockParameters(["a": "1"]) == ["a": "1"])
    }
}
