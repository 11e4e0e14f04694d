// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization
import Testing

@testable import ModPlug

@Suite struct ModPlugFileTests {
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

    @Test func loadsNameAndLength() throws {
        let file = try #require(ModPlugFile(data: Self.module))
        #expect(file.name == Array("square song".utf8))
        // Whole seconds, rounded up (7.68 s of rows).
        #expect(file.lengthMilliseconds == 8000)
        #expect(ModPlugFile(data: []) == nil)
        #expect(ModPlugFile(data: Array(repeating: 0x55, count: 64)) == nil)
    }

    @Test func rendersToTheEndAndSeeks() throws {
        let file = try #require(ModPlugFile(data: Self.module))
        var buffer = [UInt8](repeating: 0, count: 4096)
        var total = 0
        var loud = false
        while true {
            let bytes = buffer.withUnsafeMutableBytes { file.read(into: $0) }
            if bytes == 0 { break }
            loud = loud || buffer[0..<bytes].contains { $0 != 0 }
            total += bytes
        }
        #expect(loud)
        #expect((7680 * 441 / 10)...(7900 * 441 / 10) ~= total / 4)
        file.seek(milliseconds: 7000)
        let rest = buffer.withUnsafeMutableBytes { file.read(into: $0) }
        #expect(rest > 0)
    }

    @Test func theFirstModuleLoadsTheLibraryAndKeepsItLoaded() throws {
        let library = ModPlugLibrary()
        #expect(!library.isLoaded)
        let file = try #require(ModPlugFile(data: Self.module, library: library))
        // Loaded with mpd's configuration, set up at the library's load.
        #expect(file.lengthMilliseconds == 8000)
        #expect(library.isLoaded)
        #expect(library.loadFailure() == nil)
    }

    @Test func aLibraryThatCannotBeLoadedLoadsNoModuleAndIsReportedOnce() {
        let reports = Mutex<[String]>([])
        // zlib: it loads, but has none of libmodplug's functions.
        let library = ModPlugLibrary(
            soname: "libz.so.1", reportFailure: { line in reports.withLock { $0.append(line) } })
        for _ in 0..<2 { #expect(ModPlugFile(data: Self.module, library: library) == nil) }
        #expect(library.loadFailure() == "dlsym: ModPlug_GetSettings not found in libz.so.1")
        #expect(!library.isLoaded)
        #expect(reports.withLock { $0 } == ["dlsym: ModPlug_GetSettings not found in libz.so.1"])
    }
}
