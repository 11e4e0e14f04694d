// SPDX-License-Identifier: GPL-3.0-or-later

import Formats
import Input
import Model
import TestTools
import Testing

/// Files for the sndfile and wavpack plugins, made with sox, wavpack and mutagen.
enum PCMFixtures {
    /// A sox sine of `samples` frames; `encoding` as sox names it.
    static func sox(
        _ name: String, rate: Int = 44100, channels: Int = 2, bits: Int = 16, encoding: String = "signed-integer",
        samples: Int = 22050
    ) throws -> String {
        try Fixtures.file(name) { path in
            let type = name.split(separator: ".").last.map(String.init) ?? "wav"
            try Fixtures.run(
                "/usr/bin/sox",
                [
                    "-R", "-D", "-r", "\(rate)", "-c", "\(channels)", "-n", "-b", "\(bits)", "-e", encoding, "-t", type,
                    path, "synth", "\(samples)s", "sine", "300-3000", "vol", "0.5",
                ])
        }
    }

    /// `wavpack` of a sox sine (hybrid with a correction file when `flags` has `-c`).
    static func wavpack(
        _ name: String, bits: Int = 16, channels: Int = 2, encoding: String = "signed-integer", samples: Int = 22050,
        flags: [String] = []
    ) throws -> String {
        let source = try self.sox("\(name).wav", channels: channels, bits: bits, encoding: encoding, samples: samples)
        let final = Fixtures.directory + "/" + name
        return try Fixtures.file(name) { path in
            try Fixtures.run("/usr/bin/wavpack", ["-q", "-y"] + flags + [source, "-o", path])
            // `-c` writes the correction file beside the partial one: move it beside the final name.
            if flags.contains("-c") { try renameFile(path + "c", to: final + "c") }
        }
    }

    /// Every frame `decoder` delivers, as raw bytes.
    static func decodeAll(_ decoder: inout any Decoder) throws -> [UInt8] {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 8192 * 8, alignment: 16)
        defer { buffer.deallocate() }
        var bytes: [UInt8] = []
        while true {
            let frames = try decoder.decode(into: buffer)
            if frames == 0 { return bytes }
            bytes += buffer.prefix(frames * decoder.format.frameSize)
        }
    }
}

@Suite struct SndfilePluginTests {
    let plugin = SndfileFormat()

    /// `mpd`'s sndfile plugin: 8- and 16-bit as 16, float and double as float, everything else as 32 bits.
    @Test(arguments: [
        ("u8.wav", 8, "unsigned-integer", SampleFormat.s16), ("s16.wav", 16, "signed-integer", .s16),
        ("s24.wav", 24, "signed-integer", .s32), ("s32.wav", 32, "signed-integer", .s32),
        ("f32.wav", 32, "floating-point", .float), ("f64.wav", 64, "floating-point", .float),
        ("ulaw.wav", 8, "u-law", .s32), ("s24.aif", 24, "signed-integer", .s32), ("s16.au", 16, "signed-integer", .s16),
    ])
    func formatsAndDurations(_ name: String, _ bits: Int, _ encoding: String, _ expected: SampleFormat) throws {
        let path = try PCMFixtures.sox(
            "sf-\(name)", rate: 48000, channels: 1, bits: bits, encoding: encoding, samples: 12345)
        let info = try self.plugin.readInfo(path: path)
        #expect(info.audioFormat == AudioFormat(sampleRate: 48000, sampleFormat: expected, channels: 1))
        #expect(info.durationMilliseconds == 12345 * 1000 / 48000)
        var decoder = try self.plugin.makeDecoder(path: path)
        #expect(decoder.format == info.audioFormat && decoder.totalFrames == 12345)
        #expect(try PCMFixtures.decodeAll(&decoder).count == 12345 * expected.bytesPerSample)
    }

    /// More than 8 channels: a song without a format (as `mpd` stores it), which does not play.
    @Test func tenChannels() throws {
        let path = try PCMFixtures.sox("sf-10ch.wav", channels: 10, samples: 4410)
        let info = try self.plugin.readInfo(path: path)
        #expect(info.audioFormat == nil && info.durationMilliseconds == 100)
        #expect(throws: FormatError.self) { try self.plugin.makeDecoder(path: path) }
    }

    @Test func samplesAreTheFilesAndSeeksExact() throws {
        let path = try PCMFixtures.sox("sf-seek.wav", samples: 50000)
        var whole = try self.plugin.makeDecoder(path: path)
        let all = try PCMFixtures.decodeAll(&whole)
        let file = try Fixtures.contents(path)
        let same = all.count == 50000 * 4 && all == Array(file.suffix(50000 * 4))
        #expect(same, "decoded samples differ from the file's")
        var decoder = try self.plugin.makeDecoder(path: path)
        for target in [33333, 7, 49999] {
            #expect(try decoder.seek(toFrame: UInt64(target)) == UInt64(target))
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4, alignment: 4)
            defer { buffer.deallocate() }
            #expect(try decoder.decode(into: buffer) == 1)
            #expect(Array(buffer) == Array(all[(target * 4)..<(target * 4 + 4)]))
        }
        #expect(throws: FormatError.self) { try decoder.seek(toFrame: 50001) }
    }

    @Test func truncatedFilesPlayWhatIsThere() throws {
        let source = try Fixtures.contents(try PCMFixtures.sox("sf-trunc-src.wav", samples: 44100))
        let path = try Fixtures.bytes("sf-trunc.wav", Array(source.prefix(44 + 1000 * 4 + 2)))
        let info = try self.plugin.readInfo(path: path)
        #expect(info.durationMilliseconds == 1000 * 1000 / 44100)
        var decoder = try self.plugin.makeDecoder(path: path)
        #expect(try PCMFixtures.decodeAll(&decoder).count == 1000 * 4)
    }

    @Test(arguments: ["wav", "aiff", "au", "voc", "w64"])
    func garbageIsNotRecognized(_ suffix: String) throws {
        let path = try Fixtures.bytes(
            "sf-garbage.\(suffix)", (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) })
        #expect(throws: FormatError.self) { try FormatRegistry.standard.readInfo(path: path) }
        #expect(throws: FormatError.self) { try self.plugin.makeDecoder(path: path) }
        #expect(throws: FormatError.self) { try FormatRegistry.standard.readPicture(path: path) }
        let empty = try Fixtures.bytes("sf-empty.\(suffix)", [])
        #expect(throws: FormatError.self) { try FormatRegistry.standard.readInfo(path: empty) }
    }

    /// RIFF INFO fields as `mpd` maps them; the ID3 chunk of a WAV or AIFF when there are none, also when
    /// the only INFO field is a comment that `metadata_to_use` drops.
    @Test func tagsFromInfoAndID3Chunks() throws {
        let info = try Fixtures.tagged(
            "sf-info.wav", from: try PCMFixtures.sox("sf-info-src.wav", samples: 100),
            script: """
                import struct
                data = bytearray(open(PATH, 'rb').read())
                fields = [(b'INAM', b'T'), (b'IART', b'A'), (b'ITRK', b'03/12'), (b'ICMT', b'c'), (b'ISFT', b's')]
                body = b'INFO' + b''.join(k + struct.pack('<I', len(v) + 1) + v + b'\\0' + (b'\\0' if len(v) % 2 == 0 else b'') for k, v in fields)
                data += b'LIST' + struct.pack('<I', len(body)) + body
                data[4:8] = struct.pack('<I', len(data) - 8)
                open(PATH, 'wb').write(data)
                """)
        let lines = try FormatRegistry.standard.readInfo(path: info).tags.map { "\($0.type.name)=\($0.value)" }
        #expect(lines == ["Title=T", "Artist=A", "Comment=c", "Track=3"])

        let id3Script = """
            from mutagen import wave, aiff
            from mutagen.id3 import TIT2, TXXX, APIC
            f = (wave.WAVE if '.wav' in PATH else aiff.AIFF)(PATH)
            if f.tags is None: f.add_tags()
            f.tags.add(TIT2(encoding=3, text=['chunk']))
            f.tags.add(TXXX(encoding=3, desc='replaygain_track_gain', text=['-2.00 dB']))
            f.tags.add(APIC(encoding=3, mime='image/png', type=3, desc='', data=b'PNGDATA'))
            f.save()
            """
        for suffix in ["wav", "aiff"] {
            let path = try Fixtures.tagged(
                "sf-id3.\(suffix)", from: try PCMFixtures.sox("sf-id3-src.\(suffix)", samples: 100), script: id3Script)
            let song = try FormatRegistry.standard.readInfo(path: path)
            #expect(song.tags.map(\.value) == ["chunk"] && song.hasPicture)
            #expect(try FormatRegistry.standard.readPicture(path: path)?.data == Array("PNGDATA".utf8))
            #expect(try FormatRegistry.standard.readComments(path: path).map(\.name) == ["replaygain_track_gain"])
        }

        let commented = try Fixtures.tagged(
            "sf-comment-id3.wav", from: try PCMFixtures.sox("sf-comment-src.wav", samples: 100),
            script: """
                import struct
                data = bytearray(open(PATH, 'rb').read())
                body = b'INFOICMT' + struct.pack('<I', 2) + b'c\\0'
                data += b'LIST' + struct.pack('<I', len(body)) + body
                data[4:8] = struct.pack('<I', len(data) - 8)
                open(PATH, 'wb').write(data)
                """ + "\n" + id3Script)
        #expect(try FormatRegistry.standard.readInfo(path: commented).tags.map(\.value) == ["c"])
        let masked = try FormatRegistry.standard.readInfo(path: commented, enabledTags: .defaultMetadata)
        #expect(masked.tags.map(\.value) == ["chunk"])
    }
}

extension SndfilePluginTests {
    /// ReplayGain comes from an APE tag at the end of any file, also when the plugin found tags of its own.
    @Test func replayGainFromAPEBesideInfoTags() throws {
        let path = try Fixtures.tagged(
            "sf-info-ape.wav", from: try PCMFixtures.sox("sf-info-ape-src.wav", samples: 100),
            script: """
                import struct
                from mutagen.apev2 import APEv2
                data = bytearray(open(PATH, 'rb').read())
                body = b'INFOINAM' + struct.pack('<I', 2) + b'T\\0'
                data += b'LIST' + struct.pack('<I', len(body)) + body
                data[4:8] = struct.pack('<I', len(data) - 8)
                open(PATH, 'wb').write(data)
                t = APEv2()
                t['Title'] = 'APE'
                t['REPLAYGAIN_TRACK_GAIN'] = '-4.25 dB'
                t.save(PATH)
                """)
        let info = try FormatRegistry.standard.readInfo(path: path)
        #expect(info.tags.map(\.value) == ["T"])
        #expect(info.replayGain.trackGain == -4.25)
    }
}

extension WavPackPluginTests {
    /// A stream that cannot seek is unpacked in streaming mode; a seek is refused and playback goes on.
    @Test func unseekableStreams() throws {
        let path = try PCMFixtures.wavpack("wv-stream.wv", samples: 30000)
        var reference = try self.plugin.makeDecoder(path: path)
        let want = try PCMFixtures.decodeAll(&reference)
        var decoder = try self.plugin.makeDecoder(
            input: SizelessStream(try Fixtures.contents(path), uri: "stream.wv", isSeekable: false))
        #expect(throws: FormatError.self) { try decoder.seek(toFrame: 100) }
        let same = try PCMFixtures.decodeAll(&decoder) == want
        #expect(same, "the streamed decode differs")
    }
}

@Suite struct WavPackPluginTests {
    let plugin = WavPackFormat()

    @Test(arguments: [
        (8, "unsigned-integer", SampleFormat.s8), (16, "signed-integer", .s16), (24, "signed-integer", .s24),
        (32, "signed-integer", .s32), (32, "floating-point", .float),
    ])
    func formatsDurationsAndSamples(_ bits: Int, _ encoding: String, _ expected: SampleFormat) throws {
        let path = try PCMFixtures.wavpack("wv-\(bits)-\(encoding).wv", bits: bits, encoding: encoding, samples: 23456)
        let info = try self.plugin.readInfo(path: path)
        #expect(info.audioFormat == AudioFormat(sampleRate: 44100, sampleFormat: expected, channels: 2))
        #expect(info.durationMilliseconds == 23456 * 1000 / 44100)
        var decoder = try self.plugin.makeDecoder(path: path)
        #expect(decoder.format == info.audioFormat && decoder.totalFrames == 23456)
        let samples = try PCMFixtures.decodeAll(&decoder)
        #expect(samples.count == 23456 * 2 * expected.bytesPerSample)
        // The WAV's own samples, widened as mpd delivers them (8-bit unsigned becomes signed).
        let wave = try Fixtures.contents(
            try PCMFixtures.sox("wv-\(bits)-\(encoding).wv.wav", bits: bits, encoding: encoding, samples: 23456))
        let pcm = Array(wave.suffix(23456 * 2 * bits / 8))
        switch expected {
        case .s8:
            let same = samples == pcm.map { $0 ^ 0x80 }
            #expect(same, "8-bit samples differ")
        case .s16, .s32, .float:
            let same = samples == pcm
            #expect(same, "samples differ")
        default:
            var widened: [UInt8] = []
            for index in stride(from: 0, to: pcm.count, by: 3) {
                let sign: UInt8 = pcm[index + 2] & 0x80 != 0 ? 0xFF : 0
                widened += [pcm[index], pcm[index + 1], pcm[index + 2], sign]
            }
            let same = samples == widened
            #expect(same, "24-bit samples differ")
        }
    }

    /// DSD WavPack (from a DSF file written here): `dsd64:2`, bytes of 8 one-bit samples, as `mpd` opens it.
    @Test func dsdStaysDSD() throws {
        func le(_ value: Int, _ bytes: Int) -> [UInt8] {
            (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        let blocks = 20
        var data: [UInt8] = []
        for block in 0..<blocks {
            for channel in 0..<2 {
                data += (0..<4096).map {
                    UInt8(truncatingIfNeeded: ($0 &* 37 &+ block &* 11 &+ channel &* 101) &* 40503 >> 5)
                }
            }
        }
        let format =
            Array("fmt ".utf8) + le(52, 8) + le(1, 4) + le(0, 4) + le(2, 4) + le(2, 4) + le(2_822_400, 4) + le(1, 4)
            + le(blocks * 4096 * 8, 8) + le(4096, 4) + le(0, 4)
        let body = Array("data".utf8) + le(12 + data.count, 8) + data
        let dsf = Array("DSD ".utf8) + le(28, 8) + le(28 + format.count + body.count, 8) + le(0, 8) + format + body
        let source = try Fixtures.bytes("wv-dsd.dsf", dsf)
        let path = try Fixtures.file("wv-dsd.wv") { path in
            try Fixtures.run("/usr/bin/wavpack", ["-q", "-y", source, "-o", path + ".wv"])
            try Fixtures.run("/bin/mv", [path + ".wv", path])
        }
        let info = try self.plugin.readInfo(path: path)
        #expect(info.audioFormat?.description == "dsd64:2")
        #expect(info.durationMilliseconds == UInt64(blocks * 4096) * 1000 / 352_800)
        var decoder = try self.plugin.makeDecoder(path: path)
        #expect(decoder.format.sampleFormat == .dsd && decoder.totalFrames == UInt64(blocks * 4096))
        #expect(try PCMFixtures.decodeAll(&decoder).count == blocks * 4096 * 2)
    }

    @Test func seeksAreExact() throws {
        let path = try PCMFixtures.wavpack("wv-seek.wv", samples: 90000)
        var whole = try self.plugin.makeDecoder(path: path)
        let all = try PCMFixtures.decodeAll(&whole)
        var decoder = try self.plugin.makeDecoder(path: path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4, alignment: 4)
        defer { buffer.deallocate() }
        for target in [66666, 1, 89999, 44100] {
            #expect(try decoder.seek(toFrame: UInt64(target)) == UInt64(target))
            #expect(try decoder.decode(into: buffer) == 1)
            #expect(Array(buffer) == Array(all[(target * 4)..<(target * 4 + 4)]))
        }
        #expect(decoder.bitRate > 0)
    }

    /// The `.wvc` beside a hybrid file makes playback lossless; without it, lossy.
    @Test func correctionFileIsUsed() throws {
        let lossless = try PCMFixtures.wavpack("wv-plain.wv", samples: 30000)
        var reference = try self.plugin.makeDecoder(path: lossless)
        let want = try PCMFixtures.decodeAll(&reference)
        let hybrid = try PCMFixtures.wavpack("wv-plain-hybrid.wv", samples: 30000, flags: ["-b2.5", "-c"])
        var corrected = try self.plugin.makeDecoder(path: hybrid)
        let same = try PCMFixtures.decodeAll(&corrected) == want
        #expect(same, "the corrected decode is not lossless")
        var lossy = try self.plugin.makeDecoder(input: MemoryInputStream(try Fixtures.contents(hybrid), uri: hybrid))
        let approximate = try PCMFixtures.decodeAll(&lossy)
        let lossyDiffers = approximate.count == want.count && approximate != want
        #expect(lossyDiffers, "without its .wvc the hybrid file should decode lossily")
    }

    @Test func truncatedAndGarbageFiles() throws {
        let bytes = try Fixtures.contents(try PCMFixtures.wavpack("wv-trunc-src.wv", samples: 88200))
        let truncated = try Fixtures.bytes("wv-trunc.wv", Array(bytes.prefix(bytes.count / 2)))
        #expect(try self.plugin.readInfo(path: truncated).durationMilliseconds == 2000)
        var decoder = try self.plugin.makeDecoder(path: truncated)
        let count = try PCMFixtures.decodeAll(&decoder).count
        #expect(count > 0 && count < 88200 * 4)
        for (name, data) in [
            ("wv-garbage.wv", [UInt8](repeating: 0x5A, count: 4096)), ("wv-stub.wv", Array(bytes.prefix(20))),
            ("wv-empty.wv", []),
        ] {
            let path = try Fixtures.bytes(name, data)
            #expect(throws: FormatError.self) { try FormatRegistry.standard.readInfo(path: path) }
            #expect(throws: FormatError.self) { try self.plugin.makeDecoder(path: path) }
        }
    }

    /// Tags, comments and ReplayGain come from the APEv2 tag through the registry's generic scan; its binary
    /// cover art is no picture to `mpd` 0.23.
    @Test func apeTagsThroughTheGenericScan() throws {
        let path = try Fixtures.tagged(
            "wv-ape.wv", from: try PCMFixtures.wavpack("wv-ape-src.wv", samples: 1000),
            script: """
                from mutagen.apev2 import APEv2, APEBinaryValue, BINARY
                t = APEv2()
                t['Title'] = 'T'
                t['Artist'] = 'One\\0Two'
                t['Track'] = '03/12'
                t['REPLAYGAIN_TRACK_GAIN'] = '-6.50 dB'
                t['REPLAYGAIN_ALBUM_PEAK'] = '0.5'
                t['Cover Art (Front)'] = APEBinaryValue(b'c.png\\0PNG', BINARY)
                t.save(PATH)
                """)
        let info = try FormatRegistry.standard.readInfo(path: path)
        #expect(
            info.tags.map { "\($0.type.name)=\($0.value)" }.sorted() == [
                "Artist=One", "Artist=Two", "Title=T", "Track=3",
            ])
        #expect(info.replayGain.trackGain == -6.5 && info.replayGain.albumPeak == 0.5)
        #expect(!info.hasPicture)
        #expect(try FormatRegistry.standard.readPicture(path: path) == nil)
        let comments = try FormatRegistry.standard.readComments(path: path).map { "\($0.name)=\($0.value)" }
        #expect(comments.contains("Artist=Two") && comments.contains("REPLAYGAIN_TRACK_GAIN=-6.50 dB"))
    }
}

@Suite struct PCMRegistryTests {
    @Test func pluginsInMPDOrder() {
        let names = FormatRegistry.standard.plugins.map(\.name)
        let sndfile = names.firstIndex(of: "sndfile")
        let wavpack = names.firstIndex(of: "wavpack")
        #expect(sndfile != nil && wavpack != nil && sndfile! < wavpack!)
        #expect(names.firstIndex(of: "mad")! < sndfile!)
        #expect(FormatRegistry.standard.plugin(forPath: "x/Y.WAV")?.name == "sndfile")
        #expect(FormatRegistry.standard.plugin(forPath: "a.wv")?.name == "wavpack")
        #expect(FormatRegistry.standard.plugin(forMimeType: "audio/x-wav")?.name == "sndfile")
        #expect(FormatRegistry.standard.plugin(forMimeType: "audio/x-wavpack")?.name == "wavpack")
    }
}
