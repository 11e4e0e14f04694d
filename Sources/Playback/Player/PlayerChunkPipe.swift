// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Synchronization

/// How a chunk begins a song.
enum ChunkStart: UInt8 {
    /// Not the first chunk of a song (or the first after a seek).
    case none
    /// The first chunk of a song started by `play`.
    case play
    /// The first chunk of the queued song, right after the previous song's last chunk (gapless border).
    case queued
}

/// What travels with each chunk of PCM: whose it is and where in the song it starts.
struct ChunkHeader {
    /// The hand-over token of the song.
    var token: UInt64 = 0
    /// The player's flush generation when the chunk was decoded (events from older generations are stale).
    var generation: UInt64 = 0
    /// The song position of the chunk's first frame, relative to the song's range start, in frames of
    /// `songFormat`.
    var songFrame: UInt64 = 0
    /// The song's length in frames of `songFormat` (range applied); 0 when unknown.
    var songFrames: UInt64 = 0
    /// Whether `songFrames` is the length `status` shows rather than the library's (the decoder says so).
    var songFramesOverrideLibrary = false
    /// Frames of PCM in the chunk.
    var frames: Int = 0
    /// The stream's bit rate where the chunk was decoded, in kbit/s (0: unknown), for `status` `bitrate:`.
    var bitRate: Int = 0
    /// The chunk's PCM format: the decoder's, converted to `audio_output_format` if set.
    var format = AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2)
    /// The decoder's own format: what `status` shows as `audio:` (as `mpd` shows its decoder's input format) and
    /// what the song's frames count in.
    var songFormat = AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2)
    /// Whether and how the chunk starts a song.
    var start: ChunkStart = .none
    /// The revision of the stream tags in force when the chunk was decoded (`PlayerShared.publishTags`; 0:
    /// none yet): the outputs announce a new revision when they play its first chunk, as `mpd` applies a
    /// chunk's tag when it plays the chunk.
    var tagRevision: UInt64 = 0
    /// The song's ReplayGain values (NaN: unknown), for the output thread's scaling.
    var trackGain: Float = .nan
    var trackPeak: Float = .nan
    var albumGain: Float = .nan
    var albumPeak: Float = .nan
}

/// The reader side of the pipe for one output: its cursor and whether it holds chunks back from recycling.
///
/// `@unchecked Sendable`: only atomics and a wake-up, all thread-safe.
final class PipeReader: @unchecked Sendable {
    /// The sequence number of the next chunk this output reads.
    let cursor = Atomic<UInt64>(0)
    /// Whether the decoder must wait for this reader before reusing a chunk.
    let consuming = Atomic<Bool>(false)
    /// The border of the cross-fade this reader is in (the first chunk of the song fading in), 0 when none.
    let fadeBorder = Atomic<UInt64>(0)
    /// Wakes the output thread (new chunk, new request).
    let wakeup = PlayerWakeup()
}

/// The PCM pipe between the decoder and the outputs: a preallocated ring of chunks with one writer (the
/// decoder thread) and one cursor per output. A chunk is reused only when every consuming output has read
/// it, so the slowest output paces the decoder. No lock and no allocation after `init`.
///
/// `@unchecked Sendable`: a slot's bytes and header are written by the decoder before it publishes the slot
/// with a releasing store to `written`, and read by outputs after an acquiring load; a slot is rewritten
/// only after every consuming reader's cursor passed it.
final class PlayerChunkPipe: @unchecked Sendable {
    /// Chunks in the ring.
    let capacity: Int
    /// PCM bytes per chunk.
    let chunkBytes: Int
    /// Sequence number of the next chunk the decoder writes (every chunk below it is readable).
    let written = Atomic<UInt64>(0)
    /// One reader per configured output, in configuration order.
    let readers: [PipeReader]
    /// Wakes the decoder when space frees up, a reader joins or a command arrives.
    let decoderWakeup = PlayerWakeup()
    /// Where the last reader to stop consuming stood: where playback resumes when every output left (all
    /// disabled or failed) and one comes back. Reset to the head when the pipe is flushed.
    let parkedCursor = Atomic<UInt64>(0)

    private let storage: UnsafeMutableRawPointer
    private let headers: UnsafeMutablePointer<ChunkHeader>

    /// How many bytes of PCM one of `mpd` 0.23's music chunks holds on a 64-bit machine (4096 less its header).
    static let mpdChunkBytes = 4024

    /// The frames the decoder puts in a chunk of `frameSize`-byte frames: a whole number of `mpd`'s chunks
    /// (what its `normalize` filter takes at a time), as many as fit.
    func chunkFrames(frameSize: Int) -> Int {
        let frames = self.chunkBytes / max(1, frameSize)
        let mpdFrames = Self.mpdChunkBytes / max(1, frameSize)
        guard mpdFrames > 0, frames >= mpdFrames else { return frames }
        return frames / mpdFrames * mpdFrames
    }

    /// Creates a ring of `bufferSize / chunkBytes` chunks (at least 8). Loop thread.
    init(bufferSize: Int, chunkBytes: Int = 8192, readers: Int) {
        self.chunkBytes = chunkBytes
        self.capacity = max(8, bufferSize / chunkBytes)
        // calloc, not allocate and fill: the ring (4 MiB by default) is then fresh zero pages that become
        // resident only as the decoder first writes them, as `mpd`'s buffer does; filling it made all of it
        // resident at start-up, playing or not. malloc's 16-byte alignment suits any sample type.
        guard let storage = calloc(self.capacity, chunkBytes) else { fatalError("cannot allocate the audio buffer") }
        self.storage = storage
        self.headers = .allocate(capacity: self.capacity)
        self.headers.initialize(repeating: ChunkHeader(), count: self.capacity)
        self.readers = (0..<readers).map { _ in PipeReader() }
    }

    deinit {
        free(self.storage)
        self.headers.deinitialize(count: self.capacity)
        self.headers.deallocate()
    }

    @inline(__always)
    private func slot(_ sequence: UInt64) -> Int { Int(sequence % UInt64(self.capacity)) }

    /// The header of chunk `sequence`.
    @inline(__always)
    func header(_ sequence: UInt64) -> UnsafeMutablePointer<ChunkHeader> { self.headers + self.slot(sequence) }

    /// The PCM bytes of chunk `sequence` (the whole slot; the header says how many frames are valid).
    @inline(__always)
    func pcm(_ sequence: UInt64) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(
            start: self.storage + self.slot(sequence) * self.chunkBytes, count: self.chunkBytes)
    }

    /// The lowest cursor among consuming readers (`written` when none consumes).
    ///
    /// `consuming` is loaded sequentially consistently, pairing with `publish` and `join` on the reader side:
    /// either the decoder sees a joining reader, or the reader sees the chunk the decoder published.
    @inline(__always)
    func slowestCursor() -> UInt64 {
        var lowest = self.written.load(ordering: .acquiring)
        for reader in self.readers where reader.consuming.load(ordering: .sequentiallyConsistent) {
            lowest = min(lowest, reader.cursor.load(ordering: .acquiring))
        }
        return lowest
    }

    /// Whether any output reads the pipe (if none does, the decoder waits instead of running ahead forever).
    @inline(__always)
    func hasConsumer() -> Bool {
        self.readers.contains { $0.consuming.load(ordering: .sequentiallyConsistent) }
    }

    /// The highest cursor among consuming readers, or `nil` when none consumes (where a joining output starts).
    func fastestCursor() -> UInt64? {
        var highest: UInt64?
        for reader in self.readers where reader.consuming.load(ordering: .acquiring) {
            highest = max(highest ?? 0, reader.cursor.load(ordering: .acquiring))
        }
        return highest
    }

    /// Chunks the decoder may write now.
    @inline(__always)
    func freeChunks() -> Int {
        self.capacity - Int(self.written.load(ordering: .acquiring) - self.slowestCursor())
    }

    /// Publishes chunk `sequence` (written by the decoder) and wakes the outputs. Decoder thread.
    @inline(__always)
    func publish(_ sequence: UInt64) {
        self.written.store(sequence + 1, ordering: .sequentiallyConsistent)
        for reader in self.readers { reader.wakeup.signal() }
    }

    /// Wakes every output (the end-of-stream state changed). Any thread.
    func wakeReaders() {
        for reader in self.readers { reader.wakeup.signal() }
    }

    /// Called by an output after it advanced its cursor: wakes the decoder once a quarter of the ring is free,
    /// so it decodes in bursts rather than chunk by chunk.
    @inline(__always)
    func readerAdvanced() {
        if self.freeChunks() >= self.decoderThreshold { self.decoderWakeup.signal() }
    }

    /// Free chunks the decoder waits for when the ring is full.
    var decoderThreshold: Int { max(1, self.capacity / 4) }
}
