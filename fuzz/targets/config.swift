// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `config`: the input is an `mpd.conf`. It is parsed (`ConfigFile(parsing:path:)`), checked for
// unsupported options (`Settings.warnings`), turned into typed settings (`Settings(file:)`), and the values
// the daemon interprets further are parsed as the daemon does: `bind_to_address` (`ListenAddress`) and the
// permission lists of `password`, `default_permissions`, `local_permissions` and `host_permissions`.
//
// Includes are followed relative to a scratch directory holding a few small files (one including another,
// two including each other). An input that mentions `include` together with `/`, `\` or `~` is skipped, so
// the fuzzer never reads files outside that directory (`/dev/zero`, `/proc/…`).

import Configuration
import Glibc
import MPDProtocol
import Model
import Network

/// Writes the files that inputs may include, into the scratch directory.
private func writeIncludes() {
    let files = [
        ("a.conf", "port \"6601\"\ninclude_optional \"c.conf\"\n"),
        ("b.conf", "include \"b.conf\"\n"),
        ("c.conf", "audio_output {\n\ttype \"null\"\n\tname \"x\"\n}\nmusic_directory \"~/m\"\n"),
        ("d.conf", "include \"e.conf\"\n"),
        ("e.conf", "include \"d.conf\"\n"),
    ]
    for (name, text) in files { _ = Array(text.utf8).withUnsafeBytes { FuzzScratch.write($0, to: name) } }
}

nonisolated(unsafe) private var prepared = false  // reason: libFuzzer calls on one thread

private let includeWord = Array("include".utf8)

@_cdecl("LLVMFuzzerTestOneInput")
public func configFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    if !prepared {
        writeIncludes()
        prepared = true
    }
    let bytes = Array(fuzzInput(data, size))
    let mentionsInclude = bytes.count >= includeWord.count
        && (0...(bytes.count - includeWord.count)).contains { bytes[$0..<$0 + includeWord.count].elementsEqual(includeWord) }
    if mentionsInclude && bytes.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "~") }) {
        return -1  // keeps the input out of the corpus
    }
    let text = String(decoding: bytes, as: UTF8.self)
    guard let file = try? ConfigFile(parsing: text, path: "\(FuzzScratch.directory)/mpd.conf") else { return 0 }
    _ = Settings.warnings(for: file)
    guard let settings = try? Settings(file: file, environment: ["HOME": "/home/fuzz"]) else { return 0 }
    for address in settings.bindAddresses {
        // The split alone: parsing resolves a port that is no number (getaddrinfo, maybe DNS), no fuzzer's business.
        _ = try? ListenAddress.split(address.value)
    }
    for entry in settings.passwords {
        if let at = entry.lastIndex(of: "@") { _ = Permission(parsingList: String(entry[entry.index(after: at)...])) }
    }
    for list in [settings.defaultPermissions, settings.localPermissions].compactMap({ $0 }) {
        _ = Permission(parsingList: list)
    }
    for entry in settings.hostPermissions.map(\.value) {
        let host = entry.prefix { $0 != " " }
        _ = Permission(parsingList: String(entry.dropFirst(host.count + 1)))
    }
    return 0
}
