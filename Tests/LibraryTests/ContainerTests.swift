// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Posix
import Synchronization
import TestSupport
import Testing

@testable import Library

/// Reads `.chip` files holding `songs=N`: two or more songs make a container of `tune_00n.chip`.
final class ContainerReader: SongInfoReader {
    let scans = Atomic<Int>(0)

    func supports(suffix: String) -> Bool { suffix == "chip" }

    private func count(_ path: String) -> Int? {
        guard let bytes = try? readFile(atPath: path), case let text = String(decoding: bytes, as: UTF8.self),
            text.hasPrefix("songs=")
        else { return nil }
        return Int(text.dropFirst(6).prefix { $0.isNumber })
    }

    /// No streams: these tests read local files only.
    func readInfo(uri: String) throws -> SongInfo { throw CocoaError(.fileReadUnsupportedScheme) }

    func readInfo(path: String) throws -> SongInfo {
        guard self.count(path) != nil else { throw CocoaError(.fileReadCorruptFile) }
        return SongInfo(tags: [TagItem(.title, "single")], durationMilliseconds: 1000)
    }

    func containerSongs(path: String) -> [(name: String, info: SongInfo)]? {
        self.scans.add(1, ordering: .relaxed)
        guard let count = self.count(path), count >= 2 else { return nil }
        return (1...count).map { n in
            (
                "tune_00\(n).chip",
                SongInfo(tags: [TagItem(.track, "\(n)"), TagItem(.comment, "c")], durationMilliseconds: 150_000)
            )
        }
    }
}

@Suite(.serialized)
struct ContainerTests {
    static let noComment: TagMask = {
        var mask = TagMask.all
        mask.remove(.comment)
        return mask
    }()

    @Test func containerFilesBecomeDirectoriesOfTheirSongs() throws {
        let music = try MusicDirectory()
        try "songs=3".write(toFile: music.path + "/game.chip", atomically: false, encoding: .utf8)
        try "songs=1".write(toFile: music.path + "/one.chip", atomically: false, encoding: .utf8)
        try "junk".write(toFile: music.path + "/junk.chip", atomically: false, encoding: .utf8)
        let reader = ContainerReader()
        let updater = Updater(root: music.path, reader: reader, logger: .discarding, metadata: Self.noComment)
        let first = updater.update(TreeDirectory(name: ""), uri: "", discard: false)
        #expect(first.modified)
        let container = try #require(first.tree.children[ByteString("game.chip")])
        #expect(container.isContainer)
        #expect(container.songs.keys.map(\.text).sorted() == ["tune_001.chip", "tune_002.chip", "tune_003.chip"])
        // metadata_to_use applies to container songs too.
        #expect(container.songs[ByteString("tune_002.chip")]?.info.tags == [TagItem(.track, "2")])
        #expect(first.tree.songs.keys.map(\.text).sorted() == ["one.chip"])
        let database = Database(tree: first.tree, updateTime: 1)
        #expect(database.songs.map(\.uri).contains("game.chip/tune_003.chip"))

        // Unchanged: the container is not scanned again and nothing is modified.
        let scans = reader.scans.load(ordering: .relaxed)
        let again = updater.update(first.tree, uri: "", discard: false)
        #expect(!again.modified)
        #expect(reader.scans.load(ordering: .relaxed) == scans + 1)  // one.chip: a single song is tried again
        // After a reload from the database file, too.
        let path = music.path + "/.db"
        try DatabaseFile.save(database, tags: .all, to: path)
        let loaded = try #require(DatabaseFile.load(from: path, tags: .all))
        #expect(!updater.update(loaded.makeTree(), uri: "", discard: false).modified)

        // As in mpd, updating a container song's URI deletes it: it is no file on disk.
        let pruned = updater.update(again.tree, uri: "game.chip/tune_002.chip", discard: false)
        #expect(pruned.modified)
        #expect(
            pruned.tree.children[ByteString("game.chip")]?.songs.keys.map(\.text).sorted() == [
                "tune_001.chip", "tune_003.chip",
            ])
        #expect(!updater.update(pruned.tree, uri: "game.chip/tune_009.chip", discard: false).modified)
        #expect(!updater.update(pruned.tree, uri: "game.chip/tune_001.chip/x", discard: false).modified)

        // A container that shrinks to one song becomes an ordinary song; one that grows, a container.
        try "songs=1 ".write(toFile: music.path + "/game.chip", atomically: false, encoding: .utf8)
        try "songs=2".write(toFile: music.path + "/one.chip", atomically: false, encoding: .utf8)
        let changed = updater.update(again.tree, uri: "", discard: true)
        #expect(changed.modified)
        #expect(changed.tree.children[ByteString("game.chip")] == nil)
        #expect(changed.tree.songs[ByteString("game.chip")] != nil)
        #expect(changed.tree.children[ByteString("one.chip")]?.songs.count == 2)
        #expect(changed.tree.songs[ByteString("one.chip")] == nil)

        // A deleted container file takes its songs along.
        try FileManager.default.removeItem(atPath: music.path + "/one.chip")
        let removed = updater.update(changed.tree, uri: "", discard: false)
        #expect(removed.modified)
        #expect(removed.tree.children[ByteString("one.chip")] == nil)
    }
}
