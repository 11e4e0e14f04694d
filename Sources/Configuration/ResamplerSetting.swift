// SPDX-License-Identifier: GPL-3.0-or-later

/// The resampler the outputs use when a song's rate differs from the output's: `mpd` 0.23's `resampler` block,
/// or the older `samplerate_converter` line it migrates to one.
///
/// As in Debian's `mpd`, the default is libsamplerate's `Fastest Sinc Interpolator`. `plugin "libsamplerate"`
/// takes `type` (a converter's number or the start of its name, checked against libsamplerate when the player
/// starts); `plugin "soxr"` (or `samplerate_converter "soxr"`, `"soxr very high"`…) picks libsoxr's recipe by
/// `mpd`'s quality names, and `threads` is accepted (Fermata's resampler runs on the output's own thread, so the
/// result is the same). `plugin "internal"`, `mpd`'s own sample-and-hold resampler, is libsamplerate's
/// `ZOH Interpolator`, the same method (`mpd`'s restarts its phase at every chunk). soxr's `custom` quality is
/// not here: it resamples with soxr's high recipe and says so in ``warnings``. A value type; safe from any
/// thread.
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
        /// `mpd`'s sample-and-hold resampler.
        case `internal`
    }

    /// The plugin. Default: libsamplerate, `Fastest Sinc Interpolator`, as Debian's `mpd`.
    public var plugin = Plugin.libsamplerate(type: "2", location: nil)

    /// One line for each setting Fermata does not act on, `path:line: text`.
    public var warnings: [String] = []

    /// libsamplerate's `Fastest Sinc Interpolator`, as without any setting.
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
            try self.init(plugin: plugin, quality: block["quality"], type: block["type"], at: block.location)
        } else if let converter {
            // mpd's migration: "" and "internal" are the internal plugin, "soxr" and "soxr QUALITY" soxr, anything
            // else a libsamplerate converter type.
            let value = converter.value
            if value == "soxr" {
                try self.init(plugin: "soxr", quality: nil, type: nil, at: converter.location)
            } else if value.hasPrefix("soxr ") {
                try self.init(plugin: "soxr", quality: String(value.dropFirst(5)), type: nil, at: converter.location)
            } else {
                let plugin = value.isEmpty || value == "internal" ? "internal" : "libsamplerate"
                try self.init(plugin: plugin, quality: nil, type: value, at: converter.location)
            }
        } else {
            self.init()
        }
    }

    private init(plugin: String, quality: String?, type: String?, at location: ConfigLocation) throws(ConfigError) {
        switch plugin {
        case "soxr":
            self.plugin = .soxr(.high)
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
            self.plugin = .soxr(known)
        case "libsamplerate":
            self.plugin = .libsamplerate(type: type ?? "2", location: location)
        case "internal":
            self.plugin = .internal
        default:
            throw ConfigError(location: location, message: "No such resampler plugin: \(plugin)")
        }
    }
}
