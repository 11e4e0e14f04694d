// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import Posix
import TestTools
import Testing

@testable import AO

/// The ao output. Serialized: libao's set-up (`ao_initialize`, run by each `AOLibrary`'s load) must not run
/// while another test asks libao for a driver (the server has one library, loaded on the loop thread).
@Suite(.serialized) struct AOTests {}

/// The `ao` block's keys, read as `mpd` reads them.
extension AOTests {
    @Suite struct AOOutputPluginTests {
        private func make(_ parameters: [String: String], library: AOLibrary = .shared) throws -> any AudioOutput {
            try AOOutputPlugin(library: library).makeOutput(
                OutputConfiguration(name: "Speakers", type: "ao", parameters: BlockParameters(parameters)))
        }

        @Test func unknownDriverIsRefused() {
            #expect(throws: OutputError("\"nosuch\" is not a valid ao driver")) { try self.make(["driver": "nosuch"]) }
            #expect(throws: OutputError("\"\" is not a valid ao driver")) { try self.make(["driver": ""]) }
            // The driver is checked before the options, as mpd checks it.
            #expect(throws: OutputError("\"nosuch\" is not a valid ao driver")) {
                try self.make(["driver": "nosuch", "options": "bad"])
            }
        }

        @Test func badWriteSizeIsRefused() {
            #expect(throws: OutputError("Error in setting \"write_size\" on line 0; Value must be positive")) {
                try self.make(["driver": "null", "write_size": "0"])
            }
            #expect(throws: OutputError("Error in setting \"write_size\" on line 0; Failed to parse number")) {
                try self.make(["driver": "null", "write_size": "4k"])
            }
        }

        @Test func optionsAreSplitAsMPDSplitsThem() throws {
            let pairs = try AOOutputPlugin.parseOptions(" dev=rec ; a = b;c=d=e;e=")
            #expect(pairs.map(\.key) == ["dev", "a ", "c", "e"])
            #expect(pairs.map(\.value) == ["rec", " b", "d=e", ""])
            for (value, piece) in [("a", "a"), ("=b", "=b"), ("a=b;", ""), ("a=b;;c=d", ""), ("", "")] {
                #expect(throws: OutputError("problems parsing option \"\(piece)\"")) {
                    try AOOutputPlugin.parseOptions(value)
                }
            }
        }

        @Test func badOptionsAreRefusedAtConfiguration() {
            #expect(throws: OutputError("problems parsing option \"x\"")) {
                try self.make(["driver": "null", "options": "dev=a;x"])
            }
        }

        /// libao's `null` driver takes anything, at once.
        @Test func playsThroughTheNullDriverIn16Bits() throws {
            let output = try self.make(["driver": "null", "write_size": "1000"])
            #expect(output.plugin == "ao")
            try output.enable()
            let opened = try output.open(AudioFormat(sampleRate: 48000, sampleFormat: .s24, channels: 2))
            #expect(opened == AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 2))
            let samples = [UInt8](repeating: 0, count: 4096)
            let written = try samples.withUnsafeBytes { try output.play($0) }
            #expect(written == 1000)
            output.close()
            #expect(try output.open(AudioFormat(sampleRate: 8000, sampleFormat: .s8, channels: 1)).sampleFormat == .s8)
            output.close()
            output.disable()
        }

        /// libao's driver plugins (`alsa`) call libao without linking it: found only when libao's symbols are global.
        @Test func aDriverPluginIsFoundAndItsDeviceErrorWordedAsMPD() throws {
            let output = try self.make(["driver": "alsa", "options": "dev=fermata_no_such_pcm"])
            try output.enable()
            #expect(throws: OutputError("Cannot open the libao device: Input/output error")) {
                try output.open(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
            }
        }

        @Test func aFileDriverIsNotLive() throws {
            let output = try self.make(["driver": "wav"])
            try output.enable()
            #expect(throws: OutputError("This driver is not a libao live device: No such process")) {
                try output.open(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
            }
        }

        @Test func piecesAreWholeFramesUpToWriteSize() {
            #expect(AOOutput.pieceSize(100, writeSize: 1024, frameSize: 4) == 100)
            #expect(AOOutput.pieceSize(4096, writeSize: 1024, frameSize: 4) == 1024)
            #expect(AOOutput.pieceSize(4096, writeSize: 1023, frameSize: 4) == 1020)
            #expect(AOOutput.pieceSize(4096, writeSize: 1, frameSize: 6) == 6)
        }

        @Test func errorsAreWordedAsMPD() {
            #expect(
                AOOutput.error(errno: Errno(rawValue: 5)).message == "Cannot open the libao device: Input/output error")
            #expect(
                AOOutput.error(errno: Errno(rawValue: 1)).message == "No such libao driver: Operation not permitted")
            #expect(
                AOOutput.error(errno: Errno(rawValue: 4)).message == "Invalid libao option: Interrupted system call")
            #expect(AOOutput.error(errno: Errno(rawValue: 100)).message == "Generic libao failure: Network is down")
            #expect(
                AOOutput.error(errno: Errno(rawValue: 2)).message == "Unknown libao failure: No such file or directory")
        }
    }

}

/// libao loaded by the first output made, and kept.
extension AOTests {
    @Suite struct AOLibraryTests {
        @Test func loadedByTheFirstOutputAndKept() throws {
            let library = AOLibrary(soname: AOLibrary.headerSoname)
            #expect(!library.isLoaded)
            var output: (any AudioOutput)? = try AOOutputPlugin(library: library).makeOutput(
                OutputConfiguration(name: "A", type: "ao", parameters: ["driver": "null"]))
            #expect(library.isLoaded)
            #expect(library.users == 1)
            #expect(throws: OutputError.self) {
                try AOOutputPlugin(library: library).makeOutput(
                    OutputConfiguration(name: "B", type: "ao", parameters: ["driver": "nosuch"]))
            }
            #expect(library.users == 1)
            output = nil
            #expect(output == nil)
            #expect(library.users == 0)
            #expect(library.loadCount == 1)
        }

        /// A library that cannot be loaded: the outputs are made, every enable fails, the reason is reported once.
        @Test func missingLibraryFailsEveryEnableReportedOnce() throws {
            let reports = Reports()
            let library = AOLibrary(soname: "/nonexistent/libao.so.4", reportFailure: reports.reporter)
            for _ in 0..<2 {
                let output = try AOOutputPlugin(library: library).makeOutput(
                    OutputConfiguration(name: "A", type: "ao", parameters: ["driver": "nosuch"]))
                #expect(throws: OutputError("libao could not be loaded")) { try output.enable() }
            }
            #expect(library.users == 0)
            #expect(reports.all.count == 1)
            #expect(reports.all.first?.contains("/nonexistent/libao.so.4") == true)
        }
    }
}
