// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Posix
import RawText
import StoredPlaylists
import TestSupport
import Testing

@Suite struct PlaylistFileTests {
    @Test func editableEntriesSkipCommentsAndRelativiseMusicPaths() {
        let text = "#EXTM3U\r\n\n a.mp3\n/music/dir/b.mp3\r\n/elsewhere/c.mp3\n/music\nhttp://h/s#x\nlast"
        #expect(
            PlaylistFile.editableEntries(Array(text.utf8), musicDirectory: "/music", limit: 100) == [
                " a.mp3", "dir/b.mp3", "/elsewhere/c.mp3", "/music", "http://h/s#x", "last",
            ])
        #expect(PlaylistFile.editableEntries(Array(text.utf8), musicDirectory: "/music", limit: 2).count == 2)
    }

    @Test func linesAreInTheFilesystemCharset() {
        // As mpd 0.23.12 with filesystem_charset: a stored playlist's lines are file names in that charset.
        let latin1 = FileSystemCharset(
            .init(
                name: "ISO-8859-1", toUTF8: { String(String.UnicodeScalarView($0.map { Unicode.Scalar($0) })) },
                fromUTF8: { $0.unicodeScalars.map { $0.value < 256 ? UInt8($0.value) : 0x1A } }))
        let content = PlaylistFile.content(
            ["café.mp3", "http://h/é"], absolutePaths: true, musicDirectory: "/mü", charset: latin1)
        let expected: [UInt8] =
            Array("/m".utf8) + [0xFC] + Array("/caf".utf8) + [0xE9] + Array(".mp3\nhttp://h/".utf8) + [0xE9, 0x0A]
        #expect(content == expected)
        #expect(
            PlaylistFile.editableEntries(content, musicDirectory: "/mü", limit: 10, charset: latin1) == [
                "café.mp3", "http://h/é",
            ])
        // Without one, the bytes stay as they are.
        let raw = PlaylistFile.content(["café.mp3"], absolutePaths: false, musicDirectory: nil, charset: .bytes)
        #expect(raw == Array("café.mp3\n".utf8))
    }

    @Test func linesAreRelativeOrAbsoluteAsConfigured() {
        #expect(PlaylistFile.line(for: "a.mp3", absolutePaths: false, musicDirectory: "/m") == "a.mp3")
        #expect(PlaylistFile.line(for: "a.mp3", absolutePaths: true, musicDirectory: "/m") == "/m/a.mp3")
        #expect(PlaylistFile.line(for: "http://x/y", absolutePaths: true, musicDirectory: "/m") == "http://x/y")
        #expect(PlaylistFile.line(for: "a.mp3", absolutePaths: true, musicDirectory: nil) == nil)
    }

    @Test(arguments: [false, true])
    func songPathsGiveTheLinesTheirURIsGive(absolutePaths: Bool) {
        // A directory, the root, a name that is not UTF-8 (its raw byte), a directory holding one (a `RawText`
        // escape), and a URL between songs of one directory.
        let songs: [(directory: Int32, path: String, name: [UInt8])] = [
            (3, "a/b", Array("one.mp3".utf8)), (3, "a/b", [0x74, 0xE9, 0x2E, 0x6F, 0x67, 0x67]),
            (0, "", Array("root.flac".utf8)), (7, RawText.decode([0x64, 0xFF]), Array("x.mp3".utf8)),
            (3, "a/b", Array("two.mp3".utf8)),
        ]
        var expected = PlaylistFile.Builder(absolutePaths: absolutePaths, musicDirectory: "/m", charset: .bytes)
        var built = PlaylistFile.Builder(absolutePaths: absolutePaths, musicDirectory: "/m", charset: .bytes)
        var asked: [Int32] = []
        for (index, song) in songs.enumerated() {
            let decoded = RawText.decode(song.name)
            expected.append(song.path.isEmpty ? decoded : song.path + "/" + decoded)
            song.name.withUnsafeBufferPointer { name in
                built.append(
                    directory: song.directory,
                    path: {
                        asked.append(song.directory)
                        return song.path
                    }, name: name)
            }
            if index == 1 {
                expected.append("http://h/s")
                built.append("http://h/s")
            }
        }
        #expect(built.bytes == expected.bytes)
        #expect(
            built.bytes.split(separator: 0x0A).count == 6
                && built.bytes.contains(0xE9) && built.bytes.contains(0xFF))
        if !absolutePaths {
            // Asked once for a run of songs of one directory.
            #expect(asked == [3, 0, 7, 3])
        }
    }

    @Test func rawPathsGiveTheLinesTheirURIsGive() {
        // Relative paths with no conversion only: a directory, the root (an empty path), a name that is not UTF-8.
        var expected = PlaylistFile.Builder(absolutePaths: false, musicDirectory: "/m", charset: .bytes)
        var built = PlaylistFile.Builder(absolutePaths: false, musicDirectory: "/m", charset: .bytes)
        #expect(built.takesRelativePaths)
        #expect(!PlaylistFile.Builder(absolutePaths: true, musicDirectory: "/m", charset: .bytes).takesRelativePaths)
        for (path, name) in [("a/b", Array("one.mp3".utf8)), ("", Array("root.flac".utf8)), ("c", [0x74, 0xE9])] {
            let decoded = RawText.decode(name)
            expected.append(path.isEmpty ? decoded : path + "/" + decoded)
            Array(path.utf8).withUnsafeBufferPointer { path in
                name.withUnsafeBufferPointer { built.append(path: path, name: $0) }
            }
        }
        #expect(built.bytes == expected.bytes)
        #expect(built.bytes == Array("a/b/one.mp3\nroot.flac\nc/t".utf8) + [0xE9, 0x0A])
    }

    @Test(arguments: [
        ("a/./b", "a/b"), ("a/../b", "b"), ("../x", "x"), ("a/b/../../c", "c"), ("/m/a.mp3", "/m/a.mp3"),
        ("http://h/a#f", "http://h/a#f"), ("a//b", "a//b"), ("a/b/c.mp3", "a/b/c.mp3"), (".", ""), ("..", ""),
        ("a/.", "a"), ("a/..", ""), ("./a", "a"), ("...", "..."), ("a/.../b", "a/.../b"), (".a/b./..c", ".a/b./..c"),
        ("a/./", "a/"), ("", ""), ("/", "/"), ("a/b/..", "a"), ("x/.mp3", "x/.mp3"),
    ])
    func squash(uri: String, expected: String) {
        #expect(PlaylistFile.squashDotSegments(uri) == expected)
    }
}

@Suite struct PlaylistDirectoryTests {
    let temporary: MusicDirectory
    let directory: PlaylistDirectory

    init() throws {
        self.temporary = try MusicDirectory()
        self.directory = PlaylistDirectory(path: self.temporary.path, musicDirectory: "/music")
    }

    private func text(_ name: String) throws -> String {
        try String(contentsOfFile: self.temporary.path + "/" + name + ".m3u", encoding: .utf8)
    }

    @Test(arguments: ["", "a/b", "a\nb", "a\rb"])
    func badNames(name: String) {
        #expect(!PlaylistDirectory.isValidName(name))
        #expect(throws: StoredPlaylistError(.badName, "Bad playlist name")) { try self.directory.save(name, uris: []) }
    }

    @Test func saveLoadListRenameDelete() throws {
        let name = "Mix [2024] ✓ spaces"
        try self.directory.save(name, uris: ["a.mp3", "http://radio/x#frag"])
        #expect(try self.text(name) == "a.mp3\nhttp://radio/x#frag\n")
        #expect(try self.directory.load(name) == ["a.mp3", "http://radio/x#frag"])
        #expect(try self.directory.list().map(\.name) == [name])
        #expect(throws: StoredPlaylistError(.exists, "Playlist already exists")) {
            try self.directory.create(name, uris: [])
        }
        try self.directory.rename(name, to: "other")
        #expect(throws: StoredPlaylistError.noSuchList) { try self.directory.load(name) }
        try self.directory.save(name, uris: [])
        #expect(throws: StoredPlaylistError(.exists, "Playlist exists already")) {
            try self.directory.rename(name, to: "other")
        }
        try self.directory.delete("other")
        #expect(throws: StoredPlaylistError.noSuchList) { try self.directory.delete("other") }
        #expect(throws: StoredPlaylistError.noSuchList) { try self.directory.clear("other") }
        #expect(throws: StoredPlaylistError.noSuchList) { try self.directory.rename("other", to: "x") }
        // No temporary file is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: self.temporary.path) == [name + ".m3u"])
    }

    @Test func appendKeepsTheFileAsItWas() throws {
        try "#EXTM3U\n# note\nold.mp3\n".write(
            toFile: self.temporary.path + "/p.m3u", atomically: false, encoding: .utf8)
        try self.directory.append("p", uris: ["new.mp3"])
        #expect(try self.text("p") == "#EXTM3U\n# note\nold.mp3\nnew.mp3\n")
        try self.directory.append("fresh", uris: ["x.mp3"])
        #expect(try self.text("fresh") == "x.mp3\n")
    }

    @Test func listSkipsWhatIsNotAPlaylist() throws {
        for file in [".m3u", "a.txt", "b.m3u.tmp", ".hidden.m3u"] {
            try "x\n".write(toFile: self.temporary.path + "/" + file, atomically: false, encoding: .utf8)
        }
        try FileManager.default.createDirectory(
            atPath: self.temporary.path + "/dir.m3u", withIntermediateDirectories: false)
        #expect(try self.directory.list().map(\.name) == [".hidden"])
    }

    @Test func disabledWithoutADirectory() {
        let none = PlaylistDirectory(path: nil, musicDirectory: nil)
        #expect(throws: StoredPlaylistError(.disabled, "Stored playlists are disabled")) { try none.list() }
    }

    @Test func failedWriteKeepsThePreviousFile() throws {
        try self.directory.save("keep", uris: ["a.mp3"])
        // A directory where the temporary file goes makes its creation fail, for root too.
        try FileManager.default.createDirectory(
            atPath: self.temporary.path + "/.keep.m3u.tmp", withIntermediateDirectories: false)
        #expect(throws: StoredPlaylistError.self) { try self.directory.save("keep", uris: ["b.mp3"]) }
        #expect(try self.text("keep") == "a.mp3\n")
        #expect(throws: StoredPlaylistError.self) { try self.directory.append("keep", uris: ["b.mp3"]) }
        #expect(try self.text("keep") == "a.mp3\n")
    }
}
