// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import Server

/// The cover `albumart` of a URL keeps for its client's next chunks.
@Suite struct RemoteCoverTests {
    @Test func itServesItsDirectoryUntilUnusedForItsLifetime() {
        var cover = RemoteCover(directory: "http://h/d", bytes: Array(0..<10), now: 1_000)
        #expect(cover.serves("http://h/d", now: 1_000 + RemoteCover.lifetime - 1))
        #expect(!cover.serves("http://h/d", now: 1_000 + RemoteCover.lifetime))
        #expect(!cover.serves("http://h/e", now: 1_000))
        cover.touch(now: 1_000 + RemoteCover.lifetime - 1)
        #expect(cover.serves("http://h/d", now: 1_000 + RemoteCover.lifetime))
    }

    @Test func chunksAreBoundedByTheLimitAndTheEnd() {
        let cover = RemoteCover(directory: "d", bytes: Array(0..<10), now: 0)
        #expect(cover.chunk(at: 0, count: 4) == [0, 1, 2, 3])
        #expect(cover.chunk(at: 8, count: 4) == [8, 9])
        #expect(cover.chunk(at: 10, count: 4) == [])
        #expect(cover.chunk(at: 11, count: 4) == nil)
    }
}
