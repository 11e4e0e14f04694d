// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import Configuration

/// `decoder` blocks read as `mpd` 0.23.12 reads them (messages checked against `mpd --no-daemon` with the same
/// blocks).
struct DecoderBlockTests {
    private static let path = "/etc/fermata/mpd.conf"

    private func decoders(_ text: String) throws -> DecoderBlocks {
        try DecoderBlocks(ConfigFile(parsing: text, path: Self.path).blocks(named: "decoder"))
    }

    private func failure(_ body: () throws -> Void) -> ConfigError? {
        do {
            try body()
            return nil
        } catch let error as ConfigError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test func aBlockWithoutPluginIsFatal() {
        let error = self.failure {
            _ = try self.decoders("decoder {\n    plugin \"mad\"\n}\n\ndecoder {\n    enabled \"no\"\n}\n")
        }
        #expect(error?.message == "block without 'plugin' in line 5")
        #expect(error?.line == 5)
    }

    @Test func theFirstBlockNamingAPluginConfiguresIt() throws {
        let decoders = try self.decoders(
            """
            decoder {
                plugin "mad"
                enabled "no"
            }
            decoder {
                plugin "mad"
                enabled "yes"
            }
            decoder {
                plugin "gme"
                accuracy "yes"
            }
            decoder {
                plugin "gme"
                accuracy "no"
            }
            """)
        #expect(try decoders.settings(forPlugin: "mad") == nil)
        var gme = try #require(try decoders.settings(forPlugin: "gme"))
        #expect(try gme.bool("accuracy") == true)
        #expect(gme.block?.line == 9)
        // No block: every key is missing, nothing to warn about.
        var flac = try #require(try decoders.settings(forPlugin: "flac"))
        #expect(flac.block == nil)
        #expect(try flac.bool("enabled") == nil)
        #expect(flac.unread.isEmpty)
    }

    @Test func enabledMustBeABoolean() throws {
        let decoders = try self.decoders("decoder {\n    plugin \"flac\"\n    enabled \"maybe\"\n}\n")
        let error = self.failure { _ = try decoders.settings(forPlugin: "flac") }
        #expect(
            error?.message == #"Error in setting "enabled" on line 3; Not a valid boolean ("yes" or "no"): "maybe""#)
        #expect(error?.line == 3)
        // mpd's booleans ignore case and accept true/1.
        for value in ["YES", "true", "1"] {
            let on = try self.decoders("decoder {\n plugin \"flac\"\n enabled \"\(value)\"\n}\n")
            #expect(try on.settings(forPlugin: "flac") != nil)
        }
        for value in ["No", "false", "0"] {
            let off = try self.decoders("decoder {\n plugin \"flac\"\n enabled \"\(value)\"\n}\n")
            #expect(try off.settings(forPlugin: "flac") == nil)
        }
    }

    @Test func numbersAreParsedWithMpdsRulesAndMessages() throws {
        let decoders = try self.decoders(
            """
            decoder {
                plugin "x"
                fade "12"
                bad "12s"
                negative "-1"
                zero "0"
                hex "0x10"
                octal "010"
                word "ten"
            }
            """)
        var settings = try #require(try decoders.settings(forPlugin: "x"))
        #expect(try settings.unsigned("fade") == 12)
        #expect(try settings.unsigned("missing") == nil)
        #expect(
            self.failure { _ = try settings.unsigned("bad") }?.message
                == #"Error in setting "bad" on line 4; Failed to parse number"#)
        #expect(
            self.failure { _ = try settings.unsigned("negative") }?.message
                == #"Error in setting "negative" on line 5; Value must not be negative"#)
        #expect(
            self.failure { _ = try settings.positive("zero") }?.message
                == #"Error in setting "zero" on line 6; Value must be positive"#)
        #expect(try settings.integer("hex") == 16)
        #expect(try settings.integer("octal") == 8)
        #expect(try settings.integer("negative") == -1)
        #expect(self.failure { _ = try settings.integer("word") }?.message == "Not a valid number in line 9")
    }

    @Test func pathsExpandAHomeAsMpdsParsePath() throws {
        var decoders = try self.decoders(
            """
            decoder {
                plugin "x"
                home "~/tunes/db.txt"
                bare "~"
                root "~root/rom"
                absolute "/usr/share/rom"
                relative "roms/kernal"
                stranger "~nosuchuser-fermata/x"
            }
            """)
        decoders.home = "/home/listener"
        var settings = try #require(try decoders.settings(forPlugin: "x"))
        #expect(try settings.path("home") == "/home/listener/tunes/db.txt")
        #expect(try settings.path("bare") == "/home/listener")
        #expect(try settings.path("root") == "/root/rom")
        #expect(try settings.path("absolute") == "/usr/share/rom")
        #expect(try settings.path("missing") == nil)
        #expect(self.failure { _ = try settings.path("relative") }?.message == "not an absolute path: roms/kernal")
        #expect(self.failure { _ = try settings.path("stranger") }?.message == "no such user: nosuchuser-fermata")
        #expect(settings.unread.isEmpty)
    }

    @Test func unreadKeysAreWarnedAboutInBlockOrder() throws {
        let decoders = try self.decoders(
            "decoder {\n plugin \"gme\"\n bogus \"1\"\n accuracy \"no\"\n other \"2\"\n enabled \"yes\"\n}\n")
        var settings = try #require(try decoders.settings(forPlugin: "gme"))
        let hasAccuracy = settings.contains("accuracy")
        #expect(hasAccuracy)
        #expect(settings.unread.map(\.name) == ["bogus", "other"])
        #expect(settings.unread.map(\.line) == [3, 5])
    }

    @Test func settingsReadDecoderBlocksWithoutAnUnsupportedWarning() throws {
        let file = try ConfigFile(parsing: "decoder {\n plugin \"ffmpeg\"\n enabled \"no\"\n}\n", path: Self.path)
        let settings = try Settings(file: file, environment: ["HOME": "/home/u"])
        #expect(settings.decoders.blocks.count == 1)
        #expect(settings.warnings.isEmpty)
        let bad = try ConfigFile(parsing: "decoder {\n enabled \"no\"\n}\n", path: Self.path)
        let error = self.failure { _ = try Settings(file: bad, environment: [:]) }
        #expect(error?.message == "block without 'plugin' in line 1")
    }
}
