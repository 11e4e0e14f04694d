// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Sticker
import TestSupport
import Testing

@Suite struct StickerDatabaseTests {
    let directory: MusicDirectory
    var path: String { self.directory.path + "/sticker.sql" }

    init() throws { self.directory = try MusicDirectory() }

    @Test func setGetUpdateAndList() throws {
        let database = try StickerDatabase(path: self.path)
        #expect(try database.value(type: "song", uri: "a.mp3", name: "rating") == nil)
        #expect(try database.store(type: "song", uri: "a.mp3", name: "rating", value: "5"))
        #expect(try database.store(type: "song", uri: "a.mp3", name: "rating", value: "7"))
        #expect(try database.store(type: "song", uri: "a.mp3", name: "Zeta", value: "z"))
        #expect(try database.store(type: "song", uri: "a.mp3", name: "alpha", value: "a"))
        #expect(try database.value(type: "song", uri: "a.mp3", name: "rating") == "7")
        let listed = try database.values(type: "song", uri: "a.mp3")
        #expect(listed.map(\.name) == ["Zeta", "alpha", "rating"])
        #expect(listed.map(\.value) == ["z", "a", "7"])
        #expect(try database.values(type: "song", uri: "b.mp3").isEmpty)
    }

    @Test func emptyNameAndEmptyValueReadAsNone() throws {
        let database = try StickerDatabase(path: self.path)
        #expect(try !database.store(type: "song", uri: "a.mp3", name: "", value: "x"))
        #expect(try database.store(type: "song", uri: "a.mp3", name: "blank", value: ""))
        #expect(try database.value(type: "song", uri: "a.mp3", name: "blank") == nil)
        #expect(try database.value(type: "song", uri: "a.mp3", name: "") == nil)
        #expect(try database.values(type: "song", uri: "a.mp3").map(\.name) == ["blank"])
    }

    @Test func deleteOneAndAll() throws {
        let database = try StickerDatabase(path: self.path)
        _ = try database.store(type: "song", uri: "a.mp3", name: "x", value: "1")
        _ = try database.store(type: "song", uri: "a.mp3", name: "y", value: "2")
        #expect(try database.delete(type: "song", uri: "a.mp3", name: "x"))
        #expect(try !database.delete(type: "song", uri: "a.mp3", name: "x"))
        #expect(try database.delete(type: "song", uri: "a.mp3"))
        #expect(try !database.delete(type: "song", uri: "a.mp3"))
        #expect(try database.values(type: "song", uri: "a.mp3").isEmpty)
    }

    @Test func findComparesAsText() throws {
        let database = try StickerDatabase(path: self.path)
        for (uri, value) in [("d/a.mp3", "10"), ("d/b.mp3", "9"), ("e/c.mp3", "5")] {
            _ = try database.store(type: "song", uri: uri, name: "rating", value: value)
        }
        _ = try database.store(type: "song", uri: "d/a.mp3", name: "other", value: "1")
        #expect(
            Set(try database.find(type: "song", prefix: "", name: "rating", comparison: .exists).map(\.uri)) == [
                "d/a.mp3", "d/b.mp3", "e/c.mp3",
            ])
        #expect(try database.find(type: "song", prefix: "d/", name: "rating", comparison: .exists).count == 2)
        #expect(
            try database.find(type: "song", prefix: "", name: "rating", comparison: .equals("9")).map(\.uri) == [
                "d/b.mp3"
            ])
        // Text order: "10" < "5" < "9".
        #expect(
            Set(try database.find(type: "song", prefix: "", name: "rating", comparison: .lessThan("6")).map(\.uri))
                == ["d/a.mp3", "e/c.mp3"])
        #expect(
            try database.find(type: "song", prefix: "", name: "rating", comparison: .greaterThan("6")).map(\.uri)
                == ["d/b.mp3"])
    }

    @Test func changesSurviveReopening() throws {
        do {
            let database = try StickerDatabase(path: self.path)
            _ = try database.store(type: "song", uri: "a.mp3", name: "rating", value: "3")
        }
        let reopened = try StickerDatabase(path: self.path)
        #expect(try reopened.value(type: "song", uri: "a.mp3", name: "rating") == "3")
    }

    @Test func usesMPDSchemaAndWAL() throws {
        _ = try StickerDatabase(path: self.path)
        let header = try Data(contentsOf: URL(fileURLWithPath: self.path)).prefix(20)
        #expect(Array(header.prefix(15)) == Array("SQLite format 3".utf8))
        // File format bytes 18 and 19 are 2 in WAL mode.
        #expect(header[18] == 2 && header[19] == 2)
    }

    @Test func refusesAFileThatIsNotADatabase() throws {
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: self.path))
        #expect(throws: StickerError.self) { try StickerDatabase(path: self.path) }
        #expect(throws: StickerError.self) { try StickerDatabase(path: self.directory.path + "/missing/dir/s.sql") }
    }
}
