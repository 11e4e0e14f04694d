// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration
import Dispatch
import Glibc
import Model
import Posix

/// Where the registry sends the scans of local files that plugins want read out of the daemon's process
/// (``FormatPlugin/scanWorkerSettings``).
public protocol OutOfProcessScanner: Sendable {
    /// What `plugin`, rebuilt from `settings`, reads of the local file at `path` (its `readInfo(path:)`).
    ///
    /// - Returns: `nil` when no worker can run (the registry then reads the file in this process).
    /// - Throws: the plugin's error; `FormatError.decoder` when the worker died reading the file.
    func readInfo(
        plugin: String, settings: [ScanWorkerProtocol.Setting], path: String
    ) throws(FormatError) -> SongInfo?
}

/// The body of `fermata --scan-worker`: answers scan requests read on standard input, one at a time, until it
/// ends.
public enum ScanWorker {
    /// Reads requests from `input` and writes each reply to `output` until `input` ends.
    ///
    /// - Parameter catalogue: The plugins a request may name, rebuilt from its settings (each kept for the next
    ///   requests with the same settings).
    /// - Returns: the process's exit status: 0 when the input ended, 1 on a malformed request or a failed write.
    public static func serve(
        input: FileDescriptor, output: FileDescriptor, catalogue: [DecoderPluginEntry] = FormatRegistry.catalogue
    ) -> Int32 {
        var plugins: [ScanWorkerProtocol.Request: any FormatPlugin] = [:]
        while true {
            let request: ScanWorkerProtocol.Request
            do {
                guard let payload = try ScanWorkerProtocol.readFrame(from: input) else { return 0 }
                request = try ScanWorkerProtocol.decodeRequest(payload)
            } catch {
                Self.complain("\(error)")
                return 1
            }
            let key = ScanWorkerProtocol.Request(plugin: request.plugin, settings: request.settings, path: "")
            let reply: ScanWorkerProtocol.Reply
            do throws(FormatError) {
                let plugin: any FormatPlugin
                if let known = plugins[key] {
                    plugin = known
                } else {
                    plugin = try Self.plugin(request.plugin, settings: request.settings, catalogue: catalogue)
                    plugins[key] = plugin
                }
                reply = .success(try plugin.readInfo(path: request.path))
            } catch {
                reply = .failure(error)
            }
            do {
                try ScanWorkerProtocol.writeFrame(ScanWorkerProtocol.encode(reply), to: output)
            } catch {
                Self.complain("\(error)")
                return 1
            }
        }
    }

    /// The catalogue's plugin `name` built from `settings` as from a `decoder` block holding them.
    ///
    /// - Throws: `FormatError.decoder` when the catalogue has no such plugin or its settings are refused.
    static func plugin(
        _ name: String, settings: [ScanWorkerProtocol.Setting], catalogue: [DecoderPluginEntry]
    ) throws(FormatError) -> any FormatPlugin {
        guard let entry = catalogue.first(where: { $0.name == name }) else {
            throw .decoder("scan worker: no decoder plugin \(name)")
        }
        let parameters = settings.map { ConfigParameter(name: $0.name, value: $0.value, file: "", line: 0) }
        var block = DecoderPluginSettings(
            plugin: name, block: ConfigBlock(name: "decoder", file: "", line: 0, params: parameters))
        let plugin: (any FormatPlugin)?
        do throws(ConfigError) {
            plugin = try entry.make(&block)
        } catch {
            throw .decoder("scan worker: \(error)")
        }
        guard let plugin else { throw .decoder("scan worker: plugin \(name) is off") }
        return plugin
    }

    private static func complain(_ message: String) {
        try? FileDescriptor.standardError.writeAll("fermata --scan-worker: \(message)\n".utf8)
    }
}

/// The scan workers of one database update: child processes running `fermata --scan-worker`, started when a
/// reader thread first needs one (one per thread reading at once), kept for the update's other files and ended
/// by ``finish()``.
///
/// A worker that dies while it reads a file (a library crashing on it, or a signal from outside) costs that file
/// alone: it is logged and skipped, and the next file gets a new worker. When no worker can be started the
/// files are read in this process (logged once).
///
/// A plugin's verdict that a file is not one it reads (``FormatError/notRecognized(path:)``,
/// ``FormatError/unsupportedFormat(_:)``) is kept with the file's status, and given again while the file is
/// unchanged (size, modification time, inode, device, mode, owner), as an update leaves an unchanged song as it
/// was read: an update would otherwise start a worker (an exec and FFmpeg's hundred libraries, a tenth of a
/// second of a processor) for the same broken files each time. A failure to read (I/O, a worker that died) is not
/// kept; ``forgetVerdicts()`` (a `rescan`) drops them all.
///
/// Any thread (not the event loop: it starts processes and waits for their answers). `@unchecked Sendable`:
/// its state is read and written with `lock` held.
public final class ScanWorkerPool: OutOfProcessScanner, @unchecked Sendable {
    private let program: String
    private let arguments: [String]
    private let logger: Logger
    private let lock = Condition()
    private var idle: [RunningChild] = []
    private var unavailable = false
    /// Changed by every worker taken and every ``finish(afterIdle:)``: a later finish, or a read meanwhile, calls
    /// an earlier finish off.
    private var lease = 0
    /// The verdicts kept (see above), by request, with the status of the file they were given on.
    private var verdicts: [ScanWorkerProtocol.Request: (status: FileStatus, error: FormatError)] = [:]
    /// At most this many verdicts are kept (a library of broken files reads them again each time past it).
    static let verdictLimit = 10_000

    /// Runs work once some seconds have passed (``finish(afterIdle:)``'s timer; a test's runs it when it likes).
    public typealias Schedule = @Sendable (_ seconds: Double, _ work: @escaping @Sendable () -> Void) -> Void
    private let schedule: Schedule

    /// A pool that starts `program` with `arguments` (the first is the program's name). Ignores `SIGPIPE`
    /// process-wide (as the server does from start-up): a write to a worker that died fails with `EPIPE`.
    public init(
        program: String = "/proc/self/exe", arguments: [String] = ["fermata", "--scan-worker"], logger: Logger,
        schedule: @escaping Schedule = { seconds, work in
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: work)
        }
    ) {
        self.program = program
        self.arguments = arguments
        self.logger = logger
        self.schedule = schedule
        _ = signal(SIGPIPE, SIG_IGN)
    }

    /// The workers started and waiting for a file.
    public var idleWorkerCount: Int {
        self.lock.lock()
        defer { self.lock.unlock() }
        return self.idle.count
    }

    deinit { self.finish() }

    public func readInfo(
        plugin: String, settings: [ScanWorkerProtocol.Setting], path: String
    ) throws(FormatError) -> SongInfo? {
        let request = ScanWorkerProtocol.Request(plugin: plugin, settings: settings, path: path)
        // Taken before the read: a change during it gives the file another status next time.
        let status = try? FileStatus(path: path)
        if let status, let error = self.verdict(on: request, status: status) { throw error }
        guard let worker = self.take() else { return nil }
        let reply: ScanWorkerProtocol.Reply
        do throws(ScanWorkerProtocol.DecodingError) {
            try ScanWorkerProtocol.writeFrame(ScanWorkerProtocol.encode(request), to: worker.input)
            guard let payload = try ScanWorkerProtocol.readFrame(from: worker.output) else {
                throw ScanWorkerProtocol.DecodingError.endOfStream
            }
            reply = try ScanWorkerProtocol.decodeReply(payload)
        } catch {
            // Dead (its output ended, its input is closed) or talking garbage (killed): either way it is done.
            let waitStatus: Int32
            if case .malformed = error { waitStatus = worker.kill() } else { waitStatus = worker.finish() }
            let status = RunningChild.describe(status: waitStatus)
            self.logger.warning(
                "scan worker ended while reading a file: skipping it",
                ["path": path, "pid": "\(worker.pid)", "status": status, "error": "\(error)"])
            throw .decoder("scan worker \(worker.pid) ended (\(status)) while reading \(path)")
        }
        self.give(worker)
        self.keep(reply, on: request, status: status)
        return try reply.get()
    }

    /// Drops every verdict kept: the next read of each file asks a worker again (`rescan`). Any thread.
    public func forgetVerdicts() {
        self.lock.lock()
        self.verdicts = [:]
        self.lock.unlock()
    }

    /// The verdict kept on `request`'s file if its status is still `status`.
    private func verdict(on request: ScanWorkerProtocol.Request, status: FileStatus) -> FormatError? {
        self.lock.lock()
        defer { self.lock.unlock() }
        guard let kept = self.verdicts[request], kept.status == status else { return nil }
        return kept.error
    }

    /// Keeps `reply` as the verdict on `request`'s file (of `status`) when it is one, else forgets any kept.
    private func keep(_ reply: ScanWorkerProtocol.Reply, on request: ScanWorkerProtocol.Request, status: FileStatus?) {
        self.lock.lock()
        defer { self.lock.unlock() }
        switch reply {
        case .failure(let error) where status != nil && Self.isVerdict(error):
            if self.verdicts.count < Self.verdictLimit || self.verdicts[request] != nil {
                self.verdicts[request] = (status!, error)
            }
        default:
            self.verdicts.removeValue(forKey: request)
        }
    }

    /// Whether `error` says what the file's bytes are (unchanged bytes get it again), not that reading failed.
    private static func isVerdict(_ error: FormatError) -> Bool {
        switch error {
        case .notRecognized, .unsupportedFormat: true
        case .io, .input, .decoder: false
        }
    }

    /// Ends the workers once `seconds` pass with no file read (``finish()``), so that updates in quick succession
    /// (`update` after `update`, `auto_update`'s bursts) keep theirs rather than start them again; and lets the next
    /// read try to start a worker again after one could not be started. Any thread.
    public func finish(afterIdle seconds: Double) {
        self.lock.lock()
        self.lease &+= 1
        let lease = self.lease
        self.unavailable = false
        self.lock.unlock()
        self.schedule(seconds) { [weak self] in
            guard let self else { return }
            // Checked and emptied at once: a worker taken and given back meanwhile changed the lease.
            self.finish(ifLease: lease)
        }
    }

    /// Ends every worker (their input ends; each exits once done) and waits for them. Later requests start new
    /// ones. Any thread.
    public func finish() { self.finish(ifLease: nil) }

    /// ``finish()`` when `lease` is `nil` or still the current lease, checked with the idle workers taken.
    private func finish(ifLease lease: Int?) {
        self.lock.lock()
        let current = lease == nil || lease == self.lease
        let workers = current ? self.idle : []
        if current { self.idle = [] }
        self.lock.unlock()
        for worker in workers { worker.finish() }
    }

    /// An idle worker, or a new one; `nil` when none can be started.
    private func take() -> RunningChild? {
        self.lock.lock()
        self.lease &+= 1
        if let worker = self.idle.popLast() {
            self.lock.unlock()
            return worker
        }
        let unavailable = self.unavailable
        self.lock.unlock()
        guard !unavailable else { return nil }
        do {
            return try RunningChild.start(self.program, arguments: self.arguments)
        } catch {
            self.lock.lock()
            let first = !self.unavailable
            self.unavailable = true
            self.lock.unlock()
            if first {
                self.logger.error(
                    "cannot start a scan worker: reading its files in the server",
                    ["program": self.program, "error": "\(error)"])
            }
            return nil
        }
    }

    private func give(_ worker: RunningChild) {
        self.lock.lock()
        self.idle.append(worker)
        self.lock.unlock()
    }
}
