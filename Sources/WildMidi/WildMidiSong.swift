// SPDX-License-Identifier: GPL-3.0-or-later

import CWildMidi
import Synchronization

/// libwildmidi's process-wide state: the patch set of one timidity configuration file, at one output rate.
public enum WildMidiLibrary {
    /// The configuration and rate libwildmidi was initialised with; `nil` before.
    private static let state = Mutex<(configFile: String, sampleRate: Int)?>(nil)

    /// Initialises libwildmidi (`WildMidi_Init`, no mixer options) on first use; later calls must name the same
    /// configuration and rate.
    ///
    /// Any thread.
    /// - Throws: `WildMidiError` with libwildmidi's message when it cannot read the configuration or its
    ///   patches, or when it was initialised with another configuration or rate.
    public static func setUp(configFile: String, sampleRate: Int) throws(WildMidiError) {
        let failure: WildMidiError? = Self.state.withLock { current in
            if let current {
                return current == (configFile, sampleRate)
                    ? nil : WildMidiError(message: "initialised with \(current.configFile) at \(current.sampleRate) Hz")
            }
            guard let rate = UInt16(exactly: sampleRate) else {
                return WildMidiError(message: "unsupported sample rate \(sampleRate)")
            }
            WildMidi_ClearError()
            defer { WildMidi_ClearError() }
            guard WildMidi_Init(configFile, rate, 0) == 0 else {
                let message = WildMidi_GetError().map { String(cString: $0) }
                return WildMidiError(message: message ?? "WildMidi_Init() failed")
            }
            current = (configFile, sampleRate)
            return nil
        }
        if let failure { throw failure }
    }

    /// Whether libwildmidi is initialised. Any thread.
    public static var isSetUp: Bool { Self.state.withLock { $0 != nil } }
}

/// A libwildmidi failure, with its message.
public struct WildMidiError: Error, Hashable, Sendable, CustomStringConvertible {
    /// libwildmidi's message.
    public var message: String

    /// Creates an error.
    public init(message: String) { self.message = message }

    /// The message.
    public var description: String { self.message }
}

/// One MIDI file opened by libwildmidi (`WildMidi_OpenBuffer`), closed when released.
///
/// Set libwildmidi up first (`WildMidiLibrary.setUp`). Create on any thread, then use from one thread at a
/// time; `render(into:)` and `seek(toSample:)` do not allocate in Swift.
public final class WildMidiSong {
    /// libwildmidi's handle; owned, closed in `deinit`.
    private let handle: UnsafeMutableRawPointer

    /// Parses a complete MIDI file (libwildmidi copies what it needs).
    ///
    /// - Returns: `nil` when libwildmidi is not set up or cannot read the file.
    public init?(data: [UInt8]) {
        guard WildMidiLibrary.isSetUp, !data.isEmpty, let count = UInt32(exactly: data.count) else { return nil }
        var copy = data
        let opened = copy.withUnsafeMutableBufferPointer { WildMidi_OpenBuffer($0.baseAddress, count) }
        guard let opened else { return nil }
        self.handle = opened
    }

    deinit { WildMidi_Close(self.handle) }

    /// The song's length in samples at libwildmidi's rate, as libwildmidi estimates it (`approx_total_samples`).
    public var approximateTotalSamples: UInt64 {
        UInt64(WildMidi_GetInfo(self.handle)?.pointee.approx_total_samples ?? 0)
    }

    /// Renders the next interleaved 16-bit stereo bytes into `buffer` (`WildMidi_GetOutput`).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: bytes written; 0 at the end of the song or on an error.
    public func render(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, let count = UInt32(exactly: buffer.count), count > 0 else { return 0 }
        return max(0, Int(WildMidi_GetOutput(self.handle, base.assumingMemoryBound(to: Int8.self), count)))
    }

    /// Moves to `sample` (`WildMidi_FastSeek`).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: the sample reached.
    public func seek(toSample sample: UInt64) -> UInt64 {
        var position = UInt(clamping: sample)
        WildMidi_FastSeek(self.handle, &position)
        return UInt64(position)
    }
}
