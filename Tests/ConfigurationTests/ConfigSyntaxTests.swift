// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import Configuration

struct ConfigSyntaxTests {
    private static let path = "/etc/fermata/mpd.conf"

    private func parse(_ text: String) throws(ConfigError) -> ConfigFile {
        try ConfigFile(parsing: text, path: Self.path)
    }

    private func failure(_ text: String) -> ConfigError? {
        do {
            _ = try self.parse(text)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Accepted syntax

    @Test(arguments: [
        ("music_directory \"/m\"", "/m"),
        ("music_directory \"\"", ""),
        ("music_directory \"a\\\"b\"", "a\"b"),
        ("music_directory \"a\\\\b\"", "a\\b"),
        ("music_directory \"\\x\\y\"", "xy"),
        ("music_directory \"a # not a comment\"", "a # not a comment"),
        ("music_directory \"a{b}c\"", "a{b}c"),
        ("music_directory \"/m\" # comment", "/m"),
        ("music_directory \"/m\"\t#comment", "/m"),
        ("   music_directory \"/m\"   ", "/m"),
        ("\tmusic_directory\t\t\"/m\"\t", "/m"),
        ("music_directory \"/m\"\r", "/m"),
        ("\u{0C}music_directory \"/m\"\u{0B}", "/m"),
        ("music_directory \"/m\"\u{00}junk", "/m"),
        ("music_directory \"/Musique/été 東京 🎵\"", "/Musique/été 東京 🎵"),
    ])
    func readsAParameter(line: String, value: String) throws {
        let file = try self.parse(line + "\n")
        #expect(file.parameters == [ConfigParameter(name: "music_directory", value: value, file: Self.path, line: 1)])
        #expect(file.blocks.isEmpty)
    }

    @Test func keepsOrderFileAndLineAndSkipsBlankAndCommentLines() throws {
        let file = try self.parse(
            """
            # A comment at the top.

               # An indented comment.
            \t
            port "6600"
            bind_to_address "a"
            bind_to_address "b"
            port "6601"
            """)
        #expect(
            file.parameters == [
                ConfigParameter(name: "port", value: "6600", file: Self.path, line: 5),
                ConfigParameter(name: "bind_to_address", value: "a", file: Self.path, line: 6),
                ConfigParameter(name: "bind_to_address", value: "b", file: Self.path, line: 7),
                ConfigParameter(name: "port", value: "6601", file: Self.path, line: 8),
            ])
        #expect(file.parameter(named: "port")?.value == "6601")
        #expect(file.parameters(named: "bind_to_address").map(\.value) == ["a", "b"])
        #expect(file.parameter(named: "user") == nil)
    }

    @Test func acceptsAnEmptyFile() throws {
        #expect(try self.parse("") == ConfigFile())
        #expect(try self.parse("\n\n# only comments\n") == ConfigFile())
    }

    @Test func readsBlocksWithTheirKeyLines() throws {
        let file = try self.parse(
            """
            audio_output {
                type "alsa"   # trailing comment
                # a comment inside

                name "My \\"ALSA\\" device"
                include "not a directive here"
            }
            audio_output { # comment after the brace
            \ttype\t"null"
            } # comment after the brace
            decoder  {\u{20}\u{20}
              plugin "wildmidi"
            }#comment
            input_cache {
            }
            """)
        #expect(file.parameters.isEmpty)
        #expect(file.blocks.map(\.name) == ["audio_output", "audio_output", "decoder", "input_cache"])
        #expect(file.blocks.map(\.line) == [1, 8, 11, 14])
        let first = file.blocks[0]
        #expect(
            first.params == [
                ConfigParameter(name: "type", value: "alsa", file: Self.path, line: 2),
                ConfigParameter(name: "name", value: "My \"ALSA\" device", file: Self.path, line: 5),
                ConfigParameter(name: "include", value: "not a directive here", file: Self.path, line: 6),
            ])
        #expect(first["type"] == "alsa")
        #expect(first["missing"] == nil)
        #expect(first.parameter(named: "name")?.line == 5)
        #expect(file.blocks[1]["type"] == "null")
        #expect(file.blocks[3].params.isEmpty)
        #expect(file.blocks(named: "audio_output").count == 2)
        #expect(file.blocks(named: "resampler").isEmpty)
    }

    @Test func allowsRepeatableBlocksAndRepeatedParameters() throws {
        let file = try self.parse(
            """
            decoder {
            plugin "a"
            }
            decoder {
            plugin "b"
            }
            filter {
            }
            filter {
            }
            playlist_plugin {
            }
            playlist_plugin {
            }
            input {
            }
            input {
            }
            neighbors {
            }
            neighbors {
            }
            music_directory "/a"
            music_directory "/b"
            """)
        #expect(file.blocks.count == 10)
        #expect(file.parameters(named: "music_directory").count == 2)
        #expect(file.parameter(named: "music_directory")?.line == 24)
    }

    @Test func readsCRLFLinesAndAFileWithoutFinalNewline() throws {
        let file = try self.parse("port \"1\"\r\naudio_output {\r\n type \"null\"\r\n}\r\nuser \"mpd\"")
        #expect(file.parameters.map(\.value) == ["1", "mpd"])
        #expect(file.parameters.map(\.line) == [1, 5])
        #expect(file.blocks.first?["type"] == "null")
    }

    // MARK: - Errors

    /// Each bad line, and `mpd` 0.23.12's message for it (probed).
    @Test(arguments: [
        ("music_directory /tmp", "'\"' expected"),
        ("music_directory \"/tmp", "Missing closing '\"'"),
        ("music_directory \"/tmp\\\"", "Missing closing '\"'"),
        ("music_directory \"/tmp\\", "Missing closing '\"'"),
        ("music_directory \"/tmp\" junk", "Unknown tokens after value"),
        ("music_directory \"/tmp\" \"/other\"", "Unknown tokens after value"),
        ("music_directory \"/tmp\"#comment", "Space expected after closing '\"'"),
        ("music_directory \"/tmp\"x", "Space expected after closing '\"'"),
        ("music_directory", "Value missing"),
        ("music_directory   \t", "Value missing"),
        ("music_directory # comment", "'\"' expected"),
        ("music_directory {", "'\"' expected"),
        ("music-directory \"x\"", "Invalid word character"),
        ("music_directory\"x\"", "Invalid word character"),
        ("bogus_option \"x\"", "unrecognized parameter: bogus_option"),
        ("bogus {", "unrecognized parameter: bogus"),
        ("bogus", "unrecognized parameter: bogus"),
        ("bogus \"unterminated", "unrecognized parameter: bogus"),
        ("Port \"6600\"", "unrecognized parameter: Port"),
        ("INCLUDE \"x\"", "unrecognized parameter: INCLUDE"),
        ("mixramp_analyzer \"yes\"", "unrecognized parameter: mixramp_analyzer"),
        ("}", "Letter expected"),
        ("{", "Letter expected"),
        ("2port \"1\"", "Letter expected"),
        ("_port \"1\"", "Letter expected"),
        ("\"port\" \"1\"", "Letter expected"),
        ("été \"1\"", "Letter expected"),
        ("audio_output", "'{' expected"),
        ("audio_output \"x\"", "'{' expected"),
        ("audio_output{", "Invalid word character"),
        ("audio_output {x", "Unknown tokens after '{'"),
        ("audio_output { type \"null\"", "Unknown tokens after '{'"),
        ("include", "Value missing"),
        ("include x.conf", "'\"' expected"),
        ("include {", "'\"' expected"),
        ("include \"x.conf\" junk", "Unknown tokens after value"),
        ("include_optional \"x.conf", "Missing closing '\"'"),
    ])
    func rejectsABadTopLevelLine(line: String, message: String) throws {
        let error = try #require(self.failure("port \"6600\"\n\n" + line + "\n"))
        #expect(error.message == message)
        #expect(error.file == Self.path)
        #expect(error.line == 3)
        #expect(error.includedFrom.isEmpty)
        #expect(error.description == "\(Self.path):3: \(message)")
    }

    @Test(arguments: [
        ("foo {", "'\"' expected"),
        ("type \"a\" \"b\"", "Unknown tokens after value"),
        ("type \"a\"#b", "Space expected after closing '\"'"),
        ("bad-key \"x\"", "Invalid word character"),
        ("key", "Value missing"),
        ("key unquoted", "'\"' expected"),
        ("\"key\" \"v\"", "Letter expected"),
        ("{", "Letter expected"),
        ("} x", "Unknown tokens after '}'"),
        ("}}", "Unknown tokens after '}'"),
        ("}junk", "Unknown tokens after '}'"),
        ("name \"b\"", "\"name\" is duplicate, first defined on line 3"),
    ])
    func rejectsABadLineInsideABlock(line: String, message: String) throws {
        let text = "port \"6600\"\naudio_output {\n    name \"a\"\n    \(line)\n}\n"
        let error = try #require(self.failure(text))
        #expect(error.message == message)
        #expect(error.location == ConfigLocation(file: Self.path, line: 4))
        #expect(error.description == "\(Self.path):4: \(message)")
    }

    @Test(arguments: [
        ("audio_output {\ntype \"null\"\nname \"a\"\n", 3),
        ("audio_output {\ntype \"null\"\nname \"a\"\n\n\n# x\n", 6),
        ("audio_output {\ntype \"null\"", 2),
        ("audio_output {", 1),
    ])
    func rejectsAnUnterminatedBlockAtTheLastLine(text: String, line: Int) throws {
        let error = try #require(self.failure("port \"1\"\n" + text))
        #expect(error.message == "Expected '}' before end-of-file")
        #expect(error.line == line + 1)
    }

    @Test(arguments: ["input_cache", "resampler", "database"])
    func rejectsARepeatedSingleBlock(name: String) throws {
        let text = "\(name) {\n}\nport \"1\"\n\(name) {\n}\n"
        let error = try #require(self.failure(text))
        #expect(error.line == 4)
        #expect(error.message == "config parameter \"\(name)\" is first defined on line 1 and redefined on line 4")
    }

    @Test func rejectsADuplicateKeyEvenWhenTheValuesMatch() throws {
        let error = try #require(self.failure("decoder {\nplugin \"a\"\nplugin \"a\"\n}\n"))
        #expect(error.description == "\(Self.path):3: \"plugin\" is duplicate, first defined on line 2")
    }

    @Test func neverTrapsOnArbitraryInput() {
        let pieces = [
            "port", "audio_output", "metadata_to_use", "music_directory", "input_cache", "x", " ", "\t", "\n", "\r",
            "\"", "\\", "{", "}", "#", "+", "-", ",", "0", "99999999999999999999999", "~", "~root", "/", "@", "é",
            "\u{0}", "include_optional", "\"none\"", "\"+comment,-x\"", "\"-1\"",
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<3000 {
            var text = ""
            for _ in 0..<12 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                text += pieces[Int(state >> 33) % pieces.count]
            }
            if let file = try? ConfigFile(parsing: text, path: "/nonexistent-fermata-dir/fuzz.conf") {
                _ = try? Settings(file: file, environment: ["HOME": "/home/x"])
            }
        }
    }

    @Test func reportsOnlyTheFirstError() throws {
        let error = try #require(self.failure("bogus \"1\"\nport 6600\n"))
        #expect(error.line == 1)
    }
}
