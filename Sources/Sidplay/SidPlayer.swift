// SPDX-License-Identifier: GPL-3.0-or-later

import CSidplayShim

/// A C64 emulation playing a tune's selected song (`sidplayfp` with a ReSIDfp SID emulation): 16-bit samples,
/// mono, or stereo for tunes of two or more SID chips.
///
/// Thread confinement: create on any thread, then use from one thread at a time. `play(into:)`, `seconds` and
/// `stop()` do not allocate in Swift.
public final class SidPlayer {
    private let handle: OpaquePointer
    /// Kept: the player reads the tune while it plays.
    private let tune: SidTune

    /// The size of a kernal or basic ROM image.
    public static let romSize = 8192

    /// Loads the tune's selected song at `sampleRate` Hz, with the SID filter emulated or not, and the C64's
    /// kernal and basic ROMs (8 KiB each; without them libsidplayfp's own minimal replacements run, which
    /// play PSID tunes but not every RSID one).
    ///
    /// - Throws: `SidplayError` when libsidplayfp cannot load or configure the tune, or a ROM has the wrong size.
    public init(
        tune: SidTune, sampleRate: Int, filter: Bool, kernal: [UInt8]? = nil, basic: [UInt8]? = nil
    ) throws(SidplayError) {
        for rom in [kernal, basic] where rom != nil && rom?.count != Self.romSize {
            throw SidplayError(operation: "sidplayfp.setRoms", message: "a ROM image must be 8192 bytes")
        }
        self.tune = tune
        self.handle = try Self.withOptionalPointer(kernal) { (kernal) throws(SidplayError) in
            try Self.withOptionalPointer(basic) { (basic) throws(SidplayError) in
                try SidplayError.check("sidplayfp") { message, size in
                    fsid_player_new(
                        tune.handle, kernal, basic, filter ? 1 : 0, UInt32(clamping: sampleRate), message, size)
                }
            }
        }
    }

    deinit { fsid_player_free(self.handle) }

    /// 1 or 2.
    public var channels: Int { Int(fsid_player_channels(self.handle)) }

    /// Renders up to `buffer.count` samples (interleaved when stereo).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: the samples rendered; 0 once the emulation stopped.
    public func play(into buffer: UnsafeMutableBufferPointer<Int16>) -> Int {
        Int(fsid_player_play(self.handle, buffer.baseAddress, UInt32(clamping: buffer.count)))
    }

    /// Whole seconds played since the song started.
    public var seconds: Int { Int(fsid_player_time(self.handle)) }

    /// Stops the song: the next `play(into:)` starts it again from its beginning.
    public func stop() { fsid_player_stop(self.handle) }

    private static func withOptionalPointer<Result>(
        _ bytes: [UInt8]?, _ body: (UnsafePointer<UInt8>?) throws(SidplayError) -> Result
    ) throws(SidplayError) -> Result {
        guard let bytes else { return try body(nil) }
        return try bytes.withUnsafeBufferPointer { (buffer) throws(SidplayError) in try body(buffer.baseAddress) }
    }
}
