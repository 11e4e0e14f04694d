// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import MikMod

/// Loading and set-up. libmikmod's player and mixing rate are process-wide, and every test target runs in one
/// process: the tests that play modules or change the rate are `FormatsTests`' `MikModFormatTests`, one after
/// another.
@Suite struct MikModModuleTests {
    /// A 15-sample Soundtracker module (no signature: libmikmod's `m15` loader): one pattern whose first row
    /// plays a looped 16-byte square sample.
    static let module: [UInt8] = {
        var bytes = Array("old tracker".utf8) + [UInt8](repeating: 0, count: 9)
        for sample in 0..<15 {
            let name = [UInt8](repeating: 0, count: 22)
            // Length and loop length in 16-bit words, fine tune, volume, loop start.
            bytes += name + (sample == 0 ? [0, 8, 0, 64, 0, 0, 0, 8] : [0, 0, 0, 0, 0, 0, 0, 1])
        }
        bytes += [1, 120] + [UInt8](repeating: 0, count: 128)
        var pattern = [UInt8](repeating: 0, count: 64 * 4 * 4)
        pattern.replaceSubrange(0..<4, with: [0x01, 0xAC, 0x10, 0x00])
        return bytes + pattern + [UInt8](repeating: 0x60, count: 8) + [UInt8](repeating: 0xA0, count: 8)
    }()

    /// Sets libmikmod up unless another test did (at whatever rate it chose).
    init() throws {
        if MikModLibrary.sampleRate == nil { try MikModLibrary.setUp(sampleRate: 44100) }
    }

    @Test func loadsAndReadsTheTitle() throws {
        #expect(MikModModule(data: Self.module) != nil)
        #expect(MikModModule.title(data: Self.module) == Array("old tracker".utf8))
        #expect(MikModModule(data: []) == nil)
        #expect(MikModModule(data: [UInt8](repeating: 0, count: 600)) == nil)
        #expect(MikModModule(data: Array(Self.module.prefix(1200))) == nil)
        #expect(MikModModule.title(data: []) == nil)
    }

    @Test func rejectsRatesLibmikmodCannotMix() {
        #expect(throws: MikModError.self) { try MikModLibrary.setUp(sampleRate: 0) }
        #expect(throws: MikModError.self) { try MikModLibrary.setUp(sampleRate: 96000) }
        #expect(throws: MikModError.self) { try MikModLibrary.setUp(sampleRate: -44100) }
        #expect(MikModLibrary.sampleRate != nil)
    }
}
