// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Synchronization
import Testing
import TestSupport

@testable import Library

@Suite(.serialized)
struct UpdaterTests {
    private func scan(_ music: MusicDirectory, reader: FakeReader, tree: TreeDirectory = TreeDirectory(name: ""),
                      uri: String = "", discard: Bool = false) -> Updater.Result {
        Updater(root: music.path, reader: reader, logger: .discarding).update(tree, uri: uri, discard: discard)
    }

    @Test func scansAndOrdersLikeMPD() throws {
        let music = try MusicDirectory()
        try music.song("b/2.mp3", ["Album": "Z", "Track": "2"])
        try music.song("b/1.mp3", ["Album": "Z", "Track": "10"])
        try music.song("b/0.mp3", ["Album": "A"])
        try music.song("A/x.mp3")
        try music.song("top.mp3")
        try "not music".write(toFile: music.path + "/notes.txt", atomically: false, encoding: .utf8)
        try "garbage".write(toFile: music.path + "/broken.mp3", atomically: false, encoding: .utf8)
        let reader = FakeReader()
        let result = self.scan(music, reader: reader)
        #expect(result.modified)
        let database = Database(tree: result.tree, updateTime: 1)
        #expect(database.songs.map(\.uri) == ["top.mp3", "A/x.mp3", "b/0.mp3", "b/2.mp3", "b/1.mp3"])
        #expect(database.directories.map(\.path) == ["", "A", "b"])
        #expect(database.songs(with: .album, value: "Z").count == 2)
        #expect(database.statistics.songs == 5)
        #expect(database.statistics.albums == 2)
    }

    @Test func unchangedFilesAreNotReadAgainAndDeletionsDisappear() throws {
        let music = try MusicDirectory()
        let old = Date(timeIntervalSince1970: 1_600_000_000)
        try music.song("a/1.mp3", mtime: old)
        try music.song("a/2.mp3", mtime: old)
        let reader = FakeReader()
        let first = self.scan(music, reader: reader)
        #expect(reader.reads.load(ordering: .relaxed) == 2)
        let second = self.scan(music, reader: reader, tree: first.tree)
        #expect(reader.reads.load(ordering: .relaxed) == 2)
        #expect(!second.modified)
        try FileManager.default.removeItem(atPath: music.path + "/a/2.mp3")
        let third = self.scan(music, reader: reader, tree: second.tree)
        #expect(third.modified)
        #expect(Database(tree: third.tree, updateTime: 0).songs.map(\.uri) == ["a/1.mp3"])
        let rescan = self.scan(music, reader: reader, tree: third.tree, discard: true)
        #expect(reader.reads.load(ordering: .relaxed) == 3)
        #expect(rescan.modified)
    }

    @Test func partialUpdateTouchesOnlyItsPath() throws {
        let music = try MusicDirectory()
        try music.song("a/1.mp3")
        let reader = FakeReader()
        let first = self.scan(music, reader: reader)
        try music.song("b/new.mp3")
        try music.song("a/2.mp3")
        let partial = self.scan(music, reader: reader, tree: first.tree, uri: "b")
        #expect(Database(tree: partial.tree, updateTime: 0).songs.map(\.uri) == ["a/1.mp3", "b/new.mp3"])
        try FileManager.default.removeItem(atPath: music.path + "/b")
        let gone = self.scan(music, reader: reader, tree: partial.tree, uri: "b")
        #expect(Database(tree: gone.tree, updateTime: 0).directories.map(\.path) == ["", "a"])
    }

    @Test func symlinkLoopsAndUnreadableDirectoriesDoNotStopTheScan() throws {
        let music = try MusicDirectory()
        try music.song("a/1.mp3")
        try FileManager.default.createSymbolicLink(atPath: music.path + "/a/loop", withDestinationPath: "..")
        try music.song("locked/x.mp3")
        chmod(music.path + "/locked", 0)
        defer { chmod(music.path + "/locked", 0o755) }
        let result = self.scan(music, reader: FakeReader())
        let uris = Database(tree: result.tree, updateTime: 0).songs.map(\.uri)
        #expect(uris.contains("a/1.mp3"))
        #expect(!uris.contains(where: { $0.contains("loop/loop") }))
    }

    @Test func mpdignoreExcludes() throws {
        let music = try MusicDirectory()
        try music.song("keep.mp3")
        try music.song("skip-me.mp3")
        try "skip-*\n".write(toFile: music.path + "/.mpdignore", atomically: false, encoding: .utf8)
        let result = self.scan(music, reader: FakeReader())
        #expect(Database(tree: result.tree, updateTime: 0).songs.map(\.uri) == ["keep.mp3"])
    }
}

struct DatabaseFileTests {
    @Test func roundTripsAndRejectsDamage() throws {
        let music = try MusicDirectory()
        try music.song("d ir/s ong.mp3", ["Artist": "Ä  b", "Title": "x y", "Album": "[1]"])
        try music.song("d ir/sub/t.mp3", ["Artist": "A"])
        let tree = Updater(root: music.path, reader: FakeReader(), logger: .discarding).update(
            TreeDirectory(name: ""), uri: "", discard: false
        ).tree
        let file = music.path + "/db"
        try DatabaseFile.save(tree, updateTime: 42, tags: .defaultMetadata, to: file)
        let loaded = try #require(DatabaseFile.load(from: file, tags: .defaultMetadata))
        #expect(loaded.updateTime == 42)
        #expect(loaded.tree == tree)
        #expect(DatabaseFile.load(from: file, tags: .all) == nil, "another tag set means a rescan")
        #expect(DatabaseFile.load(from: music.path + "/missing", tags: .defaultMetadata) == nil)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        for cut in [5, bytes.count / 2, bytes.count - 3] {
            try Data(bytes[0..<cut] + [0x51, 10]).write(to: URL(fileURLWithPath: file))
            #expect(DatabaseFile.load(from: file, tags: .defaultMetadata) == nil)
        }
        bytes = Array("fermata-db 0\n".utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        #expect(DatabaseFile.load(from: file, tags: .defaultMetadata) == nil)
    }
}
