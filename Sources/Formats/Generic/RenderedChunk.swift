// SPDX-License-Identifier: GPL-3.0-or-later

/// A chunk of rendered interleaved 16-bit frames that a synthesising decoder (an emulator rendering a fixed
/// number of samples at a time) hands out over as many `decode(into:)` calls as the player's buffers need.
///
/// Owned by one decoder on its decoding thread; `deallocate()` it in the decoder's `deinit`. Nothing here
/// allocates after `init`.
struct RenderedChunk {
    /// The samples the emulator renders into.
    let samples: UnsafeMutableBufferPointer<Int16>
    /// Interleaved channels.
    let channels: Int
    /// Frames of `samples` already delivered.
    private var consumed = 0
    /// Frames rendered and not delivered yet.
    private(set) var pending = 0

    /// Allocates a zeroed chunk of `samples` samples.
    init(samples: Int, channels: Int) {
        self.samples = .allocate(capacity: samples)
        self.samples.initialize(repeating: 0)
        self.channels = channels
    }

    /// Frees the samples.
    func deallocate() { self.samples.deallocate() }

    /// The emulator rendered `frames` frames into `samples`: deliver them from the start.
    mutating func rendered(frames: Int) {
        self.consumed = 0
        self.pending = frames
    }

    /// Forgets the frames not delivered yet (after a seek).
    mutating func drop() { self.pending = 0 }

    /// Copies as many pending frames as fit into `buffer`.
    ///
    /// - Returns: the frames copied.
    mutating func deliver(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let frames = min(self.pending, buffer.count / (2 * self.channels))
        let range = (self.consumed * self.channels)..<((self.consumed + frames) * self.channels)
        buffer.copyMemory(from: UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: self.samples[range])))
        self.consumed += frames
        self.pending -= frames
        return frames
    }
}
