// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// A synthesizer that renders interleaved PCM a chunk at a time until it has nothing left, as `mpd`'s mikmod,
/// fluidsynth and wildmidi plugins pull their libraries' output.
///
/// Confined to the decoding thread. `renderChunk(into:)` and `seek(toFrame:)` must not allocate.
protocol ChunkSource: AnyObject {
    /// Renders the next chunk into `chunk` (the whole buffer, unless the source ends).
    ///
    /// - Returns: bytes rendered; 0 when the song has ended.
    func renderChunk(into chunk: UnsafeMutableRawBufferPointer) -> Int
    /// The song's length in frames, when the plugin reports one. `nil` by default.
    var totalFrames: UInt64? { get }
    /// Whether `seek(toFrame:)` works. `false` by default.
    var isSeekable: Bool { get }
    /// Moves to `frame` (only called when `isSeekable`).
    ///
    /// - Returns: the frame reached.
    func seek(toFrame frame: UInt64) -> UInt64
}

extension ChunkSource {
    var totalFrames: UInt64? { nil }
    var isSeekable: Bool { false }
    func seek(toFrame frame: UInt64) -> UInt64 { 0 }
}

/// Delivers a `ChunkSource`'s chunks, with its length and seeking (what `mpd`'s plugins tell their player).
///
/// Confined to the decoding thread. `decode(into:)` and `seek(toFrame:)` do not allocate.
final class ChunkedDecoder<Source: ChunkSource>: Decoder {
    let format: AudioFormat
    /// The source's length.
    var totalFrames: UInt64? { self.source.totalFrames }
    /// Whether the source seeks.
    var isSeekable: Bool { self.source.isSeekable }
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

    /// Moves the source to `frame`, dropping the rest of the chunk.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: the frame reached.
    /// - Throws: `FormatError.decoder` when the source cannot seek.
    func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        guard self.source.isSeekable else { throw .decoder("Not seekable") }
        self.pending = 0
        self.ended = false
        return self.source.seek(toFrame: frame)
    }
}
