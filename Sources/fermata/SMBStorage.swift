// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Library
import Posix
import SMBClient

/// An SMB share mounted with `mount smb://server[:port]/share[/path]`, as `mpd`'s smbclient storage plugin reads
/// it: anonymously, through a libsmbclient context of its own. Paths below it are appended to its URI (kept as given, as
/// `listmounts` shows it).
///
/// The format plugins read tags from files, so a song is copied to a temporary file (same suffix) for the scan,
/// which `mpd` instead streams; the player streams it from the share (the smbclient input plugin).
struct SMBStorage: Storage {
    let uri: String
    private let context: SMBContext

    /// A storage for `uri` (an `smb://` URI: the plugin's check was made): no traffic until it is used.
    init(uri: String) throws(SystemCallError) {
        self.uri = uri
        self.context = try SMBContext()
    }

    func playableURI(_ path: String) -> String {
        path.isEmpty ? self.uri : self.uri + (self.uri.hasSuffix("/") ? "" : "/") + path
    }

    func status(_ path: String) throws -> StorageFileStatus {
        let status = try self.context.status(self.playableURI(path))
        let kind: StorageFileStatus.Kind =
            switch status.kind {
            case .regular: .regular
            case .directory: .directory
            case .other: .other
            }
        return StorageFileStatus(kind: kind, size: status.size, modificationTime: status.modificationTime)
    }

    func names(in path: String) throws -> [String] { try self.context.names(in: self.playableURI(path)) }

    func withLocalFile<Result>(_ path: String, _ body: (String) throws -> Result) throws -> Result {
        let suffix = path.utf8.lastIndex(of: UInt8(ascii: ".")).map { String(path[$0...]) } ?? ""
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((directory + "/fermata-smb-XXXXXX" + suffix).utf8CString)
        let descriptor = mkstemps(&template, Int32(suffix.utf8.count))
        guard descriptor >= 0 else {
            throw SystemCallError("Failed to create a temporary file", Errno(rawValue: errno))
        }
        let local = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(local) }
        do {
            defer { close(descriptor) }
            let file = try self.context.open(self.playableURI(path))
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
            defer { buffer.deallocate() }
            while true {
                let count = try file.read(into: buffer)
                if count == 0 { break }
                var written = 0
                while written < count {
                    let result = write(descriptor, buffer.baseAddress! + written, count - written)
                    if result < 0 {
                        if errno == EINTR { continue }
                        throw SystemCallError("Failed to write a temporary file", Errno(rawValue: errno))
                    }
                    written += result
                }
            }
        }
        return try body(local)
    }
}
