// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Input
import Model
import Testing

@testable import Formats

/// The gme and openmpt plugins on hand-built files.
@Suite struct TrackerFormatTests {
    /// A fresh directory holding `files`.
    static func directory(_ files: [String: [UInt8]]) throws -> String {
        let path = NSTemporaryDirectory() + "fermata-trackers-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for (name, bytes) in files {
            try Data(bytes).write(to: URL(fileURLWithPath: path + "/" + name))
        }
        return path
    }

    static func decodeAll(_ decoder: inout any Decoder, bufferFrames: Int, limit: Int = .max) throws -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: bufferFrames * decoder.format.frameSize)
        while out.count < limit {
            let frames = try buffer.withUnsafeMutableBytes { try decoder.decode(into: $0) }
            if frames == 0 { break }
            out += buffer[0..<(frames * decoder.format.frameSize)]
        }
        return out
    }

    @Test func containerPathsNameTracksOfTheirParent() {
        #expect(GMEFormat.containerPath("/m/a.nsf/tune_002.nsf") == ("/m/a.nsf", 1))
        #expect(GMEFormat.containerPath("/m/a.nsf/tune_1.x") == ("/m/a.nsf", 0))
        #expect(GMEFormat.containerPath("/m/a.nsf/tune_0.nsf") == ("/m/a.nsf/tune_0.nsf", 0))
        #expect(GMEFormat.containerPath("/m/a.nsf/tune_.nsf") == ("/m/a.nsf/tune_.nsf", 0))
        #expect(GMEFormat.containerPath("/m/a.nsf/tune_3nsf") == ("/m/a.nsf/tune_3nsf", 0))
        #expect(GMEFormat.containerPath("/m/a.nsf") == ("/m/a.nsf", 0))
        #expect(GMEFormat.subtuneName(7, suffix: "NSF") == "tune_007.NSF")
        #expect(GMEFormat.subtuneName(1234, suffix: "nsf") == "tune_1234.nsf")
        #expect(GMEFormat.m3uPath("/m/game.nsf") == "/m/game.m3u")
        #expect(GMEFormat.m3uPath("/m/game") == nil)
    }

    @Test func aMultiTrackNSFIsAContainerOfNumberedSongs() throws {
        let dir = try Self.directory(["game.nsf": ChiptuneBytes.nsf(songs: 3)])
        let songs = try #require(FormatRegistry.standard.containerSongs(path: dir + "/game.nsf"))
        #expect(songs.map(\.name) == ["tune_001.nsf", "tune_002.nsf", "tune_003.nsf"])
        let second = songs[1].info
        #expect(
            second.tags == [
                TagItem(.track, "2"), TagItem(.artist, "Chip Composer"), TagItem(.album, "Square Game"),
                TagItem(.date, "1987 Soft"),
            ])
        #expect(second.durationMilliseconds == 150_000)
        #expect(second.audioFormat == nil)
        // The virtual path reads as the track, as the scan stored it.
        #expect(try FormatRegistry.standard.readInfo(path: dir + "/game.nsf/tune_002.nsf") == second)
    }

    @Test func aSingleTrackFileIsAnOrdinarySong() throws {
        let dir = try Self.directory(["one.nsf": ChiptuneBytes.nsf(songs: 1, artist: "")])
        #expect(FormatRegistry.standard.containerSongs(path: dir + "/one.nsf") == nil)
        let info = try FormatRegistry.standard.readInfo(path: dir + "/one.nsf")
        #expect(info.tags == [TagItem(.album, "Square Game"), TagItem(.date, "1987 Soft")])
    }

    @Test func vgmTagsAndLengthComeFromGD3AndTheHeader() throws {
        let dir = try Self.directory(["psg.vgm": ChiptuneBytes.vgm()])
        let info = try FormatRegistry.standard.readInfo(path: dir + "/psg.vgm")
        #expect(
            info.tags == [
                TagItem(.title, "Tone Track"), TagItem(.artist, "VGM Author"), TagItem(.album, "PSG Game"),
                TagItem(.date, "1991"),
            ])
        #expect(info.durationMilliseconds == 2000)
        #expect(try FormatRegistry.standard.readComments(path: dir + "/psg.vgm").isEmpty)
        #expect(try FormatRegistry.standard.readPicture(path: dir + "/psg.vgm") == nil)
    }

    @Test func gmeDecodesWholeChunksUntilTheFadeEnds() throws {
        let dir = try Self.directory(["psg.vgm": ChiptuneBytes.vgm()])
        var decoder = try FormatRegistry.standard.openDecoder(path: dir + "/psg.vgm")
        #expect(decoder.format == AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        #expect(decoder.totalFrames == 10 * 44100)
        #expect(decoder.totalFramesOverrideLibrary)
        // An odd buffer size: the 2048-frame chunks are handed out in pieces.
        let pcm = try Self.decodeAll(&decoder, bufferFrames: 1000)
        #expect(pcm.count % (2048 * 4) == 0)
        #expect(pcm.count / 4 >= 2 * 44100)
        #expect(pcm.contains { $0 != 0 })
        // The same samples however the buffer is cut.
        var again = try FormatRegistry.standard.openDecoder(path: dir + "/psg.vgm")
        #expect(try Self.decodeAll(&again, bufferFrames: 4096) == pcm)
    }

    @Test func gmeDecodesTheTrackOfAVirtualPathAndSeeks() throws {
        let dir = try Self.directory(["game.nsf": ChiptuneBytes.nsf(songs: 3)])
        var first = try FormatRegistry.standard.openDecoder(path: dir + "/game.nsf/tune_001.nsf")
        var third = try FormatRegistry.standard.openDecoder(path: dir + "/game.nsf/tune_003.nsf")
        #expect(third.totalFrames == 158 * 44100)
        let a = try Self.decodeAll(&first, bufferFrames: 2048, limit: 44100 * 4)
        let c = try Self.decodeAll(&third, bufferFrames: 2048, limit: 44100 * 4)
        #expect(a != c)
        #expect(try third.seek(toFrame: 44100 * 10) == 44100 * 10)
        #expect(try Self.decodeAll(&third, bufferFrames: 2048, limit: 8192).count == 8192)
        #expect(throws: FormatError.self) {
            _ = try FormatRegistry.standard.openDecoder(path: dir + "/game.nsf/tune_009.nsf")
        }
    }

    @Test func brokenChiptunesAreNotRecognised() throws {
        let nsf = ChiptuneBytes.nsf(songs: 3)
        let dir = try Self.directory([
            "noise.nsf": Array(repeating: 0x41, count: 300), "cut.nsf": Array(nsf.prefix(60)), "empty.spc": [],
            "vgm.nsf": ChiptuneBytes.vgm(),
        ])
        for name in ["noise.nsf", "cut.nsf", "empty.spc", "vgm.nsf", "missing.nsf"] {
            #expect(throws: FormatError.self) { try FormatRegistry.standard.readInfo(path: dir + "/" + name) }
            #expect(throws: FormatError.self) { _ = try FormatRegistry.standard.openDecoder(path: dir + "/" + name) }
            #expect(FormatRegistry.standard.containerSongs(path: dir + "/" + name) == nil)
        }
        // Every prefix of a valid file is refused or read, never a crash.
        for length in stride(from: 0, to: nsf.count, by: 7) {
            _ = try? GMEFormat().makeDecoder(input: MemoryInputStream(Array(nsf.prefix(length)), uri: "x.nsf"))
        }
    }

    @Test func openmptReadsTagsAndDuration() throws {
        let dir = try Self.directory([
            "tune.mod": ChiptuneBytes.protracker(), "untitled.mod": ChiptuneBytes.protracker(title: ""),
        ])
        let info = try FormatRegistry.standard.readInfo(path: dir + "/tune.mod")
        // libopenmpt's message of a MOD is its sample names, 31 newlines after the only name here: control characters become spaces.
        let message = TagItem(.comment, "sine" + String(repeating: " ", count: 31))
        let tracker = TagItem(.performer, "Generic ProTracker or compatible")
        #expect(info.tags == [TagItem(.title, "fermata tune"), message, tracker])
        #expect(info.durationMilliseconds == 7680)
        #expect(info.audioFormat == nil)
        let untitled = try FormatRegistry.standard.readInfo(path: dir + "/untitled.mod")
        #expect(untitled.tags == [message, tracker])
    }

    @Test func openmptRendersFloatStereoAt48kAndSeeks() throws {
        let dir = try Self.directory(["tune.mod": ChiptuneBytes.protracker()])
        var decoder = try FormatRegistry.standard.openDecoder(path: dir + "/tune.mod")
        #expect(decoder.format == AudioFormat(sampleRate: 48000, sampleFormat: .float, channels: 2))
        #expect(decoder.totalFrames == 7680 * 48)
        #expect(!decoder.totalFramesOverrideLibrary)
        let pcm = try Self.decodeAll(&decoder, bufferFrames: 300)
        // libopenmpt renders a little past its duration (the last notes' tail).
        #expect((7680 * 48)...(7880 * 48) ~= pcm.count / 8)
        var again = try FormatRegistry.standard.openDecoder(path: dir + "/tune.mod")
        #expect(try Self.decodeAll(&again, bufferFrames: 512) == pcm)
        // The position mpd reports after a seek is the one asked for (libopenmpt goes to the row's start).
        #expect(try again.seek(toFrame: 48000 * 4) == 48000 * 4)
        let rest = try Self.decodeAll(&again, bufferFrames: 512)
        #expect((3680 * 48)...(4000 * 48) ~= rest.count / 8)
    }

    @Test func brokenModulesAreNotRecognised() throws {
        let module = ChiptuneBytes.protracker()
        let dir = try Self.directory([
            "noise.mod": Array(repeating: 0, count: 600), "cut.mod": Array(module.prefix(1070)), "empty.mod": [],
        ])
        for name in ["noise.mod", "cut.mod", "empty.mod", "missing.mod"] {
            #expect(throws: FormatError.self) { try FormatRegistry.standard.readInfo(path: dir + "/" + name) }
            #expect(throws: FormatError.self) { _ = try FormatRegistry.standard.openDecoder(path: dir + "/" + name) }
        }
        for length in stride(from: 0, to: module.count, by: 97) {
            _ = try? OpenMPTFormat().makeDecoder(input: MemoryInputStream(Array(module.prefix(length)), uri: "x.mod"))
        }
    }
}

/// The modplug plugin, asked directly (openmpt comes first for every suffix but `dfm`).
@Suite struct ModPlugFormatTests {
    @Test func readsTitleAndDurationAndDecodes() throws {
        let dir = try TrackerFormatTests.directory([
            "tune.mod": ChiptuneBytes.protracker(), "noise.mod": Array(repeating: 0, count: 600),
        ])
        let plugin = ModPlugFormat()
        let info = try plugin.readInfo(path: dir + "/tune.mod")
        #expect(info.tags == [TagItem(.title, "fermata tune")])
        // libmodplug counts whole seconds, rounded up.
        #expect(info.durationMilliseconds == 8000)
        #expect(throws: FormatError.self) { try plugin.readInfo(path: dir + "/noise.mod") }
        var decoder = try plugin.makeDecoder(path: dir + "/tune.mod")
        #expect(decoder.format == AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        #expect(decoder.totalFrames == 8 * 44100)
        let pcm = try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 333)
        #expect((7680 * 441 / 10)...(7900 * 441 / 10) ~= pcm.count / 4)
        var again = try plugin.makeDecoder(path: dir + "/tune.mod")
        // libmodplug's mixer keeps filter state in statics across modules: the same length, not the same bytes.
        #expect(try TrackerFormatTests.decodeAll(&again, bufferFrames: 1024).count == pcm.count)
        #expect(try again.seek(toFrame: 44100 * 5) == 44100 * 5)
        #expect(throws: FormatError.self) { _ = try plugin.makeDecoder(path: dir + "/noise.mod") }
        #expect(FormatRegistry.standard.plugins(forSuffix: "dfm").map(\.name) == ["modplug"])
        #expect(FormatRegistry.standard.plugins(forSuffix: "MOD").map(\.name) == ["openmpt", "modplug", "mikmod"])
    }
}

/// The files the `trackers` fuzz target once crashed on (`fuzz/regressions/trackers`: a suffix index byte,
/// then the file), read and decoded on the normal build as the target does.
@Suite struct TrackerFuzzRegressionTests {
    static let suffixes = [
        "nsf", "nsfe", "spc", "vgm", "vgz", "gbs", "kss", "hes", "ay", "sap", "gym", "mod", "xm", "s3m", "it",
        "dfm", "mptm", "669", "stm", "mtm",
    ]
    static let files: [String] = {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fuzz/regressions/trackers")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().map { directory.appendingPathComponent($0).path }
    }()

    @Test func thereAreRegressionFiles() {
        #expect(Self.files.contains { $0.hasSuffix("/vgz-pcm-read-outside-the-file") })
    }

    @Test(arguments: Self.files)
    func readsAndDecodesWithinBounds(_ path: String) throws {
        let input = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let first = try #require(input.first)
        let name = "input." + Self.suffixes[Int(first) % Self.suffixes.count]
        let dir = try TrackerFormatTests.directory([name: Array(input.dropFirst())])
        let file = dir + "/" + name
        _ = try? FormatRegistry.standard.readInfo(path: file)
        var paths = [file]
        paths += (FormatRegistry.standard.containerSongs(path: file) ?? []).prefix(2).map { file + "/" + $0.name }
        for path in paths {
            guard var decoder = try? FormatRegistry.standard.openDecoder(path: path) else { continue }
            let pcm = try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 4096, limit: 1 << 20)
            #expect(pcm.count % decoder.format.frameSize == 0)
        }
    }
}
