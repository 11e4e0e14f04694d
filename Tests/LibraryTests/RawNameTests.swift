// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Posix
import RawText
import Synchronization
import TestSupport
import Testing

@testable import Library

/// File names that are not valid UTF-8 are scanned and kept as `RawText` escapes, as `mpd` keeps raw bytes.
@Suite(.serialized)
struct RawNameTests {
    /// `caf\xE9 latin1.mp3`, as the escaped string and as bytes.
    private static let name = "caf\u{10FEE9} latin1.mp3"
    private static let nameBytes = Array("caf".utf8) + [0xE9] + Array(" latin1.mp3".utf8)

    /// Creates `directory/caf\xE9 latin1.mp3` through a byte path, bypassing every String conversion.
    private func createLatin1File(in directory: String, content: String) throws {
        var path = Array((directory + "/").utf8) + Self.nameBytes
        path.append(0)
        let fd = path.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                Glibc.open($0.baseAddress!, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            }
        }
        try #require(fd >= 0)
        defer { Glibc.close(fd) }
        let body = Array(content.utf8)
        #expect(body.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == body.count)
    }

    private func scan(_ music: MusicDirectory, reader: FakeReader) -> TreeDirectory {
        Updater(root: music.path, reader: reader, logger: .discarding).update(
            TreeDirectory(name: ""), uri: "", discard: false
        ).tree
    }

    @Test func directoryStatusesDescribeEachEntryByItsBytes() throws {
        let music = try MusicDirectory()
        try music.song("Charset/plain.mp3")
        try self.createLatin1File(in: music.path + "/Charset", content: "12345")
        #expect(symlink("plain.mp3", music.path + "/Charset/link.mp3") == 0)
        let entries = try DirectoryEntries.statuses(in: music.path + "/Charset", followLinks: false)
        #expect(Set(entries.map(\.name)) == [Self.name, "plain.mp3", "link.mp3"])
        let latin1 = try #require(entries.first { $0.name == Self.name }?.status)
        #expect(latin1.kind == .regular && latin1.size == 5)
        #expect(entries.first { $0.name == "link.mp3" }?.status?.kind == .symbolicLink)
        let followed = try DirectoryEntries.statuses(in: music.path + "/Charset")
        #expect(followed.first { $0.name == "link.mp3" }?.status?.kind == .regular)
        #expect(throws: SystemCallError.self) { try DirectoryEntries.statuses(in: music.path + "/missing") }
    }

    @Test func latin1FileNameIsScannedAndKeepsItsBytes() throws {
        let music = try MusicDirectory()
        try music.song("Charset/plain.mp3")
        try self.createLatin1File(in: music.path + "/Charset", content: "#fake\nTitle=Café")
        #expect(try DirectoryEntries.names(in: music.path + "/Charset").contains(Self.name))
        #expect(try FileStatus(path: music.path + "/Charset/" + Self.name).kind == .regular)

        let reader = FakeReader()
        let tree = self.scan(music, reader: reader)
        #expect(reader.reads.load(ordering: .relaxed) == 2)
        let database = Database(tree: tree, updateTime: 1)
        let song = try #require(database.songs.first { $0.uri == "Charset/" + Self.name })
        #expect(song.info.tags.contains(TagItem(.title, "Café")))
        #expect(RawText.encode(song.uri) == Array("Charset/".utf8) + Self.nameBytes)
        #expect(database.statistics.songs == 2)

        // The database file stores the raw bytes and loads the same name back.
        let file = music.path + "/db"
        try DatabaseFile.save(Database(tree: tree, updateTime: 7), tags: .defaultMetadata, to: file)
        let saved = try readFile(atPath: file)
        #expect(saved.firstRange(of: Self.nameBytes) != nil)
        #expect(saved.firstRange(of: Array(Self.name.utf8)) == nil)
        let loaded = try #require(DatabaseFile.load(from: file, tags: .defaultMetadata))
        #expect(loaded.makeTree() == tree)
        #expect(loaded.songs.map(\.uri) == database.songs.map(\.uri))
    }

    @Test func mpdignorePatternWithALatin1ByteExcludesTheFile() throws {
        let music = try MusicDirectory()
        try music.song("keep.mp3")
        try self.createLatin1File(in: music.path, content: "#fake")
        let ignore = Array("caf".utf8) + [0xE9, 0x2A, 0x0A]  // "caf\xE9*\n"
        let fd = Glibc.open(music.path + "/.mpdignore", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try #require(fd >= 0)
        _ = ignore.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        Glibc.close(fd)
        let database = Database(tree: self.scan(music, reader: FakeReader()), updateTime: 1)
        #expect(database.songs.map(\.uri) == ["keep.mp3"])
    }
}
