// SPDX-License-Identifier: GPL-3.0-or-later

import Encoders
import Glibc
import Model
import Testing

/// One second of a 440 Hz sine in `format` (s16 or float), interleaved.
private func sine(_ format: AudioFormat, seconds: Double = 1) -> [UInt8] {
    let frames = Int(Double(format.sampleRate) * seconds)
    var bytes: [UInt8] = []
    for frame in 0..<frames {
        let value = 0.5 * sin(2 * Double.pi * 440 * Double(frame) / Double(format.sampleRate))
        for _ in 0..<format.channels {
            switch format.sampleFormat {
            case .float: withUnsafeBytes(of: Float(value)) { bytes += $0 }
            case .s24, .s32:
                let scale = format.sampleFormat == .s24 ? 8_388_607.0 : 2_147_483_647.0
                withUnsafeBytes(of: Int32(value * scale)) { bytes += $0 }
            default: withUnsafeBytes(of: Int16(value * 32767)) { bytes += $0 }
            }
        }
    }
    return bytes
}

/// Opens the encoder `parameters` configure for CD audio, feeds it `seconds` of a sine and ends the stream.
private func encode(_ parameters: [String: String], seconds: Double = 1) throws -> (bytes: [UInt8], format: AudioFormat)
{
    let prepared = try EncoderPlugins.configured(BlockParameters(parameters))
    let (encoder, format) = try prepared.open(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
    var out: [UInt8] = []
    encoder.read { out += $0 }
    let pcm = sine(format, seconds: seconds)
    // In pieces the size the output thread writes.
    var offset = 0
    while offset < pcm.count {
        let count = min(4096 * format.frameSize, pcm.count - offset)
        try pcm[offset..<(offset + count)].withUnsafeBytes { try encoder.write($0) }
        encoder.read { out += $0 }
        offset += count
    }
    try encoder.end()
    encoder.read { out += $0 }
    return (out, format)
}

private func contains(_ bytes: [UInt8], _ text: String) -> Bool {
    let needle = Array(text.utf8)
    guard bytes.count >= needle.count else { return false }
    return (0...(bytes.count - needle.count)).contains { Array(bytes[$0..<($0 + needle.count)]) == needle }
}

@Suite struct EncoderConfigurationTests {
    @Test func unknownEncoderIsMPDsError() {
        #expect(throws: EncoderError("No such encoder: mp5")) { try EncoderPlugins.configured(["encoder": "mp5"]) }
    }

    @Test func defaultEncoderIsVorbis() throws {
        #expect(try EncoderPlugins.configured([:]).mimeType == "audio/ogg")
    }

    @Test func lameNeedsQualityOrBitrate() {
        #expect(throws: EncoderError("neither bitrate nor quality defined")) {
            try EncoderPlugins.configured(["encoder": "lame"])
        }
        #expect(throws: EncoderError("quality and bitrate are both defined")) {
            try EncoderPlugins.configured(["encoder": "lame", "quality": "2", "bitrate": "128"])
        }
        #expect(throws: EncoderError("quality \"11\" is not a number in the range -1 to 10")) {
            try EncoderPlugins.configured(["encoder": "lame", "quality": "11"])
        }
        #expect(throws: EncoderError("bitrate should be a positive integer")) {
            try EncoderPlugins.configured(["encoder": "vorbis", "bitrate": "0"])
        }
    }

    @Test func opusKeys() {
        #expect(throws: EncoderError("Invalid bit rate")) {
            try EncoderPlugins.configured(["encoder": "opus", "bitrate": "100"])
        }
        #expect(throws: EncoderError("Invalid complexity")) {
            try EncoderPlugins.configured(["encoder": "opus", "complexity": "11"])
        }
        #expect(throws: EncoderError("Invalid signal")) {
            try EncoderPlugins.configured(["encoder": "opus", "signal": "x"])
        }
        #expect(throws: EncoderError("Invalid vbr")) {
            try EncoderPlugins.configured(["encoder": "opus", "vbr": "maybe"])
        }
        #expect(throws: EncoderError("Invalid packet loss")) {
            try EncoderPlugins.configured(["encoder": "opus", "packet_loss": "101"])
        }
    }

    @Test func mimeTypes() throws {
        #expect(try EncoderPlugins.configured(["encoder": "lame", "bitrate": "128"]).mimeType == "audio/mpeg")
        #expect(try EncoderPlugins.configured(["encoder": "opus"]).mimeType == "audio/ogg")
        #expect(try EncoderPlugins.configured(["encoder": "flac"]).mimeType == "audio/flac")
        #expect(try EncoderPlugins.configured(["encoder": "wave"]).mimeType == "audio/wav")
    }
}

@Suite struct EncoderOutputTests {
    @Test func waveHeaderAndSamples() throws {
        let (bytes, format) = try encode(["encoder": "wave"], seconds: 0.1)
        #expect(format == AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        #expect(Array(bytes[0..<4]) == Array("RIFF".utf8))
        #expect(Array(bytes[8..<16]) == Array("WAVEfmt ".utf8))
        // 44100 Hz, byte rate 176400, block align 4, 16 bits, fake data length 0x0FFFFFFF.
        #expect(Array(bytes[24..<36]) == [0x44, 0xAC, 0, 0, 0x10, 0xB1, 2, 0, 4, 0, 16, 0])
        #expect(Array(bytes[36..<44]) == Array("data".utf8) + [0xFF, 0xFF, 0xFF, 0x0F])
        #expect(bytes.count == 44 + 4410 * 4)
    }

    @Test func lameMakesMP3Frames() throws {
        let (bytes, format) = try encode(["encoder": "lame", "bitrate": "128"])
        #expect(format.sampleFormat == .s16 && format.channels == 2)
        #expect(bytes.count > 14_000 && bytes.count < 20_000)  // 128 kbit/s × 1 s = 16 000 bytes
        #expect(bytes[0] == 0xFF && bytes[1] & 0xE0 == 0xE0)
    }

    @Test func vorbisMakesOggVorbis() throws {
        let (bytes, format) = try encode(["encoder": "vorbis", "quality": "5"])
        #expect(format.sampleFormat == .float)
        #expect(Array(bytes[0..<4]) == Array("OggS".utf8))
        #expect(contains(bytes, "vorbis"))
        #expect(bytes.count > 4000)
    }

    @Test func opusMakesOggOpusAt48kHz() throws {
        let (bytes, format) = try encode(["encoder": "opus", "bitrate": "96000"])
        #expect(format.sampleRate == 48000)
        #expect(Array(bytes[0..<4]) == Array("OggS".utf8))
        #expect(contains(bytes, "OpusHead") && contains(bytes, "OpusTags"))
        #expect(bytes.count > 8000)
    }

    @Test func flacMakesNativeFLAC() throws {
        let (bytes, format) = try encode(["encoder": "flac", "compression": "8"])
        #expect(format.sampleFormat == .s16)
        #expect(Array(bytes[0..<4]) == Array("fLaC".utf8))
        #expect(bytes.count > 1000 && bytes.count < 44100 * 4)
    }

    @Test func oggFLACChainsAStreamPerTag() throws {
        #expect(try EncoderPlugins.configured(["encoder": "flac", "oggflac": "yes"]).mimeType == "audio/ogg")
        let (bytes, _) = try encode(["encoder": "flac", "oggflac": "yes"], seconds: 0.2)
        #expect(Array(bytes[0..<4]) == Array("OggS".utf8) && contains(bytes, "FLAC"))
        let prepared = try EncoderPlugins.configured(["encoder": "flac", "oggchaining": "yes"])
        let (encoder, format) = try prepared.open(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        #expect(encoder.implementsTag)
        try sine(format, seconds: 0.2).withUnsafeBytes { try encoder.write($0) }
        try encoder.preTag()
        try encoder.sendTag([TagItem(.title, "Chained")])
        var out: [UInt8] = []
        encoder.read { out += $0 }
        #expect(contains(out, "TITLE=Chained"))
        try sine(format, seconds: 0.2).withUnsafeBytes { try encoder.write($0) }
        try encoder.end()
        encoder.read { out += $0 }
        #expect(out.count > 1000)
    }

    @Test func vorbisChainsAStreamPerTag() throws {
        let prepared = try EncoderPlugins.configured(["encoder": "vorbis"])
        let (encoder, format) = try prepared.open(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        #expect(encoder.implementsTag)
        let pcm = sine(format, seconds: 0.5)
        try pcm.withUnsafeBytes { try encoder.write($0) }
        try encoder.preTag()
        try encoder.sendTag([TagItem(.artist, "Somebody"), TagItem(.title, "Song")])
        try encoder.flush()
        var out: [UInt8] = []
        encoder.read { out += $0 }
        #expect(contains(out, "ARTIST=Somebody") && contains(out, "TITLE=Song"))
    }
}
