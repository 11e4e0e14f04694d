// SPDX-License-Identifier: GPL-3.0-or-later

import Formats
import Model
import Testing

/// One generated file and what Debian's `mpd` 0.23.12 listed for it (`Format:` and `duration:` from
/// `listallinfo`, measured on mpd 0.23.12 with its mad plugin on exactly these files).
struct AudioCase: CustomTestStringConvertible, Sendable {
    var name: String
    var rate: Int
    var channels: Int
    var seconds: String
    var lame: [String]
    var format: String
    var milliseconds: UInt64

    var testDescription: String { self.name }
}

// Measured on mpd 0.23.12 (Debian bookworm, mad plugin first), `listallinfo` on these fixtures.
let audioCases: [AudioCase] = [
    AudioCase(
        name: "cbr_44k_stereo_1s.mp3", rate: 44100, channels: 2, seconds: "1", lame: [],
        format: "44100:24:2", milliseconds: 1044),
    AudioCase(
        name: "cbr_44k_stereo_1s_noxing.mp3", rate: 44100, channels: 2, seconds: "1", lame: ["-t"],
        format: "44100:24:2", milliseconds: 1044),
    AudioCase(
        name: "vbr_v2_44k_3s.mp3", rate: 44100, channels: 2, seconds: "3.3", lame: ["-V", "2"],
        format: "44100:24:2", milliseconds: 3343),
    AudioCase(
        name: "vbr_v2_44k_3s_noxing.mp3", rate: 44100, channels: 2, seconds: "3.3", lame: ["-V", "2", "-t"],
        format: "44100:24:2", milliseconds: 1033),
    AudioCase(
        name: "abr_48k_mono.mp3", rate: 48000, channels: 1, seconds: "2.1", lame: ["--abr", "80"],
        format: "48000:24:1", milliseconds: 2136),
    AudioCase(
        name: "cbr_48k_320.mp3", rate: 48000, channels: 2, seconds: "1.7", lame: ["-b", "320"],
        format: "48000:24:2", milliseconds: 1728),
    AudioCase(
        name: "cbr_32k_mono_noxing.mp3", rate: 32000, channels: 1, seconds: "2.5", lame: ["-t", "-b", "48"],
        format: "32000:24:1", milliseconds: 2556),
    AudioCase(
        name: "mpeg2_24k.mp3", rate: 24000, channels: 2, seconds: "2", lame: [],
        format: "24000:24:2", milliseconds: 2064),
    AudioCase(
        name: "mpeg2_22k_vbr_noxing.mp3", rate: 22050, channels: 2, seconds: "2", lame: ["-V", "5", "-t"],
        format: "22050:24:2", milliseconds: 897),
    AudioCase(
        name: "mpeg2_16k_mono.mp3", rate: 16000, channels: 1, seconds: "1.3", lame: ["-V", "7"],
        format: "16000:24:1", milliseconds: 1404),
    AudioCase(
        name: "mpeg25_12k.mp3", rate: 12000, channels: 2, seconds: "2", lame: [],
        format: "12000:24:2", milliseconds: 2112),
    AudioCase(
        name: "mpeg25_11k_mono_noxing.mp3", rate: 11025, channels: 1, seconds: "2", lame: ["-t"],
        format: "11025:24:1", milliseconds: 2142),
    AudioCase(
        name: "mpeg25_8k_mono.mp3", rate: 8000, channels: 1, seconds: "3", lame: [],
        format: "8000:24:1", milliseconds: 3168),
    AudioCase(
        name: "mpeg25_8k_stereo_vbr.mp3", rate: 8000, channels: 2, seconds: "0.4", lame: ["-V", "0"],
        format: "8000:24:2", milliseconds: 576),
    AudioCase(
        name: "crc_protected.mp3", rate: 44100, channels: 2, seconds: "1.2", lame: ["-p"],
        format: "44100:24:2", milliseconds: 1227),
    AudioCase(
        name: "crc_protected_noxing.mp3", rate: 44100, channels: 2, seconds: "1.2", lame: ["-p", "-t"],
        format: "44100:24:2", milliseconds: 1227),
    AudioCase(
        name: "freeformat_noxing.mp3", rate: 44100, channels: 2, seconds: "1.5",
        lame: ["--freeformat", "-b", "200", "-t"], format: "44100:24:2", milliseconds: 1541),
    AudioCase(
        name: "very_short.mp3", rate: 44100, channels: 2, seconds: "0.01", lame: [],
        format: "44100:24:2", milliseconds: 52),
    AudioCase(
        name: "very_short_noxing.mp3", rate: 44100, channels: 1, seconds: "0.01", lame: ["-t"],
        format: "44100:24:1", milliseconds: 52),
]

@Suite struct MP3DurationTests {
    @Test(arguments: audioCases)
    func durationAndFormatMatchMPD(_ audio: AudioCase) throws {
        let path = try Fixtures.lame(
            audio.name, rate: audio.rate, channels: audio.channels, seconds: audio.seconds, lameArguments: audio.lame)
        let info = try MP3Format().readInfo(path: path)
        #expect(info.audioFormat?.description == audio.format)
        #expect(info.durationMilliseconds == audio.milliseconds)
    }
}
