// SPDX-License-Identifier: GPL-3.0-or-later

import CLinux
import Glibc

/// Linux inotify, named after its C functions.
public enum Inotify {
    /// One event: the watch it came from, what happened, and the name inside the watched directory.
    public struct Event: Sendable, Hashable {
        /// The watch descriptor.
        public var watch: Int32
        /// The `IN_*` bits.
        public var mask: UInt32
        /// The entry's name, or "" for events about the watched directory itself.
        public var name: String

        /// `IN_IGNORED`: the watch is gone (removed, or its directory deleted).
        public var isWatchRemoved: Bool { self.mask & UInt32(IN_IGNORED) != 0 }
    }

    /// What a music-directory watch reports: files written or moved, entries created or deleted, and the
    /// directory itself going away.
    public static let libraryMask: UInt32 =
        UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_FROM) | UInt32(IN_MOVED_TO) | UInt32(IN_CREATE)
        | UInt32(IN_DELETE) | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_ONLYDIR)

    /// Creates a non-blocking, close-on-exec inotify instance.
    ///
    /// The corresponding C function is `inotify_init1`.
    public static func inotify_init() throws(SystemCallError) -> FileDescriptor {
        FileDescriptor(rawValue: try syscall("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) })
    }

    /// Watches `path` for `mask`; returns the watch descriptor.
    ///
    /// The corresponding C function is `inotify_add_watch`.
    public static func inotify_add_watch(
        _ fd: FileDescriptor, path: String, mask: UInt32
    ) throws(SystemCallError) -> Int32 {
        try syscall("inotify_add_watch") {
            FileSystemCharset.withFilePath(path) { CLinux.inotify_add_watch(fd.rawValue, $0, mask) }
        }
    }

    /// Stops a watch. A watch the kernel already dropped (its directory was deleted) is not an error.
    ///
    /// The corresponding C function is `inotify_rm_watch`.
    public static func inotify_rm_watch(_ fd: FileDescriptor, watch: Int32) {
        _ = CLinux.inotify_rm_watch(fd.rawValue, watch)
    }

    /// Reads every pending event (none when nothing is pending).
    public static func readEvents(_ fd: FileDescriptor) -> [Event] {
        var events: [Event] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd.rawValue, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let (watch, mask, length) = buffer.withUnsafeBytes { raw in
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (event.wd, event.mask, Int(event.len))
                }
                let nameBytes = buffer[(offset + header)..<min(offset + header + length, count)]
                let name = FileSystemCharset.decode(nameBytes.prefix(while: { $0 != 0 }))
                events.append(Event(watch: watch, mask: mask, name: name))
                offset += header + length
            }
        }
        return events
    }
}
