// SPDX-License-Identifier: GPL-3.0-or-later

import GME
import Model

/// Plays one track of a libgme emulator as `mpd`'s gme plugin does: 44100 Hz, 16-bit stereo, rendered in
/// chunks of 2048 frames; when the track has a play length, libgme fades out from there and the decoder's
/// length includes the configured fade (`default_fade`, 8 s by default); the song ends after the chunk in which libgme reports the track ended.
///
/// Confined to the decoding thread. `decode(into:)` and `seek(toFrame:)` do not allocate.
final class GMEDecoder: Decoder {
    /// `44100:16:2`.
    let format = AudioFormat(sampleRate: GMEFormat.sampleRate, sampleFormat: .s16, channels: 2)
    /// The play length plus the fade, when the track has a play length.
    let totalFrames: UInt64?
    /// `status` shows the length with the fade, as `mpd`'s decoder reports it (its scan stored it without).
    var totalFramesOverrideLibrary: Bool { true }
    private let emulator: GMEEmulator
    /// `mpd`'s `GME_BUFFER_FRAMES`.
    private static let chunkFrames = 2048
    /// One rendered chunk; `pending` frames of it from `consumed` are not delivered yet.
    private let chunk: UnsafeMutableBufferPointer<Int16>
    private var consumed = 0
    private var pending = 0
    /// libgme reported the end after the last chunk.
    private var ended = false

    /// Starts `track` (0-based) of `emulator` with the plugin's options.
    ///
    /// - Throws: `FormatError.decoder` when libgme has no such track.
    init(emulator: GMEEmulator, track: Int, options: GMEFormat.Options) throws(FormatError) {
        if let accuracy = options.accuracy { emulator.enableAccuracy(accuracy) }
        let info: GMETrackInfo
        do {
            info = try emulator.trackInfo(track)
        } catch {
            throw .decoder("\(error)")
        }
        self.emulator = emulator
        let length = info.playLength
        self.totalFrames =
            length > 0 ? UInt64(length + options.defaultFadeMilliseconds) * UInt64(GMEFormat.sampleRate) / 1000 : nil
        // As mpd: a failing start is only logged there; playing then reports what libgme does.
        try? emulator.startTrack(track)
        if length > 0 { emulator.setFade(startMilliseconds: length) }
        self.chunk = .allocate(capacity: Self.chunkFrames * 2)
        self.chunk.initialize(repeating: 0)
    }

    deinit { self.chunk.deallocate() }

    /// Delivers rendered frames, rendering the next chunk when none is left.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 at the end of the track, or once libgme failed to emulate.
    func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        if self.pending == 0 {
            if self.ended { return 0 }
            do {
                try self.emulator.play(into: self.chunk)
            } catch {
                // As mpd: an emulation error ends the song (it only logs it), it does not fail it.
                self.ended = true
                return 0
            }
            self.consumed = 0
            self.pending = Self.chunkFrames
            self.ended = self.emulator.isTrackEnded
        }
        let frames = min(self.pending, buffer.count / 4)
        let source = UnsafeRawBufferPointer(
            UnsafeMutableBufferPointer(rebasing: self.chunk[(self.consumed * 2)..<((self.consumed + frames) * 2)]))
        buffer.copyMemory(from: source)
        self.consumed += frames
        self.pending -= frames
        return frames
    }

    /// Seeks to the millisecond of `frame` (libgme seeks by milliseconds), dropping the rest of the chunk.
    ///
    /// A seek back loads the file into a fresh emulator (`GMEEmulator.seek(milliseconds:)`). Decoder thread.
    /// - Returns: the frame of that millisecond.
    /// - Throws: `FormatError.decoder` when libgme fails.
    @discardableResult
    func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        let milliseconds = frame * 1000 / UInt64(GMEFormat.sampleRate)
        do {
            try self.emulator.seek(milliseconds: Int(clamping: milliseconds))
        } catch {
            throw .decoder("\(error)")
        }
        self.pending = 0
        self.ended = self.emulator.isTrackEnded
        return milliseconds * UInt64(GMEFormat.sampleRate) / 1000
    }
}
