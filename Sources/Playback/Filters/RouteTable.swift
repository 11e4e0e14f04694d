// SPDX-License-Identifier: GPL-3.0-or-later

/// The `route` filter's table: which input channel each output channel copies (`routes "0>1, 1>0"`), read as
/// `mpd` 0.23.12 reads it.
///
/// `routes` is a comma-separated list of `SOURCE>DESTINATION` pairs of decimal channel numbers below 8 (white
/// space allowed around each number and `>`, C's `strtoul` rules: a sign is accepted, `-1` is 4294967295, a
/// number is taken modulo 2^32). The output has one channel more than the highest destination; a destination
/// named twice takes the last source; an output channel without a source, or whose source the input lacks, is
/// silent. Default: `0>0, 1>1`. A value type; safe from any thread.
public struct RouteTable: Sendable, Hashable {
    /// The most channels `mpd` handles.
    public static let maximumChannels = 8

    /// For each output channel, its input channel (`nil`: silence).
    public private(set) var sources: [Int?]

    /// The output's channel count.
    public var outputChannels: Int { self.sources.count }

    /// Parses a `routes` value.
    ///
    /// - Throws: `FilterError` with `mpd`'s message: `Malformed 'routes' specification`,
    ///   `Invalid source channel number: N`, `Invalid destination channel number: N`.
    public init(routes: String) throws(FilterError) {
        var table = [Int?](repeating: nil, count: Self.maximumChannels)
        var outputs = 0
        var scanner = Scanner(Array(routes.utf8))
        while true {
            scanner.skipSpaces()
            guard let source = scanner.unsignedLong() else { throw Self.malformed }
            scanner.skipSpaces()
            guard scanner.take(UInt8(ascii: ">")) else { throw Self.malformed }
            guard source < Self.maximumChannels else {
                throw FilterError("Invalid source channel number: \(source)")
            }
            scanner.skipSpaces()
            guard let destination = scanner.unsignedLong() else { throw Self.malformed }
            scanner.skipSpaces()
            guard destination < Self.maximumChannels else {
                throw FilterError("Invalid destination channel number: \(destination)")
            }
            outputs = max(outputs, Int(destination) + 1)
            table[Int(destination)] = Int(source)
            if scanner.atEnd { break }
            guard scanner.take(UInt8(ascii: ",")) else { throw Self.malformed }
        }
        self.sources = Array(table[0..<outputs])
    }

    private static var malformed: FilterError { FilterError("Malformed 'routes' specification") }

    /// The default table, `0>0, 1>1`.
    public static let stereo = RouteTable(sources: [0, 1])

    /// A table of `sources` (each below ``maximumChannels``).
    public init(sources: [Int?]) { self.sources = sources }

    /// Copies `frames` frames of `inputChannels` channels of `bytesPerSample`-byte samples from `source` to
    /// `target` (which holds ``outputChannels`` channels per frame and must not overlap `source`); silent
    /// channels are zero (`silence`, one sample's bytes, for a format whose silence is not zero).
    /// Audio path: no allocation.
    func apply(
        _ source: UnsafeRawPointer, frames: Int, inputChannels: Int, bytesPerSample: Int,
        into target: UnsafeMutableRawPointer, silence: UInt8 = 0
    ) {
        let outputs = self.sources.count
        self.sources.withUnsafeBufferPointer { sources in
            for frame in 0..<frames {
                let input = source + frame * inputChannels * bytesPerSample
                let output = target + frame * outputs * bytesPerSample
                for channel in 0..<outputs {
                    let to = output + channel * bytesPerSample
                    if let from = sources[channel], from < inputChannels {
                        to.copyMemory(from: input + from * bytesPerSample, byteCount: bytesPerSample)
                    } else {
                        to.initializeMemory(as: UInt8.self, repeating: silence, count: bytesPerSample)
                    }
                }
            }
        }
    }
}

/// A filter template or chain that `mpd` would not set up: its message, logged as
/// `Failed to initialize filter chain for 'NAME': MESSAGE`.
public struct FilterError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `mpd`'s wording.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { self.message }
}

/// Reads numbers as C's `strtoul` in base 10 does, on bytes.
private struct Scanner {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { self.index >= self.bytes.count }

    /// C's `isspace` in the C locale.
    mutating func skipSpaces() {
        while self.index < self.bytes.count, [9, 10, 11, 12, 13, 32].contains(self.bytes[self.index]) {
            self.index += 1
        }
    }

    mutating func take(_ byte: UInt8) -> Bool {
        guard self.index < self.bytes.count, self.bytes[self.index] == byte else { return false }
        self.index += 1
        return true
    }

    /// `strtoul(…, 10)` stored in an `unsigned`: leading space and a sign allowed, saturated at 2^64 − 1, negated
    /// modulo 2^64 after a `-`, then taken modulo 2^32; `nil` (nothing consumed) without a digit.
    mutating func unsignedLong() -> UInt32? {
        var at = self.index
        while at < self.bytes.count, [9, 10, 11, 12, 13, 32].contains(self.bytes[at]) { at += 1 }
        var negative = false
        if at < self.bytes.count, self.bytes[at] == UInt8(ascii: "+") || self.bytes[at] == UInt8(ascii: "-") {
            negative = self.bytes[at] == UInt8(ascii: "-")
            at += 1
        }
        var value: UInt64 = 0
        var overflow = false
        let start = at
        while at < self.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self.bytes[at]) {
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(UInt64(self.bytes[at] - UInt8(ascii: "0")))
            if o1 || o2 { overflow = true }
            value = sum
            at += 1
        }
        guard at > start else { return nil }
        self.index = at
        if overflow { value = UInt64.max } else if negative { value = 0 &- value }
        return UInt32(truncatingIfNeeded: value)
    }
}
