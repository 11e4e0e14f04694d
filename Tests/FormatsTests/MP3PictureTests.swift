// SPDX-License-Identifier: GPL-3.0-or-later

import Formats
import Model
import Testing

@Suite struct MP3PictureTests {
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array("fake jpeg body".utf8)

    static func apicFrame(mime: String, data: [UInt8]) -> [UInt8] {
        let body = [0] + Array(mime.utf8) + [0, 3, 0] + data
        return Array("APIC".utf8) + TagBytes.syncsafe(body.count) + [0, 0] + body
    }

    @Test func firstAPICIsReturned() throws {
        let audio = try Fixtures.contents(try Fixtures.lame("picbase.mp3", rate: 44100, channels: 2, seconds: "1"))
        let tag = TagBytes.id3v24([
            Self.apicFrame(mime: "-->", data: Array("http://example.org/x.jpg".utf8)),
            Self.apicFrame(mime: "image/jpeg", data: Self.jpeg),
            Self.apicFrame(mime: "image/png", data: [1, 2, 3]),
        ])
        let path = try Fixtures.bytes("picture.mp3", tag + audio)
        let picture = try MP3Format().readPicture(path: path)
        #expect(picture == Picture(data: Self.jpeg, mimeType: "image/jpeg"))
        #expect(try MP3Format().readInfo(path: path).hasPicture)
    }

    @Test func recognisedAPETagHidesTheID3Picture() throws {
        let audio = try Fixtures.contents(try Fixtures.lame("picbase.mp3", rate: 44100, channels: 2, seconds: "1"))
        let tag = TagBytes.id3v24([Self.apicFrame(mime: "image/jpeg", data: Self.jpeg)])
        let path = try Fixtures.bytes("picture_ape.mp3", tag + audio + TagBytes.ape([TagBytes.text("Title", "t")]))
        #expect(try MP3Format().readPicture(path: path) == nil)
        #expect(try !MP3Format().readInfo(path: path).hasPicture)
    }

    @Test func noPicture() throws {
        let path = try Fixtures.lame("picbase.mp3", rate: 44100, channels: 2, seconds: "1")
        #expect(try MP3Format().readPicture(path: path) == nil)
    }
}

@Suite struct ReplayGainTests {
    @Test func txxxReplayGain() throws {
        let audio = try Fixtures.contents(try Fixtures.lame("rgbase.mp3", rate: 44100, channels: 2, seconds: "1"))
        func txxx(_ name: String, _ value: String) -> [UInt8] {
            let body = [3] + Array(name.utf8) + [0] + Array(value.utf8)
            return Array("TXXX".utf8) + TagBytes.syncsafe(body.count) + [0, 0] + body
        }
        let tag = TagBytes.id3v24([txxx("REPLAYGAIN_TRACK_GAIN", "-6.50 dB"), txxx("replaygain_album_peak", "0.5")])
        let path = try Fixtures.bytes("rg.mp3", tag + audio)
        let info = try MP3Format().readInfo(path: path)
        #expect(info.replayGain == ReplayGainInfo(trackGain: -6.5, albumPeak: 0.5))
    }

    @Test func apeReplayGainWhenNoID3() throws {
        let audio = try Fixtures.contents(try Fixtures.lame("rgbase.mp3", rate: 44100, channels: 2, seconds: "1"))
        let path = try Fixtures.bytes(
            "rg_ape.mp3", audio + TagBytes.ape([TagBytes.text("REPLAYGAIN_TRACK_GAIN", "+1.25 dB")]))
        #expect(try MP3Format().readInfo(path: path).replayGain == ReplayGainInfo(trackGain: 1.25))
    }
}
