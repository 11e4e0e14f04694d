// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import Testing

@testable import Httpd

/// The httpd output's pieces that need no socket: mpd's ICY metadata block.
@Suite struct HttpdOutputTests {
    @Test func icyMetadataIsAlbumArtistTitlePaddedTo16Bytes() throws {
        let block = try #require(
            HttpdOutput.icyMetadata([TagItem(.title, "Song"), TagItem(.artist, "Band"), TagItem(.album, "Record")]))
        let text = "StreamTitle='Record - Band - Song';StreamUrl='';"
        #expect(Int(block[0]) == (text.utf8.count + 15) / 16)
        #expect(block.count == 1 + Int(block[0]) * 16)
        #expect(Array(block[1...]) == Array((text + String(repeating: " ", count: 16)).utf8.prefix(block.count - 1)))
    }

    @Test func icyMetadataOfASongWithoutTagsIsAnEmptyTitle() throws {
        let block = try #require(HttpdOutput.icyMetadata([TagItem(.genre, "Noise")]))
        #expect(Array(block[1..<32]) == Array("StreamTitle='';StreamUrl='';   ".utf8))
    }

    @Test func icyMetadataOfAHugeTitleStaysWithin255Units() throws {
        let block = try #require(HttpdOutput.icyMetadata([TagItem(.title, String(repeating: "x", count: 10_000))]))
        #expect(block[0] <= 255 && block.count == 1 + Int(block[0]) * 16)
    }
}
