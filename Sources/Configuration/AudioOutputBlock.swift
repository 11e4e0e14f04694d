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
    /// `format`, unparsed.
    public var format: String?
    /// `always_on` (default no).
    public var alwaysOn: Bool
    /// Every `key "value"` line of the block, for the plugin's own settings; the keys read here are marked read.
    public var parameters: BlockParameters
    /// Where the block starts; `nil` for the output Fermata chose itself.
    public var location: ConfigLocation?

    /// Creates settings.
    public init(
        name: String, type: String, enabled: Bool = true, mixer: AudioMixerSetting = .hardware, format: String? = nil,
        alwaysOn: Bool = false, parameters: BlockParameters = [:], location: ConfigLocation? = nil
    ) {
        self.name = name
        self.type = type
        self.enabled = enabled
        self.mixer = mixer
        self.format = format
        self.alwaysOn = alwaysOn
        self.parameters = parameters
        self.location = location
    }

    /// What `mpd` calls the output it picks when no `audio_output` is configured.
    public static let detectedOutputName = "default detected output"

    /// The plugin used when no `audio_output` is configured: ALSA with its `default` device.
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
    /// - Parameters:
    ///   - blocks: The `audio_output` blocks.
    ///   - knownTypes: The plugin names the program has.
    ///   - defaultMixer: The global `mixer_type`.
    /// - Throws: `ConfigError` at the block (or line) with `mpd`'s message: `Missing "type" configuration`,
    ///   `No such audio output plugin: x`, `Missing "name" configuration`, `Unrecognized mixer type`,
    ///   `output devices with identical names: x`, or a bad yes/no value.
    public static func outputs(
        _ blocks: [ConfigBlock], knownTypes: Set<String>, defaultMixer: AudioMixerSetting
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
            let output = try Self.output(block, knownTypes: knownTypes, defaultMixer: defaultMixer)
            guard names.insert(output.name).inserted else {
                throw ConfigError(
                    location: block.location, message: "output devices with identical names: \(output.name)")
            }
            outputs.append(output)
        }
        return outputs
    }

    /// One block's settings, checked in `mpd`'s order: `type`, `name`, `mixer_type`/`mixer_enabled`, `format`
    /// (read, parsed by the player), `filters`, `replay_gain_handler`, then `tags`, `always_on`, `enabled`.
    ///
    /// Errors of the first ones are `mpd`'s `Failed to configure output in line N; …` at the block; a bad
    /// `tags`, `always_on` or `enabled` is not wrapped (`mpd` reads them after the output is made), and is at its
    /// own line. The keys read are marked read in ``AudioOutputSettings/parameters``.
    public static func output(
        _ block: ConfigBlock, knownTypes: Set<String>, defaultMixer: AudioMixerSetting
    ) throws(ConfigError) -> AudioOutputSettings {
        let parameters = BlockParameters(
            block.params.map { BlockParameters.Line(name: $0.name, value: $0.value, line: $0.line) })
        func failure(_ message: String) -> ConfigError {
            ConfigError(location: block.location, message: Self.failurePrefix(line: block.line) + message)
        }
        guard let type = parameters["type"] else { throw failure("Missing \"type\" configuration") }
        guard knownTypes.contains(type) else { throw failure("No such audio output plugin: \(type)") }
        guard let name = parameters["name"] else { throw failure("Missing \"name\" configuration") }
        var mixer = defaultMixer
        if let value = parameters["mixer_type"] {
            guard let setting = AudioMixerSetting(configValue: value) else { throw failure("Unrecognized mixer type") }
            mixer = setting
        } else {
            do {
                if try parameters.bool("mixer_enabled") == false { mixer = .none }
            } catch {
                throw failure(error.message)
            }
        }
        let format = parameters["format"]
        // Read by the output as mpd reads them; Fermata has no per-output ReplayGain handler and sends tags to every
        // output.
        for key in ["filters", "replay_gain_handler"] { _ = parameters[key] }
        func bool(_ key: String, default defaultValue: Bool) throws(ConfigError) -> Bool {
            do {
                return try parameters.bool(key) ?? defaultValue
            } catch {
                let line = parameters.line(key)?.line ?? block.line
                throw ConfigError(location: ConfigLocation(file: block.file, line: line), message: error.message)
            }
        }
        _ = try bool("tags", default: true)
        let alwaysOn = try bool("always_on", default: false)
        let enabled = try bool("enabled", default: true)
        return AudioOutputSettings(
            name: name, type: type, enabled: enabled, mixer: mixer, format: format, alwaysOn: alwaysOn,
            parameters: parameters, location: block.location)
    }
}
