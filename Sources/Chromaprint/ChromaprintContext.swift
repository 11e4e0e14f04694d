// SPDX-License-Identifier: GPL-3.0-or-later

import CChromaprint
import DynamicLibrary

/// Why libchromaprint failed: the call that did.
public struct ChromaprintError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The failing call's name and "failed", as `mpd` words it (`chromaprint_feed() failed`).
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { self.message }
}

/// libchromaprint, loaded on the first fingerprint and kept loaded.
///
/// The `fermata` binary does not link libchromaprint: the library needs libavcodec, whose ~50 libraries of its
/// own (x265, rav1e, aom, librsvg, pango…) nothing else links, and mapping them cost every server ~9 MiB of
/// resident memory at start-up for a command few clients send. The first `ChromaprintContext` opens it
/// (`dlopen`, Debian's soname from the header's major version) and resolves every function the wrapper calls
/// into a table; each context holds one use while it lives. It is never closed: each `dlopen`/`dlclose` cycle
/// of libavcodec loses memory its constructors allocate (~12.6 KB per cycle of FFmpeg's three libraries, see
/// `FFmpegLibraries`), and a client fingerprinting a library song by song would repeat it without bound; kept,
/// the cost is one load.
///
/// When it cannot be loaded (not installed, a missing function), every context fails to be made and the
/// reason is reported once, on stderr.
public final class ChromaprintLibrary: Sendable {
    /// The process's library: Debian's soname, `libchromaprint.so.1`.
    public static let shared = ChromaprintLibrary(soname: ChromaprintLibrary.headerSoname)

    /// The soname matching the header the module was compiled with.
    public static let headerSoname = "libchromaprint.so.\(CHROMAPRINT_VERSION_MAJOR)"

    private let library: DynamicLibraries<fermata_chromaprint_functions>

    /// The library loaded from `soname` (any name or path `dlopen` takes) on first use.
    ///
    /// - Parameter reportFailure: Told once why the library cannot be loaded (stderr by default).
    public init(soname: String, reportFailure: (@Sendable (String) -> Void)? = nil) {
        self.library = DynamicLibraries(
            names: [soname], what: soname, prefix: "chromaprint: getfingerprint unavailable: ",
            fill: { table, handles in fermata_chromaprint_resolve(table, handles[0]) }, reportFailure: reportFailure)
    }

    /// Whether the library is loaded now.
    public var isLoaded: Bool { self.library.isLoaded }
    /// How many contexts use it now.
    public var users: Int { self.library.users }
    /// How many times it was loaded.
    public var loadCount: Int { self.library.loadCount }

    fileprivate func acquire() throws(DynamicLibraryError) -> fermata_chromaprint_functions {
        try self.library.acquire()
    }

    fileprivate func release() { self.library.release() }
}

/// An acoustic fingerprint computation through libchromaprint with its default algorithm (the one AcoustID and
/// `mpd`'s `getfingerprint` use): start with the audio's rate and channels, feed interleaved signed 16-bit
/// samples, finish, then read the compressed base64 fingerprint.
///
/// Confined to one thread (it is not `Sendable`); the libchromaprint context is freed with the object, which
/// holds one use of the library (loading it if it is the first).
public final class ChromaprintContext {
    private let library: ChromaprintLibrary
    private let chromaprint: fermata_chromaprint_functions
    private let context: OpaquePointer

    /// A context for the default algorithm.
    ///
    /// - Throws: `ChromaprintError` "chromaprint_new() failed" when libchromaprint cannot make one, or cannot be
    ///   loaded (the reason reported once by `library`).
    public init(library: ChromaprintLibrary = .shared) throws(ChromaprintError) {
        let chromaprint: fermata_chromaprint_functions
        do {
            chromaprint = try library.acquire()
        } catch {
            throw ChromaprintError("chromaprint_new() failed")
        }
        guard let context = chromaprint.chromaprint_new(Int32(CHROMAPRINT_ALGORITHM_DEFAULT.rawValue)) else {
            library.release()
            throw ChromaprintError("chromaprint_new() failed")
        }
        self.library = library
        self.chromaprint = chromaprint
        self.context = context
    }

    deinit {
        self.chromaprint.chromaprint_free(self.context)
        self.library.release()
    }

    /// libchromaprint's version (`1.5.1`).
    public var version: String { self.chromaprint.chromaprint_get_version().map { String(cString: $0) } ?? "" }

    /// Starts a new fingerprint of audio at `sampleRate` Hz with `channels` interleaved channels.
    ///
    /// - Throws: `ChromaprintError` when libchromaprint refuses the format.
    public func start(sampleRate: Int, channels: Int) throws(ChromaprintError) {
        guard let rate = Int32(exactly: sampleRate), let count = Int32(exactly: channels),
            self.chromaprint.chromaprint_start(self.context, rate, count) == 1
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
            guard self.chromaprint.chromaprint_feed(self.context, base + offset, Int32(count)) == 1 else {
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
        guard self.chromaprint.chromaprint_finish(self.context) == 1 else {
            throw ChromaprintError("chromaprint_finish() failed")
        }
    }

    /// The compressed fingerprint in URL-safe base64 without padding, as AcoustID and `mpd` print it.
    ///
    /// - Throws: `ChromaprintError` when libchromaprint has none.
    public func fingerprint() throws(ChromaprintError) -> String {
        var text: UnsafeMutablePointer<CChar>?
        guard self.chromaprint.chromaprint_get_fingerprint(self.context, &text) == 1, let text else {
            throw ChromaprintError("chromaprint_get_fingerprint() failed")
        }
        defer { self.chromaprint.chromaprint_dealloc(text) }
        return String(cString: text)
    }

    /// The uncompressed fingerprint: one 32-bit sub-fingerprint per item of audio.
    ///
    /// - Throws: `ChromaprintError` when libchromaprint has none.
    public func rawFingerprint() throws(ChromaprintError) -> [UInt32] {
        var items: UnsafeMutablePointer<UInt32>?
        var size: Int32 = 0
        guard self.chromaprint.chromaprint_get_raw_fingerprint(self.context, &items, &size) == 1 else {
            throw ChromaprintError("chromaprint_get_raw_fingerprint() failed")
        }
        defer { self.chromaprint.chromaprint_dealloc(items) }
        guard let items, size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: items, count: Int(size)))
    }
}
