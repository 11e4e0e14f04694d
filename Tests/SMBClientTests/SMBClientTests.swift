// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Input
import Model
import Posix
import Synchronization
import TestTools
import Testing

@testable import SMBClient

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
        // Close-on-exec from the start, so that no process another thread spawns holds the write end.
        let (stdinRead, stdinWrite) = try FileDescriptor.pipe(nonBlocking: false)
        let stdin = [stdinRead.rawValue, stdinWrite.rawValue]
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
        kill(-self.pid, SIGCONT)
        kill(self.pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(self.pid, &status, 0) < 0 && errno == EINTR {}
        _ = try? runTool("/bin/rm", ["-rf", self.directory])
    }

    /// Stops every smbd process of the server (the one that serves a connection too) and returns once each is
    /// stopped: the share goes silent, connections stay open.
    func stop() {
        kill(-self.pid, SIGSTOP)
        for _ in 0..<500 {
            if self.groupIsStopped() { return }
            usleep(10_000)
        }
    }

    /// Whether every process of smbd's group shows state `T` (or `Z`) in `/proc/PID/stat`.
    private func groupIsStopped() -> Bool {
        let names = (try? DirectoryEntries.names(in: "/proc")) ?? []
        for name in names where name.allSatisfy(\.isNumber) {
            guard let bytes = try? readFile(atPath: "/proc/\(name)/stat"),
                let close = bytes.lastIndex(of: UInt8(ascii: ")"))
            else { continue }
            // After the command's `)`: state, parent, process group.
            let fields = bytes[(close + 2)...].split(separator: UInt8(ascii: " "))
            guard fields.count > 2, String(decoding: fields[2], as: UTF8.self) == "\(self.pid)" else { continue }
            // Stopped, or a zombie (smbd leaves one behind at start).
            if fields[0].first != UInt8(ascii: "T") && fields[0].first != UInt8(ascii: "Z") { return false }
        }
        return true
    }

    /// Lets the stopped processes go on.
    func resume() { kill(-self.pid, SIGCONT) }

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
        #expect(throws: SystemCallError("Failed to access file", Errno(rawValue: ENOENT))) {
            try context.status(server.shareURL + "/missing.bin")
        }
        #expect(throws: SystemCallError("Failed to open directory", Errno(rawValue: ENOENT))) {
            try context.names(in: server.shareURL + "/missing")
        }
        #expect(throws: SystemCallError.self) { try context.open(server.shareURL + "/missing.bin") }
        // A share the server does not have.
        #expect(throws: SystemCallError.self) {
            try context.names(in: "smb://127.0.0.1:\(server.port)/noshare")
        }
    }

    @Test func inputStreamReadsSeeksAndReportsItsSize() throws {
        let server = try LoopbackSMBServer()
        let expected = LoopbackSMBServer.files[1].1
        #expect(SMBInputStream.canOpen(server.shareURL + "/b.bin"))
        #expect(SMBInputStream.canOpen("SMB://127.0.0.1/share/b.bin"))
        // As mpd's prefix test: a bare scheme too (opening it fails).
        #expect(SMBInputStream.canOpen("smb://"))
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
        let missing = InputError.plugin(message: "smbc_open() failed: No such file or directory", uri: url)
        #expect(throws: missing) { try SMBInputStream(url: url) }
        #expect(missing.mpdMessage == "smbc_open() failed: No such file or directory")
        let directory = server.shareURL + "/sub"
        #expect(throws: InputError.plugin(message: "smbc_open() failed: Is a directory", uri: directory)) {
            try SMBInputStream(url: directory)
        }
    }

    @Test func aCancelledReadReturnsWhileTheShareIsStopped() throws {
        let server = try LoopbackSMBServer()
        let expected = LoopbackSMBServer.files[1].1
        let cancellation = InputCancellation()
        let stream = try SMBInputStream(url: server.shareURL + "/b.bin", cancellation: cancellation)
        #expect(try stream.readBytes(4) == Array(expected[0..<4]))
        // Back to the start: the read-ahead is dropped and the helper asks the silent server again.
        server.stop()
        defer { server.resume() }
        NamedThread.detach("canceller") {
            usleep(200_000)
            cancellation.cancel()
        }
        // Without the helper thread this waits for libsmbclient's timeout and fails another way; the share
        // is resumed only after the cancelled read returned.
        #expect(throws: InputError.cancelled(uri: stream.uri)) {
            try stream.seek(to: 0)
            _ = try stream.readBytes(4)
        }
        #expect(throws: InputError.cancelled(uri: stream.uri)) { _ = try stream.readBytes(1) }
    }

    @Test func aStreamReadsAheadAcrossItsBufferAndSeeksBack() throws {
        let size = SMBInputStream.bufferSize * 2 + 12_345
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let probe = FileProbe()
        let stream = try probe.stream(of: bytes)
        #expect(stream.size == UInt64(size))
        #expect(try stream.readToEnd(limit: size + 1) == bytes)
        try stream.seek(to: 1000)
        #expect(try stream.readBytes(3) == Array(bytes[1000..<1003]))
        // Forwards within what was read ahead: no new position asked of the file.
        let seeks = probe.seekCount
        try stream.seek(to: 5000)
        #expect(try stream.readBytes(2) == Array(bytes[5000..<5002]))
        #expect(probe.seekCount == seeks)
    }

    @Test func aReadErrorIsMpdsPluginErrorOnce() throws {
        let probe = FileProbe()
        probe.failure = SystemCallError("smbc_read() failed", Errno(rawValue: ETIMEDOUT))
        let stream = try probe.stream(of: [1, 2, 3])
        #expect(throws: InputError.plugin(message: "smbc_read() failed: Connection timed out", uri: stream.uri)) {
            _ = try stream.readBytes(1)
        }
        #expect(try stream.readBytes(1) == nil)
    }

    @Test func aCancelledOpenReturnsWhileTheHelperIsStuck() throws {
        let gate = Gate()
        let cancellation = InputCancellation()
        NamedThread.detach("canceller") {
            gate.waitEntered()
            cancellation.cancel()
        }
        let probe = FileProbe()
        #expect(throws: InputError.cancelled(uri: "smb://host/share/f")) {
            _ = try SMBInputStream(url: "smb://host/share/f", cancellation: cancellation, pool: probe.pool) {
                _ throws(SystemCallError) in
                gate.enterAndWait()
                return ScriptedFile(bytes: [1], probe: probe)
            }
        }
        gate.open()
        // The helper lets the file it opened late go at once.
        probe.released.wait()
    }

    @Test func anAbandonedHelperClosesItsFileWhenTheReadReturns() throws {
        let probe = FileProbe()
        let cancellation = InputCancellation()
        let gate = Gate()
        do {
            let stream = try probe.stream(of: Array(repeating: 9, count: 100), cancellation: cancellation)
            #expect(try stream.readBytes(10) == Array(repeating: 9, count: 10))
            // Back to the start: the helper's read is stuck until the gate opens.
            Self.expectCancelledAtTheGate(stream, probe: probe, gate: gate, cancellation: cancellation)
        }
        // The stream is gone, the helper still holds its file.
        #expect(probe.releaseCount == 0)
        gate.open()
        // It notices the cancellation once its read returns, and lets the file go.
        probe.released.wait()
        #expect(probe.releaseCount == 1)
    }

    /// The player opens a song again for every seek: the new stream takes the helper and its open file over
    /// instead of opening the file on a new thread.
    @Test func theNextStreamOfTheURLTakesTheHelperOver() throws {
        let probe = FileProbe(pool: SMBReaderPool(capacity: 4, idleTimeout: .seconds(600)))
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        for round in 0..<5 {
            let cancellation = InputCancellation()
            let stream = try probe.stream(of: bytes, cancellation: cancellation)
            #expect(stream.size == UInt64(bytes.count))
            // From the start, wherever the previous stream left the file.
            #expect(try stream.readBytes(5) == Array(bytes[0..<5]))
            try stream.seek(to: UInt64(150_000 + round))
            #expect(try stream.readBytes(3) == Array(bytes[150_000 + round..<150_003 + round]))
            if round % 2 == 0 { cancellation.cancel() }
        }
        #expect(probe.openCount == 1 && probe.pool.count == 1)
        // Another URL is another file.
        _ = try probe.stream(of: bytes, url: "smb://host/share/g")
        #expect(probe.openCount == 2)
    }

    /// As the player does: read a while, cancel, open again and seek far; every stream reads the file's bytes.
    @Test func streamsThatTakeTheHelperOverReadTheRightBytes() throws {
        let probe = FileProbe(pool: SMBReaderPool(capacity: 4, idleTimeout: .seconds(600)))
        let size = SMBInputStream.bufferSize * 3 + 777
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 31) ^ ($0 >> 9)) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<30 {
            let cancellation = InputCancellation()
            let stream = try probe.stream(of: bytes, cancellation: cancellation)
            #expect(try stream.readBytes(16) == Array(bytes[0..<16]))
            for _ in 0..<3 {
                let offset = Int.random(in: 0..<size - 70_000, using: &generator)
                try stream.seek(to: UInt64(offset))
                let count = Int.random(in: 1..<70_000, using: &generator)
                #expect(try stream.readBytes(count) == Array(bytes[offset..<offset + count]))
            }
            cancellation.cancel()
        }
        #expect(probe.openCount == 1)
    }

    /// A share gone silent, and a client that seeks again and again: every new stream takes over the one helper
    /// stuck in its read, and each cancellation returns at once. When the read returns, the helper serves the
    /// newest stream.
    @Test func repeatedSeeksOnASilentShareKeepOneHelper() throws {
        let probe = FileProbe(pool: SMBReaderPool(capacity: 4, idleTimeout: .seconds(600)))
        let bytes = (0..<(SMBInputStream.bufferSize * 2)).map { UInt8(truncatingIfNeeded: $0 &* 3) }
        let gate = Gate()
        do {
            let cancellation = InputCancellation()
            let stream = try probe.stream(of: bytes, cancellation: cancellation)
            #expect(try stream.readBytes(4) == Array(bytes[0..<4]))
            // Back to the start: the helper's next read is stuck until the gate opens.
            Self.expectCancelledAtTheGate(stream, probe: probe, gate: gate, cancellation: cancellation)
        }
        for _ in 0..<20 {
            let cancellation = InputCancellation()
            cancellation.cancel()
            #expect(throws: InputError.cancelled(uri: "smb://host/share/f")) {
                try probe.stream(of: bytes, cancellation: cancellation)
            }
        }
        #expect(probe.openCount == 1 && probe.pool.count == 1)
        probe.gate = nil
        gate.open()
        let stream = try probe.stream(of: bytes)
        #expect(try stream.readToEnd(limit: bytes.count + 1) == bytes)
        #expect(probe.openCount == 1 && probe.releaseCount == 0)
    }

    /// At most one helper per URL and the pool's capacity in all wait to be taken over; the others, and one whose
    /// file failed, let their file go.
    @Test func thePoolKeepsFewHelpers() throws {
        let probe = FileProbe(pool: SMBReaderPool(capacity: 2, idleTimeout: .seconds(600)))
        let first = try probe.stream(of: [1, 2, 3], url: "smb://host/share/a")
        let second = try probe.stream(of: [1, 2, 3], url: "smb://host/share/a")
        _ = consume first
        _ = consume second
        probe.released.wait()
        #expect(probe.pool.count == 1 && probe.releaseCount == 1)
        for name in ["b", "c"] { _ = try probe.stream(of: [1], url: "smb://host/share/" + name) }
        // The oldest (a's) goes for c's.
        probe.released.wait()
        #expect(probe.pool.count == 2 && probe.releaseCount == 2)
        probe.failure = SystemCallError("smbc_read() failed", Errno(rawValue: EIO))
        let failing = try probe.stream(of: [1, 2, 3], url: "smb://host/share/b")
        #expect(throws: InputError.self) { _ = try failing.readBytes(1) }
        _ = consume failing
        probe.released.wait()
        #expect(probe.pool.count == 1 && probe.releaseCount == 3)
    }

    /// Nobody takes the helper over within the idle time: it lets its file go.
    @Test func anIdleHelperLetsItsFileGo() throws {
        let probe = FileProbe(pool: SMBReaderPool(capacity: 4, idleTimeout: .milliseconds(1)))
        _ = try probe.stream(of: [1, 2, 3])
        probe.released.wait()
        #expect(probe.pool.count == 0 && probe.releaseCount == 1)
    }

    /// Stops the helper's next read at `gate`, then seeks `stream` back to its start and reads: the seek itself may
    /// wait on that read (when the helper was already reading ahead), so a canceller is started first, and the
    /// seek or the read after it is cancelled once the helper is stuck.
    static func expectCancelledAtTheGate(
        _ stream: SMBInputStream, probe: FileProbe, gate: Gate, cancellation: InputCancellation
    ) {
        probe.gate = gate
        NamedThread.detach("canceller") {
            gate.waitEntered()
            cancellation.cancel()
        }
        #expect(throws: InputError.cancelled(uri: stream.uri)) {
            try stream.seek(to: 0)
            _ = try stream.readBytes(1)
        }
    }
}

/// A gate a helper thread stops at until a test opens it.
final class Gate: @unchecked Sendable {
    private let condition = Condition()
    private var entered = false
    private var isOpen = false

    /// Called by the thread that must block.
    func enterAndWait() {
        self.condition.lock()
        self.entered = true
        self.condition.broadcast()
        while !self.isOpen { self.condition.wait() }
        self.condition.unlock()
    }

    /// Waits until a thread stopped at the gate.
    func waitEntered() {
        self.condition.lock()
        while !self.entered { self.condition.wait() }
        self.condition.unlock()
    }

    func open() {
        self.condition.lock()
        self.isOpen = true
        self.condition.broadcast()
        self.condition.unlock()
    }
}

/// What a test sees of its ``ScriptedFile``, which only the stream's helper holds: the gate its reads stop at,
/// the failure they throw, how often it was moved, and when the helper let it go.
final class FileProbe: @unchecked Sendable {
    private let lock = Condition()
    private var gateValue: Gate?
    private var failureValue: SystemCallError?
    private var seeks = 0
    private var releases = 0
    /// Posted when the helper lets the file go (closes it).
    let released = Semaphore()

    private func locked<T>(_ body: () -> T) -> T {
        self.lock.lock()
        defer { self.lock.unlock() }
        return body()
    }

    /// Where the next reads stop until it opens.
    var gate: Gate? {
        get { self.locked { self.gateValue } }
        set { self.locked { self.gateValue = newValue } }
    }
    /// What every read throws, if set.
    var failure: SystemCallError? {
        get { self.locked { self.failureValue } }
        set { self.locked { self.failureValue = newValue } }
    }
    var seekCount: Int { self.locked { self.seeks } }
    var releaseCount: Int { self.locked { self.releases } }

    func didSeek() { self.locked { self.seeks += 1 } }

    func didRelease() {
        self.locked { self.releases += 1 }
        self.released.post()
    }

    /// Where its streams' helpers go when their stream lets them go: by default none waits to be taken over.
    let pool: SMBReaderPool
    private var opens = 0
    /// How many helpers opened a file.
    var openCount: Int { self.locked { self.opens } }

    init(pool: SMBReaderPool = SMBReaderPool(capacity: 0, idleTimeout: .zero)) {
        self.pool = pool
    }

    /// A stream whose helper reads `bytes` (a new helper, or one of the pool's).
    func stream(
        of bytes: [UInt8], url: String = "smb://host/share/f", cancellation: InputCancellation? = nil
    ) throws -> SMBInputStream {
        try SMBInputStream(url: url, cancellation: cancellation, pool: self.pool) { _ throws(SystemCallError) in
            self.locked { self.opens += 1 }
            return ScriptedFile(bytes: bytes, probe: self)
        }
    }
}

/// A file of given bytes in place of a share's; only the helper thread uses it.
final class ScriptedFile: SMBReadableFile {
    private let bytes: [UInt8]
    private let probe: FileProbe
    private var position = 0

    init(bytes: [UInt8], probe: FileProbe) {
        self.bytes = bytes
        self.probe = probe
    }

    deinit { self.probe.didRelease() }

    func fileSize() throws(SystemCallError) -> UInt64 { UInt64(self.bytes.count) }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int {
        self.probe.gate?.enterAndWait()
        if let failure = self.probe.failure { throw failure }
        let count = min(buffer.count, self.bytes.count - self.position)
        self.bytes.withUnsafeBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[self.position..<self.position + count]))
        }
        self.position += count
        return count
    }

    func seek(to offset: Int64) throws(SystemCallError) {
        self.position = Int(offset)
        self.probe.didSeek()
    }
}

/// Messages `SMBLibrary` reported.
final class SMBReports: Sendable {
    private let messages = Mutex<[String]>([])
    var reporter: @Sendable (String) -> Void { { message in self.messages.withLock { $0.append(message) } } }
    var all: [String] { self.messages.withLock { $0 } }
}

@Suite struct SMBLibraryTests {
    @Test func sonameIsDebians() {
        #expect(SMBLibrary.headerSoname == "libsmbclient.so.0")
    }

    /// Opened by the first context, counted per context, kept after the last.
    @Test func loadedOnFirstUseAndKept() throws {
        let server = try LoopbackSMBServer()
        let library = SMBLibrary(soname: SMBLibrary.headerSoname)
        #expect(!library.isLoaded)
        #expect(library.loadCount == 0)
        var context: SMBContext? = try SMBContext(library: library)
        #expect(library.isLoaded)
        #expect(library.users == 1)
        #expect(try context?.names(in: server.shareURL).sorted() == ["a.bin", "b.bin", "sub"])
        context = nil
        #expect(library.users == 0)
        #expect(library.isLoaded)
        let again = try SMBContext(library: library)
        #expect(try again.status(server.shareURL + "/a.bin").size == 11)
        #expect(library.loadCount == 1)
    }

    /// A library that cannot be loaded fails every context as `smbc_new_context` failing would, reported once.
    @Test func missingLibraryFailsEveryContextReportedOnce() {
        let reports = SMBReports()
        let library = SMBLibrary(soname: "/nonexistent/libsmbclient.so.0", reportFailure: reports.reporter)
        for _ in 0..<3 {
            #expect {
                _ = try SMBContext(library: library)
            } throws: { error in
                (error as? SystemCallError).map { "\($0)" } == "smbc_new_context() failed: \(Errno(rawValue: ELIBACC))"
            }
        }
        #expect(!library.isLoaded)
        #expect(library.users == 0)
        #expect(reports.all.count == 1)
        #expect(reports.all.first?.contains("/nonexistent/libsmbclient.so.0") == true)
    }
}
