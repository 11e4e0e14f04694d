// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

@testable import Configuration

/// `audio_output` blocks read as `mpd` 0.23.12 reads them (messages checked against `mpd --no-daemon` with the same
/// blocks).
struct AudioOutputBlockTests {
    private static let path = "/etc/fermata/mpd.conf"
    private static let known: Set<String> = ["alsa", "null", "fifo", "pipe"]

    private func outputs(_ text: String, defaultMixer: AudioMixerSetting = .hardware) throws -> [AudioOutputSettings] {
        let file = try ConfigFile(parsing: text, path: Self.path)
        return try AudioOutputBlock.outputs(
            file.blocks(named: "audio_output"), knownTypes: Self.known, defaultMixer: defaultMixer)
    }

    private func failure(_ text: String) throws -> ConfigError? {
        do {
            _ = try self.outputs(text)
            return nil
        } catch let error as ConfigError {
            return error
        }
    }

    @Test func readsEveryCommonSettingAndKeepsThePluginsOwn() throws {
        let outputs = try self.outputs(
            """
            audio_output {
                type "alsa"
                name "Speakers"
                device "hw:0,0"
                mixer_control "Master"
                format "44100:16:2"
                always_on "yes"
                enabled "no"
                tags "no"
            }
            audio_output {
                type "null"
                name "Silence"
            }
            """)
        #expect(outputs.count == 2)
        let lines = [
            ("type", "alsa"), ("name", "Speakers"), ("device", "hw:0,0"), ("mixer_control", "Master"),
            ("format", "44100:16:2"), ("always_on", "yes"), ("enabled", "no"), ("tags", "no"),
        ].enumerated().map { BlockParameters.Line(name: $1.0, value: $1.1, line: $0 + 2) }
        #expect(
            outputs[0]
                == AudioOutputSettings(
                    name: "Speakers", type: "alsa", enabled: false, mixer: .hardware,
                    format: try AudioFormatMask.parse("44100:16:2", mask: true),
                    alwaysOn: true, tags: false, parameters: BlockParameters(lines),
                    location: ConfigLocation(file: Self.path, line: 1)))
        // What the plugin and its mixer are left to read (mpd warns about what they do not).
        #expect(outputs[0].parameters.unread.map(\.name) == ["device", "mixer_control"])
        #expect(outputs[1].parameters.unread.isEmpty)
        #expect(outputs[1].name == "Silence")
        #expect(outputs[1].enabled)
        #expect(!outputs[1].alwaysOn)
        #expect(outputs[1].tags)
        #expect(outputs[1].format == nil)
        #expect(outputs[1].location == ConfigLocation(file: Self.path, line: 11))
    }

    @Test func theMixerComesFromTheBlockThenMixerEnabledThenTheGlobalSetting() throws {
        let text = """
            audio_output {
                type "null"
                name "a"
                mixer_type "software"
            }
            audio_output {
                type "null"
                name "b"
                mixer_enabled "no"
            }
            audio_output {
                type "null"
                name "c"
            }
            audio_output {
                type "null"
                name "d"
                mixer_type "disabled"
            }
            audio_output {
                type "null"
                name "e"
                mixer_type "null"
                mixer_enabled "no"
            }
            """
        #expect(try self.outputs(text).map(\.mixer) == [.software, .none, .hardware, .none, .null])
        #expect(
            try self.outputs(text, defaultMixer: .software).map(\.mixer) == [.software, .none, .software, .none, .null])
    }

    @Test func noBlockMeansTheDetectedALSADefaultOutput() throws {
        let outputs = try self.outputs("port \"6600\"", defaultMixer: .software)
        #expect(
            outputs == [
                AudioOutputSettings(name: "default detected output", type: "alsa", mixer: .software, location: nil)
            ])
    }

    @Test(arguments: [
        ("audio_output {\n name \"x\"\n}", 1, "Failed to configure output in line 1; Missing \"type\" configuration"),
        (
            "audio_output {\n type \"bogus\"\n name \"x\"\n}", 1,
            "Failed to configure output in line 1; No such audio output plugin: bogus"
        ),
        (
            "audio_output {\n type \"null\"\n}", 1,
            "Failed to configure output in line 1; Missing \"name\" configuration"
        ),
        // The type is checked before the name, as in mpd.
        (
            "audio_output {\n type \"oss\"\n}", 1,
            "Failed to configure output in line 1; No such audio output plugin: oss"
        ),
        (
            "audio_output {\n type \"null\"\n name \"x\"\n mixer_type \"foo\"\n}", 1,
            "Failed to configure output in line 1; Unrecognized mixer type"
        ),
        (
            "\naudio_output {\n type \"null\"\n name \"x\"\n mixer_enabled \"abc\"\n}", 2,
            "Failed to configure output in line 2; Error in setting \"mixer_enabled\" on line 5; "
                + "Not a valid boolean (\"yes\" or \"no\"): \"abc\""
        ),
        // The format is parsed before the mixer type is read; replay_gain_handler after it, as mpd's Setup.
        (
            "audio_output {\n type \"null\"\n name \"x\"\n mixer_type \"foo\"\n format \"x\"\n}", 1,
            "Failed to configure output in line 1; Failed to parse the sample rate"
        ),
        (
            "audio_output {\n type \"null\"\n name \"x\"\n replay_gain_handler \"foo\"\n}", 1,
            "Failed to configure output in line 1; Invalid \"replay_gain_handler\" value"
        ),
        (
            "audio_output {\n type \"null\"\n name \"x\"\n replay_gain_handler \"foo\"\n mixer_type \"foo\"\n}", 1,
            "Failed to configure output in line 1; Unrecognized mixer type"
        ),
        // mpd reads these once the output is made, outside its "Failed to configure output".
        (
            "audio_output {\n type \"null\"\n name \"x\"\n enabled \"2\"\n}", 4,
            "Error in setting \"enabled\" on line 4; Not a valid boolean (\"yes\" or \"no\"): \"2\""
        ),
        (
            "audio_output {\n type \"null\"\n name \"x\"\n always_on \"on\"\n}", 4,
            "Error in setting \"always_on\" on line 4; Not a valid boolean (\"yes\" or \"no\"): \"on\""
        ),
        (
            "audio_output {\n type \"null\"\n name \"x\"\n tags \"\"\n}", 4,
            "Error in setting \"tags\" on line 4; Not a valid boolean (\"yes\" or \"no\"): \"\""
        ),
        (
            "audio_output {\n type \"null\"\n name \"x\"\n}\naudio_output {\n type \"fifo\"\n name \"x\"\n}", 5,
            "output devices with identical names: x"
        ),
    ])
    func badBlocksGiveMPDsMessages(text: String, line: Int, message: String) throws {
        let error = try #require(try self.failure(text))
        #expect(error.message == message)
        #expect(error.location == ConfigLocation(file: Self.path, line: line))
    }

    /// As mpd's `audio_output_new`: the plugin reads its keys first, then the block's name, its format (fully
    /// defined for a plugin that needs it), then the mixer type.
    @Test func thePluginComesFirstThenNameFormatAndMixer() throws {
        func failure(_ body: String, refuse: Bool = false) throws -> String? {
            let file = try ConfigFile(parsing: "audio_output {\n type \"fifo\"\n\(body)}\n", path: Self.path)
            do {
                _ = try AudioOutputBlock.outputs(
                    file.blocks(named: "audio_output"), knownTypes: Self.known, fullyDefinedFormat: ["fifo"],
                    defaultMixer: .hardware
                ) { (_) throws(ConfigError) in
                    if refuse { throw ConfigError(file: Self.path, line: 1, message: "the plugin refused") }
                }
                return nil
            } catch {
                return error.message
            }
        }
        let prefix = "Failed to configure output in line 1; "
        #expect(try failure("", refuse: true) == "the plugin refused")
        #expect(try failure(" mixer_type \"foo\"\n") == prefix + "Missing \"name\" configuration")
        #expect(try failure(" name \"x\"\n mixer_type \"foo\"\n") == prefix + "Need full audio format specification")
        #expect(try failure(" name \"x\"\n format \"44100:*:2\"\n") == prefix + "Need full audio format specification")
        #expect(
            try failure(" name \"x\"\n format \"44100:16:2\"\n mixer_type \"foo\"\n") == prefix
                + "Unrecognized mixer type")
        #expect(try failure(" name \"x\"\n format \"48000:24:1\"\n") == nil)
    }

    @Test func eachBlockIsMadeBeforeItsEnabledAndTheNextBlockAreRead() throws {
        let file = try ConfigFile(
            parsing: "audio_output {\n type \"null\"\n name \"a\"\n enabled \"x\"\n}\naudio_output {\n name \"b\"\n}",
            path: Self.path)
        var made: [String] = []
        let failure = ConfigError(file: Self.path, line: 1, message: "the plugin refused")
        #expect(throws: failure) {
            _ = try AudioOutputBlock.outputs(
                file.blocks(named: "audio_output"), knownTypes: Self.known, defaultMixer: .hardware
            ) { (entry) throws(ConfigError) in
                made.append(entry.name)
                // Not read yet, as in mpd.
                #expect(entry.enabled && entry.parameters.unread.map(\.name) == ["enabled"])
                throw failure
            }
        }
        #expect(made == ["a"])
    }

    @Test func theGlobalMixerTypeAndOutputFormatAreRead() throws {
        let settings = try Settings(
            file: ConfigFile(parsing: "mixer_type \"software\"\naudio_output_format \"48000:24:2\"", path: Self.path),
            environment: ["HOME": "/home/listener"])
        #expect(settings.mixerType == .software)
        #expect(settings.audioOutputFormat == (try AudioFormatMask.parse("48000:24:2", mask: true)))
        #expect(Settings().mixerType == .hardware)
        #expect(Settings().audioOutputFormat == nil)

        let file = try ConfigFile(parsing: "port \"6600\"\nmixer_type \"foo\"", path: Self.path)
        #expect(throws: ConfigError(file: Self.path, line: 2, message: "Unrecognized mixer type")) {
            _ = try Settings(file: file, environment: [:])
        }
    }
}
