// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Posix

/// `type "pipe"`: runs `command` through `/bin/sh -c` when a stream opens and writes the PCM to its standard
/// input (blocking, as `mpd`'s `popen`); closing the stream closes the pipe and waits for the command.
///
/// Used on its output thread. `@unchecked Sendable`: the child and its pipe are confined to the output thread.
public final class PipeOutput: AudioOutput, @unchecked Sendable {
    public let plugin = "pipe"
    /// The shell command.
    public let command: String
    private var child: pid_t = 0
    private var input: FileDescriptor?

    /// Creates the output; nothing runs until a stream opens.
    public init(command: String) { self.command = command }

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
        return format
    }

    public func close() {
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
        let result: IOResult<Int>
        do {
            result = try input.write(data)
        } catch {
            throw OutputError("Write error on pipe: \(error.errno)")
        }
        guard case .processed(let count) = result, count > 0 else { throw OutputError("Write error on pipe") }
        return count
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
