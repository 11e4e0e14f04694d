// SPDX-License-Identifier: GPL-3.0-or-later

import Dispatch
import Formats
import Glibc
import Input
import Model
import Playback
import Synchronization
import Testing

/// A remote stream as the player sees it: `stall-open` blocks in its open, `stall-read` after its first
/// chunk, both until the player cancels the input; `radio` plays a ramp and brings a title with its first
/// chunk (`mpd`'s ICY `StreamTitle`).
private let streamOpener: @Sendable (String, InputCancellation, Bool) throws(FormatError) -> any Decoder = {
    (url, cancellation, _) throws(FormatError) in
    let released = DispatchSemaphore(value: 0)
    cancellation.onCancel { released.signal() }
    openedStreams.withLock { $0.append(url) }
    switch url {
    case "http://test/stall-open":
        released.wait()
        throw .input(.notSeekable(uri: url))
    case "http://test/stall-read":
        return StallingDecoder(released: released)
    case "http://test/late-a", "http://test/late-b":
        let title = url.hasSuffix("a") ? "Late A" : "Late B"
        return TaggedDecoder(
            decoder: RampDecoder(
                format: AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2), totalFrames: 441_000,
                base: 0),
            pending: TagBox([TagItem(.title, title)]), delay: 8)
    default:
        return TaggedDecoder(
            decoder: RampDecoder(
                format: AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2), totalFrames: 441_000,
                base: 0),
            pending: TagBox([TagItem(.name, "Station"), TagItem(.title, "Song A")]))
    }
}

/// The URLs `streamOpener` was asked to open, in order.
private let openedStreams = Mutex<[String]>([])

/// How many `late-` streams' decoders have read their tags so far.
private let lateTagsRead = Atomic<Int>(0)

/// How many reads of `stall-read` streams have blocked on their "server" so far.
private let stalledReads = Atomic<Int>(0)

/// Waits (up to 5 s) until `streamOpener` was asked to open `url` `count` times in all.
private func waitForOpen(_ url: String, count: Int) -> Bool {
    for _ in 0..<2500 {
        if openedStreams.withLock({ $0.filter { $0 == url }.count }) >= count { return true }
        usleep(2000)
    }
    return false
}

private final class TagBox: Sendable {
    let tags: Mutex<[TagItem]?>
    init(_ tags: [TagItem]) { self.tags = Mutex(tags) }
}

private struct TaggedDecoder: Decoder {
    var decoder: RampDecoder
    let pending: TagBox
    /// How many chunks are decoded before the tags come.
    var delay = 0
    var decodes = 0
    var format: AudioFormat { self.decoder.format }
    var totalFrames: UInt64? { nil }
    var isSeekable: Bool { false }
    mutating func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        self.decodes += 1
        return try self.decoder.decode(into: buffer)
    }
    mutating func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 { throw .decoder("Not seekable") }
    func readTag() -> [TagItem]? {
        guard self.decodes > self.delay else { return nil }
        let tags = self.pending.tags.withLock { tags in
            defer { tags = nil }; return tags
        }
        if self.delay > 0, tags != nil { lateTagsRead.add(1, ordering: .sequentiallyConsistent) }
        return tags
    }
}

private struct StallingDecoder: Decoder {
    let released: DispatchSemaphore
    var chunks = 0
    var format: AudioFormat { AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2) }
    var totalFrames: UInt64? { nil }
    var isSeekable: Bool { false }
    mutating func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        self.chunks += 1
        if self.chunks > 1 {
            stalledReads.add(1, ordering: .sequentiallyConsistent)
            self.released.wait()
            throw .input(.notSeekable(uri: "http://test/stall-read"))
        }
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        return buffer.count / 4
    }
    mutating func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 { throw .decoder("Not seekable") }
}

private func stream(_ token: UInt64, _ url: String) -> PlayableSong {
    PlayableSong(token: token, uri: url, path: url)
}

@Suite struct PlayerStreamTests {
    @Test(arguments: ["http://test/stall-open", "http://test/stall-read"])
    func playingAnotherSongLeavesAStalledStream(url: String) throws {
        let harness = try PlayerHarness(
            outputs: [(nullConfiguration(), CaptureOutput(sync: true), nil)], streams: streamOpener)
        let opened = openedStreams.withLock { $0.filter { $0 == url }.count }
        harness.withPlayer { $0.play(stream(1, url), atSeconds: 0) }
        #expect(waitForOpen(url, count: opened + 1))
        if url.hasSuffix("read") { #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) }) }
        // The decoder thread is now blocked on the "server"; the loop must not wait for it.
        harness.withPlayer { $0.play(fakeSong(2, base: 0, frames: 44_100), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 2)) })
        // The left stream reports nothing: no songFailed for a song the player moved away from.
        #expect(!harness.received.contains { if case .songFailed(1, _) = $0 { true } else { false } })
    }

    /// Replacing the queued stream while the decoder reads it, before any of it was heard, leaves its stalled
    /// input: the loop never waits on the network, and the replacement follows the current song.
    @Test func replacingAStalledQueuedStreamLeavesIt() throws {
        // A paced output: while it plays the first of song 1's 2 s, the decoder is already in the queued stream.
        let harness = try PlayerHarness(
            outputs: [(nullConfiguration(), CaptureOutput(sync: true), nil)], streams: streamOpener)
        let url = "http://test/stall-read"
        let stalled = stalledReads.load(ordering: .sequentiallyConsistent)
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 88_200), atSeconds: 0) }
        harness.withPlayer { $0.queue(stream(2, url)) }
        var blocked = false
        for _ in 0..<2500 where !blocked {
            blocked = stalledReads.load(ordering: .sequentiallyConsistent) > stalled
            if !blocked { usleep(2000) }
        }
        #expect(blocked)
        // The decoder thread is blocked on the "server" in the queued stream's second read.
        harness.withPlayer { $0.queue(fakeSong(3, base: 0, frames: 4_410)) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 3)) })
        #expect(!harness.received.contains(.songStarted(token: 2)))
        #expect(!harness.received.contains { if case .songFailed(2, _) = $0 { true } else { false } })
    }

    /// A storage's URI of a file not local yet (a udisks file system not mounted) is made local on the decoder
    /// thread and decoded as that file, not opened as a stream; a URI the mapping declines is a stream.
    @Test func aStorageFileNotLocalYetIsDecodedAsTheLocalFile() throws {
        let mapped = Mutex<[String]>([])
        let harness = try PlayerHarness(
            outputs: [(nullConfiguration(), CaptureOutput(sync: true), nil)], streams: streamOpener,
            localPaths: { url, _ in
                mapped.withLock { $0.append(url) }
                return url == "udisks://id/song.flac" ? "fake:0:4410" : nil
            })
        let url = "udisks://id/song.flac"
        harness.withPlayer { $0.play(PlayableSong(token: 1, uri: "u/song.flac", path: url), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
        #expect(openedStreams.withLock { !$0.contains(url) })
        // A local file is not mapped.
        harness.withPlayer { $0.play(fakeSong(2, base: 0, frames: 4_410), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 2)) })
        let declined = "http://test/radio-mapped"
        harness.withPlayer { $0.play(stream(3, declined), atSeconds: 0) }
        #expect(waitForOpen(declined, count: 1))
        #expect(mapped.withLock { $0 } == [url, declined])
    }

    /// A storage's file whose mount hangs (a stuck UDisks2): `stop`, `play` of another song and a seek cancel the
    /// mount as they cancel an open, so the loop never waits on the device; the song left reports no failure.
    @Test(arguments: ["stop", "play", "seek"])
    func leavingASongWhoseMountHangsCancelsTheMount(leaving: String) throws {
        let calls = Atomic<Int>(0)
        let cancelled = Atomic<Int>(0)
        let harness = try PlayerHarness(
            outputs: [(nullConfiguration(), CaptureOutput(sync: true), nil)], streams: streamOpener,
            localPaths: { _, cancellation in
                let released = DispatchSemaphore(value: 0)
                cancellation.onCancel { released.signal() }
                calls.add(1, ordering: .sequentiallyConsistent)
                // Bounded, so that a mount never cancelled fails the test instead of hanging it.
                if released.wait(timeout: .now() + 10) == .success {
                    cancelled.add(1, ordering: .sequentiallyConsistent)
                }
                return nil
            })
        let hanging = PlayableSong(token: 1, uri: "u/song.flac", path: "udisks://id/song.flac")
        harness.withPlayer { $0.play(hanging, atSeconds: 0) }
        var mounting = false
        for _ in 0..<2500 where !mounting {
            mounting = calls.load(ordering: .sequentiallyConsistent) == 1
            if !mounting { usleep(2000) }
        }
        #expect(mounting)
        // The decoder thread is now blocked in the mount.
        switch leaving {
        case "stop": harness.withPlayer { $0.stop() }
        case "seek": harness.withPlayer { #expect($0.seek(token: 1, toSeconds: 1)) }
        default: break
        }
        harness.withPlayer { $0.play(fakeSong(2, base: 0, frames: 44_100), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 2)) })
        #expect(cancelled.load(ordering: .sequentiallyConsistent) >= 1)
        #expect(!harness.received.contains { if case .songFailed(1, _) = $0 { true } else { false } })
    }

    @Test func stopLeavesAStalledStreamAndTheNextPlayStarts() throws {
        let harness = try PlayerHarness(
            outputs: [(nullConfiguration(), CaptureOutput(sync: true), nil)], streams: streamOpener)
        let opened = openedStreams.withLock { $0.filter { $0 == "http://test/stall-open" }.count }
        harness.withPlayer { $0.play(stream(1, "http://test/stall-open"), atSeconds: 0) }
        #expect(waitForOpen("http://test/stall-open", count: opened + 1))
        harness.withPlayer { $0.stop() }
        harness.withPlayer { $0.play(fakeSong(2, base: 0, frames: 44_100), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 2)) })
    }

    /// A seek within a remote song whose server stalled leaves the stalled input and opens the stream again
    /// at the position: the loop never waits on the network.
    @Test func seekingInAStalledStreamReopensIt() throws {
        let harness = try PlayerHarness(
            outputs: [(nullConfiguration(), CaptureOutput(sync: true), nil)], streams: streamOpener)
        let url = "http://test/stall-read"
        let opened = openedStreams.withLock { $0.filter { $0 == url }.count }
        harness.withPlayer { $0.play(stream(1, url), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
        #expect(harness.withPlayer { $0.seek(token: 1, toSeconds: 0) })
        #expect(waitForOpen(url, count: opened + 2))
        harness.withPlayer { $0.stop() }
    }

    @Test func aStreamsTagsReachTheLoop() throws {
        let harness = try PlayerHarness(
            outputs: [(nullConfiguration(), CaptureOutput(sync: true), nil)], streams: streamOpener)
        harness.withPlayer { $0.play(stream(1, "http://test/radio"), atSeconds: 0) }
        let tags = [TagItem(.name, "Station"), TagItem(.title, "Song A")]
        #expect(harness.waitFor { $0.contains(.tagChanged(token: 1, tags: tags)) })
        #expect(harness.received.filter { if case .tagChanged = $0 { true } else { false } }.count == 1)
        harness.withPlayer { $0.stop() }
    }

    /// Tags a stream brought in chunks no output played before another song started belong to that stream only:
    /// the next stream's chunks carry none until it brings its own (CI at 23d796f: an HLS stream without tags
    /// showed the title of the tagged MP3 stopped just before).
    @Test func tagsNoOutputPlayedStayWithTheirStream() throws {
        let output = CaptureOutput(sync: false)
        output.held.store(true, ordering: .relaxed)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), output, nil)], streams: streamOpener)
        let tagsRead = lateTagsRead.load(ordering: .sequentiallyConsistent)
        harness.withPlayer { $0.play(stream(1, "http://test/late-a"), atSeconds: 0) }
        // The output stands still in its first chunk (no tags yet), then pauses, while the decoder reads on past
        // the chunk with the tags.
        #expect(harness.waitFor { _ in output.stalled.load(ordering: .acquiring) })
        harness.withPlayer { $0.setPaused(true) }
        output.held.store(false, ordering: .relaxed)
        #expect(harness.waitFor { _ in lateTagsRead.load(ordering: .sequentiallyConsistent) > tagsRead })
        harness.withPlayer { $0.play(stream(2, "http://test/late-b"), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.tagChanged(token: 2, tags: [TagItem(.title, "Late B")])) })
        let stale = harness.received.contains { $0 == .tagChanged(token: 2, tags: [TagItem(.title, "Late A")]) }
        #expect(!stale)
        harness.withPlayer { $0.stop() }
    }
}
