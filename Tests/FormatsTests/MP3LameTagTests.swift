// SPDX-License-Identifier: GPL-3.0-or-later

import Mad
import Model
import Testing

@testable import Formats

/// The ReplayGain, encoder delay and padding `mpd`'s mad plugin takes from a LAME tag (`parse_lame`), and the
/// Xing/Info header before it (`parse_xing`).
@Suite struct MP3LameTagTests {
    /// A LAME tag's first 20 bytes (the plugin reads no further for the gain): the encoder string, the
    /// revision and lowpass bytes, the 32 peak bits and the 16 bits of the radio gain.
    static func tag(
        encoder: String = "LAME3.100", peak: UInt32 = 0, name: UInt16 = 1, originator: UInt16 = 3,
        negative: Bool = false, tenths: UInt16 = 117
    ) -> [UInt8] {
        var bytes = Array(encoder.utf8.prefix(9))
        bytes += [UInt8](repeating: 0, count: 9 - bytes.count)
        bytes += [0x24, 0x61]
        bytes += [UInt8(peak >> 24), UInt8(peak >> 16 & 0xFF), UInt8(peak >> 8 & 0xFF), UInt8(peak & 0xFF)]
        let gain = name << 13 | originator << 10 | (negative ? 1 << 9 : 0) | tenths
        bytes += [UInt8(gain >> 8), UInt8(gain & 0xFF)]
        bytes += [0, 0, 0, 0]  // album gain, flags and ABR rate
        bytes += [0x24, 0x02, 0x1C]  // delay 576, padding 540
        bytes += [UInt8](repeating: 0, count: 36 - bytes.count)
        return bytes
    }

    static func lame(_ bytes: [UInt8], bitLength: Int = 288) -> MadLameTag? {
        MadBits.reading(bytes) { MadLameTag(&$0, bitLength: bitLength) }
    }

    static func gain(_ bytes: [UInt8], bitLength: Int = 288) -> ReplayGainInfo? {
        Self.lame(bytes, bitLength: bitLength)?.replayGain
    }

    @Test func theEncoderDelayAndPaddingAreRead() throws {
        let tag = try #require(Self.lame(Self.tag(negative: true)))
        #expect(tag.encoderDelay == 576 && tag.encoderPadding == 540)
        #expect(tag.trackGain == -11.7 && tag.replayGain == nil)
    }

    /// An Info header with every field, a LAME tag 120 bytes into it.
    @Test func anInfoHeaderGivesItsFrameCountAndTheLameTagAfterIt() throws {
        var bytes = Array("Info".utf8) + [0, 0, 0, 0x0F] + [0, 0, 0x01, 0x2C] + [0, 0, 0x10, 0]
        bytes += [UInt8](repeating: 0, count: 100) + [0, 0, 0, 0x32]
        bytes += Self.tag()
        let xing = try #require(MadBits.reading(bytes) { MadXing(&$0) })
        #expect(xing.flags == 15 && xing.frames == 300)
        #expect(xing.lame?.encoderDelay == 576)
        // Without the table of contents the LAME tag is still looked for at byte 120.
        var short = Array("Xing".utf8) + [0, 0, 0, 0x01] + [0, 0, 0, 0x05]
        short += [UInt8](repeating: 0, count: 120 - short.count) + Self.tag()
        let plain = try #require(MadBits.reading(short) { MadXing(&$0) })
        #expect(plain.frames == 5 && plain.lame?.trackGain == Float(117) / 10)
        #expect(MadBits.reading(Array("Xinf".utf8) + short.dropFirst(4)) { MadXing(&$0) } == nil)
        #expect(MadBits.reading(Array(short.prefix(7))) { MadXing(&$0) } == nil)
    }

    @Test func aPositiveRadioGainIsTheTrackGainWithTheZeroPeakLameWrites() throws {
        let info = try #require(Self.gain(Self.tag()))
        #expect(info.trackGain == Double(Float(117) / 10))
        #expect(info.trackPeak == 0)
        #expect(info.albumGain == nil && info.albumPeak == nil)
    }

    @Test func aNegativeOrZeroOrUnsetGainIsNotUsed() {
        #expect(Self.gain(Self.tag(negative: true)) == nil)
        #expect(Self.gain(Self.tag(tenths: 0)) == nil)
        #expect(Self.gain(Self.tag(originator: 0)) == nil)
        #expect(Self.gain(Self.tag(name: 2)) == nil, "an audiophile (album) gain in the radio field")
    }

    @Test func encodersBefore395GetSixDecibelsMore() throws {
        #expect(try #require(Self.gain(Self.tag(encoder: "LAME3.94 ", tenths: 20))).trackGain == Double(Float(8)))
        #expect(try #require(Self.gain(Self.tag(encoder: "LAME3.95 ", tenths: 20))).trackGain == Double(Float(2)))
        // A negative gain that the adjustment lifts above 0 dB is used.
        #expect(try #require(Self.gain(Self.tag(encoder: "LAME3.90", negative: true, tenths: 15))).trackGain == 4.5)
    }

    @Test func thePeakIsTheTagsBitsShiftedIntoASigned32BitInteger() throws {
        // LAME's fixed-point peak 0.5 (0x00400000) is 2^27 to the plugin; 1.0 wraps to a negative value.
        #expect(try #require(Self.gain(Self.tag(peak: 0x0040_0000))).trackPeak == 134_217_728)
        #expect(try #require(Self.gain(Self.tag(peak: 0x0400_0000))).trackPeak == -2_147_483_648)
    }

    @Test func otherEncodersAndShortTagsAreNotRead() {
        #expect(Self.gain(Self.tag(encoder: "Lavf58.76")) == nil)
        #expect(Self.gain(Self.tag(encoder: "LAMEx.y")) == nil)
        #expect(Self.gain(Self.tag(), bitLength: 287) == nil)
    }

    @Test func theVersionIsReadAsSscanfDoes() {
        #expect(MadLameTag.version(ArraySlice(Array("3.100".utf8))).map { [$0.major, $0.minor] } == [3, 100])
        #expect(MadLameTag.version(ArraySlice(Array("3.99r".utf8))).map { [$0.major, $0.minor] } == [3, 99])
        #expect(MadLameTag.version(ArraySlice(Array(" +3.9".utf8))).map { [$0.major, $0.minor] } == [3, 9])
        #expect(MadLameTag.version(ArraySlice(Array("3 .9".utf8))) == nil)
        #expect(MadLameTag.version(ArraySlice(Array("3.".utf8))) == nil)
    }

    @Test func theDecoderSubmitsTheGainOfAQuietLameFileUnlessID3HasOne() throws {
        let quiet = try Fixtures.lame(
            "lame_gain_quiet.mp3", rate: 44100, channels: 2, seconds: "0.5", lameArguments: ["--scale", "0.05"])
        let gain = try #require(try MP3Format().makeDecoder(path: quiet).replayGain?.trackGain)
        #expect(gain > 10 && gain < 40)
        let none = try Fixtures.lame(
            "lame_gain_none.mp3", rate: 44100, channels: 2, seconds: "0.5",
            lameArguments: ["--scale", "0.05", "--noreplaygain"])
        #expect(try MP3Format().makeDecoder(path: none).replayGain == nil)
        let tagged = try Fixtures.tagged(
            "lame_gain_id3.mp3", from: quiet,
            script: """
                import mutagen.id3
                t = mutagen.id3.ID3()
                t.add(mutagen.id3.TXXX(encoding=3, desc="replaygain_track_gain", text=["-3.00 dB"]))
                t.save(PATH)
                """)
        #expect(try MP3Format().makeDecoder(path: tagged).replayGain?.trackGain == -3)
        // The mpg123 plugin does not read the LAME tag.
        #expect(try MP3Format(scan: .mpg123).makeDecoder(path: quiet).replayGain == nil)
    }
}
