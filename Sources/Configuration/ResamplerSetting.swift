// SPDX-License-Identifier: GPL-3.0-or-later

/// The resampler the outputs use when a song's rate differs from the output's: `mpd` 0.23's `resampler` block,
/// or the older `samplerate_converter` line it migrates to one.
///
/// Fermata resamples with libsoxr. `plugin "soxr"` (or `samplerate_converter "soxr"`, `"soxr very high"`…) picks
/// libsoxr's recipe by `mpd`'s quality names; `threads` is accepted (Fermata's resampler runs on the output's own
/// thread, so the result is the same). `mpd`'s other plugins, `libsamplerate` and `internal`, and soxr's
/// `custom` quality are not here: they resample with soxr's default recipe and say so in ``warnings``. A value
/// type; safe from any thread.
public struct ResamplerSetting: Sendable, Hashable {
    /// libsoxr's recipes, by `mpd`'s names for them.
    public enum Quality: String, Sendable, Hashable, CaseIterable {
        case veryHigh = "very high"
        case high
        case medium
        case low
        case quick
    }

    /// The recipe. Default: high, `mpd`'s default for soxr.
    public var quality: Quality = .high

    /// One line for each setting Fermata does not act on, `path:line: text`.
    public var warnings: [String] = []

    /// libsoxr's high recipe, as without any setting.
    public init() {}

    /// Reads the setting from a `resampler` block or a `samplerate_converter` line (at most one of the two).
    ///
    /// - Throws: `mpd`'s errors at the block's line: both given (`Cannot use both 'resampler' (line N) and
    ///   'samplerate_converter' (line M)`), `'plugin' missing in line N`, `No such resampler plugin: NAME`,
    ///   `unknown quality setting 'NAME' in line N`.
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
            try self.init(plugin: plugin, quality: block["quality"], at: block.location)
        } else if let converter {
            // mpd's migration: "" and "internal" are the internal plugin, "soxr" and "soxr QUALITY" soxr, anything
            // else a libsamplerate converter type.
            let value = converter.value
            if value == "soxr" {
                try self.init(plugin: "soxr", quality: nil, at: converter.location)
            } else if value.hasPrefix("soxr ") {
                try self.init(plugin: "soxr", quality: String(value.dropFirst(5)), at: converter.location)
            } else {
                let plugin = value.isEmpty || value == "internal" ? "internal" : "libsamplerate"
                try self.init(plugin: plugin, quality: nil, at: converter.location)
            }
        } else {
            self.init()
        }
    }

    private init(plugin: String, quality: String?, at location: ConfigLocation) throws(ConfigError) {
        switch plugin {
        case "soxr":
            guard let quality else { return }
            if quality == "custom" {
                self.warnings.append(
                    "\(location): soxr quality \"custom\" is not supported by Fermata yet; resampling with \"high\"")
                return
            }
            guard let known = Quality(rawValue: quality) else {
                throw ConfigError(
                    location: location, message: "unknown quality setting '\(quality)' in line \(location.line)")
            }
            self.quality = known
        case "internal", "libsamplerate":
            self.warnings.append(
                "\(location): resampler plugin \"\(plugin)\" is not supported by Fermata yet; resampling with soxr")
        default:
            throw ConfigError(location: location, message: "No such resampler plugin: \(plugin)")
        }
    }
}
