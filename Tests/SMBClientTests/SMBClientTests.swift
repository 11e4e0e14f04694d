// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Input
import Posix
import SMBClient
import Synchronization
import TestTools
import Testing

/// A real `smbd` serving a read-only guest share of a few files, on 127.0.0.1 only (no nmbd, no NetBIOS), at a
/// free high port; one for each test (it starts in a few tenths of a second), stopped when released or when the
/// test process ends.
final class LoopbackSMBServer: Sendable {
    let directory: String
    let port: Int
    private let pid: pid_t
    /// The writing end of smbd's standard input.
    private let standardInput: Int32

    /// The names and contents of the share's files (`sub/c.bin` in a subdirectory).
    static let files: [(String, [UInt8])] = [
        ("a.bin", Array("first file\n".utf8)),
        ("b.bin", (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }),
        ("sub/c.bin", Array("deep\n".utf8)),
    ]

    init() throws {
        var template = Array("/tmp/fermata-smb-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ToolError(description: "mkdtemp: \(errno)") }
        self.directory = String(cString: made)
        chmod(self.directory, 0o755)
        for sub in ["share", "share/sub", "state"] { mkdir(self.directory + "/" + sub, 0o755) }
        for (name, bytes) in Self.files {
            let path = self.directory + "/share/" + name
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        self.port = try Self.freePort()
        let state = self.directory + "/state"
        let config = """
            [global]
              interfaces = 127.0.0.1
              bind interfaces only = yes
              smb ports = \(self.port)
              disable netbios = yes
              server role = standalone server
              map to guest = Bad User
              private dir = \(state)
              lock directory = \(state)
              state directory = \(state)
              cache directory = \(state)
              pid directory = \(state)
              ncalrpc dir = \(state)/ncalrpc
              log file = \(state)/log
              load printers = no
              printing = bsd
              printcap name = /dev/null
              disable spoolss = yes
            [share]
              path = \(self.directory)/share
              guest ok = yes
              read only = yes

            """
        let configPath = self.directory + "/smb.conf"
        let fd = open(configPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = Array(config.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)

        // smbd in the foreground exits when its standard input ends, and then signals its whole process group:
        // a group of its own, and a pipe whose other end only this process holds, so that it stops with the test
        // process however that ends (a global is never deinitialised).
        var stdin: [Int32] = [0, 0]
        guard pipe(&stdin) == 0 else { throw ToolError(description: "pipe: \(errno)") }
        for fd in stdin { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin[0], 0)
        posix_spawn_file_actions_addopen(&actions, 1, state + "/stdout", O_WRONLY | O_CREAT, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        let arguments = ["/usr/sbin/smbd", "--foreground", "--no-process-group", "--configfile=" + configPath]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ)
        close(stdin[0])
        guard spawned == 0 else {
            close(stdin[1])
            throw ToolError(description: "smbd: \(spawned)")
        }
        self.standardInput = stdin[1]
        self.pid = pid
        // Ready once it accepts connections (smbd takes about a second to start).
        for _ in 0..<500 {
            if Self.accepts(port: self.port) { return }
            usleep(20_000)
        }
        close(self.standardInput)
        kill(pid, SIGTERM)
        throw ToolError(description: "smbd did not listen on 127.0.0.1:\(self.port)")
    }

    deinit {
        close(self.standardInput)
        kill(self.pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(self.pid, &status, 0) < 0 && errno == EINTR {}
        _ = try? runTool("/bin/rm", ["-rf", self.directory])
    }

    /// `smb://127.0.0.1:PORT/share`.
    var shareURL: String { "smb://127.0.0.1:\(self.port)/share" }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7f00_0001).bigEndian)
        return address
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw ToolError(description: "bind: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = Self.loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

@Suite struct SMBClientTests {
    @Test func listsTheShareAndItsSubdirectory() throws {
        let server = try LoopbackSMBServer()
        let context = try SMBContext()
        #expect(try context.names(in: server.shareURL).sorted() == ["a.bin", "b.bin", "sub"])
        #expect(try context.names(in: server.shareURL + "/sub") == ["c.bin"])
        #expect(try context.status(server.shareURL).kind == .directory)
        #expect(try context.status(server.shareURL + "/sub").kind == .directory)
    }

    @Test func statusGivesKindSizeAndModificationTime() throws {
        let server = try LoopbackSMBServer()
        let context = try SMBContext()
        let status = try context.status(server.shareURL + "/b.bin")
        #expect(status.kind == .regular)
        #expect(status.size == 70_000)
        var local = stat()
        #expect(stat(server.directory + "/share/b.bin", &local) == 0)
        #expect(status.modificationTime == Int64(local.st_mtim.tv_sec))
    }

    @Test func readsAndSeeksAFile() throws {
        let server = try LoopbackSMBServer()
        let context = try SMBContext()
        let expected = LoopbackSMBServer.files[1].1
        let file = try context.open(server.shareURL + "/b.bin")
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = try chunk.withUnsafeMutableBytes { try file.read(into: $0) }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        #expect(bytes == expected)
        try file.seek(to: 65_000)
        let count = try chunk.withUnsafeMutableBytes { try file.read(into: $0) }
        #expect(Array(chunk[0..<count]) == Array(expected[65_000...]))
    }

    @Test func missingFilesAndSharesFailWithErrno() throws {
        let server = try LoopbackSMBServer()
        let context = try SMBContext()
        #expect(throws: SMBError("Failed to access file", code: ENOENT)) {
            try context.status(server.shareURL + "/missing.bin")
        }
        #expect(throws: SMBError("Failed to open directory", code: ENOENT)) {
            try context.names(in: server.shareURL + "/missing")
        }
        #expect(throws: SMBError.self) { try context.open(server.shareURL + "/missing.bin") }
        // A share the server does not have.
        #expect(throws: SMBError.self) {
            try context.names(in: "smb://127.0.0.1:\(server.port)/noshare")
        }
    }

    @Test func inputStreamReadsSeeksAndReportsItsSize() throws {
        let server = try LoopbackSMBServer()
        let expected = LoopbackSMBServer.files[1].1
        #expect(SMBInputStream.canOpen(server.shareURL + "/b.bin"))
        #expect(SMBInputStream.canOpen("SMB://127.0.0.1/share/b.bin"))
        #expect(!SMBInputStream.canOpen("smb://"))
        #expect(!SMBInputStream.canOpen("http://127.0.0.1/b.bin"))
        let stream = try SMBInputStream(url: server.shareURL + "/b.bin")
        #expect(stream.size == 70_000)
        #expect(stream.isSeekable)
        #expect(try stream.readToEnd(limit: 1 << 20) == expected)
        #expect(stream.offset == 70_000)
        try stream.seek(to: 100)
        #expect(try stream.readBytes(4) == Array(expected[100..<104]))
        #expect(throws: InputError.notSeekable(uri: stream.uri)) { try stream.seek(to: 70_001) }
    }

    @Test func inputStreamErrorsNameLibsmbclientsCall() throws {
        let server = try LoopbackSMBServer()
        let url = server.shareURL + "/missing.bin"
        #expect(throws: InputError.io(SystemCallError("smbc_open() failed", Errno(rawValue: ENOENT)), uri: url)) {
            try SMBInputStream(url: url)
        }
        let directory = server.shareURL + "/sub"
        #expect(throws: InputError.io(SystemCallError("smbc_open() failed", Errno(rawValue: EISDIR)), uri: directory)) {
            try SMBInputStream(url: directory)
        }
    }
}
