// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import PCRE
import Testing

@testable import MPDProtocol

struct FilterParserTests {
    private func parse(_ arguments: [String], fold: Bool = false) throws(AckError) -> SongFilter {
        try FilterParser.parse(arguments: arguments[...], foldCase: fold, regex: RegularExpression.self)
    }

    private func matcher(_ item: FilterItem?) -> StringMatcher? {
        switch item {
        case .tag(_, let matcher), .anyTag(let matcher), .uri(let matcher): matcher
        default: nil
        }
    }

    /// The protocol tokenizer removes the outer layer; the expression's quoted value removes the inner one.
    @Test(arguments: [
        (#"find "(Artist == \"foo\\'bar\\\"\")""#, #"foo'bar""#),
        (#"find "(Artist == \"O\\'Brien\")""#, "O'Brien"),
        (#"find "(Artist == 'O\\'Brien')""#, "O'Brien"),
        (#"find "(title == 'a\\\\b\\\"c')""#, #"a\b"c"#),
        (#"find "(title == \"a\\\\b\\\"c\")""#, #"a\b"c"#),
        (#"find "(title == '\\x\\y')""#, "xy"),
        (#"find "(title == \"it's\")""#, "it's"),
    ])
    func twoEscapingLayers(line: String, value: String) throws {
        let request = try Tokenizer.tokenize(Array(line.utf8))
        let filter = try FilterParser.parse(
            arguments: request.arguments[...], foldCase: false, regex: RegularExpression.self)
        #expect(self.matcher(filter.items.first)?.value == value)
    }

    @Test func legacyPairsFindExactSearchSubstringFolded() throws {
        let find = try self.parse(["artist", "Alpha", "file", "x", "any", "y"])
        #expect(find.items.map { self.matcher($0)?.operation } == [.equals, .equals, .equals])
        #expect(find.items.allSatisfy { self.matcher($0)?.foldCase == false })
        let search = try self.parse(["artist", "alp"], fold: true)
        #expect(self.matcher(search.items.first)?.operation == .contains)
        #expect(self.matcher(search.items.first)?.foldCase == true)
        let expression = try self.parse(["(artist == 'alpha')"], fold: true)
        #expect(self.matcher(expression.items.first)?.operation == .equals)
    }

    @Test func legacyAudioFormatNeverMatches() throws {
        let filter = try self.parse(["AudioFormat", "44100:24:2"])
        guard case .never = filter.items.first else {
            Issue.record("expected .never")
            return
        }
    }

    @Test(arguments: [
        ("a", true), ("a/b c", true), ("...", true), (".a", true), ("", false), (".", false), ("..", false),
        ("/a", false), ("a/", false), ("a//b", false), ("a/./b", false), ("a/../b", false), ("../a", false),
    ])
    func legacyBaseNeedsASafeRelativePath(uri: String, safe: Bool) {
        #expect(FilterParser.isSafeLocalURI(Array(uri.utf8)) == safe)
    }

    @Test(arguments: [
        ("2019-12-31T23:59:59", Int64(1_577_836_799)),
        ("2019-12-31T23:59:59Z", 1_577_836_799),
        ("2020-01-01T00:59:59+01:00", 1_577_836_799),
        ("2020-01-01T01:00+0100", 1_577_836_800),
        ("20200101T010000+0100", 1_577_836_800),
        ("2019-12-31T23:59:59-00:01", 1_577_836_859),
        ("2019-12", 1_575_158_400),
        ("2019-12-31T23", 1_577_833_200),
        ("2019-12-31T2359", 1_577_836_740),
        ("2019-12-31T23 59", 1_577_836_740),
        ("2019-12-31T23:59:60", 1_577_836_800),
        ("2019-12-31T23:59:61", 1_577_836_801),
        ("2019-02-30", 1_551_484_800),
        ("2019123", 1_575_331_200),
        ("1970-01-01", 0),
        ("0000-01-01", -62_167_219_200),
        ("9999-12-31T23:59:59", 253_402_300_799),
        ("1577836800", 1_577_836_800),
        (" 1577836800", 1_577_836_800),
        ("2019", 2019),
        ("-1", -1),
        ("99999999999999999999", -1),
        ("18446744073709551615", -1),
        ("2019-12-31T23:59:59+-0", 1_577_836_799),
        ("2019-12-31T23:59:59+ 1", 1_577_833_199),
        ("2019-12-31T23:59:59+01: 0", 1_577_833_199),
    ])
    func timestamps(text: String, seconds: Int64) throws {
        #expect(try FilterTimestamp.parse(Array(text.utf8)) == seconds)
    }

    @Test(arguments: [
        ("44100:24:2", false, AudioFormatMask(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        ("48000:24_3:1", false, AudioFormatMask(sampleRate: 48000, sampleFormat: .s24, channels: 1)),
        ("44100:f:2", false, AudioFormatMask(sampleRate: 44100, sampleFormat: .float, channels: 2)),
        ("44100:dsd:2", false, AudioFormatMask(sampleRate: 44100, sampleFormat: .dsd, channels: 2)),
        ("dsd64:2", false, AudioFormatMask(sampleRate: 352_800, sampleFormat: .dsd, channels: 2)),
        ("dsd64:*", true, AudioFormatMask(sampleRate: 352_800, sampleFormat: .dsd, channels: nil)),
        ("*:*:*", true, AudioFormatMask(sampleRate: nil, sampleFormat: nil, channels: nil)),
        ("*:8:*", true, AudioFormatMask(sampleRate: nil, sampleFormat: .s8, channels: nil)),
        (" 22050:32:8", false, AudioFormatMask(sampleRate: 22050, sampleFormat: .s32, channels: 8)),
        ("+44100:16:+2", false, AudioFormatMask(sampleRate: 44100, sampleFormat: .s16, channels: 2)),
    ])
    func audioFormats(text: String, mask: Bool, expected: AudioFormatMask) throws {
        #expect(try FilterAudioFormat.parse(Array(text.utf8), mask: mask) == expected)
    }

    @Test(arguments: [
        ("0:1", WindowRange(start: 0, end: 1)), ("1", WindowRange(start: 1, end: 2)),
        ("1:", WindowRange(start: 1, end: nil)), ("-1", .all), ("+1:+2", WindowRange(start: 1, end: 2)),
        (" 1", WindowRange(start: 1, end: 2)), ("1: 2", WindowRange(start: 1, end: 2)),
        ("2147483647", WindowRange(start: 2_147_483_647, end: 2_147_483_648)), ("3:3", WindowRange(start: 3, end: 3)),
    ])
    func windows(text: String, window: WindowRange) throws {
        #expect(try WindowRange.parse(text) == window)
    }

    @Test func windowIndices() {
        #expect(WindowRange.all.indices(count: 3) == 0..<3)
        #expect(WindowRange(start: 1, end: nil).indices(count: 3) == 1..<3)
        #expect(WindowRange(start: 1, end: 9).indices(count: 3) == 1..<3)
        #expect(WindowRange(start: 5, end: 9).indices(count: 3).isEmpty)
        #expect(WindowRange(start: 2, end: 2).indices(count: 3).isEmpty)
    }

    @Test(arguments: [
        ("Title", SortOrder(key: .tag(.title))), ("-title", SortOrder(key: .tag(.title), descending: true)),
        ("last-modified", SortOrder(key: .lastModified)),
        ("-Last-Modified", SortOrder(key: .lastModified, descending: true)),
        ("MUSICBRAINZ_TRACKID", SortOrder(key: .tag(.musicBrainzTrackID))),
    ])
    func sortOrders(text: String, order: SortOrder) throws {
        #expect(try SortOrder.parse(text) == order)
    }

    @Test(arguments: ["", "-", "--Title", "file", "any", "AudioFormat", "Trac\u{212A}", "Title "])
    func unknownSortTags(text: String) {
        #expect(throws: AckError(.arg, "Unknown sort tag")) { try SortOrder.parse(text) }
    }

    @Test func selectionTakesWindowThenSortFromTheEnd() throws {
        let selection = try FilterSelection.parse(
            arguments: ["artist", "A", "sort", "-Track", "window", "2:"], foldCase: false, regex: RegularExpression.self
        )
        #expect(selection.sort == SortOrder(key: .tag(.track), descending: true))
        #expect(selection.window == WindowRange(start: 2, end: nil))
        #expect(selection.filter.items.count == 1)
        #expect(throws: AckError(.arg, "Unknown filter type")) {
            try FilterSelection.parse(
                arguments: ["artist", "A", "window", "1", "sort", "Title"], foldCase: false,
                regex: RegularExpression.self)
        }
    }

    @Test func positionIsSplitOffFirst() throws {
        let (rest, position) = FilterSelection.splitPosition(["artist", "A", "window", "0:1", "position", "+0"])
        #expect(rest == ["artist", "A", "window", "0:1"])
        #expect(position == "+0")
        let (unchanged, none) = FilterSelection.splitPosition(["artist", "position"])
        #expect(unchanged == ["artist", "position"])
        #expect(none == nil)
    }

    @Test func argumentsAreCStrings() throws {
        #expect(throws: AckError(.arg, "Closing quote not found")) { try self.parse(["(artist == 'a\u{0}b')"]) }
        let filter = try self.parse(["artist", "a\u{0}b"])
        #expect(self.matcher(filter.items.first)?.value == "a")
    }

    @Test func everyErrorIsCodeTwo() {
        for arguments in [["(x"], ["artist"], ["foo", "bar"], ["base", "/"], ["(artist =~ '(')"]] {
            do {
                _ = try self.parse(arguments)
                Issue.record("\(arguments) parsed")
            } catch {
                #expect(error.code == .arg)
            }
        }
    }
}
