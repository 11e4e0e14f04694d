// SPDX-License-Identifier: GPL-3.0-or-later

import CChromaprint

/// Why libchromaprint failed: the call that did.
public struct ChromaprintError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The failing call's name and "failed", as `mpd` words it (`chromaprint_feed() failed`).
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { self.message }
}

/// An acoustic fingerprint computation through libchromaprint with its default algorithm (the one AcoustID and
/// `mpd`'s `getfingerprint` use): start with the audio's rate and channels, feed interleaved signed 16-bit
/// samples, finish, then read the compressed base64 fingerprint.
///
/// Confined to one thread (it is not `Sendable`); the libchromaprint context is freed with the object.
public final class ChromaprintContext {
    private let context: OpaquePointer

    /// A context for the default algorithm.
    ///
    /// - Throws: `ChromaprintError` when libchromaprint cannot make one.
    public init() throws(ChromaprintError) {
        guard let context = chromaprint_new(Int32(CHROMAPRINT_ALGORITHM_DEFAULT.rawValue)) else {
            throw ChromaprintError("chromaprint_new() failed")
        }
        self.context = context
    }

    deinit { chromaprint_free(self.context) }

    /// libchromaprint's version (`1.5.1`).
    public static var version: String { String(cString: chromaprint_get_version()) }

    /// Starts a new fingerprint of audio at `sampleRate` Hz with `channels` interleaved channels.
    ///
    /// - Throws: `ChromaprintError` when libchromaprint refuses the format.
    public func start(sampleRate: Int, channels: Int) throws(ChromaprintError) {
        guard let rate = Int32(exactly: sampleRate), let count = Int32(exactly: channels),
            chromaprint_start(self.context, rate, count) == 1
        else { throw ChromaprintError("chromaprint_start() failed") }
    }

    /// Feeds interleaved samples (any number of them; a frame may span two calls).
    ///
    /// - Throws: `ChromaprintError` when libchromaprint fails.
    public func feed(_ samples: UnsafeBufferPointer<Int16>) throws(ChromaprintError) {
        guard let base = samples.baseAddress, !samples.isEmpty else { return }
        // libchromaprint takes an `int` count: feed huge buffers in pieces.
        var offset = 0
        while offset < samples.count {
            let count = min(samples.count - offset, Int(Int32.max))
            guard chromaprint_feed(self.context, base + offset, Int32(count)) == 1 else {
                throw ChromaprintError("chromaprint_feed() failed")
            }
            offset += count
        }
    }

    /// Feeds interleaved samples from an array.
    ///
    /// - Throws: `ChromaprintError` when libchromaprint fails.
    public func feed(_ samples: [Int16]) throws(ChromaprintError) {
        try samples.withUnsafeBufferPointer { (buffer) throws(ChromaprintError) in try self.feed(buffer) }
    }

    /// Processes what is buffered; the fingerprint is ready after it.
    ///
    /// - Throws: `ChromaprintError` when libchromaprint fails.
    public func finish() throws(ChromaprintError) {
        guard chromaprint_finish(self.context) == 1 else { throw ChromaprintError("chromaprint_finish() failed") }
    }

    /// The compressed fingerprint in URL-safe base64 without padding, as AcoustID and `mpd` print it.
    ///
    /// - Throws: `ChromaprintError` when libchromaprint has none.
    public func fingerprint() throws(ChromaprintError) -> String {
        var text: UnsafeMutablePointer<CChar>?
        guard chromaprint_get_fingerprint(self.context, &text) == 1, let text else {
            throw ChromaprintError("chromaprint_get_fingerprint() failed")
        }
        defer { chromaprint_dealloc(text) }
        return String(cString: text)
    }

    /// The uncompressed fingerprint: one 32-bit sub-fingerprint per item of audio.
    ///
    /// - Throws: `ChromaprintError` when libchromaprint has none.
    public func rawFingerprint() throws(ChromaprintError) -> [UInt32] {
        var items: UnsafeMutablePointer<UInt32>?
        var size: Int32 = 0
        guard chromaprint_get_raw_fingerprint(self.context, &items, &size) == 1 else {
            throw ChromaprintError("chromaprint_get_raw_fingerprint() failed")
        }
        defer { chromaprint_dealloc(items) }
        guard let items, size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: items, count: Int(size)))
    }
}
