// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import Synchronization
import Testing

@testable import Httpd

/// The httpd output's pieces that need no socket: mpd's ICY metadata block and the ring its listeners read.
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

    @Test func listenersReadPagesFromTheirOwnPosition() throws {
        let ring = try HttpdBroadcast()
        let first = [UInt8](repeating: 1, count: 1000)
        let second = [UInt8](repeating: 2, count: 500)
        first.withUnsafeBytes { ring.publish($0) }
        second.withUnsafeBytes { ring.publish($0) }
        #expect(ring.written.load(ordering: .relaxed) == 1500)
        #expect(ring.newestPageStart == 1000)
        var buffer = [UInt8](repeating: 0, count: 800)
        let copied = buffer.withUnsafeMutableBytes { ring.copy(from: 900, into: $0) }
        #expect(copied == 600)
        #expect(Array(buffer[0..<100]) == [UInt8](repeating: 1, count: 100))
        #expect(Array(buffer[100..<600]) == [UInt8](repeating: 2, count: 500))
    }

    @Test func aListenerLappedByTheWriterIsToldSo() throws {
        let ring = try HttpdBroadcast()
        let page = [UInt8](repeating: 7, count: 64 * 1024)
        for _ in 0..<(HttpdBroadcast.capacity / page.count) { page.withUnsafeBytes { ring.publish($0) } }
        var buffer = [UInt8](repeating: 0, count: 1024)
        // Position 0 is a whole ring behind: overwritten, or about to be.
        #expect(buffer.withUnsafeMutableBytes { ring.copy(from: 0, into: $0) } == nil)
        // The newest page is intact, across the ring's end as anywhere.
        let newest = ring.newestPageStart
        #expect(newest == UInt64(HttpdBroadcast.capacity - page.count))
        #expect(buffer.withUnsafeMutableBytes { ring.copy(from: newest, into: $0) } == 1024)
        #expect(buffer == [UInt8](repeating: 7, count: 1024))
    }
}
