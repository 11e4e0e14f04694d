// SPDX-License-Identifier: GPL-3.0-or-later

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
    /// Every `key "value"` line of the block, for the plugin's own settings.
    public var parameters: [String: String]
    /// The line of each of `parameters` (for `mpd`'s `Error in setting "key" on line N`).
    public var parameterLines: [String: Int] = [:]
    /// Where the block starts; `nil` for the output Fermata chose itself.
    public var location: ConfigLocation?

    /// Creates settings.
    public init(
        name: String, type: String, enabled: Bool = true, mixer: AudioMixerSetting = .hardware, format: String? = nil,
        alwaysOn: Bool = false, parameters: [String: String] = [:], location: ConfigLocation? = nil
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

    /// One block's settings, checked in `mpd`'s order: `type`, `name`, `mixer_type`/`mixer_enabled`, `always_on`,
    /// `enabled`.
    public static func output(
        _ block: ConfigBlock, knownTypes: Set<String>, defaultMixer: AudioMixerSetting
    ) throws(ConfigError) -> AudioOutputSettings {
        guard let type = block["type"] else {
            throw ConfigError(location: block.location, message: "Missing \"type\" configuration")
        }
        guard knownTypes.contains(type) else {
            throw ConfigError(location: block.location, message: "No such audio output plugin: \(type)")
        }
        guard let name = block["name"] else {
            throw ConfigError(location: block.location, message: "Missing \"name\" configuration")
        }
        var mixer = defaultMixer
        if let parameter = block.parameter(named: "mixer_type") {
            guard let setting = AudioMixerSetting(configValue: parameter.value) else {
                throw ConfigError(location: block.location, message: "Unrecognized mixer type")
            }
            mixer = setting
        } else if let parameter = block.parameter(named: "mixer_enabled"), try !ConfigValue.bool(parameter) {
            mixer = .none
        }
        let alwaysOn = try block.parameter(named: "always_on").map(ConfigValue.bool) ?? false
        let enabled = try block.parameter(named: "enabled").map(ConfigValue.bool) ?? true
        var parameters: [String: String] = [:]
        var lines: [String: Int] = [:]
        for parameter in block.params {
            parameters[parameter.name] = parameter.value
            lines[parameter.name] = parameter.line
        }
        var settings = AudioOutputSettings(
            name: name, type: type, enabled: enabled, mixer: mixer, format: block["format"], alwaysOn: alwaysOn,
            parameters: parameters, location: block.location)
        settings.parameterLines = lines
        return settings
    }
}
