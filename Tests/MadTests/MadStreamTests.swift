// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Input
import Mad
import TestTools
import Testing

enum Sample {
    static let made = MadeFiles("mad")

    /// A LAME-encoded sine sweep (with its Info frame), made once.
    static func mp3(rate: Int = 44100, channels: Int = 2, seconds: String = "1", lame: [String] = []) throws -> String {
        try self.made.file("s_\(rate)_\(channels)_\(seconds)_\(lame.joined()).mp3") { path in
            let wave = path + ".wav"
            try makeSweep(at: wave, rate: rate, channels: channels, seconds: seconds)
            defer { removeFile(wave) }
            try runTool("/usr/bin/lame", ["--quiet"] + lame + [wave, path])
        }
    }

    /// A minimal ID3v2.4 tag of `size` bytes in all (header included), its body zeros (padding).
    static func id3(size: Int) -> [UInt8] {
        let body = size - 10
        return Array("ID3".utf8) + [4, 0, 0]
            + [UInt8(body >> 21 & 0x7F), UInt8(body >> 14 & 0x7F), UInt8(body >> 7 & 0x7F), UInt8(body & 0x7F)]
            + [UInt8](repeating: 0, count: body)
    }

    /// The size of the ID3v2 tag starting at `bytes` (header and body), or 0.
    static func id3Size(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard bytes.count >= 10, bytes[0] == 0x49, bytes[1] == 0x44, bytes[2] == 0x33 else { return 0 }
        return 10 + (Int(bytes[6]) << 21 | Int(bytes[7]) << 14 | Int(bytes[8]) << 7 | Int(bytes[9]))
    }
}

@Suite struct MadStreamTests {
    /// Decodes frames until one decodes or the stream stops; returns the actions seen.
    static func next(_ stream: MadStream, skip: Bool = false) -> [MadStream.Action] {
        var actions: [MadStream.Action] = []
        while true {
            let action = stream.decodeNextFrame(skip: skip)
            actions.append(action)
            if action == .ok || action == .stop { return actions }
        }
    }

    @Test(arguments: [(44100, 2, 1152), (22050, 1, 576)])
    func theFirstFrameIsTheInfoFrameAndEveryFrameDecodes(_ rate: Int, _ channels: Int, _ samples: Int) throws {
        let input = try FileInputStream(path: try Sample.mp3(rate: rate, channels: channels))
        let stream = MadStream(input: input, id3Size: Sample.id3Size)
        #expect(Self.next(stream).last == .ok)
        let header = stream.header
        #expect(header.layer == 3 && header.sampleRate == rate && header.channels == channels)
        #expect(stream.thisFrameOffset == 0)
        let magic = stream.withAncillaryBits { $0.read(32) }
        // lame writes Info for CBR; libmad's ancillary bits of an MPEG-2 frame do not start with it.
        if rate == 44100 { #expect(magic == 0x496E_666F, "Info") }
        #expect(stream.synthesize() == samples)
        var frames = 1
        var peak: Int32 = 0
        while Self.next(stream).last == .ok {
            frames += 1
            #expect(stream.synthesize() == samples)
            for index in 0..<samples { peak = max(peak, abs(stream.sample(channel: channels - 1, index: index))) }
        }
        // One second plus LAME's 576 samples of delay and its padding, and the Info frame.
        #expect(frames >= rate / samples + 2 && frames <= rate / samples + 4)
        #expect(peak > 1 << 26 && peak <= 1 << 28)
    }

    @Test func anID3TagBeforeTheFirstFrameIsHandedOverAndSkipped() throws {
        let mp3 = try fileBytes(try Sample.mp3())
        // Bigger than the 40960-byte buffer: the rest is read from the input directly.
        for size in [100, 50000] {
            let path = try Sample.made.file("id3_\(size).mp3", bytes: Sample.id3(size: size) + mp3)
            let stream = MadStream(input: try FileInputStream(path: path), id3Size: Sample.id3Size)
            let actions = Self.next(stream)
            #expect(actions.contains(.again))
            #expect(actions.last == .ok)
            #expect(stream.takeID3Tag() == Sample.id3(size: size))
            #expect(stream.takeID3Tag() == nil)
            #expect(stream.thisFrameOffset == UInt64(size))
        }
    }

    @Test func seekingRestartsAtAFrameRecordedBefore() throws {
        let stream = MadStream(input: try FileInputStream(path: try Sample.mp3(seconds: "2")), id3Size: Sample.id3Size)
        var offsets: [UInt64] = []
        while offsets.count < 20, Self.next(stream).last == .ok { offsets.append(stream.thisFrameOffset) }
        #expect(offsets.count == 20 && offsets == offsets.sorted())
        #expect(stream.seek(to: offsets[5]))
        #expect(Self.next(stream, skip: true).last == .ok)
        #expect(stream.thisFrameOffset == offsets[5])
        #expect(Self.next(stream).last == .ok)
        #expect(stream.thisFrameOffset == offsets[6])
    }

    @Test func garbageStopsWithoutAFrame() throws {
        let path = try Sample.made.file("garbage.mp3", bytes: [UInt8](repeating: 0x41, count: 100_000))
        let stream = MadStream(input: try FileInputStream(path: path), id3Size: Sample.id3Size)
        #expect(!Self.next(stream).contains(.ok))
        #expect(!stream.errorMessage.isEmpty)
    }

    @Test func anID3TagClaimingMoreThanTheFileHoldsIsDroppedWithoutFillingThatMuch() throws {
        // The header claims 256 MiB (syncsafe 7F 7F 7F 7F); the file ends 100 bytes later.
        let bytes = Array("ID3".utf8) + [4, 0, 0, 0x7F, 0x7F, 0x7F, 0x7F] + [UInt8](repeating: 0, count: 100)
        let path = try Sample.made.file("id3_claimed.mp3", bytes: bytes)
        let before = Self.peakResidentKiB()
        let stream = MadStream(input: try FileInputStream(path: path), id3Size: Sample.id3Size)
        let actions = Self.next(stream)
        #expect(actions.contains(.again))
        #expect(actions.last == .stop)
        #expect(stream.takeID3Tag() == nil)
        // The buffer for the claimed size is never written: the process's peak stays far below it.
        #expect(Self.peakResidentKiB() - before < 64 << 10)
    }

    /// The process's peak resident size so far, in KiB (`getrusage`'s `ru_maxrss`).
    private static func peakResidentKiB() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss
    }

    @Test func bitsAreReadBigEndianAndPastTheEndAsZeros() {
        var timer = MadTimer.zero
        #expect(timer.milliseconds == 0)
        MadBits.reading([0xFF, 0xFB, 0x90, 0x64]) { bits in
            #expect(bits.read(11) == 0x7FF)
            bits.skip(5)
            #expect(bits.read(4) == 9)
            #expect(bits.remaining == 12)
            #expect(bits.read(16) == 0x0640, "bits past the end read as 0")
            #expect(bits.remaining == -4)
        }
        timer.add(timer)
        #expect(timer == .zero)
    }

    @Test func frameDurationsAddUpAsLibmadTimers() throws {
        let stream = MadStream(input: try FileInputStream(path: try Sample.mp3()), id3Size: Sample.id3Size)
        #expect(Self.next(stream).last == .ok)
        let duration = stream.header.duration
        #expect(duration.milliseconds == 26)  // 1152 / 44100 s, cut down
        #expect(duration.multiplied(by: 100).milliseconds == 2612)
        var timer = MadTimer.zero
        for _ in 0..<100 { timer.add(duration) }
        #expect(timer == duration.multiplied(by: 100))
    }
}
