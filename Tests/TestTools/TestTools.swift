// SPDX-License-Identifier: GPL-3.0-or-later

// Making test files with Debian's tools (sox, flac, lame, oggenc…), shared by the wrapper and format test
// targets. Plain Glibc, not Foundation: a module that imports Foundation and sees ICU's C headers (through
// Library) does not build (`'UErrorCode' has different definitions in different modules`).

import Posix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A tool that could not be started or exited unsuccessfully: its command line and its standard error.
public struct ToolError: Error, CustomStringConvertible {
    public var description: String

    /// A failure described by `description`.
    public init(description: String) { self.description = description }
}

/// Runs `tool` (an absolute path) with `arguments`, standard input from `/dev/null`, and waits for it.
///
/// - Returns: what it wrote to standard output.
/// - Throws: `ToolError` when it cannot start or exits with a failure status (its standard error included).
@discardableResult
public func runTool(_ tool: String, _ arguments: [String]) throws -> [UInt8] {
    // Close-on-exec from the start: a process that another thread spawns meanwhile (a test's HTTP server) must
    // not inherit the write ends, or the reads below never see their end while it runs (a unit run hung so).
    let output: [Int32]
    let errors: [Int32]
    do {
        let (outputRead, outputWrite) = try FileDescriptor.pipe(nonBlocking: false)
        output = [outputRead.rawValue, outputWrite.rawValue]
        do {
            let (errorsRead, errorsWrite) = try FileDescriptor.pipe(nonBlocking: false)
            errors = [errorsRead.rawValue, errorsWrite.rawValue]
        } catch {
            close(output[0])
            close(output[1])
            throw error
        }
    } catch {
        throw ToolError(description: "pipe: \(error)")
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, output[1], 1)
    posix_spawn_file_actions_adddup2(&actions, errors[1], 2)
    for fd in output + errors { posix_spawn_file_actions_addclose(&actions, fd) }

    let argv = ([tool] + arguments).map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, tool, &actions, nil, argv, environ)
    close(output[1])
    close(errors[1])
    defer {
        close(output[0])
        close(errors[0])
    }
    guard spawned == 0 else { throw ToolError(description: "\(tool): \(Errno(rawValue: spawned))") }

    let (out, err) = drain(output[0], errors[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    // WIFEXITED && WEXITSTATUS == 0, spelled out: Glibc's macros are not imported into Swift.
    guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
        throw ToolError(description: "\(tool) \(arguments): status \(status): \(String(decoding: err, as: UTF8.self))")
    }
    return out
}

/// Reads two pipes to their ends at once, so that a tool filling one never blocks on the other.
private func drain(_ first: Int32, _ second: Int32) -> ([UInt8], [UInt8]) {
    var results: [[UInt8]] = [[], []]
    var fds = [
        pollfd(fd: first, events: Int16(POLLIN), revents: 0), pollfd(fd: second, events: Int16(POLLIN), revents: 0),
    ]
    var chunk = [UInt8](repeating: 0, count: 65536)
    while fds.contains(where: { $0.fd >= 0 }) {
        guard poll(&fds, nfds_t(fds.count), -1) >= 0 else {
            if errno == EINTR { continue }
            break
        }
        for index in fds.indices where fds[index].fd >= 0 && fds[index].revents != 0 {
            let count = chunk.withUnsafeMutableBytes { read(fds[index].fd, $0.baseAddress, $0.count) }
            if count > 0 {
                results[index].append(contentsOf: chunk[0..<count])
            } else if count == 0 || errno != EINTR {
                fds[index].fd = -1
            }
        }
    }
    return (results[0], results[1])
}

/// The files one test process makes, each once, in a temporary directory of its own.
///
/// Safe to use from parallel tests: making a file holds a lock, and a file appears under its name only once
/// it is complete (it is made under a `.partial-` prefix that keeps the suffix tools infer a format from, then
/// renamed).
public final class MadeFiles: Sendable {
    /// The directory, `$TMPDIR/fermata-LABEL-PID` (made if missing).
    public let directory: String
    private let lock = Mutex(())

    /// Files under `$TMPDIR/fermata-label-PID`.
    public convenience init(_ label: String) {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        self.init(directory: "\(base)/fermata-\(label)-\(getpid())")
    }

    /// Files under `directory` (made if missing; its parent must exist).
    public init(directory: String) {
        self.directory = directory
        mkdir(directory, 0o755)
    }

    /// The path of `name`, made by `make(path)` unless an earlier call made it.
    ///
    /// - Throws: what `make` throws, or an `Errno` if the finished file cannot be renamed into place.
    public func file(_ name: String, _ make: (String) throws -> Void) throws -> String {
        let path = self.directory + "/" + name
        return try self.lock.withLock { _ throws -> String in
            if access(path, F_OK) == 0 { return path }
            let temporary = self.directory + "/.partial-" + name
            try make(temporary)
            try renameFile(temporary, to: path)
            return path
        }
    }

    /// The path of `name`, written with `bytes` unless an earlier call wrote it.
    ///
    /// - Throws: the write's `SystemCallError`.
    public func file(_ name: String, bytes: [UInt8]) throws -> String {
        try self.file(name) { path in try writeFile(bytes, atPath: path) }
    }
}

/// Writes a WAV of a sine sweep from 200 to 2000 Hz at half scale (sox), the source most tests encode.
///
/// - Throws: `ToolError` from sox.
public func makeSweep(at path: String, rate: Int, channels: Int, bits: Int = 16, seconds: String) throws {
    try runTool(
        "/usr/bin/sox",
        [
            "-R", "-D", "-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "\(bits)", path, "synth", seconds, "sine",
            "200-2000", "vol", "0.5",
        ])
}

/// The bytes of the file at `path`.
///
/// - Throws: the read's `SystemCallError`.
public func fileBytes(_ path: String) throws -> [UInt8] {
    try readFile(atPath: path)
}

/// Copies the file at `source` to `target` (replacing it).
///
/// - Throws: the read's or the write's `SystemCallError`.
public func copyFile(_ source: String, to target: String) throws {
    try writeFile(try readFile(atPath: source), atPath: target)
}

/// Renames the file at `path` to `target`.
///
/// - Throws: `Errno` from `rename(2)`.
public func renameFile(_ path: String, to target: String) throws {
    guard rename(path, target) == 0 else { throw Errno.current }
}

/// Removes the file at `path` if it exists (a tool's intermediate output).
public func removeFile(_ path: String) {
    _ = unlink(path)
}
