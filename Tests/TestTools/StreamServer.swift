// SPDX-License-Identifier: GPL-3.0-or-later

// `tools/streamserver.py` (the test HTTP server on 127.0.0.1) as a child of the test process.

import Posix

#if canImport(Glibc)
    import Glibc
#endif

/// A running `tools/streamserver.py` (or `tools/webdavserver.py`) serving a directory on 127.0.0.1; stopped (SIGTERM, then reaped) when
/// released. Its URL scheme is in the script's docstring. The server also stops by itself when the test process
/// goes away.
///
/// Any thread: immutable after start.
public final class StreamServer: Sendable {
    /// The port it listens on (127.0.0.1 only).
    public let port: Int
    /// The directory it serves.
    public let root: String
    private let pid: pid_t

    /// The repository's `tools/streamserver.py`, found from this file's path.
    public static let script: String = {
        var path = #filePath
        for _ in 0..<3 {
            while let last = path.last, last != "/" { path.removeLast() }
            path.removeLast()
        }
        return path + "/tools/streamserver.py"
    }()

    /// The repository's `tools/webdavserver.py` (the same command line, a WebDAV server).
    public static var webDAVScript: String {
        String(Self.script.dropLast("streamserver.py".count)) + "webdavserver.py"
    }

    /// Starts the server (`script`: `tools/streamserver.py` unless told) for `root` and waits (up to 30 s) until it
    /// listens.
    ///
    /// - Throws: `ToolError` when python3 cannot start or the server never reports its port.
    public init(root: String, script: String = StreamServer.script) throws {
        self.root = root
        let portFile = root + "/.streamserver-port"
        _ = unlinkPath(portFile)
        let python = "/usr/bin/python3"
        let arguments = [python, script, "--root", root, "--port-file", portFile, "--lifetime", "900"]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, root + "/.streamserver-log", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, python, &actions, nil, argv, environ)
        guard spawned == 0 else { throw ToolError(description: "\(python): \(Errno(rawValue: spawned))") }
        self.pid = pid
        var port = 0
        for _ in 0..<600 {
            if let bytes = try? readFile(atPath: portFile),
                let number = Int(String(decoding: bytes.filter { $0 >= 0x30 && $0 <= 0x39 }, as: UTF8.self))
            {
                port = number
                break
            }
            usleep(50_000)
        }
        guard port > 0 else {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            throw ToolError(description: "streamserver.py did not report its port")
        }
        self.port = port
    }

    deinit {
        kill(self.pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(self.pid, &status, 0) < 0 && errno == EINTR {}
    }

    /// `http://127.0.0.1:PORT` followed by `path` (which starts with `/`).
    public func url(_ path: String) -> String { "http://127.0.0.1:\(self.port)\(path)" }
}
