// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// The `input_cache { size "…" }` block, as `mpd` 0.23.12 reads it (`input/cache/Config.cxx`): with the block,
/// local song files are kept in memory up to `size` bytes (default 256 MiB); without it, there is no cache.
/// Other keys in the block are ignored silently, as `mpd` ignores them. A value type; safe from any thread.
public struct InputCacheSetting: Sendable, Hashable {
    /// The cache's capacity in bytes.
    public var size: Int

    /// `mpd`'s default capacity, 256 MiB.
    public static let defaultSize = 256 << 20

    /// A cache of `size` bytes.
    public init(size: Int = InputCacheSetting.defaultSize) {
        self.size = size
    }

    /// Reads the block.
    ///
    /// - Throws: `ConfigError` at the `size` line, as `mpd` words it: `Error in setting "size" on line N;
    ///   Failed to parse integer` (no number), `…; Unknown size suffix` (anything but `k`, `M`, `G`, each
    ///   optionally followed by `B`), `…; Value too large`.
    public init(block: ConfigBlock) throws(ConfigError) {
        self.init()
        guard let parameter = block.parameter(named: "size") else { return }
        do {
            self.size = Int(min(try Self.parseSize(parameter.value), UInt(Int.max)))
        } catch {
            throw ConfigError(
                location: parameter.location,
                message: "Error in setting \"size\" on line \(parameter.line); \(error.message)")
        }
    }

    /// `mpd`'s `ParseSize`: a number as C `strtoul` reads it (leading white space and a sign allowed, a value
    /// past the range saturates, a negative one wraps), optional white space, then nothing (bytes) or `k`, `M`
    /// or `G` (KiB, MiB, GiB), then an optional `B`; a number without a suffix is in units of `defaultFactor`
    /// bytes (multiplied without an overflow check, as `mpd` does).
    ///
    /// - Returns: the byte count, as `mpd`'s `size_t`.
    /// - Throws: the bare message (`Failed to parse integer`, `Unknown size suffix`, `Value too large`).
    static func parseSize(_ text: String, defaultFactor: UInt = 1) throws(SizeError) -> UInt {
        var bytes = Array(text.utf8)
        bytes.append(0)
        let parsed: (value: UInt, consumed: Int) = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in
                var end: UnsafeMutablePointer<CChar>?
                let value = strtoul(characters.baseAddress!, &end, 10)
                return (value, end.map { $0 - UnsafeMutablePointer(mutating: characters.baseAddress!) } ?? 0)
            }
        }
        guard parsed.consumed > 0 else { throw SizeError(message: "Failed to parse integer") }
        var rest = bytes[parsed.consumed..<(bytes.count - 1)].drop { $0 > 0 && $0 <= 0x20 }
        var value = parsed.value
        let factors: [UInt8: UInt] = [
            UInt8(ascii: "k"): 1 << 10, UInt8(ascii: "M"): 1 << 20, UInt8(ascii: "G"): 1 << 30,
        ]
        if let suffix = rest.first {
            guard let factor = factors[suffix] else { throw SizeError(message: "Unknown size suffix") }
            let (product, overflow) = value.multipliedReportingOverflow(by: factor)
            guard !overflow else { throw SizeError(message: "Value too large") }
            value = product
            rest = rest.dropFirst()
            if rest.first == UInt8(ascii: "B") { rest = rest.dropFirst() }
            guard rest.isEmpty else { throw SizeError(message: "Unknown size suffix") }
        } else {
            value = value &* defaultFactor
        }
        return value
    }

    /// A size that `parseSize(_:)` refused, with `mpd`'s message.
    struct SizeError: Error {
        let message: String
    }
}
