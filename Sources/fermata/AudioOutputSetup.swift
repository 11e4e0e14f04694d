// SPDX-License-Identifier: GPL-3.0-or-later

import ALSA
import Configuration
import Model
import Playback
import Sndio
import Synchronization

/// Builds the outputs and mixers of `audio_output` blocks from the plugins the program has.
///
/// The checks `mpd` makes of every block live in `Configuration` (``AudioOutputBlock``, tested there); this file
/// only turns its values into Playback's ``OutputConfiguration`` and asks each plugin for its output and mixer.
/// Runs at start-up on the main thread.
enum AudioOutputSetup {
    /// One configured output: its settings, its device, and its mixer if it has one.
    typealias Output = (configuration: OutputConfiguration, output: any AudioOutput, mixer: (any Mixer)?)

    /// The outputs for `settings`, in configuration order; with no `audio_output` block, the one `mpd` detects (named
    /// `default detected output`): the first plugin of `plugins` whose default device opens, said so in the log.
    ///
    /// - Parameters:
    ///   - plugins: Every output plugin, such as ``ALSAOutputPlugin`` and the player's null, fifo and pipe.
    ///   - makeSoftwareMixer: Makes a software mixer (`mixer_type "software"`).
    ///   - onMixerChange: Given to hardware mixers: called from their monitor threads when another program changes
    ///     the volume.
    /// - Returns: The outputs, and the lines of the blocks and the filter templates used that nothing read (for
    ///   `BlockCheck`).
    /// - Throws: `mpd`'s message for a bad block, at its file and line.
    static func outputs(
        settings: Settings, plugins: [any OutputPlugin], logger: Logger, makeSoftwareMixer: () -> any Mixer,
        onMixerChange: @escaping @Sendable () -> Void
    ) throws(Daemon.StartupError) -> (outputs: [Output], unread: [ConfigParameter]) {
        // As mpd, block by block: its settings, its output from the plugin, then always_on and enabled.
        var made: [any AudioOutput] = []
        var list: [AudioOutputSettings]
        do {
            list = try AudioOutputBlock.outputs(
                settings.audioOutputs, knownTypes: Set(plugins.map(\.name)),
                fullyDefinedFormat: Set(plugins.filter(\.needsFullyDefinedFormat).map(\.name)),
                defaultMixer: settings.mixerType
            ) { (entry) throws(ConfigError) in
                // The type was checked against this list.
                guard let plugin = plugins.first(where: { $0.name == entry.type }) else { return }
                do throws(OutputError) {
                    made.append(try plugin.makeOutput(Self.configuration(entry)))
                } catch {
                    // As mpd: `Failed to configure output in line N; …`, at the block.
                    let location = entry.location ?? ConfigLocation(file: "", line: 0)
                    throw ConfigError(
                        location: location, message: AudioOutputBlock.failurePrefix(line: location.line) + error.message
                    )
                }
            }
        } catch {
            throw Daemon.StartupError(description: "\(error)")
        }
        if settings.audioOutputs.isEmpty { list[0].type = try Self.detect(plugins, logger: logger) }
        var outputs: [Output] = []
        let templates = settings.filters.map { block in
            Dictionary(block.params.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        }
        var usedTemplates: Set<Int> = []
        for (index, entry) in list.enumerated() {
            // The type was checked against this list.
            guard let plugin = plugins.first(where: { $0.name == entry.type }) else { continue }
            var configuration = Self.configuration(entry)
            let (chain, error, used) = FilterRegistry.chain(
                normalization: settings.volumeNormalization, filters: entry.parameters["filters"] ?? "",
                templates: templates)
            if let error {
                // As mpd: logged, and the output plays through the filters set up before the failing one.
                logger.error("Failed to initialize filter chain for '\(entry.name)': \(error.message)")
            }
            configuration.filters = chain
            usedTemplates.formUnion(used)
            let output: any AudioOutput
            if index < made.count {
                output = made[index]
            } else {
                // The detected output (no block).
                do {
                    output = try plugin.makeOutput(configuration)
                } catch {
                    throw Daemon.StartupError(description: error.message)
                }
            }
            let mixer = Self.mixer(
                for: entry, configuration: configuration, plugin: plugin, logger: logger,
                makeSoftwareMixer: makeSoftwareMixer, onMixerChange: onMixerChange)
            if mixer == nil, entry.parameters["replay_gain_handler"] == "mixer" {
                // As mpd, which then applies ReplayGain in software: logged, not fatal.
                logger.labelled("output").error("No such mixer for output '\(entry.name)'")
            }
            outputs.append((configuration, output, mixer))
        }
        // The lines of each block that neither the block's own settings, its plugin nor its mixer read, and those
        // of the filter templates used that their plugin does not read: mpd warns about them once started.
        var unread: [ConfigParameter] = []
        for entry in list {
            guard let file = entry.location?.file else { continue }
            unread += entry.parameters.unread.map {
                ConfigParameter(name: $0.name, value: $0.value, file: file, line: $0.line)
            }
        }
        for index in usedTemplates.sorted() {
            let block = settings.filters[index]
            let keys = FilterRegistry.readKeys(of: block["plugin"])
            unread += block.params.filter { !keys.contains($0.name) }
        }
        return (outputs, unread)
    }

    /// The plugin of the output `mpd` detects when no `audio_output` is configured: the first of `plugins` (in
    /// `mpd`'s order: sndio, alsa, oss, pulse, jack of those with a default-device test) whose default device opens
    /// (jack's always does, as `mpd`'s test says), with `mpd`'s log lines.
    ///
    /// - Throws: `Unable to detect an audio device` when none does (not with the jack plugin there).
    private static func detect(_ plugins: [any OutputPlugin], logger: Logger) throws(Daemon.StartupError) -> String {
        let log = logger.labelled("output")
        log.warning("No 'audio_output' defined in config file")
        log.info("Attempt to detect audio output device")
        for plugin in plugins {
            guard let test = plugin.testDefaultDevice() else { continue }
            let name = plugin.name
            log.info("Attempting to detect a \(name) audio device")
            switch test {
            case .opens:
                log.notice("Successfully detected a \(name) audio device")
                return name
            case .fails(let errors):
                for error in errors { logger.labelled("\(name)_output").error(error) }
            }
        }
        throw Daemon.StartupError(description: "Unable to detect an audio device")
    }

    /// Playback's view of one block.
    ///
    /// `mixer_type "null"` has no ``MixerType``: it becomes `.none` here, and ``mixer(for:configuration:plugin:logger:makeSoftwareMixer:onMixerChange:)``
    /// gives it a mixer that only remembers the volume.
    static func configuration(_ entry: AudioOutputSettings) -> OutputConfiguration {
        let mixerType: MixerType =
            switch entry.mixer {
            case .hardware: .hardware
            case .software: .software
            case .null, .none: .none
            }
        var configuration = OutputConfiguration(
            name: entry.name, type: entry.type, enabled: entry.enabled, mixerType: mixerType, format: entry.format,
            alwaysOn: entry.alwaysOn, tags: entry.tags, parameters: entry.parameters)
        configuration.line = entry.location?.line ?? 0
        return configuration
    }

    /// The output's mixer: the plugin's for `hardware` (none if it has none or cannot make one, which is logged as
    /// `mpd` does), a software mixer, a volume store for `null`, or none.
    private static func mixer(
        for entry: AudioOutputSettings, configuration: OutputConfiguration, plugin: any OutputPlugin, logger: Logger,
        makeSoftwareMixer: () -> any Mixer, onMixerChange: @escaping @Sendable () -> Void
    ) -> (any Mixer)? {
        switch entry.mixer {
        case .none: return nil
        case .null: return StoredVolumeMixer()
        case .software: return makeSoftwareMixer()
        case .hardware:
            do {
                return try plugin.makeHardwareMixer(configuration, onChange: onMixerChange)
            } catch {
                logger.error("Failed to initialize hardware mixer", ["output": entry.name, "error": error.message])
                return nil
            }
        }
    }
}

/// `mixer_type "null"`: remembers the volume set and reports it, changing nothing (for volume handled elsewhere).
///
/// Any thread (a mutex guards the value).
final class StoredVolumeMixer: Mixer {
    private let value = Mutex(100)

    func open() throws(OutputError) {}
    func close() {}
    func volume() throws(OutputError) -> Int { self.value.withLock { $0 } }
    func setVolume(_ volume: Int) throws(OutputError) { self.value.withLock { $0 = volume } }
}
