// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// A synthesizer that renders interleaved PCM a chunk at a time until it has nothing left, as `mpd`'s mikmod
/// and fluidsynth plugins pull their libraries' output.
///
/// Confined to the decoding thread. `renderChunk(into:)` must not allocate.
protocol ChunkSource: AnyObject {
    /// Renders the next chunk into `chunk` (the whole buffer, unless the source ends).
    ///
    /// - Returns: bytes rendered; 0 when the song has ended.
    func renderChunk(into chunk: UnsafeMutableRawBufferPointer) -> Int
}

/// Delivers a `ChunkSource`'s chunks: no length, not seekable (what `mpd`'s plugins tell their player).
///
/// Confined to the decoding thread. `decode(into:)` does not allocate.
final class ChunkedDecoder<Source: ChunkSource>: Decoder {
    let format: AudioFormat
    /// Unknown: the plugins report no length.
    var totalFrames: UInt64? { nil }
    /// The plugins cannot seek.
    var isSeekable: Bool { false }
    private let source: Source
    private let frameBytes: Int
    private let chunk: UnsafeMutableRawBufferPointer
    private var consumed = 0
    private var pending = 0
    private var ended = false

    /// A decoder of `source`'s output in `format`, in chunks of `chunkBytes` (a whole number of frames).
    init(source: Source, format: AudioFormat, chunkBytes: Int) {
        self.source = source
        self.format = format
        self.frameBytes = max(1, format.frameSize)
        self.chunk = .allocate(byteCount: chunkBytes, alignment: 8)
        self.chunk.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit { self.chunk.deallocate() }

    /// Delivers rendered frames, rendering the next chunk when none are left.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 at the end of the song.
    func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        if self.pending == 0 {
            if self.ended { return 0 }
            let rendered = self.source.renderChunk(into: self.chunk) / self.frameBytes * self.frameBytes
            guard rendered > 0 else {
                self.ended = true
                return 0
            }
            self.consumed = 0
            self.pending = rendered
        }
        let bytes = min(self.pending, buffer.count / self.frameBytes * self.frameBytes)
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: self.chunk[self.consumed..<(self.consumed + bytes)]))
        self.consumed += bytes
        self.pending -= bytes
        return bytes / self.frameBytes
    }

    /// The plugins cannot seek.
    ///
    /// - Throws: `FormatError.decoder` always.
    func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        throw .decoder("Not seekable")
    }
}
