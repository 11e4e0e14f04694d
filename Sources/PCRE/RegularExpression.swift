// SPDX-License-Identifier: GPL-3.0-or-later

import CPCRE2
import Synchronization

/// A compiled PCRE2 pattern (8-bit code units), used for the `=~` and `!~` filter operators.
///
/// Any thread may call any method: the compiled code is immutable once `init` returns, and every match gets
/// match data of its own. One match-data block is cached per expression and taken with an atomic exchange, so
/// a single thread searching a library allocates nothing per match; a thread that finds the cache taken by
/// another allocates a block for that one call and frees it afterwards.
public final class RegularExpression: @unchecked Sendable {
    // @unchecked: `code` is written once in init and only read afterwards; PCRE2 documents compiled code as
    // shareable between threads. The cache slot is an Atomic.

    /// The pattern text as given.
    public let pattern: String
    /// The options it was compiled with.
    public let options: Options

    private let code: OpaquePointer
    private let cachedMatchData = Atomic<UnsafeMutableRawPointer?>(nil)

    /// Compiles `pattern` with `options`, then JIT-compiles it where the platform allows.
    ///
    /// The pattern ends at its first NUL byte, as it does for `mpd`, which passes a C string.
    ///
    /// - Throws: `RegularExpressionError` with PCRE2's error code, message and offset.
    public init(_ pattern: String, options: Options = .mpdFilter) throws(RegularExpressionError) {
        var bytes = Array(pattern.utf8)
        if let nul = bytes.firstIndex(of: 0) { bytes.removeSubrange(nul...) }
        var errorCode: Int32 = 0
        var errorOffset = 0
        let compiled = bytes.withUnsafeBufferPointer { buffer in
            pcre2_compile_8(buffer.baseAddress, buffer.count, options.rawValue, &errorCode, &errorOffset, nil)
        }
        guard let compiled else {
            throw RegularExpressionError(code: errorCode, offset: errorOffset)
        }
        // A failed JIT compile (no JIT support, W^X policy) leaves the interpreter in charge: same results.
        _ = pcre2_jit_compile_8(compiled, PCRE2_JIT_COMPLETE)
        self.pattern = pattern
        self.options = options
        self.code = compiled
    }

    deinit {
        if let cached = self.cachedMatchData.exchange(nil, ordering: .acquiring) {
            pcre2_match_data_free_8(OpaquePointer(cached))
        }
        pcre2_code_free_8(self.code)
    }

    /// Whether the pattern matches anywhere in `text` (an unanchored search over its UTF-8 bytes).
    ///
    /// A matching error (such as PCRE2's match limit) counts as no match, as in `mpd`.
    public func matches(_ text: String) -> Bool {
        if let result = text.utf8.withContiguousStorageIfAvailable({ self.matches(utf8: $0) }) {
            return result
        }
        return Array(text.utf8).withUnsafeBufferPointer { self.matches(utf8: $0) }
    }

    /// Whether the pattern matches anywhere in `bytes`.
    public func matches(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let taken = self.cachedMatchData.exchange(nil, ordering: .acquiring)
        guard let matchData = taken.map(OpaquePointer.init) ?? pcre2_match_data_create_8(1, nil) else {
            // Out of memory for a few dozen bytes: treat as no match rather than trap.
            return false
        }
        // A zero-length buffer may have no base address; PCRE2 accepts any non-null pointer for length 0.
        let result = withUnsafePointer(to: 0 as UInt8) { empty in
            pcre2_match_8(self.code, bytes.baseAddress ?? empty, bytes.count, 0, 0, matchData, nil)
        }
        let (exchanged, _) = self.cachedMatchData.compareExchange(
            expected: nil, desired: UnsafeMutableRawPointer(matchData), ordering: .acquiringAndReleasing)
        if !exchanged { pcre2_match_data_free_8(matchData) }
        // 0 means "matched, but the ovector was too small for every capture": still a match.
        return result >= 0
    }
}

extension RegularExpression {
    /// PCRE2 compile options, named after their C constants.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32

        /// Creates options from raw PCRE2 bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// `PCRE2_CASELESS`: without `utf`, only ASCII letters fold.
        public static let caseless = Options(rawValue: PCRE2_CASELESS)
        /// `PCRE2_DOTALL`: `.` also matches a newline.
        public static let dotAll = Options(rawValue: PCRE2_DOTALL)
        /// `PCRE2_NO_AUTO_CAPTURE`: plain parentheses do not capture.
        public static let noAutoCapture = Options(rawValue: PCRE2_NO_AUTO_CAPTURE)
        /// `PCRE2_ANCHORED`: match only at the start.
        public static let anchored = Options(rawValue: PCRE2_ANCHORED)
        /// `PCRE2_UTF`: treat pattern and subject as UTF-8 code points rather than bytes.
        public static let utf = Options(rawValue: PCRE2_UTF)

        /// What `mpd` 0.23 compiles filter patterns with: `PCRE2_DOTALL | PCRE2_NO_AUTO_CAPTURE`, no UTF mode.
        ///
        /// So `.` matches one byte, and `\w`, `\p{…}` and caseless matching see bytes as Latin-1 code points.
        public static let mpdFilter: Options = [.dotAll, .noAutoCapture]

        /// `mpdFilter` plus `caseless`, for case-folding commands (`search`, `searchadd`, `playlistsearch`…).
        public static let mpdFilterCaseless: Options = [.dotAll, .noAutoCapture, .caseless]
    }
}
