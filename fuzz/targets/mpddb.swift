// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `mpddb`: the input is a `db_file` in mpd's format, plain or gzip-compressed. It is read by
// `MPDDatabaseFile.decode` (zlib's inflate through the Zlib module, mpd's line reader, header, directory, song
// and playlist blocks) with mpd's default `metadata_to_use`; a snapshot it returns is checked (each directory's
// songs and children in bounds, parents before children), turned into the updater's tree, written in mpd's
// format (plain and compressed) and read back, which must succeed with as many directories.

import Library
import Model

@_cdecl("LLVMFuzzerTestOneInput")
public func mpddbFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(fuzzInput(data, size))
    guard let database = try? MPDDatabaseFile.decode(input, tags: .defaultMetadata, updateTime: 0) else { return 0 }
    var songs = 0
    for (index, directory) in database.directories.enumerated() {
        precondition(directory.songs.lowerBound >= 0 && directory.songs.upperBound <= database.songs.count)
        precondition(index == 0 || (0..<index).contains(Int(directory.parent)), "a parent after its child")
        precondition(directory.children.allSatisfy { Int($0) > index && Int($0) < database.directories.count })
        songs += directory.songs.count
    }
    precondition(songs == database.songs.count, "songs outside every directory")
    _ = database.makeTree()
    _ = database.statistics
    for song in 0..<Int32(database.songs.count) { _ = database.songs.info(song) }
    for compress in [false, true] {
        guard let bytes = try? MPDDatabaseFile.encoded(database, tags: .defaultMetadata, compress: compress) else {
            preconditionFailure("cannot write a snapshot that was read")
        }
        // A name that ends in "\r" loses it when read again (mpd's line reader strips it), which may make two
        // names one: only then may the file be refused.
        let again = try? MPDDatabaseFile.decode(bytes, tags: .defaultMetadata, updateTime: 0)
        let songNames = database.songs.indices.contains { database.songs.name(Int32($0)).hasSuffix("\r") }
        let hasCarriageReturn =
            songNames || database.directories.contains { $0.path.hasSuffix("\r") || $0.path.contains("\r/") }
        precondition(again != nil || hasCarriageReturn, "what was written does not read back")
        if let again, !hasCarriageReturn {
            precondition(again.directories.count == database.directories.count, "directories lost")
            precondition(again.songs.count == database.songs.count, "songs lost")
        }
    }
    return 0
}
