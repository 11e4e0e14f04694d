// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

@Suite struct AudioFormatMaskTests {
    private let cd = AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)

    @Test(arguments: [
        ("*:*:*", AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        ("48000:*:*", AudioFormat(sampleRate: 48000, sampleFormat: .s24, channels: 2)),
        ("*:16:*", AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2)),
        ("*:f:1", AudioFormat(sampleRate: 44100, sampleFormat: .float, channels: 1)),
        ("96000:32:6", AudioFormat(sampleRate: 96000, sampleFormat: .s32, channels: 6)),
    ])
    func appliesOnlyTheGivenFields(text: String, expected: AudioFormat) throws {
        #expect(try AudioFormatMask.parse(text, mask: true).applied(to: self.cd) == expected)
    }

    @Test(arguments: [
        ("*:16:2", false, "Failed to parse the sample rate"), ("0:16:2", true, "Invalid sample rate: 0"),
        ("44100", true, "Sample format missing"), ("44100:12:2", true, "Invalid sample format: 12"),
        ("44100:16", true, "Channel count missing"), ("44100:16:9", true, "Invalid channel count: 9"),
        ("44100:16:2x", true, "Extra data after channel count: x"),
    ])
    func reportsMPDsMessages(text: String, mask: Bool, message: String) {
        #expect(throws: AudioFormatParseError(message)) { try AudioFormatMask.parse(text, mask: mask) }
    }
}
