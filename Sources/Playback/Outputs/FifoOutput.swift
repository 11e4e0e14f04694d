// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Posix
import Synchronization

/// `type "fifo"`: raw PCM into a named pipe at `path` (created if missing, removed again if we created it),
/// for readers such as snapserver or visualisers. Writes never block: when the pipe is full (or nobody reads)
/// the pipe is emptied through our own read end, as `mpd` does, and the output is paced in real time, kept
/// ahead of the clock by ``lead`` so that a reader taking its data in ticks of its own (snapserver reads 20 ms
/// every 20 ms and pads what it finds missing with silence) always finds a tick's worth.
///
/// No pause mode, as `mpd`'s: a pause cancels (empties the pipe of what nobody read yet) and closes the stream,
/// which opens again on resume.
///
/// Used on its output thread, except `interrupt()`. `@unchecked Sendable`: descriptors and timer are confined
/// to the output thread after creation; `interrupted` and the wake-up are thread-safe.
public final class FifoOutput: AudioOutput, @unchecked Sendable {
    public let plugin = "fifo"
    /// The pipe's path.
    public let path: String
    private var input: FileDescriptor?
    private var output: FileDescriptor?
    private var created = false
    private var timer: OutputTimer
    private let clock: any PlaybackClock
    private let interrupted = Atomic<Bool>(false)
    private let wakeup = PlayerWakeup()
    private var drainBuffer = [UInt8](repeating: 0, count: 16384)
    /// How far ahead of the clock the writes run (nanoseconds): ``OutputTimer/pipeLead``.
    private var lead: UInt64 = 0

    /// Creates (if needed) and opens the pipe at `path`; the writes are paced by `clock`.
    ///
    /// - Throws: `OutputError` with `mpd`'s message when the path exists but is not a FIFO or cannot be opened.
    public init(path: String, clock: any PlaybackClock = SystemClock()) throws(OutputError) {
        self.path = path
        self.clock = clock
        self.timer = OutputTimer(clock: clock)
        do {
            let status = try FileStatus(path: path)
            guard status.mode & UInt32(S_IFMT) == UInt32(S_IFIFO) else {
                throw OutputError("\"\(path)\" already exists, but is not a FIFO")
            }
        } catch let error as SystemCallError {
            guard error.errno == .noSuchFile else {
                throw OutputError("Failed to stat FIFO \"\(path)\": \(error.errno)")
            }
            do {
                _ = try FileSystemCharset.withFilePath(path) { (file) throws(SystemCallError) in
                    try syscall("mkfifo") { mkfifo(file, 0o666) }
                }
            } catch {
                throw OutputError("Couldn't create FIFO \"\(path)\": \(error.errno)")
            }
            self.created = true
        } catch let error as OutputError {
            throw error
        } catch {
            throw OutputError("\(error)")
        }
        do {
            self.input = try Self.openPipe(path, O_RDONLY)
        } catch {
            self.closePipe()
            throw OutputError("Could not open FIFO \"\(path)\" for reading: \(error.errno)")
        }
        do {
            self.output = try Self.openPipe(path, O_WRONLY)
        } catch {
            self.closePipe()
            throw OutputError("Could not open FIFO \"\(path)\" for writing: \(error.errno)")
        }
    }

    deinit { self.closePipe() }

    private static func openPipe(_ path: String, _ mode: Int32) throws(SystemCallError) -> FileDescriptor {
        let fd = try FileSystemCharset.withFilePath(path) { (file) throws(SystemCallError) in
            try syscall("open") { Glibc.open(file, mode | O_NONBLOCK | O_CLOEXEC) }
        }
        return FileDescriptor(rawValue: fd)
    }

    private func closePipe() {
        self.input?.close()
        self.output?.close()
        self.input = nil
        self.output = nil
        if self.created {
            unlinkPath(self.path)
            self.created = false
        }
    }

    public func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat {
        self.timer.open(format)
        self.lead = self.timer.pipeLead
        return format
    }

    public func close() { self.timer.reset() }

    public func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int {
        self.timer.wait(ahead: self.lead, wakeup: self.wakeup, interrupted: self.interrupted)
        self.interrupted.store(false, ordering: .releasing)
        guard let output = self.output else { throw OutputError("FIFO \"\(self.path)\" is not open") }
        while true {
            do {
                switch try output.write(data) {
                case .processed(let count) where count > 0:
                    self.timer.add(count)
                    return count
                case .processed, .wouldBlock: self.emptyPipe()  // Full: nobody reads fast enough.
                }
            } catch {
                throw OutputError("Failed to write to FIFO \(self.path): \(error.errno)")
            }
        }
    }

    public var delayFrames: Int { self.timer.delayFrames }

    public func cancel() {
        self.timer.reset()
        self.emptyPipe()
    }

    public func interrupt() {
        self.interrupted.store(true, ordering: .releasing)
        self.wakeup.signal()
    }

    /// Reads through our own read end until the pipe is empty.
    private func emptyPipe() {
        guard let input = self.input else { return }
        self.drainBuffer.withUnsafeMutableBytes { buffer in
            while case .processed(let count)? = try? input.read(into: buffer), count > 0 {}
        }
    }
}

/// The `fifo` output plugin: parameter `path` (required); no hardware mixer.
public struct FifoOutputPlugin: OutputPlugin {
    public let name = "fifo"

    /// Creates the plugin.
    public init() {}

    public func makeOutput(_ configuration: OutputConfiguration) throws(OutputError) -> any AudioOutput {
        guard let path = configuration.parameters["path"] else { throw OutputError("No \"path\" parameter specified") }
        return try FifoOutput(path: path)
    }

    public func makeHardwareMixer(
        _ configuration: OutputConfiguration, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) -> (any Mixer)? { nil }
}
