// SPDX-License-Identifier: GPL-3.0-or-later

import Formats
import ID3Tag
import Model
import Testing

@Suite struct VorbisCommentTests {
    private func entry(_ text: String) -> ArraySlice<UInt8> { Array(text.utf8)[...] }

    @Test(arguments: [
        ("TITLE=Song", TagType.title, "Song"), ("tracknumber=03/12", .track, "03/12"),
        ("DESCRIPTION=words", .comment, "words"), ("Comment=more", .comment, "more"),
        ("MOVEMENT=2", .movementNumber, "2"), ("MOVEMENTNAME=Allegro", .movement, "Allegro"),
        ("musicbrainz_trackid=abc", .musicBrainzTrackID, "abc"), ("AlbumArtist=X=Y", .albumArtist, "X=Y"),
        ("DATE=", .date, ""),
    ])
    func entriesMapAsMPDMapsThem(text: String, type: TagType, value: String) {
        #expect(VorbisComment.tagItem(self.entry(text)) == RawTagItem(type, value))
    }

    @Test(arguments: ["ALBUM ARTIST=x", "TITLE", "=x", "REPLAYGAIN_TRACK_GAIN=-3 dB", "TITLEX=y"])
    func otherEntriesAreNoTag(text: String) {
        #expect(VorbisComment.tagItem(self.entry(text)) == nil)
    }

    @Test func opusChecksCanonicalNamesFirst() {
        #expect(VorbisComment.opusTagType(name: self.entry("MOVEMENT")) == .movement)
        #expect(VorbisComment.opusTagType(name: self.entry("movementname")) == .movement)
        #expect(VorbisComment.opusTagType(name: self.entry("TrackNumber")) == .track)
        #expect(VorbisComment.opusTagType(name: self.entry("R128_TRACK_GAIN")) == nil)
    }

    @Test func pairsSplitAtTheFirstEquals() {
        let pair = VorbisComment.pair(self.entry("A=b=c"))
        #expect(pair.map { Array($0.name) } == Array("A".utf8))
        #expect(pair.map { Array($0.value) } == Array("b=c".utf8))
        #expect(VorbisComment.pair(self.entry("=b")) == nil)
        #expect(VorbisComment.pair(self.entry("ab")) == nil)
    }

    @Test func replayGainAndMixRamp() {
        var info = ReplayGainInfo()
        #expect(VorbisComment.applyReplayGain(self.entry("REPLAYGAIN_TRACK_GAIN=-6.5 dB"), to: &info))
        #expect(VorbisComment.applyReplayGain(self.entry("replaygain_album_peak=0.9"), to: &info))
        #expect(!VorbisComment.applyReplayGain(self.entry("TITLE=x"), to: &info))
        #expect(info.trackGain == -6.5)
        #expect(abs((info.albumPeak ?? 0) - 0.9) < 1e-6)
        #expect(VorbisComment.mixRamp(self.entry("MIXRAMP_START=1 2;")).start == "1 2;")
        #expect(VorbisComment.mixRamp(self.entry("mixramp_end=3 4;")).end == "3 4;")
    }

    @Test func pictureFromBase64() {
        // type 3, "image/png", description "d", 16 bytes of sizes, 3 data bytes.
        var block: [UInt8] = [0, 0, 0, 3, 0, 0, 0, 9] + Array("image/png".utf8) + [0, 0, 0, 1, 0x64]
        block += [UInt8](repeating: 0, count: 16) + [0, 0, 0, 3, 7, 8, 9]
        let base64 = Self.base64(block)
        #expect(
            VorbisComment.picture(base64: Array(base64.utf8)[...]) == Picture(data: [7, 8, 9], mimeType: "image/png"))
        #expect(PictureBlock.picture(block.dropLast()[...]) == nil)
        #expect(VorbisComment.picture(base64: Array("not base64!".utf8)[...]) == nil)
    }

    @Test func commentPacketsAreBoundsChecked() {
        var packet = Array("OpusTags".utf8) + [3, 0, 0, 0] + Array("abc".utf8) + [2, 0, 0, 0]
        packet += [3, 0, 0, 0] + Array("A=b".utf8) + [1, 0, 0, 0] + Array("C".utf8)
        let entries = CommentPacket.entries(packet[...], magic: Array("OpusTags".utf8))
        #expect(entries?.map { Array($0) } == [Array("A=b".utf8), Array("C".utf8)])
        #expect(CommentPacket.entries(packet.dropLast()[...], magic: Array("OpusTags".utf8)) == nil)
        let huge = Array("OpusTags".utf8) + [0, 0, 0, 0] + [0xFF, 0xFF, 0xFF, 0xFF]
        #expect(CommentPacket.entries(huge[...], magic: Array("OpusTags".utf8)) == nil)
    }

    private static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var text = ""
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for position in 0..<4 {
                text.append(position <= chunk.count ? alphabet[(value >> (18 - 6 * position)) & 63] : "=")
            }
            index += 3
        }
        return text
    }
}
