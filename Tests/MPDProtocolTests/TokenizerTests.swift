// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import MPDProtocol

struct TokenizerTests {
    private func tokenize(_ text: String) throws(Tokenizer.Failure) -> Tokenizer.Request {
        try Tokenizer.tokenize(Array(text.utf8))
    }

    @Test(arguments: [
        ("ping", "ping", [String]()),
        ("play 6", "play", ["6"]),
        ("addid \"u\"  3", "addid", ["u", "3"]),
        ("find \"a\\\"b\" x", "find", ["a\"b", "x"]),
        ("find \"a\\\\b\"", "find", ["a\\b"]),
        ("find \"\\n\"", "find", ["n"]),
        ("find a\\b", "find", ["a\\b"]),
        ("find \"\"", "find", [""]),
        ("find \"été 東京 🎵\"", "find", ["été 東京 🎵"]),
        ("find été", "find", ["été"]),
        ("a_b1 x\ty", "a_b1", ["x", "y"]),
        ("ping\u{01}x", "ping", ["x"]),
        ("list \"genre\"", "list", ["genre"]),
    ])
    func accepts(line: String, name: String, arguments: [String]) throws {
        let request = try self.tokenize(line)
        #expect(request.name == name)
        #expect(request.arguments == arguments)
    }

    @Test(arguments: [
        ("ping \"a", "Missing closing '\"'"),
        ("ping \"a\\\"", "Missing closing '\"'"),
        ("ping \"a\"b", "Space expected after closing '\"'"),
        ("ping a\"b", "Invalid unquoted character"),
        ("ping 'a", "Invalid unquoted character"),
        ("ping a'", "Invalid unquoted character"),
    ])
    func argumentErrors(line: String, message: String) {
        #expect(throws: Tokenizer.Failure.argument(message)) { try self.tokenize(line) }
        #expect(Tokenizer.Failure.argument(message).ack == AckError(.unknown, message))
    }

    @Test(arguments: ["a-b", "status\"x\"", "p\u{e9}ng", "ping'"])
    func invalidWordCharacter(line: String) {
        #expect(throws: Tokenizer.Failure.invalidWordCharacter) { try self.tokenize(line) }
    }

    @Test func sixtyThreeArgumentsAreTheLimit() throws {
        let base = "ping"
        let sixtyThree = base + String(repeating: " a", count: 63)
        #expect(try self.tokenize(sixtyThree).arguments.count == 63)
        #expect(throws: Tokenizer.Failure.tooManyArguments) { try self.tokenize(sixtyThree + " a") }
        #expect(Tokenizer.Failure.tooManyArguments.ack == AckError(.arg, "Too many arguments"))
    }

    @Test func ackLine() {
        #expect(
            AckError(.noExist, "No such song").line(index: 2, command: "playid") == "ACK [50@2] {playid} No such song")
    }
}

struct LineFramerTests {
    @Test func splitsAndStrips() {
        var framer = LineFramer()
        let buffer = Array("ping\t \r\nstatus\n".utf8)[...]
        #expect(framer.next(in: buffer) == .line(Array("ping".utf8)[...], consumed: 8))
        #expect(framer.next(in: buffer.dropFirst(8)) == .line(Array("status".utf8)[...], consumed: 7))
    }

    @Test func stopsAtNul() {
        var framer = LineFramer()
        let buffer = Array("ping a\u{0}b\n".utf8)[...]
        guard case .line(let line, let consumed) = framer.next(in: buffer) else {
            Issue.record("no line")
            return
        }
        #expect(Array(line) == Array("ping a".utf8))
        #expect(consumed == 9)
    }

    @Test func waitsForMoreAcrossChunks() {
        var framer = LineFramer()
        var buffer = Array("pi".utf8)
        #expect(framer.next(in: buffer[...]) == .needMore)
        buffer += Array("ng".utf8)
        #expect(framer.next(in: buffer[...]) == .needMore)
        buffer += [10]
        #expect(framer.next(in: buffer[...]) == .line(Array("ping".utf8)[...], consumed: 5))
    }

    @Test func lengthLimitCountsTheNewline() {
        var framer = LineFramer(maximumLineLength: 8)
        #expect(framer.next(in: Array("1234567\n".utf8)[...]) == .line(Array("1234567".utf8)[...], consumed: 8))
        var other = LineFramer(maximumLineLength: 8)
        #expect(other.next(in: Array("12345678".utf8)[...]) == .overflow)
        var third = LineFramer(maximumLineLength: 8)
        #expect(third.next(in: Array("12345678\n".utf8)[...]) == .overflow)
    }

    @Test(arguments: [1, 2, 3, 7, 64])
    func chunkSizesDoNotMatter(chunk: Int) {
        let input = Array("ping\ncommand_list_begin\nstatus  \n\nidle player\n".utf8)
        var framer = LineFramer()
        var buffer: [UInt8] = []
        var lines: [String] = []
        var offset = 0
        while offset < input.count {
            buffer += input[offset..<min(offset + chunk, input.count)]
            offset += chunk
            while case .line(let line, let consumed) = framer.next(in: buffer[...]) {
                lines.append(String(decoding: line, as: UTF8.self))
                buffer.removeFirst(consumed)
            }
        }
        #expect(lines == ["ping", "command_list_begin", "status", "", "idle player"])
    }
}

struct ArgumentParserTests {
    @Test(arguments: [("64", UInt64(64)), (" 100", 100), ("+100", 100), ("0", 0)])
    func unsignedAccepts(text: String, value: UInt64) throws {
        #expect(try ArgumentParser.unsigned(text) == value)
    }

    @Test(arguments: [
        ("x", "Integer expected: x"), ("", "Integer expected: "), ("1.5", "Integer expected: 1.5"),
        ("0x100", "Integer expected: 0x100"), ("100abc", "Integer expected: 100abc"),
        ("-1", "Number too large: -1"), ("99999999999", "Number too large: 99999999999"),
    ])
    func unsignedRejects(text: String, message: String) {
        #expect(throws: AckError(.arg, message)) { try ArgumentParser.unsigned(text) }
    }

    @Test func boolAndFloat() throws {
        #expect(try ArgumentParser.bool("1"))
        #expect(throws: AckError(.arg, "Boolean (0/1) expected: 2")) { try ArgumentParser.bool("2") }
        #expect(try ArgumentParser.float("2.5") == 2.5)
        #expect(throws: AckError(.arg, "Float expected: abc")) { try ArgumentParser.float("abc") }
        #expect(try ArgumentParser.signed("-5") == -5)
    }

    @Test func boolReadsLikeStrtol() throws {
        #expect(try ArgumentParser.bool(" 1"))
        #expect(try ArgumentParser.bool("+1"))
        #expect(try !ArgumentParser.bool("-0"))
        #expect(try ArgumentParser.bool("01"))
        for text in ["-1", "1x", "", "10", "99999999999999999999"] {
            #expect(throws: AckError(.arg, "Boolean (0/1) expected: \(text)")) { try ArgumentParser.bool(text) }
        }
    }

    @Test func u32WrapsLikeStrtoul() throws {
        #expect(try ArgumentParser.u32("7") == 7)
        #expect(try ArgumentParser.u32("-1") == UInt32.max)
        #expect(try ArgumentParser.u32("4294967297") == 1)
        #expect(throws: AckError(.arg, "Integer expected: 1x")) { try ArgumentParser.u32("1x") }
    }
}

struct IdleEventTests {
    @Test func fourteenSubsystemsInWireOrder() {
        #expect(
            IdleEvent.allCases.map(\.name) == [
                "database", "stored_playlist", "playlist", "player", "mixer", "output", "options", "sticker",
                "update", "subscription", "message", "neighbor", "mount", "partition",
            ])
        #expect(IdleEvent(parsing: "PLAYER") == .player)
        #expect(IdleEvent(parsing: "foo") == nil)
    }

    @Test func permissionsParse() {
        #expect(Permission(parsingList: "read,add") == [.read, .add])
        #expect(Permission(parsingList: "control") == [.control, .player])
        #expect(Permission(parsingList: "read,bogus") == nil)
    }
}

struct TokenizerRawBytesTests {
    @Test func latin1ArgumentSurvivesAsAnEscape() throws {
        let quoted = Array("lsinfo \"Charset/caf".utf8) + [0xE9] + Array(" latin1.mp3\"".utf8)
        let request = try Tokenizer.tokenize(quoted)
        #expect(request.name == "lsinfo")
        #expect(request.arguments == ["Charset/caf\u{10FEE9} latin1.mp3"])
        let unquoted = try Tokenizer.tokenize(Array("lsinfo caf".utf8) + [0xE9, 0xFF])
        #expect(unquoted.arguments == ["caf\u{10FEE9}\u{10FEFF}"])
        // Valid UTF-8 is untouched.
        #expect(try Tokenizer.tokenize(Array("find caf\u{E9}".utf8)).arguments == ["caf\u{E9}"])
    }
}
