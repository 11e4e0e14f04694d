// SPDX-License-Identifier: GPL-3.0-or-later

import COgg
import Glibc
import Input

/// Why an Ogg stream could not be read or decoded.
public enum OggError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Reading the input failed.
    case input(InputError)
    /// The bytes are not the expected Ogg stream (no page, wrong codec, damaged headers); what was wrong.
    case malformed(String)
    /// The codec library failed; its message.
    case library(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .input(let error): "\(error)"
        case .malformed(let what): what
        case .library(let message): message
        }
    }
}

/// libogg's page synchroniser (`ogg_sync_state`) fed from an `InputStream`, as `mpd`'s `OggSyncState`: 1 KiB
/// reads, the offsets of the last page returned, and page search with a 64 KiB patience.
///
/// Confined to one thread. The sync buffer is sized for the largest page at creation, so reading pages does
/// not allocate.
final class OggSync {
    /// The largest Ogg page: a 27-byte header, 255 lacing values, 255 × 255 body bytes.
    static let maximumPageSize = 27 + 255 + 255 * 255
    /// How much `feed()` reads at once (as `mpd`).
    static let feedSize = 1024

    let input: any InputStream
    /// Heap-allocated so libogg's pointer stays valid for the object's life (unsafe: freed in `deinit`).
    private let state: UnsafeMutablePointer<ogg_sync_state>
    /// The end offset of the page returned last.
    private(set) var offset: UInt64 = 0
    /// The start offset of the page returned last.
    private(set) var startOffset: UInt64 = 0
    /// The first read error met, if any (`mpd`'s reader treats a failed read as the end of the stream).
    private(set) var inputError: InputError?

    init(input: any InputStream) {
        self.input = input
        self.state = .allocate(capacity: 1)
        ogg_sync_init(self.state)
        // Grow the buffer once to hold a whole page plus a feed, so later feeds never reallocate it.
        _ = ogg_sync_buffer(self.state, Self.maximumPageSize + 2 * Self.feedSize)
        ogg_sync_reset(self.state)
    }

    deinit {
        ogg_sync_clear(self.state)
        self.state.deallocate()
    }

    /// Forgets buffered bytes; `offset` is where the input now is.
    func reset(offset: UInt64) {
        ogg_sync_reset(self.state)
        self.offset = offset
    }

    /// Reads up to `feedSize` more bytes into the buffer.
    ///
    /// - Returns: `false` at the end of the input or on a read error.
    func feed() -> Bool {
        guard let buffer = ogg_sync_buffer(self.state, Self.feedSize) else { return false }
        let count: Int
        do {
            count = try self.input.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: Self.feedSize))
        } catch {
            self.inputError = self.inputError ?? error
            return false
        }
        guard count > 0 else { return false }
        ogg_sync_wrote(self.state, count)
        return true
    }

    /// The next page, which must follow without a gap (`mpd`'s `ExpectPage`): bytes that are not a page end
    /// the search.
    ///
    /// - Returns: `false` at the end of the input or where the data is not a page.
    func nextPage(_ page: UnsafeMutablePointer<ogg_page>) -> Bool {
        while true {
            let result = ogg_sync_pageout(self.state, page)
            if result > 0 {
                self.startOffset = self.offset
                self.offset += UInt64(page.pointee.header_len + page.pointee.body_len)
                return true
            }
            if result < 0 { return false }
            guard self.feed() else { return false }
        }
    }

    /// The next page, skipping up to 64 KiB of other bytes first (`mpd`'s `ExpectPageSeek`, after a seek).
    func seekPage(_ page: UnsafeMutablePointer<ogg_page>) -> Bool {
        var patience = 65536
        while true {
            let result = ogg_sync_pageseek(self.state, page)
            if result > 0 {
                self.startOffset = self.offset
                self.offset += UInt64(result)
                return true
            }
            if result < 0 {
                let skipped = Int(-result)
                self.offset += UInt64(skipped)
                if skipped > patience { return false }
                patience -= skipped
                continue
            }
            guard self.feed() else { return false }
        }
    }
}

/// libogg's logical-stream state (`ogg_stream_state`): pages of one serial number in, packets out.
///
/// Confined to one thread.
final class OggStream {
    /// Heap-allocated so libogg's pointer stays valid (unsafe: freed in `deinit`).
    let state: UnsafeMutablePointer<ogg_stream_state>

    init(serial: Int32) {
        self.state = .allocate(capacity: 1)
        ogg_stream_init(self.state, serial)
    }

    deinit {
        ogg_stream_clear(self.state)
        self.state.deallocate()
    }

    /// The serial number pages must carry.
    var serial: Int { self.state.pointee.serialno }

    /// Starts over for another logical stream.
    func reinitialize(serial: Int32) { ogg_stream_reset_serialno(self.state, serial) }

    /// Drops partial packets (after a seek).
    func reset() { ogg_stream_reset(self.state) }

    /// Adds a page; pages of another serial number are refused.
    @discardableResult
    func pageIn(_ page: UnsafeMutablePointer<ogg_page>) -> Bool { ogg_stream_pagein(self.state, page) == 0 }

    /// The next packet: 1 for a packet, 0 when a page is needed, -1 for a gap.
    func packetOut(_ packet: UnsafeMutablePointer<ogg_packet>) -> Int32 { ogg_stream_packetout(self.state, packet) }
}

extension ogg_page {
    /// The page's serial number.
    var serial: Int32 {
        var copy = self
        return ogg_page_serialno(&copy)
    }
}

extension ogg_packet {
    /// The packet's bytes (valid until the stream state changes).
    var bytesView: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: self.packet, count: self.bytes) }

    /// Whether the packet starts with `magic`.
    func starts(with magic: StaticString) -> Bool {
        let view = self.bytesView
        guard view.count >= magic.utf8CodeUnitCount else { return false }
        return memcmp(view.baseAddress!, magic.utf8Start, magic.utf8CodeUnitCount) == 0
    }
}
