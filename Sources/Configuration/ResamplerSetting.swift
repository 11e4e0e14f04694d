// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// The resampler the outputs use when a song's rate differs from the output's: `mpd` 0.23's `resampler` block,
/// or the older `samplerate_converter` line it migrates to one.
///
/// As in Debian's `mpd`, the default is libsamplerate's `Fastest Sinc Interpolator`. `plugin "libsamplerate"`
/// takes `type` (a converter's number or the start of its name, checked against libsamplerate when the player
/// starts); `plugin "soxr"` (or `samplerate_converter "soxr"`, `"soxr very high"`…) picks libsoxr's recipe by
/// `mpd`'s quality names, and `threads` is accepted (Fermata's resampler runs on the output's own thread, so the
/// result is the same). `plugin "internal"`, `mpd`'s own sample-and-hold resampler, is libsamplerate's
/// `ZOH Interpolator`, the same method (`mpd`'s restarts its phase at every chunk). soxr's `custom` quality
/// takes `mpd`'s recipe keys (``SoxrCustomRecipe``). A value type; safe from any thread.
public struct ResamplerSetting: Sendable, Hashable {
    /// libsoxr's recipes, by `mpd`'s names for them.
    public enum Quality: String, Sendable, Hashable, CaseIterable {
        case veryHigh = "very high"
        case high
        case medium
        case low
        case quick
    }

    /// The resampler plugins.
    public enum Plugin: Sendable, Hashable {
        /// libsamplerate with a converter `type` as written (`mpd`'s default `"2"`, `Fastest Sinc
        /// Interpolator`), at `location` for the error a bad one gets.
        case libsamplerate(type: String, location: ConfigLocation?)
        /// libsoxr with a recipe.
        case soxr(Quality)
        /// libsoxr with `quality "custom"` and its recipe.
        case soxrCustom(SoxrCustomRecipe)
        /// `mpd`'s sample-and-hold resampler.
        case `internal`
    }

    /// The plugin. Default: libsamplerate, `Fastest Sinc Interpolator`, as Debian's `mpd`.
    public var plugin = Plugin.libsamplerate(type: "2", location: nil)

    /// libsamplerate's `Fastest Sinc Interpolator`, as without any setting.
    public init() {}

    /// Reads the setting from a `resampler` block or a `samplerate_converter` line (at most one of the two).
    ///
    /// - Throws: `mpd`'s errors at the block's line: both given (`Cannot use both 'resampler' (line N) and
    ///   'samplerate_converter' (line M)`), `'plugin' missing in line N`, `No such resampler plugin: NAME`,
    ///   `unknown quality setting 'NAME' in line N`, a bad `custom` recipe (``SoxrCustomRecipe``), and `Not a
    ///   valid number in line N` (at that line) for soxr's `threads`.
    public init(block: ConfigBlock?, converter: ConfigParameter?) throws(ConfigError) {
        if let block, let converter {
            throw ConfigError(
                location: block.location,
                message: "Cannot use both 'resampler' (line \(block.line)) and 'samplerate_converter' "
                    + "(line \(converter.line))")
        }
        if let block {
            guard let plugin = block["plugin"] else {
                throw ConfigError(location: block.location, message: "'plugin' missing in line \(block.line)")
            }
            try self.init(
                plugin: plugin, quality: block["quality"], type: block["type"], block: block, at: block.location)
        } else if let converter {
            // mpd's migration: "" and "internal" are the internal plugin, "soxr" and "soxr QUALITY" soxr, anything
            // else a libsamplerate converter type.
            let value = converter.value
            if value == "soxr" {
                try self.init(plugin: "soxr", quality: nil, type: nil, block: nil, at: converter.location)
            } else if value.hasPrefix("soxr ") {
                try self.init(
                    plugin: "soxr", quality: String(value.dropFirst(5)), type: nil, block: nil, at: converter.location)
            } else {
                let plugin = value.isEmpty || value == "internal" ? "internal" : "libsamplerate"
                try self.init(plugin: plugin, quality: nil, type: value, block: nil, at: converter.location)
            }
        } else {
            self.init()
        }
    }

    /// The lines of a `resampler` block its plugin does not read (`mpd` warns about them once started: `option 'x'
    /// on line N was not recognized`): all but `plugin` and soxr's `quality` and `threads` (with `quality "custom"`,
    /// its recipe's keys too) or libsamplerate's `type`.
    public static func unreadParameters(of block: ConfigBlock) -> [ConfigParameter] {
        var read: Set<String> = ["plugin"]
        switch block["plugin"] {
        case "soxr":
            read.formUnion(["quality", "threads"])
            if block["quality"] == "custom" {
                read.formUnion([
                    "precision", "phase_response", "passband_end", "stopband_begin", "flags", "attenuation",
                ])
            }
        case "libsamplerate": read.insert("type")
        default: break
        }
        return block.params.filter { !read.contains($0.name) }
    }

    /// The setting for `plugin`; `block` is the `resampler` block, `nil` for a `samplerate_converter` line (which
    /// `mpd` turns into a block of `plugin` and `quality` alone).
    private init(
        plugin: String, quality: String?, type: String?, block: ConfigBlock?, at location: ConfigLocation
    ) throws(ConfigError) {
        switch plugin {
        case "soxr":
            // mpd's order: the quality, a custom recipe, then `threads` (a number, as mpd reads it, else unused).
            var keys = DecoderPluginSettings(plugin: plugin, block: block)
            if quality == "custom" {
                self.plugin = .soxrCustom(try SoxrCustomRecipe(keys: &keys, at: location))
            } else if let quality {
                guard let known = Quality(rawValue: quality) else {
                    throw ConfigError(
                        location: location, message: "unknown quality setting '\(quality)' in line \(location.line)")
                }
                self.plugin = .soxr(known)
            } else {
                self.plugin = .soxr(.high)
            }
            _ = try keys.integer("threads")
        case "libsamplerate":
            self.plugin = .libsamplerate(type: type ?? "2", location: location)
        case "internal":
            self.plugin = .internal
        default:
            throw ConfigError(location: location, message: "No such resampler plugin: \(plugin)")
        }
    }
}

/// libsoxr's recipe for `quality "custom"`, as `mpd` 0.23's soxr plugin reads it from the `resampler` block:
/// soxr's high-quality settings with what the block gives in their place.
///
/// - `precision`: bits, 16, 20, 24, 28 or 32. `mpd` 0.23.12's default is its `SOXR_HQ` constant, 4, which it
///   then refuses: a custom recipe without `precision` is an error there, and so it is here.
/// - `phase_response`: 0 to 100 (default 50); `flags`: soxr's low six quality flags (default 0); both read as
///   C `strtol` reads a number (`Not a valid number in line N`).
/// - `passband_end` (1 to 100 %, default 95), `stopband_begin` (100 to 199 %, default 100) and `attenuation`
///   (0 to 30 dB, default 0, the output's scale), each read as C `strtod` reads the whole value.
///
/// The errors are `mpd`'s texts, spelling included. A value type; safe from any thread.
public struct SoxrCustomRecipe: Sendable, Hashable {
    /// Bits of precision.
    public var precision: Int
    /// 0 (minimum phase) to 100 (maximum), 50 linear.
    public var phaseResponse: Int
    /// The end of the pass band, a fraction of the Nyquist frequency (0.01 to 1).
    public var passbandEnd: Double
    /// The start of the stop band, a fraction of the Nyquist frequency (1 to 1.99).
    public var stopbandBegin: Double
    /// soxr's quality flags (`SOXR_ROLLOFF_*`, `SOXR_HI_PREC_CLOCK`…), the low six bits.
    public var flags: Int
    /// The factor every sample is scaled by: `attenuation` dB as 1 / 10^(dB / 10).
    public var scale: Double

    /// A recipe. The default pass band is what `mpd` makes of `95.0` (95 × 0.01, one step above 0.95).
    public init(
        precision: Int, phaseResponse: Int = 50, passbandEnd: Double = 95 * 0.01, stopbandBegin: Double = 1,
        flags: Int = 0, scale: Double = 1
    ) {
        self.precision = precision
        self.phaseResponse = phaseResponse
        self.passbandEnd = passbandEnd
        self.stopbandBegin = stopbandBegin
        self.flags = flags
        self.scale = scale
    }

    /// Reads the recipe's keys from the block, in `mpd`'s order.
    ///
    /// - Throws: `ConfigError` at the block's line with `mpd`'s message (`soxr converter invalid precision : 4
    ///   [16|20|24|28|32]`…), or `Not a valid number in line N` at a key's line.
    init(keys: inout DecoderPluginSettings, at location: ConfigLocation) throws(ConfigError) {
        func failure(_ message: String) -> ConfigError { ConfigError(location: location, message: message) }
        // mpd reads these two as an int (strtol) and checks them as unsigned, printing the int.
        let precision = Int32(truncatingIfNeeded: try keys.integer("precision") ?? 4)
        guard [16, 20, 24, 28, 32].contains(UInt32(bitPattern: precision)) else {
            throw failure("soxr converter invalid precision : \(precision) [16|20|24|28|32]")
        }
        let phase = Int32(truncatingIfNeeded: try keys.integer("phase_response") ?? 50)
        guard UInt32(bitPattern: phase) <= 100 else {
            throw failure("soxr converter invalid phase_respons : \(phase) (0-100)")
        }
        let passband = keys.string("passband_end") ?? "95.0"
        guard let passbandValue = Self.number(passband) else {
            throw failure("soxr converter passband_end value not a number: \(passband)")
        }
        guard !(passbandValue < 1 || passbandValue > 100) else {
            throw failure("soxr converter invalid passband_end : \(passband) (1-100%)")
        }
        let stopband = keys.string("stopband_begin") ?? "100.0"
        guard let stopbandValue = Self.number(stopband) else {
            throw failure("soxr converter stopband_begin value not a number: \(stopband)")
        }
        guard !(stopbandValue < 100 || stopbandValue > 199) else {
            throw failure("soxr converter invalid stopband_begin : \(stopband) (100-150%)")
        }
        let flags = Int(Int32(truncatingIfNeeded: try keys.integer("flags") ?? 0) & 0x3F)
        let attenuation = keys.string("attenuation") ?? "0"
        guard let decibels = Self.number(attenuation) else {
            throw failure("soxr converter attenuation value not a number: \(attenuation)")
        }
        guard !(decibels < 0 || decibels > 30) else {
            throw failure("soxr converter invalid attenuation : \(attenuation) (0-30dB))")
        }
        // Debian's mpd is built with -ffast-math: its divisions by 100 and 10 are multiplications by 0.01 and 0.1
        // (100.5 gives a stop band of 1.0050000000000001, not 1.005), which libsoxr's minimum and maximum phase
        // filters are sensitive to.
        self.init(
            precision: Int(precision), phaseResponse: Int(phase), passbandEnd: passbandValue * 0.01,
            stopbandBegin: stopbandValue * 0.01, flags: flags, scale: 1 / pow(10, decibels * 0.1))
    }

    /// The whole of `text` as C `strtod` reads it (leading blanks, hexadecimal, `inf`, `nan`), or `nil` when it
    /// is not all one number.
    static func number(_ text: String) -> Double? {
        guard !text.utf8.contains(0) else { return nil }
        return text.withCString { start -> Double? in
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(start, &end)
            guard let end, end != UnsafeMutablePointer(mutating: start), end.pointee == 0 else { return nil }
            return value
        }
    }
}
