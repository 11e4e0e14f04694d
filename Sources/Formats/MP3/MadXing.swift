// SPDX-License-Identifier: GPL-3.0-or-later

import Mad
import Model

/// The Xing/Info header and LAME tag `mpd` 0.23's mad plugin reads from the ancillary bits of the first
/// frame libmad decodes (libmad itself does not parse them).
struct MadXing: Sendable, Hashable {
    /// The header's flags: 1 frame count, 2 byte count, 4 table of contents, 8 quality.
    var flags: UInt32
    /// The frame count, when `flags & 1`.
    var frames: UInt32
    /// What the LAME tag after it says, when there is one the plugin accepts.
    var lame: MadLameTag?

    /// Reads a Xing (`Xing`/`ng`) or Info (`Info`/`fo`) header, then a LAME tag no earlier than 120 bytes into
    /// the ancillary data, as the plugin does.
    ///
    /// - Returns: `nil` when no header the plugin accepts is there.
    init?(_ bits: inout MadBits) {
        var bitLength = bits.remaining
        let initial = bitLength
        guard bitLength >= 16 else { return nil }
        let magic = bits.read(16)
        bitLength -= 16
        let xi: UInt32 = 0x5869, ng: UInt32 = 0x6E67, infoIn: UInt32 = 0x496E, fo: UInt32 = 0x666F
        if magic == xi || magic == infoIn {
            guard bitLength >= 16, bits.read(16) == (magic == xi ? ng : fo) else { return nil }
            bitLength -= 16
        } else if magic != ng && magic != fo {
            return nil
        }
        guard bitLength >= 32 else { return nil }
        self.flags = bits.read(32)
        bitLength -= 32
        self.frames = 0
        if self.flags & 1 != 0 {
            guard bitLength >= 32 else { return nil }
            self.frames = bits.read(32)
            bitLength -= 32
        }
        for (flag, width) in [(UInt32(2), 32), (4, 800), (8, 32)] where self.flags & flag != 0 {
            guard bitLength >= width else { return nil }
            bits.skip(width)
            bitLength -= width
        }
        let rest = 960 - (initial - bitLength)
        guard rest >= 0 else { return nil }
        bits.skip(rest)
        bitLength -= rest
        self.lame = MadLameTag(&bits, bitLength: bitLength)
    }
}

/// The LAME tag fields `mpd`'s mad plugin uses.
struct MadLameTag: Sendable, Hashable {
    /// Samples the encoder added at the start.
    var encoderDelay: Int
    /// Samples the encoder added at the end.
    var encoderPadding: Int
    /// The "radio" (track) gain in dB as the plugin reads it (0 when unset), 6 dB higher for encoders older
    /// than LAME 3.95 (their reference level was 83 dB). The album gain is never read.
    var trackGain: Float
    /// The peak as the plugin computes it: the tag's 32 bits shifted left by 5 and cut to a signed 32-bit
    /// integer, taken as a linear peak (LAME writes 0 there unless asked to find the peak).
    var peak: Float

    /// Reads the 36-byte tag at `bits`; `nil` unless it is all there and starts with `LAME<major>.<minor>`.
    init?(_ bits: inout MadBits, bitLength: Int) {
        guard bitLength >= 288 else { return nil }
        var encoder: [UInt8] = []
        for _ in 0..<9 { encoder.append(UInt8(bits.read(8))) }
        guard encoder.starts(with: Array("LAME".utf8)), let version = Self.version(encoder.dropFirst(4)) else {
            return nil
        }
        let adjustment: Float = version.major < 3 || (version.major == 3 && version.minor < 95) ? 6 : 0
        bits.skip(16)
        self.peak = Float(Int32(truncatingIfNeeded: UInt64(bits.read(32)) << 5))
        let name = bits.read(3)
        let originator = bits.read(3)
        let negative = bits.read(1) == 1
        let tenths = Int(bits.read(9))
        self.trackGain = 0
        if tenths != 0 && name == 1 && originator != 0 {
            self.trackGain = Float(negative ? -tenths : tenths) / 10 + adjustment
        }
        bits.skip(32)
        self.encoderDelay = Int(bits.read(12))
        self.encoderPadding = Int(bits.read(12))
    }

    /// The ReplayGain the plugin submits: the track gain when above 0 dB.
    var replayGain: ReplayGainInfo? {
        guard self.trackGain > 0 else { return nil }
        var info = ReplayGainInfo()
        info.trackGain = Double(self.trackGain)
        info.trackPeak = Double(self.peak)
        return info
    }

    /// `major.minor` as `sscanf("%u.%u")` reads it from the bytes after "LAME" (up to a NUL).
    static func version(_ bytes: ArraySlice<UInt8>) -> (major: UInt32, minor: UInt32)? {
        var rest = bytes.prefix { $0 != 0 }[...]
        func number() -> UInt32? {
            while let first = rest.first, first == 0x20 || (0x09...0x0D).contains(first) { rest.removeFirst() }
            if let first = rest.first, first == 0x2B { rest.removeFirst() }
            let digits = rest.prefix { (0x30...0x39).contains($0) }
            guard !digits.isEmpty else { return nil }
            rest.removeFirst(digits.count)
            var value: UInt32 = 0
            for digit in digits { value = value &* 10 &+ UInt32(digit - 0x30) }
            return value
        }
        guard let major = number(), rest.first == 0x2E else { return nil }
        rest.removeFirst()
        guard let minor = number() else { return nil }
        return (major, minor)
    }
}
