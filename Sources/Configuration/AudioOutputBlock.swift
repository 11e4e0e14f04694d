// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// A `mixer_type` value, globally or in an `audio_output` block.
public enum AudioMixerSetting: String, Sendable, Hashable {
    /// The output plugin's own mixer (none when the plugin has none).
    case hardware
    /// Volume applied to the samples.
    case software
    /// A volume that is remembered and reported but changes nothing (for external mixers).
    case null
    /// No volume control (`none` or `disabled`).
    case none

    /// Parses a value as `mpd` 0.23 does; `nil` for an unknown one (`Unrecognized mixer type`).
    public init?(configValue: String) {
        switch configValue {
        case "none", "disabled": self = .none
        case "hardware": self = .hardware
        case "software": self = .software
        case "null": self = .null
        default: return nil
        }
    }
}

/// The settings every `audio_output` block has, checked, plus the block's parameters for its plugin.
///
/// A value type; safe from any thread.
public struct AudioOutputSettings: Sendable, Hashable {
    /// `name`.
    public var name: String
    /// `type`: the plugin.
    public var type: String
    /// `enabled` (default yes).
    public var enabled: Bool
    /// The mixer: the block's `mixer_type`, else none if `mixer_enabled` is no, else the global `mixer_type`.
    public var mixer: AudioMixerSetting
    /// `format`, parsed (`nil` until the block's own settings are read, after its plugin made the output).
    public var format: AudioFormatMask?
    /// `always_on` (default no).
    public var alwaysOn: Bool
    /// `tags` (default yes): whether the output gets the songs' tags.
    public var tags: Bool
    /// Every `key "value"` line of the block, for the plugin's own settings; the keys read here are marked read.
    public var parameters: BlockParameters
    /// Where the block starts; `nil` for the output Fermata chose itself.
    public var location: ConfigLocation?

    /// Creates settings.
    public init(
        name: String, type: String, enabled: Bool = true, mixer: AudioMixerSetting = .hardware,
        format: AudioFormatMask? = nil,
        alwaysOn: Bool = false, tags: Bool = true, parameters: BlockParameters = [:], location: ConfigLocation? = nil
    ) {
        self.name = name
        self.type = type
        self.enabled = enabled
        self.mixer = mixer
        self.format = format
        self.alwaysOn = alwaysOn
        self.tags = tags
        self.parameters = parameters
        self.location = location
    }

    /// What `mpd` calls the output it picks when no `audio_output` is configured.
    public static let detectedOutputName = "default detected output"

    /// The plugin of the output made when no `audio_output` is configured, until the program detects the one to
    /// use (the daemon tries sndio, ALSA, pulse and jack, as `mpd`).
    public static let detectedOutputType = "alsa"
}

/// Reads `audio_output` blocks the way `mpd` 0.23.12 does (`output/Init.cxx`, `output/MultipleOutputs.cxx`).
///
/// Pure functions; any thread.
public enum AudioOutputBlock {
    /// What `mpd` puts before an error of a block's own settings or its plugin's
    /// (`MultipleOutputs.cxx`'s `LoadOutput`): `Failed to configure output in line N; `.
    public static func failurePrefix(line: Int) -> String { "Failed to configure output in line \(line); " }

    /// The outputs of a configuration, in file order; with no block, the one output `mpd` would detect (see
    /// ``AudioOutputSettings/detectedOutputName``).
    ///
    /// Each block is read in `mpd`'s order (`audio_output_new`): `type`, then `make` (the plugin reads its own
    /// keys), then `name`, `format` (parsed; fully defined for the types in `fullyDefinedFormat`, `mpd`'s
    /// `FLAG_NEED_FULLY_DEFINED_AUDIO_FORMAT`), `mixer_type`/`mixer_enabled`, `filters` and `replay_gain_handler`,
    /// then `tags`, `always_on` and `enabled`, then the check of its name against the blocks before it; so the
    /// first error is the one `mpd` stops at.
    ///
    /// - Parameters:
    ///   - blocks: The `audio_output` blocks.
    ///   - knownTypes: The plugin names the program has.
    ///   - fullyDefinedFormat: The plugin names that need a fully defined `format` (shout, snapcast).
    ///   - defaultMixer: The global `mixer_type`.
    ///   - make: Makes a block's output from its plugin, before the block's own settings are read (its `name` is
    ///     empty when the block has none; `mixer_type`, `always_on` and `enabled` not read yet); not called for the
    ///     detected one.
    /// - Throws: `ConfigError` at the block (or line) with `mpd`'s message, `output devices with identical names:
    ///   x`, or what `make` throws.
    public static func outputs(
        _ blocks: [ConfigBlock], knownTypes: Set<String>, fullyDefinedFormat: Set<String> = [],
        defaultMixer: AudioMixerSetting,
        makingEach make: (AudioOutputSettings) throws(ConfigError) -> Void = { _ in }
    ) throws(ConfigError) -> [AudioOutputSettings] {
        guard !blocks.isEmpty else {
            return [
                AudioOutputSettings(
                    name: AudioOutputSettings.detectedOutputName, type: AudioOutputSettings.detectedOutputType,
                    mixer: defaultMixer)
            ]
        }
        var outputs: [AudioOutputSettings] = []
        var names: Set<String> = []
        for block in blocks {
            var output = try Self.pluginSettings(block, knownTypes: knownTypes, defaultMixer: defaultMixer)
            try make(output)
            try Self.readOwnSettings(
                of: block, into: &output, fullyDefinedFormat: fullyDefinedFormat.contains(output.type))
            try Self.readControlSettings(of: block, into: &output)
            guard names.insert(output.name).inserted else {
                throw ConfigError(
                    location: block.location, message: "output devices with identical names: \(output.name)")
            }
            outputs.append(output)
        }
        return outputs
    }

    /// What `mpd` reads before the plugin makes the output: `type`. The keys read are marked read in
    /// ``AudioOutputSettings/parameters``.
    private static func pluginSettings(
        _ block: ConfigBlock, knownTypes: Set<String>, defaultMixer: AudioMixerSetting
    ) throws(ConfigError) -> AudioOutputSettings {
        let parameters = BlockParameters(
            block.params.map { BlockParameters.Line(name: $0.name, value: $0.value, line: $0.line) })
        guard let type = parameters["type"] else { throw Self.failure(block, "Missing \"type\" configuration") }
        guard knownTypes.contains(type) else { throw Self.failure(block, "No such audio output plugin: \(type)") }
        return AudioOutputSettings(
            name: parameters["name"] ?? "", type: type, mixer: defaultMixer,
            parameters: parameters, location: block.location)
    }

    /// What `mpd` reads once the plugin made the output (`FilteredAudioOutput`'s `Configure` and `Setup`): `name`,
    /// `format` (parsed, and fully defined when `fullyDefinedFormat`), `mixer_type`/`mixer_enabled`, `filters`,
    /// `replay_gain_handler` (`software`, `mixer` or `none`). Errors are `Failed to configure output in line N; …`
    /// at the block.
    private static func readOwnSettings(
        of block: ConfigBlock, into output: inout AudioOutputSettings, fullyDefinedFormat: Bool
    ) throws(ConfigError) {
        let parameters = output.parameters
        guard let name = parameters["name"] else { throw Self.failure(block, "Missing \"name\" configuration") }
        output.name = name
        var mask: AudioFormatMask?
        if let text = parameters["format"] {
            do throws(AudioFormatParseError) {
                mask = try AudioFormatMask.parse(text, mask: true)
            } catch {
                throw Self.failure(block, error.message)
            }
        }
        output.format = mask
        if fullyDefinedFormat, mask?.isFullyDefined != true {
            throw Self.failure(block, "Need full audio format specification")
        }
        if let value = parameters["mixer_type"] {
            guard let setting = AudioMixerSetting(configValue: value) else {
                throw Self.failure(block, "Unrecognized mixer type")
            }
            output.mixer = setting
        } else {
            do {
                if try parameters.bool("mixer_enabled") == false { output.mixer = .none }
            } catch {
                throw Self.failure(block, error.message)
            }
        }
        _ = parameters["filters"]
        // Fermata has no per-output ReplayGain handler; `mpd` refuses a value it does not know.
        let handler = parameters["replay_gain_handler"] ?? "software"
        guard ["software", "mixer", "none"].contains(handler) else {
            throw Self.failure(block, "Invalid \"replay_gain_handler\" value")
        }
    }

    private static func failure(_ block: ConfigBlock, _ message: String) -> ConfigError {
        ConfigError(location: block.location, message: Self.failurePrefix(line: block.line) + message)
    }

    /// What `mpd` reads once the output is made (`AudioOutputControl`): `tags`, `always_on`, `enabled`.
    private static func readControlSettings(
        of block: ConfigBlock, into output: inout AudioOutputSettings
    ) throws(ConfigError) {
        let parameters = output.parameters
        func bool(_ key: String, default defaultValue: Bool) throws(ConfigError) -> Bool {
            do {
                return try parameters.bool(key) ?? defaultValue
            } catch {
                let line = parameters.line(key)?.line ?? block.line
                throw ConfigError(location: ConfigLocation(file: block.file, line: line), message: error.message)
            }
        }
        output.tags = try bool("tags", default: true)
        output.alwaysOn = try bool("always_on", default: false)
        output.enabled = try bool("enabled", default: true)
    }
}
