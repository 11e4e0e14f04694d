// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import Configuration

struct InputCacheSettingTests {
    private static let path = "/etc/mpd.conf"

    private func settings(_ text: String) throws -> Settings {
        try Settings(file: ConfigFile(parsing: text, path: Self.path), environment: ["HOME": "/root"])
    }

    @Test func noBlockNoCache() throws {
        #expect(try self.settings("port \"6600\"\n").inputCache == nil)
    }

    @Test func anEmptyBlockIsMPDsDefaultOf256MiB() throws {
        #expect(try self.settings("input_cache {\n}\n").inputCache == InputCacheSetting(size: 256 << 20))
    }

    @Test(arguments: [
        ("1 GB", 1 << 30), ("1G", 1 << 30), ("5kB", 5 << 10), ("100 M", 100 << 20), ("  7 k", 7 << 10),
        ("4096", 4096), ("0", 0), ("+3M", 3 << 20), ("-1", Int.max), ("99999999999999999999", Int.max),
    ])
    func readsSizesAsMPD(value: String, bytes: Int) throws {
        let settings = try self.settings("input_cache {\n  size \"\(value)\"\n}\n")
        #expect(settings.inputCache?.size == bytes)
        #expect(settings.warnings.isEmpty)
    }

    @Test(arguments: [
        ("x", "Failed to parse integer"), ("", "Failed to parse integer"), ("M", "Failed to parse integer"),
        ("10 Q", "Unknown size suffix"), ("5B", "Unknown size suffix"), ("5 MBB", "Unknown size suffix"),
        ("5 MiB", "Unknown size suffix"), ("7 k ", "Unknown size suffix"),
        ("99999999999999999999 G", "Value too large"),
        ("18014398509481984 k", "Value too large"),
    ])
    func refusesBadSizesWithMPDsMessages(value: String, message: String) throws {
        let file = try ConfigFile(parsing: "\ninput_cache {\n  foo \"bar\"\n  size \"\(value)\"\n}\n", path: Self.path)
        let error = #expect(throws: ConfigError.self) {
            try Settings(file: file, environment: [:])
        }
        #expect(error?.description == "\(Self.path):4: Error in setting \"size\" on line 4; \(message)")
    }
}
