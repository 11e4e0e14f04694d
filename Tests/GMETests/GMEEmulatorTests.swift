// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization
import Testing

@testable import GME

@Suite struct GMEEmulatorTests {
    /// A 2-song NSF whose init routine starts a square wave.
    static let nsf: [UInt8] = {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func pad(_ s: String) -> [UInt8] { Array(s.utf8) + [UInt8](repeating: 0, count: 32 - s.utf8.count) }
        var code: [UInt8] = [
            0xA9, 0x0F, 0x8D, 0x15, 0x40, 0xA9, 0xBF, 0x8D, 0x00, 0x40, 0xA9, 0xFD, 0x8D, 0x02, 0x40, 0xA9, 0x01,
            0x8D, 0x03, 0x40, 0x60,
        ]
        let play = 0x8000 + code.count
        code.append(0x60)
        return Array("NESM".utf8) + [0x1A, 1, 2, 1] + le16(0x8000) + le16(0x8000) + le16(play) + pad("Game")
            + pad("Author") + pad("") + le16(16639) + [UInt8](repeating: 0, count: 8) + le16(19997)
            + [0, 0, 0, 0, 0, 0] + code
    }()

    @Test func loadsByHeaderOrSuffixAndReportsTracks() throws {
        let emulator = try GMEEmulator(data: Self.nsf, suffix: nil, sampleRate: 44100)
        #expect(emulator.trackCount == 2)
        #expect(emulator.systemName == "Nintendo NES")
        let info = try emulator.trackInfo(1)
        #expect(info.game == Array("Game".utf8))
        #expect(info.author == Array("Author".utf8))
        #expect(info.song.isEmpty)
        #expect(info.length == -1)
        #expect(info.playLength == 150_000)
        #expect(throws: GMEError.self) { try emulator.trackInfo(2) }
        // The suffix decides first, as gme_open_file does: an NSF named .spc is refused.
        #expect(throws: GMEError.self) { try GMEEmulator(data: Self.nsf, suffix: "spc", sampleRate: 44100) }
        #expect(throws: GMEError.self) { try GMEEmulator(data: [1, 2, 3, 4, 5], suffix: nil, sampleRate: 44100) }
        #expect(throws: GMEError.self) { try GMEEmulator(data: [], suffix: "nsf", sampleRate: 44100) }
    }

    @Test func playsFadesAndSeeks() throws {
        let emulator = try GMEEmulator(data: Self.nsf, suffix: "nsf", sampleRate: 44100)
        try emulator.startTrack(0)
        emulator.setFade(startMilliseconds: 100)
        var buffer = [Int16](repeating: 0, count: 4096)
        try buffer.withUnsafeMutableBufferPointer { try emulator.play(into: $0) }
        #expect(buffer.contains { $0 != 0 })
        var chunks = 1
        while !emulator.isTrackEnded && chunks < 1000 {
            try buffer.withUnsafeMutableBufferPointer { try emulator.play(into: $0) }
            chunks += 1
        }
        #expect(emulator.isTrackEnded)
        #expect(chunks < 1000)
        try emulator.startTrack(1)
        try emulator.seek(milliseconds: 2000)
        #expect(emulator.positionMilliseconds == 2000)
        #expect(!emulator.isTrackEnded)
    }

    @Test func m3uPlaylistsNameTracks() throws {
        let emulator = try GMEEmulator(data: Self.nsf, suffix: "nsf", sampleRate: 44100)
        try emulator.loadM3U(data: Array("game.nsf::NSF,2,Second Song,0:05,,\n".utf8))
        #expect(emulator.trackCount == 1)
        let info = try emulator.trackInfo(0)
        #expect(info.song == Array("Second Song".utf8))
        #expect(info.length == 5000)
    }

    @Test func theFirstEmulatorLoadsTheLibraryAndKeepsItLoaded() throws {
        let library = GMELibrary()
        #expect(!library.isLoaded)
        let emulator = try GMEEmulator(data: Self.nsf, suffix: nil, sampleRate: 44100, library: library)
        #expect(emulator.trackCount == 2)
        #expect(library.isLoaded)
        #expect(library.loadFailure() == nil)
    }

    @Test func aLibraryThatCannotBeLoadedFailsEveryEmulatorAndIsReportedOnce() {
        let reports = Mutex<[String]>([])
        // zlib: it loads, but has none of libgme's functions.
        let library = GMELibrary(soname: "libz.so.1", reportFailure: { line in reports.withLock { $0.append(line) } })
        let failure = GMEError(function: "dlsym", message: "gme_identify_extension not found in libz.so.1")
        for _ in 0..<2 {
            #expect(throws: failure) {
                _ = try GMEEmulator(data: Self.nsf, suffix: nil, sampleRate: 44100, library: library)
            }
        }
        #expect(library.loadFailure() == failure)
        #expect(!library.isLoaded)
        #expect(reports.withLock { $0 } == ["dlsym: gme_identify_extension not found in libz.so.1"])
    }
}

@Suite struct GMEInputTests {
    /// A VGM 1.50 header (PSG only, 1 s) followed by `commands`.
    static func vgm(_ commands: [UInt8], loopAt: Int? = nil) -> [UInt8] {
        func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
        var header = [UInt8](repeating: 0, count: 0x40)
        let size = 0x40 + commands.count
        header.replaceSubrange(0..<4, with: Array("Vgm ".utf8))
        header.replaceSubrange(4..<8, with: le32(size - 4))
        header.replaceSubrange(8..<12, with: le32(0x150))
        header.replaceSubrange(12..<16, with: le32(3_579_545))
        header.replaceSubrange(0x18..<0x1C, with: le32(44100))
        if let loopAt { header.replaceSubrange(0x1C..<0x20, with: le32(loopAt - 0x1C)) }
        header.replaceSubrange(0x34..<0x38, with: le32(0x0C))
        return header + commands
    }

    @Test func vgmsReadingSamplesOutsideTheFileAreRefused() throws {
        let wait: [UInt8] = [0x61, 0x44, 0xAC]
        // A PCM block, a seek inside it, two writes: fine.
        let fine = Self.vgm([0x67, 0x66, 0x00, 2, 0, 0, 0, 0x10, 0x20, 0xE0, 1, 0, 0, 0, 0x81, 0x81] + wait + [0x66])
        #expect(throws: Never.self) { try GMEInput.checkVGM(fine, sampleRate: 44100) }
        _ = try GMEEmulator(data: fine, suffix: "vgm", sampleRate: 44100)
        // A seek far past the end, then a write: libgme 0.6.3 would read wild memory.
        let wild = Self.vgm([0xE0, 0, 0, 0, 0x40, 0x81] + wait + [0x66])
        #expect(throws: GMEError.self) { try GMEEmulator(data: wild, suffix: "vgm", sampleRate: 44100) }
        // A loop that writes samples without seeking: the position grows each time round.
        let growing = Self.vgm(wait + [0x81, 0x66], loopAt: 0x40)
        #expect(throws: GMEError.self) { try GMEInput.checkVGM(growing, sampleRate: 44100) }
        // A loop that seeks first is fine.
        let seeking = Self.vgm(wait + [0xE0, 0, 0, 0, 0, 0x81, 0x66], loopAt: 0x40)
        #expect(throws: Never.self) { try GMEInput.checkVGM(seeking, sampleRate: 44100) }
        // Huge data blocks only end the stream.
        let block = Self.vgm([0x67, 0x66, 0x00, 0xFF, 0xFF, 0xFF, 0x7F, 0x66])
        #expect(throws: Never.self) { try GMEInput.checkVGM(block, sampleRate: 44100) }
    }

    /// A YM2612 write in a file whose header gives no YM2612 clock (libgme 0.6.3's gme_start_track then reads
    /// uninitialised memory) is refused, and so is a write to any FM chip in a file with none; with the clock
    /// they are fine.
    @Test func ym2612WritesWithoutItsClockAreRefused() throws {
        let wait: [UInt8] = [0x61, 0x44, 0xAC]
        for command: UInt8 in [0x52, 0x53] {
            let psgOnly = Self.vgm([command, 0x30, 0x00] + wait + [0x66])
            #expect(throws: GMEError.self) { try GMEEmulator(data: psgOnly, suffix: "vgm", sampleRate: 44100) }
            var withClock = psgOnly
            withClock.replaceSubrange(0x2C..<0x30, with: [0x80, 0x1B, 0x75, 0x00])  // 7,670,454 Hz
            #expect(throws: Never.self) { try GMEInput.checkVGM(withClock, sampleRate: 44100) }
        }
        // From version 1.50 libgme starts at the header's data offset: writes there count, those before do not.
        var offset = Self.vgm([0x66, 0x00, 0x00, 0x53, 0x30, 0x00] + wait + [0x66])
        offset.replaceSubrange(0x34..<0x38, with: [0x0F, 0, 0, 0])  // 0x34 + 0x0F = 0x43: the YM2612 write.
        #expect(throws: GMEError.self) { try GMEInput.checkVGM(offset, sampleRate: 44100) }
        var before = Self.vgm([0x53, 0x30, 0x00, 0x66] + wait + [0x66])
        before.replaceSubrange(0x34..<0x38, with: [0x0F, 0, 0, 0])  // starts at 0x43, past the write.
        #expect(throws: Never.self) { try GMEInput.checkVGM(before, sampleRate: 44100) }
        // With no FM chip at all, writes to any (a YM2413, a second YM2612) are refused too, but not a second
        // YM2612's DAC samples; with a YM2612, writes to chips libgme did not enable are ignored, and fine.
        for write: [UInt8] in [[0x51, 0x30, 0x00], [0xA1, 0x30, 0x00], [0xA2, 0x30, 0x00], [0xA3, 0x30, 0x00]] {
            let psgOnly = Self.vgm(write + wait + [0x66])
            #expect(throws: GMEError.self) { try GMEInput.checkVGM(psgOnly, sampleRate: 44100) }
            var withYM2612 = psgOnly
            withYM2612.replaceSubrange(0x2C..<0x30, with: [0xB5, 0x0A, 0x75, 0x00])  // 7,670,453 Hz
            #expect(throws: Never.self) { try GMEInput.checkVGM(withYM2612, sampleRate: 44100) }
        }
        let dac = Self.vgm([0xA2, 0x2A, 0x80] + wait + [0x66])
        #expect(throws: Never.self) { try GMEInput.checkVGM(dac, sampleRate: 44100) }
    }

    /// Writes to a second SN76489 (0x30, 0x3F) in a file whose PSG clock lacks the dual-chip flag are refused:
    /// libgme 0.6.3 never ends that chip's frame, and a write early in a later frame fails `Sms_Apu::run_until`'s
    /// assertion (fuzz/regressions/trackers/vgz-second-psg-undeclared-e92d9022). With the flag they play.
    @Test func writesToASecondPSGTheHeaderDoesNotDeclareAreRefused() throws {
        let tone: [UInt8] = [0x50, 0x8E, 0x50, 0x0F, 0x50, 0x90]
        for command: UInt8 in [0x30, 0x3F] {
            // A write every 16 samples: some fall early in a frame after one late in the frame before.
            let single = Self.vgm(tone + Array(repeating: [command, 0x9F, 0x7F], count: 2000).flatMap { $0 } + [0x66])
            #expect(throws: GMEError.self) { try GMEEmulator(data: single, suffix: "vgm", sampleRate: 44100) }
            var dual = single
            dual.replaceSubrange(0x0C..<0x10, with: [0x99, 0x9E, 0x36, 0x40])  // 3,579,545 Hz | 0x4000_0000
            #expect(throws: Never.self) { try GMEInput.checkVGM(dual, sampleRate: 44100) }
            let emulator = try GMEEmulator(data: dual, suffix: "vgm", sampleRate: 44100)
            try emulator.startTrack(0)
            var buffer = [Int16](repeating: 0, count: 4096)
            for _ in 0..<20 { try buffer.withUnsafeMutableBufferPointer { try emulator.play(into: $0) } }
        }
        // The same bytes as an operand are not a command.
        let operand = Self.vgm(tone + [0x50, 0x30, 0x61, 0x44, 0xAC, 0x66])
        #expect(throws: Never.self) { try GMEInput.checkVGM(operand, sampleRate: 44100) }
    }

    /// Chip clocks libgme 0.6.3 aborts on (fuzz/regressions/trackers/vgm-blip-buffer-end-frame-a9aab350: an
    /// SN76489 at 283 Hz and long waits fail `Blip_Buffer::end_frame`'s assertion) or never ends on are
    /// refused; the clocks of real chips, with or without the SN76489's flag bits, are not.
    @Test func chipClocksLibgmeCannotRunAreRefused() throws {
        func withClocks(psg: Int, ym2612: Int = 0) -> [UInt8] {
            func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
            var file = Self.vgm([0x50, 0x9F] + [0x61, 0xFF, 0xFF] + [0x66])
            file.replaceSubrange(0x0C..<0x10, with: le32(psg))
            file.replaceSubrange(0x2C..<0x30, with: le32(ym2612))
            return file
        }
        for psg in [0, 3_579_545, 3_546_893, 4_000_000, 0x4000_0000 | 3_579_545, 0x8000_0000 | 3_579_545, 44100] {
            #expect(throws: Never.self) { try GMEInput.checkVGM(withClocks(psg: psg), sampleRate: 44100) }
            _ = try GMEEmulator(data: withClocks(psg: psg), suffix: "vgm", sampleRate: 44100)
        }
        let genesis = withClocks(psg: 3_579_545, ym2612: 7_670_453)
        #expect(throws: Never.self) { try GMEInput.checkVGM(genesis, sampleRate: 44100) }
        for psg in [283, 22050, 44099, 12_000_000, 0x4000_0000, 0x7FFF_FFFF] {
            let file = withClocks(psg: psg)
            #expect(throws: GMEError.self) { try GMEEmulator(data: file, suffix: "vgm", sampleRate: 44100) }
        }
        for ym2612 in [100_000_000, 0xFFFF_FFFF] {
            let file = withClocks(psg: 3_579_545, ym2612: ym2612)
            #expect(throws: GMEError.self) { try GMEInput.checkVGM(file, sampleRate: 44100) }
        }
        // The clock is compared with the emulator's own rate.
        #expect(throws: GMEError.self) { try GMEInput.checkVGM(withClocks(psg: 44100), sampleRate: 48000) }
    }

    /// A truncated gzipped VGM (fuzz/regressions/trackers/vgz-restart-after-end-447e3583, after its selector
    /// byte): once its track has played to the end, libgme 0.6.3's `gme_start_track` on the same emulator (what
    /// `gme_seek` does to go back) fails `Sms_Apu::run_until`'s assertion. It writes to a second SN76489 its
    /// header does not declare, and is refused for that; with the dual-chip flag set it plays, and a seek back
    /// (on a fresh emulator) plays on.
    @Test func seekingBackAfterTheEndStartsAFreshEmulator() throws {
        let vgz: [UInt8] = [
            0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x45, 0x4E, 0x41, 0x0A, 0xC2, 0x30, 0x10, 0x1C,
            0x4F, 0x22, 0x08, 0x7A, 0xF7, 0x12, 0xFC, 0x80, 0x56, 0x51, 0x10, 0xBC, 0x88, 0x42, 0x4F, 0x85, 0x85, 0x4A,
            0xEF, 0xA5, 0xDA, 0x2A, 0x92, 0x2A, 0xA9, 0x05, 0xFD, 0x84, 0x7A, 0xF5, 0xE2, 0x0B, 0x7C, 0x82, 0xE0, 0x53,
            0x7C, 0x8A, 0x4E, 0xA3, 0xD4, 0x0D, 0xBB, 0xC9, 0xCC, 0xCE, 0x4E, 0x36, 0x48, 0xB4, 0x6A, 0x55, 0x00, 0x61,
            0x5E, 0x6F, 0x43, 0x14, 0x31, 0x65, 0xCE, 0xEE, 0x28, 0x63, 0xCC, 0xAC, 0xA1, 0x59, 0xE2, 0xFA, 0xBF, 0x05,
            0xB9, 0xC8, 0x53, 0x5E, 0xF2, 0x96, 0x93, 0x38, 0xC2, 0x76, 0x20, 0x67, 0xA9, 0xF2, 0x8A, 0xDD, 0x45, 0x5F,
            0x81, 0xD4, 0x0D, 0xBB, 0xC9, 0xCC, 0xCE, 0x4E, 0x36, 0x48, 0xB4, 0x6A, 0x55, 0x00, 0x61, 0x5E, 0x6F, 0x43,
            0x14, 0x31, 0x65, 0xCE, 0xEE, 0x28, 0x27, 0xCC, 0xAC, 0xA1, 0x59, 0xE2, 0xFA, 0xBF, 0x05, 0xB9, 0xC8, 0x53,
            0x5E, 0xF2, 0x96, 0x93, 0x34, 0xC2, 0x76, 0x20, 0x67, 0xA9, 0xF2, 0x8A, 0xDD, 0x45, 0x5F, 0x81, 0x96, 0x0F,
            0x4A, 0xE6, 0xD8, 0x22, 0xC5, 0x12, 0x8A, 0x2F, 0x83, 0x10, 0x11, 0x36, 0xDF, 0x51, 0xF8, 0x70, 0xC9, 0xBA,
            0xE4, 0x34, 0xFB, 0x45, 0xF8, 0xBC, 0x13, 0x62, 0x05, 0x8F, 0x35, 0xC3, 0x9E, 0xD8, 0x10, 0xF9, 0x38, 0xFE,
            0x90, 0xB6, 0xBA, 0x80, 0x53, 0x1E, 0xF9, 0x09, 0x72, 0xB2, 0x2B, 0xFE, 0x60, 0x2C, 0xEF, 0x60, 0xC4, 0xE3,
            0xD8, 0x22, 0xC5, 0x12, 0x8A, 0x2F, 0x83, 0x10, 0x11, 0x36, 0xDF, 0x51, 0xF8, 0x70, 0xC9, 0xBA, 0xE4, 0x34,
            0xFB, 0x45, 0xF8, 0xBC, 0x13, 0x62, 0x05, 0x8F, 0x35, 0xC3, 0x9E, 0xD8, 0x10, 0xF9, 0x38, 0xFE, 0x90, 0xB6,
            0xBA, 0x80, 0x53, 0x1E, 0xF9, 0x09, 0x72, 0xB2, 0x2B, 0xFE, 0x60, 0x2C, 0xEF, 0x60, 0xC4, 0xE3, 0xA0, 0x83,
            0x2E, 0x06, 0x96, 0x0F, 0x4A, 0xE6, 0xD8, 0x22, 0xC5, 0x12, 0x8A, 0x2F, 0x83, 0x10, 0x11, 0x36, 0xDF, 0xD1,
            0xF8, 0x70, 0xC9, 0xBA, 0x64, 0x34, 0xFB, 0x45, 0xF8, 0xBC, 0x13, 0x62, 0x05, 0x8F, 0x35, 0x11, 0x9D, 0xB4,
            0xDD, 0x26, 0xB5, 0xBD, 0x0F, 0x4D, 0xEE, 0x00,
        ]
        #expect(throws: GMEError.self) { try GMEEmulator(data: vgz, suffix: "vgz", sampleRate: 44100) }
        var vgm = try GMEInput.inflate(vgz)
        vgm[0x0F] |= 0x40  // the SN76489 clock's dual-chip flag
        let emulator = try GMEEmulator(data: vgm, suffix: "vgm", sampleRate: 44100)
        try emulator.startTrack(0)
        let buffer = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 4096)
        defer { buffer.deallocate() }
        while !emulator.isTrackEnded { try emulator.play(into: buffer) }
        try emulator.seek(milliseconds: 0)
        #expect(emulator.positionMilliseconds == 0)
        try emulator.play(into: buffer)
        try emulator.seek(milliseconds: 500)
        try emulator.seek(milliseconds: 100)
        #expect(emulator.positionMilliseconds == 100)
        try emulator.startTrack(0)
        try emulator.play(into: buffer)
    }

    @Test func gzipIsInflatedFirst() throws {
        // `gzip -n` of "Vgm hello\n", two members concatenated.
        let member: [UInt8] = [
            0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x0B, 0x4B, 0xCF, 0x55, 0xC8, 0x48, 0xCD, 0xC9,
            0xC9, 0xE7, 0x02, 0x00, 0x61, 0x6F, 0x29, 0x6C, 0x0A, 0x00, 0x00, 0x00,
        ]
        #expect(try GMEInput.inflate(member) == Array("Vgm hello\n".utf8))
        #expect(try GMEInput.inflate(member + member) == Array("Vgm hello\nVgm hello\n".utf8))
        #expect(throws: GMEError.self) { try GMEInput.inflate([0x1F, 0x8B, 0x08, 0x00, 0xFF, 0xFF, 0xFF, 0xFF]) }
        #expect(try GMEInput.prepared([1, 2, 3], sampleRate: 44100) == [1, 2, 3])
    }
}
