// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Testing

@testable import Sidplay

/// PSID files built like tools/fixtures/sidplay.py's: init starts a sawtooth at a pitch chosen by the song.
enum PSID {
    static func be16(_ v: Int) -> [UInt8] { [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    static func pad(_ s: [UInt8]) -> [UInt8] { s + [UInt8](repeating: 0, count: 32 - s.count) }

    static func voice(_ sid: UInt8) -> [UInt8] {
        func sta(_ register: UInt8) -> [UInt8] { [0x8D, sid + register, 0xD4] }
        return [0xA9, 0x0F] + sta(0x18) + [0xBD, 0x60, 0x10] + sta(0x01) + [0xA9, 0x00] + sta(0x00)
            + [0xA9, 0x09] + sta(0x05) + [0xA9, 0xF0] + sta(0x06) + [0xA9, 0x21] + sta(0x04)
    }

    static func tune(
        songs: Int = 3, start: Int = 1, name: [UInt8] = Array("Three Songs".utf8),
        author: [UInt8] = Array("Fermata Tester".utf8), released: [UInt8] = Array("1987 Test Group".utf8),
        secondSID: Bool = false
    ) -> [UInt8] {
        var code: [UInt8] = [0xAA] + voice(0) + (secondSID ? voice(0x20) : []) + [0x60]
        let play = 0x1000 + code.count
        code.append(0x60)
        code += [UInt8](repeating: 0, count: 0x60 - code.count) + [0x10, 0x18, 0x20, 0x28]
        var header = Array("PSID".utf8) + be16(secondSID ? 3 : 2) + be16(0x7C) + be16(0) + be16(0x1000)
        header += be16(play) + be16(songs) + be16(start) + [0, 0, 0, 0] + pad(name) + pad(author) + pad(released)
        header += be16(0x14) + [0, 0, secondSID ? 0x42 : 0, 0]
        return header + [0x00, 0x10] + code
    }
}

/// A file in /tmp, removed by `remove()`.
struct TemporaryFile {
    let path: String

    init(_ bytes: [UInt8], suffix: String) {
        var template = Array("/tmp/sidplay-test-XXXXXX\(suffix)".utf8CString)
        let fd = mkstemps(&template, Int32(suffix.utf8.count))
        precondition(fd >= 0)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        self.path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    func remove() { unlink(self.path) }
}

@Suite struct SidTuneTests {
    @Test func readsHeaderSongsAndTexts() throws {
        let tune = try SidTune(data: PSID.tune(start: 2))
        #expect(tune.songCount == 3)
        #expect(tune.startSong == 2)
        #expect(tune.sidChips == 1)
        #expect(tune.infoStringCount == 3)
        #expect(tune.infoString(0) == Array("Three Songs".utf8))
        #expect(tune.infoString(1) == Array("Fermata Tester".utf8))
        #expect(tune.infoString(2) == Array("1987 Test Group".utf8))
        #expect(tune.infoString(3).isEmpty)
        #expect(tune.selectSong(3) == 3)
        #expect(tune.selectSong(9) == 2)  // past the last song: the start song
        #expect(tune.selectSong(0) == 2)
        #expect(try SidTune(data: PSID.tune(secondSID: true)).sidChips == 2)
    }

    @Test func convertsWindows1252() throws {
        let tune = try SidTune(data: PSID.tune(name: [0x43, 0x61, 0x66, 0xE9, 0x20, 0x80, 0x20, 0x81]))
        // é, €, and the undefined 0x81 as ICU maps it (U+0081).
        #expect(tune.infoString(0) == Array("Caf\u{E9} \u{20AC} \u{81}".utf8))
    }

    @Test func refusesWhatIsNoTune() {
        #expect(throws: SidplayError.self) { try SidTune(data: []) }
        #expect(throws: SidplayError.self) { try SidTune(data: Array("not a tune at all, no header".utf8)) }
        #expect(throws: SidplayError.self) { try SidTune(data: Array(PSID.tune().prefix(60))) }
        #expect(throws: SidplayError.self) { try SidTune(data: [UInt8](repeating: 0, count: SidTune.fileLimit + 1)) }
    }

    /// libsidplayfp 2.4 reads beyond the file when a header's data offset is past its end (the `c64opl` fuzz
    /// target's crash of 2026-12-06): such a header never reaches it, by either loader.
    @Test func refusesADataOffsetPastTheEnd() throws {
        for magic in ["PSID", "RSID"] {
            var bytes = PSID.tune()
            bytes.replaceSubrange(0..<4, with: Array(magic.utf8))
            #expect(SidTune.refusal(of: bytes) == nil)
            let end = bytes.count
            // With a load address of 0 in the header, the data's first two bytes must be in the file as well.
            bytes.replaceSubrange(6..<8, with: PSID.be16(end - 2))
            #expect(SidTune.refusal(of: bytes) == nil)
            for offset in [end - 1, end, 0x417C, 0xFFFF] {
                bytes.replaceSubrange(6..<8, with: PSID.be16(offset))
                #expect(SidTune.refusal(of: bytes) != nil, "\(magic) offset \(offset)")
                let fromData = #expect(throws: SidplayError.self) { try SidTune(data: bytes) }
                #expect(fromData?.message == SidTune.refusal(of: bytes))
                let fromPath = #expect(throws: SidplayError.self) { try SidTune(path: "/music/x.sid") { _ in bytes } }
                #expect(fromPath?.message == SidTune.refusal(of: bytes))
            }
            // A load address in the header: the data may be empty.
            bytes.replaceSubrange(8..<10, with: PSID.be16(0x1000))
            bytes.replaceSubrange(6..<8, with: PSID.be16(end))
            #expect(SidTune.refusal(of: bytes) == nil)
        }
    }

    @Test func loadsThroughTheReader() throws {
        var asked: [String] = []
        let tune = try SidTune(path: "/music/three.sid") { name in
            asked.append(name)
            return PSID.tune()
        }
        #expect(tune.songCount == 3)
        #expect(asked == ["/music/three.sid"])
        #expect(throws: SidplayError.self) { try SidTune(path: "/music/none.sid") { _ in nil } }
        let big = [UInt8](repeating: 0x50, count: SidTune.fileLimit + 1)
        #expect(throws: SidplayError.self) { try SidTune(path: "/music/big.sid") { _ in big } }
    }

    @Test func songLengthsComeFromTheDatabase() throws {
        let tune = try SidTune(data: PSID.tune())
        let md5 = try #require(tune.md5)
        #expect(md5.utf8.count == 32)
        let file = TemporaryFile(Array("[Database]\n; /three.sid\n\(md5)=0:05.500 1:10 0:00\n".utf8), suffix: ".md5")
        defer { file.remove() }
        let database = try SidDatabase(path: file.path)
        tune.selectSong(1)
        #expect(database.lengthMilliseconds(of: tune) == 5500)
        tune.selectSong(2)
        #expect(database.lengthMilliseconds(of: tune) == 70_000)
        let other = try SidTune(data: PSID.tune(name: Array("Other".utf8)))
        #expect(database.lengthMilliseconds(of: other) == nil)
        #expect(throws: SidplayError.self) { try SidDatabase(path: "/nonexistent/Songlengths.md5") }
    }
}

@Suite struct SidPlayerTests {
    @Test func playsMonoAndStereoAndRestarts() throws {
        let tune = try SidTune(data: PSID.tune())
        tune.selectSong(2)
        let player = try SidPlayer(tune: tune, sampleRate: 48000, filter: true)
        #expect(player.channels == 1)
        var buffer = [Int16](repeating: 0, count: 4096)
        var total = 0
        var loud = false
        while player.seconds < 1 {
            let count = buffer.withUnsafeMutableBufferPointer { player.play(into: $0) }
            #expect(count == 4096)
            total += count
            loud = loud || buffer.contains { abs(Int($0)) > 1000 }
        }
        #expect(loud)
        #expect(total >= 48000 && total < 48000 + 4096)
        player.stop()
        _ = buffer.withUnsafeMutableBufferPointer { player.play(into: $0) }
        #expect(player.seconds == 0)

        let stereo = try SidPlayer(tune: SidTune(data: PSID.tune(secondSID: true)), sampleRate: 48000, filter: false)
        #expect(stereo.channels == 2)
        #expect(buffer.withUnsafeMutableBufferPointer { stereo.play(into: $0) } == 4096)
    }

    @Test func refusesROMsOfTheWrongSize() throws {
        let tune = try SidTune(data: PSID.tune())
        #expect(throws: SidplayError.self) {
            try SidPlayer(tune: tune, sampleRate: 48000, filter: true, kernal: [0, 1, 2])
        }
    }
}
