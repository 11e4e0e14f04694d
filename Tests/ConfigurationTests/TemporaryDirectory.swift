// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// A fresh directory under the system temporary directory, removed by ``remove()``.
struct TemporaryDirectory {
    /// The directory's absolute path.
    let path: String

    /// Creates a new, empty directory.
    init() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fermata-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        self.path = url.path
    }

    /// Writes `text` to `name` (which may contain slashes) and returns the file's absolute path.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let file = self.path + "/" + name
        let directory = (file as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }

    /// Creates the subdirectory `name` and returns its absolute path.
    @discardableResult
    func makeDirectory(_ name: String) throws -> String {
        let directory = self.path + "/" + name
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Deletes the directory and everything in it.
    func remove() {
        try? FileManager.default.removeItem(atPath: self.path)
    }
}
