// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Posix
import TestSupport
import Testing

@testable import Library

/// An update of one path that reuses the snapshot it starts from (`Database.makeTree(expanding:)`,
/// `Database(tree:…reusing:)`) makes the snapshot an update of the whole tree makes.
@Suite(.serialized)
struct ReusingUpdateTests {
    /// A snapshot as a save leaves it: pruned and sorted.
    private func saved(_ tree: TreeDirectory, reusing previous: Database? = nil) -> Database {
        var tree = tree
        tree.pruneEmpty()
        return Database(tree: tree, updateTime: 1, reusing: previous)
    }

    /// The two snapshots hold the same directories and songs, in the same order, numbered alike.
    private func expectSame(_ whole: Database, _ reused: Database, _ step: String) {
        func directories(_ database: Database) -> [String] {
            database.directories.map { directory in
                "\(Array(directory.path.utf8)) \(directory.modificationTime) \(directory.parent) \(directory.children)"
                    + " \(directory.songs) \(directory.playlists.map(\.name)) \(directory.inode) \(directory.device)"
            }
        }
        func songs(_ database: Database) -> [String] {
            database.songs.map { song in
                "\(Array(song.uri.utf8)) \(song.directory) \(song.modificationTime) \(song.size) \(song.info)"
            }
        }
        func values(_ database: Database) -> Set<String> {
            Set((0..<Int32(database.songs.values.count)).map { database.songs.values[$0] })
        }
        #expect(directories(reused) == directories(whole), "\(step)")
        #expect(songs(reused) == songs(whole), "\(step)")
        // Each value once, and only those a song has.
        #expect(reused.songs.values.count == whole.songs.values.count, "\(step)")
        #expect(values(reused) == values(whole), "\(step)")
        #expect(reused.statistics == whole.statistics, "\(step)")
        for song in whole.songs.indices {
            #expect(reused.song(at: whole.songs.uri(Int32(song))) == Int32(song), "\(step)")
        }
    }

    @Test func anUpdateOfOnePathMakesTheSnapshotOfAnUpdateOfTheWholeTree() throws {
        let music = try MusicDirectory()
        for artist in 0..<4 {
            for album in 0..<3 {
                for track in 0..<3 {
                    try music.song(
                        "Artist \(artist)/Album \(album)/\(track).mp3",
                        [
                            "Artist": "A\(artist)", "Album": "B\(artist)-\(album)", "Title": "T\(track)",
                            "Track": "\(3 - track)",
                        ],
                        mtime: 100)
                }
            }
        }
        try music.song("top.mp3", ["Title": "top"], mtime: 100)
        try writeFile(Array("#EXTM3U\n".utf8), atPath: music.path + "/Artist 1/list.m3u")
        let updater = Updater(root: music.path, reader: FakeReader(), logger: .discarding)
        var current = self.saved(updater.update(TreeDirectory(name: ""), uri: "", discard: false).tree)
        #expect(current.canBeReused)

        let steps: [(name: String, uri: String, discard: Bool, change: () throws -> Void)] = [
            ("nothing changed", "Artist 1", false, {}),
            ("a file added", "Artist 1", false, { try music.song("Artist 1/Album 0/new.mp3", ["Title": "new"]) }),
            (
                "a file removed", "Artist 2/Album 1", false,
                { #expect(unlink(music.path + "/Artist 2/Album 1/1.mp3") == 0) }
            ),
            (
                "a file modified, its old album value used by no other song",
                "Artist 0/Album 2/1.mp3", false,
                { try music.song("Artist 0/Album 2/1.mp3", ["Album": "Changed", "Track": "9"], mtime: 200) }
            ),
            (
                "a file of the root modified", "top.mp3", false,
                { try music.song("top.mp3", ["Title": "again"], mtime: 300) }
            ),
            ("a directory removed", "Artist 3", false, { #expect(system("rm -r '\(music.path)/Artist 3'") == 0) }),
            (
                "a directory added, sorted before the others", "Aardvark", false,
                { try music.song("Aardvark/Album/1.mp3", ["Artist": "Aardvark", "Album": "New"]) }
            ),
            (
                "a directory added below a new one", "New/Deep/Album", false,
                { try music.song("New/Deep/Album/1.mp3", ["Artist": "A1"]) }
            ),
            ("an empty directory added", "Empty", false, { #expect(mkdir(music.path + "/Empty", 0o755) == 0) }),
            (
                "a directory emptied", "Artist 2/Album 0", false,
                { #expect(system("rm '\(music.path)/Artist 2/Album 0/'*.mp3") == 0) }
            ),
            ("a rescan", "Artist 1", true, {}),
            ("a path that is not there", "Nothing/here", false, {}),
        ]
        for step in steps {
            try step.change()
            let whole = updater.update(current.makeTree(), uri: step.uri, discard: step.discard)
            let part = updater.update(current.makeTree(expanding: step.uri), uri: step.uri, discard: step.discard)
            #expect(part.modified == whole.modified, "\(step.name)")
            #expect(!part.tree.holdsPlaylistDirectory, "\(step.name)")
            let reused = self.saved(part.tree, reusing: current)
            self.expectSame(self.saved(whole.tree), reused, step.name)
            // Not saved (nothing modified): the order the update left, as the whole tree's.
            let kept = Database(tree: part.tree, updateTime: 1, sorted: false, reusing: current)
            self.expectSame(Database(tree: whole.tree, updateTime: 1, sorted: false), kept, step.name + " (unsaved)")
            #expect(reused.canBeReused, "\(step.name)")
            current = reused
        }
        // A snapshot with an empty directory (not saved) is not reused.
        #expect(mkdir(music.path + "/Empty 2", 0o755) == 0)
        let unsaved = Database(
            tree: updater.update(current.makeTree(), uri: "", discard: false).tree, updateTime: 1, sorted: false)
        #expect(unsaved.directory(at: "Empty 2") != nil)
        #expect(!unsaved.canBeReused)
    }
}
