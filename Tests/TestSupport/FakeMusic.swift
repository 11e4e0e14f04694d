// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Library
import Model
import Posix
import Synchronization

/// Reads `.mp3` files whose content is `Tag=value` lines; anything else throws. Counts reads.
public final class FakeReader: SongInfoReader {
    public init() {}

    /// How many files were read.
    public let reads = Atomic<Int>(0)

    public func supports(suffix: String) -> Bool { suffix.lowercased() == "mp3" }

    public func readInfo(path: String) throws -> SongInfo {
        self.reads.add(1, ordering: .relaxed)
        // Through Posix, so paths holding `RawText` escapes (names that are not UTF-8) open too.
        guard let bytes = try? readFile(atPath: path), case let text = String(decoding: bytes, as: UTF8.self),
            text.hasPrefix("#fake")
        else {
            throw CocoaError(.fileReadCorruptFile)
        }
        var info = SongInfo(durationMilliseconds: 1044)
        for line in text.split(separator: "\n").dropFirst() {
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let type = TagType(parsing: parts[0]) else { continue }
            info.tags.append(TagItem(type, String(parts[1])))
        }
        return info
    }
}

/// A fresh temporary music directory, removed at the end.
public final class MusicDirectory {
    public let path: String

    public init() throws {
        self.path = NSTemporaryDirectory() + "fermata-library-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: self.path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: self.path) }

    public func song(_ relative: String, _ tags: [String: String] = [:], mtime: Date? = nil) throws {
        let url = URL(fileURLWithPath: self.path + "/" + relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let body = (["#fake"] + tags.sorted(by: { $0.key < $1.key }).map { "\($0)=\($1)" }).joined(separator: "\n")
        try body.write(to: url, atomically: false, encoding: .utf8)
        if let mtime {
            try FileManager.default.setAttributes([.modificationDate: mtime], ofItemAtPath: url.path)
        }
    }
}

