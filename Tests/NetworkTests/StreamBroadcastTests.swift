// SPDX-License-Identifier: GPL-3.0-or-later

import Network
import Synchronization
import Testing

/// The ring a stream output (httpd, snapcast) hands its listeners' thread.
@Suite struct StreamBroadcastTests {
    @Test func listenersReadPagesFromTheirOwnPosition() throws {
        let ring = try StreamBroadcast()
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
        let ring = try StreamBroadcast()
        let page = [UInt8](repeating: 7, count: 64 * 1024)
        for _ in 0..<(StreamBroadcast.capacity / page.count) { page.withUnsafeBytes { ring.publish($0) } }
        var buffer = [UInt8](repeating: 0, count: 1024)
        // Position 0 is a whole ring behind: overwritten, or about to be.
        #expect(buffer.withUnsafeMutableBytes { ring.copy(from: 0, into: $0) } == nil)
        // The newest page is intact, across the ring's end as anywhere.
        let newest = ring.newestPageStart
        #expect(newest == UInt64(StreamBroadcast.capacity - page.count))
        #expect(buffer.withUnsafeMutableBytes { ring.copy(from: newest, into: $0) } == 1024)
        #expect(buffer == [UInt8](repeating: 7, count: 1024))
    }

    /// A cancel skips what was published before it, not a new song's header published after it and before the
    /// server thread saw the cancel (CI-71: a listener lost the OpusTags of the song after `next`).
    @Test func aCancelSkipsOnlyWhatCameBeforeIt() throws {
        let ring = try StreamBroadcast()
        let old = [UInt8](repeating: 1, count: 1000)
        old.withUnsafeBytes { ring.publish($0) }
        #expect(ring.positionAfterCancel(from: 200) == 200)
        ring.cancel()
        let header = [UInt8](repeating: 2, count: 300)
        header.withUnsafeBytes { ring.publish($0) }
        #expect(ring.cancelCount.load(ordering: .relaxed) == 1)
        #expect(ring.positionAfterCancel(from: 200) == 1000)
        // A listener already past the cancel (it joined later) stays where it is.
        #expect(ring.positionAfterCancel(from: 1100) == 1100)
        var buffer = [UInt8](repeating: 0, count: 300)
        #expect(buffer.withUnsafeMutableBytes { ring.copy(from: ring.positionAfterCancel(from: 200), into: $0) } == 300)
        #expect(buffer == header)
    }
}
