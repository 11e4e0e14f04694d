// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration

/// The alsa input plugin's settings (`input { plugin "alsa" … }`), as `mpd` 0.23.12 reads them when it starts:
/// `default_device` (default `default`), `default_format` (default `48000:16:2`, checked only when a stream
/// opens), and `auto_resample`, `auto_channels`, `auto_format` (booleans, default yes; "no" asks alsa-lib not to
/// convert). Pure value; any thread.
public struct ALSAInputSettings: Hashable, Sendable {
    /// The device of `alsa://` URLs that name none.
    public var defaultDevice = "default"
    /// The format of `alsa://` URLs that give none.
    public var defaultFormat = "48000:16:2"
    /// `auto_resample`.
    public var autoResample = true
    /// `auto_channels`.
    public var autoChannels = true
    /// `auto_format`.
    public var autoFormat = true

    /// The defaults.
    public init() {}

    /// `snd_pcm_open` mode flags from the `auto_*` settings.
    var openMode: Int32 {
        ALSAOutput.openMode(
            autoResample: self.autoResample, autoChannels: self.autoChannels, autoFormat: self.autoFormat)
    }

    /// The settings from the configuration's `input` blocks.
    ///
    /// - Returns: the settings and the lines of the block nothing read (which `mpd` warns about once started), or
    ///   `nil` when the block says `enabled "no"` (then `alsa://` is neither listed by `urlhandlers` nor opened).
    /// - Throws: `ConfigError` for a bad `enabled`, and, nested in `Failed to initialize input plugin 'alsa'`, for
    ///   a bad boolean.
    public static func configured(_ blocks: InputBlocks) throws(ConfigError) -> (
        settings: ALSAInputSettings, unread: [ConfigParameter]
    )? {
        guard var block = try blocks.settings(forPlugin: "alsa") else { return nil }
        var settings = ALSAInputSettings()
        do {
            settings.defaultDevice = block.string("default_device") ?? settings.defaultDevice
            settings.defaultFormat = block.string("default_format") ?? settings.defaultFormat
            settings.autoResample = try block.bool("auto_resample") ?? true
            settings.autoChannels = try block.bool("auto_channels") ?? true
            settings.autoFormat = try block.bool("auto_format") ?? true
        } catch {
            throw ConfigError(
                location: error.location, message: "Failed to initialize input plugin 'alsa'; \(error.message)")
        }
        return (settings, block.unread)
    }
}
