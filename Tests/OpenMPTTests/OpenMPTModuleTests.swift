// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization
import Testing

@testable import OpenMPT

@Suite struct OpenMPTModuleTests {
    /// A 4-channel M.K. module: one pattern, one looped 16-byte square sample, one note.
    static let module: [UInt8] = {
        func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
        func pad(_ s: String, _ n: Int) -> [UInt8] { Array(s.utf8) + [UInt8](repeating: 0, count: n - s.utf8.count) }
        var bytes = pad("square song", 20)
        bytes += pad("square", 22) + be16(8) + [0, 64] + be16(0) + be16(8)
        for _ in 1..<31 { bytes += pad("", 22) + be16(0) + [0, 0] + be16(0) + be16(1) }
        bytes += [1, 127] + [UInt8](repeating: 0, count: 128) + Array("M.K.".utf8)
        var pattern = [UInt8](repeating: 0, count: 1024)
        pattern.replaceSubrange(0..<4, with: [0x01, 0xAC, 0x10, 0x00])
        return bytes + pattern + [UInt8](repeating: 0x60, count: 8) + [UInt8](repeating: 0xA0, count: 8)
    }()

    @Test func loadsMetadataAndDuration() throws {
        let module = try OpenMPTModule(data: Self.module)
        #expect(module.metadata("title") == Array("square song".utf8))
        #expect(module.metadata("type") == Array("mod".utf8))
        #expect(module.metadata("artist").isEmpty)
        #expect(abs(module.durationSeconds - 7.68) < 0.001)
        #expect(throws: OpenMPTError.self) { try OpenMPTModule(data: [UInt8](repeating: 0, count: 600)) }
        #expect(throws: OpenMPTError.self) { try OpenMPTModule(data: []) }
    }

    @Test func rendersUntilTheEndAndSeeks() throws {
        let module = try OpenMPTModule(data: Self.module)
        try module.setRepeatCount(0)
        try module.setRenderParameter(.stereoSeparationPercent, 100)
        try module.setControl("seek.sync_samples", true)
        try module.setControl("render.resampler.emulate_amiga_type", "auto")
        #expect(throws: OpenMPTError.self) { try module.setControl("no.such.ctl", true) }
        var buffer = [Float](repeating: 0, count: 1024)
        var total = 0
        var loud = false
        while true {
            let frames = buffer.withUnsafeMutableBufferPointer { module.render(into: $0, sampleRate: 48000) }
            if frames == 0 { break }
            loud = loud || buffer[0..<(frames * 2)].contains { $0 != 0 }
            total += frames
        }
        #expect(loud)
        #expect((7680 * 48)...(7880 * 48) ~= total)
        // Rows last 0.12 s: the position reached is a row's start.
        #expect(abs(module.setPosition(seconds: 2) - 2) < 0.12)
    }

    @Test func theFirstModuleLoadsTheLibraryAndKeepsItLoaded() throws {
        let library = OpenMPTLibrary()
        #expect(!library.isLoaded)
        _ = try OpenMPTModule(data: Self.module, library: library)
        #expect(library.isLoaded)
        #expect(library.loadFailure() == nil)
    }

    @Test func aLibraryThatCannotBeLoadedFailsEveryModuleAndIsReportedOnce() {
        let reports = Mutex<[String]>([])
        // zlib: it loads, but has none of libopenmpt's functions.
        let library = OpenMPTLibrary(
            soname: "libz.so.1", reportFailure: { line in reports.withLock { $0.append(line) } })
        let failure = OpenMPTError(function: "dlsym", message: "openmpt_log_func_silent not found in libz.so.1")
        for _ in 0..<2 {
            #expect(throws: failure) { _ = try OpenMPTModule(data: Self.module, library: library) }
        }
        #expect(library.loadFailure() == failure)
        #expect(!library.isLoaded)
        #expect(reports.withLock { $0 } == ["dlsym: openmpt_log_func_silent not found in libz.so.1"])
    }
}
