// SPDX-License-Identifier: GPL-3.0-or-later

import Formats
import Model
import Testing

/// Hostile and broken files: each must throw or return partial info, never crash. Where `mpd` 0.23.12 gave
/// an answer (measured on these fixtures) it is checked.
@Suite struct MP3RobustnessTests {
    static func audio() throws -> [UInt8] {
        try Fixtures.contents(try Fixtures.lame("robust_base.mp3", rate: 44100, channels: 2, seconds: "2"))
    }

    /// Files `mpd` does not list (mad and mpg123 both fail): we must say `notRecognized`.
    @Test(arguments: ["zero", "one_byte", "text", "id3_only", "truncated_header", "huge_id3_size"])
    func unrecognisedFilesThrow(_ kind: String) throws {
        let bytes: [UInt8] =
            switch kind {
            case "zero": []
            case "one_byte": [0xFF]
            case "text": Array(String(repeating: "This is not an MP3 file at all.\n", count: 100).utf8)
            case "id3_only": TagBytes.id3v24([TagBytes.textFrame("TIT2", ["only a tag"])])
            case "huge_id3_size": Array("ID3".utf8) + [3, 0, 0, 0x7F, 0x7F, 0x7F, 0x7F] + (try Self.audio())
            default: Array(try Self.audio().prefix(100))
            }
        let path = try Fixtures.bytes("unrecognised_\(kind).mp3", bytes)
        #expect(throws: FormatError.notRecognized(path: path)) { try MP3Format().readInfo(path: path) }
        #expect(throws: FormatError.notRecognized(path: path)) { try MP3Format().readPicture(path: path) }
    }

    @Test func missingFileIsAnIOError() {
        #expect {
            try MP3Format().readInfo(path: "/nonexistent/file.mp3")
        } throws: { error in
            if case .io = error as? FormatError { return true }
            return false
        }
    }

    /// Truncated and damaged files `mpd` still lists, with its durations (measured on mpd 0.23.12).
    @Test(arguments: [
        ("truncated_5000", 2037), ("truncated_20000", 2037), ("headcut_417", 2037), ("headcut_1000", 1959),
        ("malformed_frames", 2037), ("garbage_prefix", 2037),
    ])
    func damagedFiles(_ kind: String, _ milliseconds: UInt64) throws {
        let audio = try Self.audio()
        let bytes: [UInt8] =
            switch kind {
            case "truncated_5000": Array(audio.prefix(5000))
            case "truncated_20000": Array(audio.prefix(20000))
            case "headcut_417": Array(audio.dropFirst(417))
            case "headcut_1000": Array(audio.dropFirst(1000))
            case "malformed_frames":
                Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, 0x40] + Array("TIT2".utf8) + [0, 0, 0xFF, 0xFF, 0, 0, 3]
                    + Array("abc".utf8) + [UInt8](repeating: 0xFF, count: 44) + audio
            default: (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) } + audio
            }
        let path = try Fixtures.bytes("damaged_\(kind).mp3", bytes)
        let info = try MP3Format().readInfo(path: path)
        #expect(info.audioFormat?.description == "44100:24:2")
        #expect(info.durationMilliseconds == milliseconds)
    }

    /// Random bytes: any answer is fine, as long as nothing crashes.
    @Test(arguments: 0..<16)
    func randomBytesNeverCrash(_ seed: Int) throws {
        var generator = SplitMix(seed: UInt64(seed))
        let count = [0, 1, 9, 10, 127, 128, 1000, 50000][seed % 8]
        var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
        if seed % 3 == 1 && count >= 10 {
            bytes.replaceSubrange(0..<10, with: Array("ID3".utf8) + [4, 0, 0x10, 0, 0, 2, 0])
        }
        if seed % 3 == 2 && count >= 32 {
            bytes.replaceSubrange((count - 32)..<(count - 24), with: Array("APETAGEX".utf8))
        }
        let path = try Fixtures.bytes("random_\(seed).mp3", bytes)
        _ = try? MP3Format().readInfo(path: path)
        _ = try? MP3Format().readPicture(path: path)
    }
}

/// A small deterministic generator for reproducible random files.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { self.state = seed }
    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
