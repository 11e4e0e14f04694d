// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration
import Foundation
import Input
import ModPlug
import Model
import Testing

@testable import Formats

/// The registry built from `decoder` blocks, as `mpd` 0.23.12's `decoder_plugin_init_all` builds its plugin list
/// (behaviour and messages checked against `mpd --no-daemon` with the same blocks).
struct DecoderConfigurationTests {
    private static let path = "/etc/fermata/mpd.conf"

    private func configured(_ text: String) throws -> FormatRegistry.Configured {
        let blocks = try ConfigFile(parsing: text, path: Self.path).blocks(named: "decoder")
        return try FormatRegistry.configured(DecoderBlocks(blocks))
    }

    private func failure(_ text: String) -> String? {
        do {
            _ = try self.configured(text)
            return nil
        } catch let error as ConfigError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func withoutBlocksEveryPluginIsOnInMpdsOrder() throws {
        let names = try self.configured("").registry.plugins.map(\.name)
        let all = [
            "mad", "mpg123", "vorbis", "oggflac", "flac", "opus", "sndfile", "dsdiff", "dsf", "faad", "mpcdec",
            "wavpack", "openmpt", "modplug", "mikmod", "sidplay", "wildmidi", "fluidsynth", "adplug", "ffmpeg", "gme",
            "pcm",
        ]
        // wildmidi is unavailable, as in mpd, where its default configuration file does not exist.
        let wildmidi = FileManager.default.fileExists(atPath: WildMidiOptions().configFile)
        #expect(names == all.filter { wildmidi || $0 != "wildmidi" })
        #expect(FormatRegistry.standard.plugins.map(\.name) == names)
        // hybrid_dsd is in the catalogue, off by default.
        #expect(FormatRegistry.catalogue.map(\.name).filter { $0 != "hybrid_dsd" } == all)
        #expect(FormatRegistry.catalogue.map(\.name)[9] == "hybrid_dsd")
    }

    @Test func aDisabledPluginNeverScansOrDecodes() throws {
        let registry = try self.configured(
            """
            decoder {
                plugin "gme"
                enabled "no"
            }
            decoder {
                plugin "gme"
                enabled "yes"
            }
            """
        ).registry
        #expect(!registry.plugins.contains { $0.name == "gme" })
        #expect(registry.plugins(forSuffix: "vgm").isEmpty)
        let dir = try TrackerFormatTests.directory(["psg.vgm": ChiptuneBytes.vgm()])
        #expect(throws: FormatError.self) { try registry.readInfo(path: dir + "/psg.vgm") }
        #expect(throws: FormatError.self) { try registry.openDecoder(path: dir + "/psg.vgm") }
        #expect(try FormatRegistry.standard.readInfo(path: dir + "/psg.vgm").durationMilliseconds == 2000)
    }

    @Test func hybridDSDNeedsAnEnabledLine() throws {
        let on = try self.configured("decoder {\n plugin \"hybrid_dsd\"\n enabled \"yes\"\n}\n")
        #expect(on.registry.plugins.map(\.name)[9] == "hybrid_dsd")
        #expect(on.registry.plugins(forSuffix: "M4A").map(\.name) == ["hybrid_dsd", "ffmpeg"])
        #expect(on.unread.isEmpty)
        for text in [
            "decoder {\n plugin \"hybrid_dsd\"\n}\n", "decoder {\n plugin \"hybrid_dsd\"\n enabled \"no\"\n}\n",
        ] {
            #expect(!(try self.configured(text).registry.plugins.contains { $0.name == "hybrid_dsd" }))
        }
    }

    @Test func disablingAPluginHandsItsSuffixesToTheNext() throws {
        let registry = try self.configured("decoder {\n plugin \"mad\"\n enabled \"no\"\n}\n").registry
        #expect(registry.plugin(forSuffix: "mp3")?.name == "mpg123")
        #expect(registry.plugins(forSuffix: "mp2").map(\.name) == ["ffmpeg"])
    }

    @Test func gmeDefaultFadeLengthensTheDecoder() throws {
        let dir = try TrackerFormatTests.directory(["psg.vgm": ChiptuneBytes.vgm()])
        let registry = try self.configured("decoder {\n plugin \"gme\"\n default_fade \"3\"\n}\n").registry
        let decoder = try registry.openDecoder(path: dir + "/psg.vgm")
        #expect(decoder.totalFrames == 5 * 44100)
        // The scan's duration has no fade (libgme 0.6).
        #expect(try registry.readInfo(path: dir + "/psg.vgm").durationMilliseconds == 2000)
        let none = try self.configured("decoder {\n plugin \"gme\"\n default_fade \"0\"\n}\n").registry
        #expect(try none.openDecoder(path: dir + "/psg.vgm").totalFrames == 2 * 44100)
    }

    @Test func dsdiffLsbitfirstReversesTheBitsOfEveryByte() throws {
        let audio = (0..<5000).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
        let file = DSDTests.dff(audio: audio)
        let registry = try self.configured("decoder {\n plugin \"dsdiff\"\n lsbitfirst \"yes\"\n}\n").registry
        let plugin = try #require(registry.plugin(forSuffix: "dff"))
        var decoder = try plugin.makeDecoder(input: MemoryInputStream(file))
        let reversed = audio.map { byte in (0..<8).reduce(UInt8(0)) { $0 | ((byte >> $1) & 1) << (7 - $1) } }
        #expect(try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 333) == reversed)
        var plain = try FormatRegistry.standard.plugin(forSuffix: "dff")!.makeDecoder(input: MemoryInputStream(file))
        #expect(try TrackerFormatTests.decodeAll(&plain, bufferFrames: 333) == audio)
        // The dsf plugin has no such setting in mpd 0.23.12: it is warned about there.
        let dsf = try self.configured("decoder {\n plugin \"dsf\"\n lsbitfirst \"yes\"\n}\n")
        #expect(dsf.unread.map(\.name) == ["lsbitfirst"])
        #expect(dsf.unread.map(\.line) == [3])
    }

    @Test func modplugSettingsReachLibmodplug() throws {
        let dir = try TrackerFormatTests.directory(["tune.dfm": ChiptuneBytes.protracker()])
        let registry = try self.configured(
            "decoder {\n plugin \"modplug\"\n loop_count \"1\"\n resampling_mode \"nearest\"\n}\n"
        ).registry
        let plugin = try #require(registry.plugin(forSuffix: "dfm") as? ModPlugFormat)
        #expect(plugin.settings == ModPlugFile.Settings(resampling: .nearest, loopCount: 1))
        #expect(try #require(FormatRegistry.standard.plugin(forSuffix: "dfm") as? ModPlugFormat).settings == .init())
        // This module ends without a loop back, so libmodplug plays it once all the same (so does mpd 0.23.12
        // with `loop_count "1"`: it stops after 7.8 s).
        var decoder = try registry.openDecoder(path: dir + "/tune.dfm")
        let frames = try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 4096).count / 4
        #expect((7680 * 441 / 10)...(7900 * 441 / 10) ~= frames)
        #expect(
            self.failure("decoder {\n plugin \"modplug\"\n loop_count \"-2\"\n}\n")
                == "Failed to initialize decoder plugin 'modplug'; Invalid loop count in line 1: -2")
        #expect(
            self.failure("\ndecoder {\n plugin \"modplug\"\n resampling_mode \"cubic\"\n}\n")
                == "Failed to initialize decoder plugin 'modplug'; Invalid resampling mode in line 2: cubic")
        #expect(
            self.failure("decoder {\n plugin \"modplug\"\n loop_count \"x\"\n}\n")
                == "Failed to initialize decoder plugin 'modplug'; Not a valid number in line 3")
    }

    @Test func openmptRepeatCountRepeatsTheSongAndFFmpegGetsItsOptions() throws {
        let dir = try TrackerFormatTests.directory(["tune.mod": ChiptuneBytes.protracker()])
        func frames(_ text: String) throws -> Int {
            var decoder = try self.configured(text).registry.openDecoder(path: dir + "/tune.mod")
            return try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 4096).count / 8
        }
        let once = try frames("")
        let twice = try frames("decoder {\n plugin \"openmpt\"\n repeat_count \"1\"\n}\n")
        #expect(once > 48000 * 7)
        #expect(twice > once * 19 / 10 && twice < once * 21 / 10, "once \(once), twice \(twice)")
        let configured = try self.configured(
            """
            decoder {
                plugin "openmpt"
                stereo_separation "50"
                emulate_amiga "no"
                emulate_amiga_type "a500"
                override_mptm_interp_filter "yes"
            }
            decoder {
                plugin "ffmpeg"
                probesize "5000"
            }
            """)
        #expect(configured.unread.isEmpty)
        let ffmpeg = try #require(configured.registry.plugins.lazy.compactMap { $0 as? FFmpegFormat }.first)
        #expect(ffmpeg.formatOptions.map { "\($0.name)=\($0.value)" } == ["probesize=5000"])
        let plugin = try #require(configured.registry.plugin(forSuffix: "mod") as? OpenMPTFormat)
        var want = OpenMPTFormat.Options()
        want.stereoSeparation = 50
        want.emulateAmiga = false
        want.emulateAmigaType = "a500"
        want.overrideMPTMInterpolationFilter = true
        #expect(plugin.options == want)
        var decoder = try configured.registry.openDecoder(path: dir + "/tune.mod")
        #expect(try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 4096).count / 8 == once)
        #expect(
            self.failure("decoder {\n plugin \"openmpt\"\n sync_samples \"maybe\"\n}\n")
                == #"Failed to initialize decoder plugin 'openmpt'; Error in setting "sync_samples" on line 3; "#
                + #"Not a valid boolean ("yes" or "no"): "maybe""#)
        #expect(
            self.failure("decoder {\n plugin \"openmpt\"\n repeat_count \"0x\"\n}\n")
                == "Failed to initialize decoder plugin 'openmpt'; Not a valid number in line 3")
    }

    @Test func gmeAccuracyIsPassedToThePlugin() throws {
        let on = try self.configured("decoder {\n plugin \"gme\"\n accuracy \"yes\"\n}\n").registry
        let off = try self.configured("decoder {\n plugin \"gme\"\n accuracy \"no\"\n}\n").registry
        func gme(_ registry: FormatRegistry) -> GMEFormat? {
            registry.plugins.lazy.compactMap { $0 as? GMEFormat }.first
        }
        #expect(gme(on)?.options.accuracy == true)
        #expect(gme(off)?.options.accuracy == false)
        #expect(gme(FormatRegistry.standard)?.options == GMEFormat.Options())
        // Both still play.
        let dir = try TrackerFormatTests.directory(["psg.vgm": ChiptuneBytes.vgm()])
        var decoder = try on.openDecoder(path: dir + "/psg.vgm")
        #expect(try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 4096, limit: 1 << 16).contains { $0 != 0 })
    }

    @Test func aBadValueFailsThePluginsInitialization() {
        #expect(
            self.failure("decoder {\n plugin \"gme\"\n default_fade \"abc\"\n}\n")
                == #"Failed to initialize decoder plugin 'gme'; Error in setting "default_fade" on line 3; "#
                + "Failed to parse number")
        #expect(
            self.failure("decoder {\n plugin \"gme\"\n accuracy \"maybe\"\n}\n")
                == #"Failed to initialize decoder plugin 'gme'; Error in setting "accuracy" on line 3; "#
                + #"Not a valid boolean ("yes" or "no"): "maybe""#)
        // `enabled` is read before the plugin's initialization, so it is not wrapped.
        #expect(
            self.failure("decoder {\n plugin \"flac\"\n enabled \"maybe\"\n}\n")
                == #"Error in setting "enabled" on line 3; Not a valid boolean ("yes" or "no"): "maybe""#)
        // A bad value in a block nobody reads is never looked at.
        #expect(self.failure("decoder {\n plugin \"nosuch\"\n enabled \"maybe\"\n}\n") == nil)
    }

    @Test func onlyTheUnreadKeysOfEnabledPluginsAreWarnedAbout() throws {
        let configured = try self.configured(
            """
            decoder {
                plugin "gme"
                accuracy "yes"
                junk "1"
            }
            decoder {
                plugin "mad"
                bogus "x"
            }
            decoder {
                plugin "mad"
                ignored "x"
            }
            decoder {
                plugin "flac"
                enabled "no"
                unused "x"
            }
            decoder {
                plugin "nosuch"
                zzz "x"
            }
            """)
        // In the plugins' order (mad before gme); BlockCheck puts them in block order.
        #expect(configured.unread.map(\.name).sorted() == ["bogus", "junk"])
        #expect(configured.unread.map(\.line).sorted() == [4, 8])
        #expect(configured.unread.allSatisfy { $0.file == Self.path })
        #expect(!configured.registry.plugins.contains { $0.name == "flac" })
    }
}
