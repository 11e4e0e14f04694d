// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Posix
import Synchronization

/// `type "pipe"`: runs `command` through `/bin/sh -c` when a stream opens and writes the PCM to its standard
/// input (blocking, as `mpd`'s `popen`: nothing is dropped when the command reads slowly); closing the stream
/// closes the pipe and waits for the command. Beyond `mpd`, whose pipe output has no pause (it closes the pipe at a
/// pause and starts the command again on resume; probed: three starts for a play and two resumes), a pause keeps
/// the command running and writes nothing, so a reader such as snapserver loses no part of a tick (README).
///
/// Beyond `mpd`, whose writes run as far ahead as the pipe holds (a third of a second at CD rate, more in whatever
/// the command buffers): the writes are paced in real time, kept ahead of the clock by ``OutputTimer/pipeLead``, so
/// that a command that hands the audio on to a real-time reader (`cat > fifo` for snapserver) holds little of it,
/// and little stale audio is left to play after a pause, a `stop` or a seek.
///
/// Used on its output thread, except `interrupt()`. `@unchecked Sendable`: the child, its pipe and the timer are
/// confined to the output thread; `interrupted` and the wake-up are thread-safe.
public final class PipeOutput: AudioOutput, @unchecked Sendable {
    public let plugin = "pipe"
    /// The shell command.
    public let command: String
    private var child: pid_t = 0
    private var input: FileDescriptor?
    private var timer: OutputTimer
    private let clock: any PlaybackClock
    private let interrupted = Atomic<Bool>(false)
    private let wakeup = PlayerWakeup()
    /// How far ahead of the clock the writes run (nanoseconds): ``OutputTimer/pipeLead``.
    private var lead: UInt64 = 0

    /// Creates the output; nothing runs until a stream opens. The writes are paced by `clock`.
    public init(command: String, clock: any PlaybackClock = SystemClock()) {
        self.command = command
        self.clock = clock
        self.timer = OutputTimer(clock: clock)
    }

    public func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat {
        let read: FileDescriptor
        let write: FileDescriptor
        do {
            (read, write) = try FileDescriptor.pipe()
            // The child's standard input blocks; so do our writes.
            try read.setNonBlocking(false)
            try write.setNonBlocking(false)
        } catch {
            throw OutputError("Error opening pipe \"\(self.command)\": \(error.errno)")
        }
        defer { read.close() }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, read.rawValue, 0)
        let words: [String] = ["/bin/sh", "-c", self.command]
        let arguments: [UnsafeMutablePointer<CChar>?] = words.map { word in word.withCString { Glibc.strdup($0) } }
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        let result = (arguments + [nil]).withUnsafeBufferPointer { argv in
            posix_spawn(&pid, "/bin/sh", &actions, nil, UnsafeMutablePointer(mutating: argv.baseAddress!), environ)
        }
        guard result == 0 else {
            write.close()
            throw OutputError("Error opening pipe \"\(self.command)\": \(Errno(rawValue: result))")
        }
        self.child = pid
        self.input = write
        self.timer.open(format)
        self.lead = self.timer.pipeLead
        return format
    }

    public func close() {
        self.timer.reset()
        self.input?.close()
        self.input = nil
        if self.child > 0 {
            var status: Int32 = 0
            while waitpid(self.child, &status, 0) < 0 && Errno.current == .interrupted {}
            self.child = 0
        }
    }

    public func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int {
        guard let input = self.input else { throw OutputError("Write error on pipe") }
        self.timer.wait(ahead: self.lead, wakeup: self.wakeup, interrupted: self.interrupted)
        self.interrupted.store(false, ordering: .releasing)
        let result: IOResult<Int>
        do {
            result = try input.write(data)
        } catch {
            throw OutputError("Write error on pipe: \(error.errno)")
        }
        guard case .processed(let count) = result, count > 0 else { throw OutputError("Write error on pipe") }
        self.timer.add(count)
        return count
    }

    /// What was written and, by the clock, not yet heard.
    public var delayFrames: Int { self.timer.delayFrames }

    /// What is in the pipe cannot be taken back: the clock starts again with the next write.
    public func cancel() { self.timer.reset() }

    public var hasPauseMode: Bool { true }
    /// Stays paused, the command running: writes nothing and waits a little (so the output thread does not spin);
    /// the clock starts again with the first write after it.
    public func pause() -> Bool {
        self.timer.reset()
        if !self.interrupted.load(ordering: .acquiring) {
            let now = self.clock.now()
            self.clock.sleep(
                until: now + 100_000_000, on: self.wakeup, unless: { self.interrupted.load(ordering: .acquiring) })
        }
        self.interrupted.store(false, ordering: .releasing)
        return true
    }

    public func interrupt() {
        self.interrupted.store(true, ordering: .releasing)
        self.wakeup.signal()
    }
}

/// The `pipe` output plugin: parameter `command` (required); no hardware mixer.
public struct PipeOutputPlugin: OutputPlugin {
    public let name = "pipe"

    /// Creates the plugin.
    public init() {}

    public func makeOutput(_ configuration: OutputConfiguration) throws(OutputError) -> any AudioOutput {
        guard let command = configuration.parameters["command"] else {
            throw OutputError("No \"command\" parameter specified")
        }
        return PipeOutput(command: command)
    }

    public func makeHardwareMixer(
        _ configuration: OutputConfiguration, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) -> (any Mixer)? { nil }
}
