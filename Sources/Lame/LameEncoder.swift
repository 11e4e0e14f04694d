// SPDX-License-Identifier: GPL-3.0-or-later

import CLame

/// Why libmp3lame refused a setting or failed to encode (`mpd`'s wording).
public struct LameError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One line for the log.
    public var message: String

    init(_ message: String) { self.message = message }

    public var description: String { self.message }
}

/// An MP3 encoder over libmp3lame, set up as `mpd`'s lame encoder plugin: VBR (`vbr_rh`) at a quality, or a
/// constant bit rate; interleaved signed 16-bit input at the stream's rate and channel count (1 or 2).
///
/// Confined to one thread (the output thread). The output buffer is sized once for the largest input seen, so
/// steady encoding does not allocate. Unsafe: the `lame_global_flags` pointer never leaves this class.
public final class LameEncoder {
    /// How the bit rate is chosen.
    public enum Mode: Sendable, Hashable {
        /// VBR at lame's quality 0 (best) … 9 (`quality`, truncated as `mpd` does).
        case quality(Int)
        /// CBR at this many kbit/s (`bitrate`).
        case bitrate(Int)
    }

    private let flags: OpaquePointer
    private let channels: Int
    private var output: [UInt8] = []

    /// Sets libmp3lame up for `channels` × `sampleRate` in `mode`.
    ///
    /// - Throws: `LameError` with `mpd`'s message when libmp3lame refuses a setting.
    public init(mode: Mode, channels: Int, sampleRate: Int) throws(LameError) {
        guard let flags = lame_init() else { throw LameError("lame_init() failed") }
        self.flags = flags
        self.channels = channels
        switch mode {
        case .quality(let quality):
            guard lame_set_VBR(flags, vbr_rh) == 0 else {
                lame_close(flags)
                throw LameError("error setting lame VBR mode")
            }
            guard lame_set_VBR_q(flags, Int32(quality)) == 0 else {
                lame_close(flags)
                throw LameError("error setting lame VBR quality")
            }
        case .bitrate(let bitrate):
            guard lame_set_brate(flags, Int32(clamping: bitrate)) == 0 else {
                lame_close(flags)
                throw LameError("error setting lame bitrate")
            }
        }
        guard lame_set_num_channels(flags, Int32(channels)) == 0 else {
            lame_close(flags)
            throw LameError("error setting lame num channels")
        }
        guard lame_set_in_samplerate(flags, Int32(clamping: sampleRate)) == 0 else {
            lame_close(flags)
            throw LameError("error setting lame sample rate")
        }
        guard lame_set_out_samplerate(flags, Int32(clamping: sampleRate)) == 0 else {
            lame_close(flags)
            throw LameError("error setting lame out sample rate")
        }
        guard lame_init_params(flags) >= 0 else {
            lame_close(flags)
            throw LameError("error initializing lame params")
        }
    }

    deinit { lame_close(self.flags) }

    /// Encodes interleaved signed 16-bit native-endian PCM (whole frames); `body` gets the MP3 bytes produced,
    /// which may be none while lame buffers.
    ///
    /// - Throws: `LameError` when libmp3lame fails.
    public func encode(
        _ pcm: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void
    ) throws(LameError) {
        let frames = pcm.count / (2 * self.channels)
        guard frames > 0 else { return }
        // libmp3lame's documented worst case: 1.25 × samples + 7200.
        self.reserve(5 * frames * self.channels / 4 + 7200)
        let produced = self.output.withUnsafeMutableBufferPointer { out in
            // libmp3lame reads the input only; its prototype lacks the `const`.
            let samples = UnsafeMutablePointer(mutating: pcm.baseAddress!.assumingMemoryBound(to: Int16.self))
            return lame_encode_buffer_interleaved(self.flags, samples, Int32(frames), out.baseAddress, Int32(out.count))
        }
        guard produced >= 0 else { throw LameError("lame encoder failed") }
        self.output.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[0..<Int(produced)])) }
    }

    /// Ends the stream: `body` gets the last frames lame held back.
    public func finish(_ body: (UnsafeRawBufferPointer) -> Void) {
        self.reserve(7200)
        let produced = self.output.withUnsafeMutableBufferPointer { out in
            lame_encode_flush(self.flags, out.baseAddress, Int32(out.count))
        }
        guard produced > 0 else { return }
        self.output.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[0..<Int(produced)])) }
    }

    private func reserve(_ count: Int) {
        if self.output.count < count { self.output = [UInt8](repeating: 0, count: count) }
    }
}
