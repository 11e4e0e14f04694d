// SPDX-License-Identifier: GPL-3.0-or-later

import CLinux
import Glibc

/// Programs run to completion for what they print.
public enum ChildProcess {
    /// Runs `path` with `arguments` (the first is the program's name), waits for it to exit and returns what it
    /// wrote to its standard output (at most `limit` bytes are kept). Its standard input is `/dev/null`, its
    /// standard error the caller's. Blocks: not for the event loop.
    ///
    /// The corresponding C functions are `posix_spawn`, `read` and `waitpid`.
    /// - Throws: `SystemCallError` when it cannot be started or read; `posix_spawn`'s with `ECHILD` when it did
    ///   not exit with status 0.
    public static func output(of path: String, arguments: [String], limit: Int = 1 << 20) throws(SystemCallError)
        -> [UInt8]
    {
        let (read, write) = try FileDescriptor.pipe()
        defer { read.close() }
        try read.setNonBlocking(false)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, write.rawValue, 1)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let spawned = Self.spawn(path, arguments: arguments, actions: &actions)
        write.close()
        let pid = try spawned.get()
        var output: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { chunk.deallocate() }
        var failure: SystemCallError?
        while true {
            let result: IOResult<Int>
            do throws(SystemCallError) {
                result = try read.read(into: chunk)
            } catch {
                if error.errno == .interrupted { continue }
                failure = error
                break
            }
            guard case .processed(let count) = result, count > 0 else { break }
            if output.count < limit { output += chunk[0..<min(count, limit - output.count)] }
        }
        let status = Self.wait(for: pid)
        if let failure { throw failure }
        // Exited normally (the low 7 bits: no signal) with status 0.
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            throw SystemCallError("waitpid", Errno(rawValue: ECHILD))
        }
        return output
    }

    /// Starts `path` with `arguments` (the first is the program's name) and `actions`, in this process's
    /// environment.
    ///
    /// The corresponding C function is `posix_spawn`.
    static func spawn(
        _ path: String, arguments: [String], actions: inout posix_spawn_file_actions_t
    ) -> Result<pid_t, SystemCallError> {
        let words: [UnsafeMutablePointer<CChar>?] = arguments.map { word in word.withCString { strdup($0) } }
        defer { words.forEach { free($0) } }
        var pid: pid_t = 0
        let started = (words + [nil]).withUnsafeBufferPointer { argv in
            posix_spawn(&pid, path, &actions, nil, UnsafeMutablePointer(mutating: argv.baseAddress!), environ)
        }
        return started == 0 ? .success(pid) : .failure(SystemCallError("posix_spawn", Errno(rawValue: started)))
    }

    /// Waits for `pid` to exit (retrying when a signal interrupts the wait).
    ///
    /// The corresponding C function is `waitpid`.
    /// - Returns: its wait status, or -1 when it cannot be waited for.
    static func wait(for pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard Errno.current == .interrupted else { return -1 }
        }
        return status
    }
}

/// A program running beside this one, its standard input and output connected to this process by pipes: a
/// helper that answers requests until its input ends.
///
/// A value: whoever started it ends it (``finish()``) or reaps it (``wait()``), once. Blocking throughout: not for
/// the event loop.
public struct RunningChild: Sendable {
    /// Its process id.
    public let pid: pid_t
    /// The write end of the pipe to its standard input.
    public let input: FileDescriptor
    /// The read end of the pipe from its standard output.
    public let output: FileDescriptor

    /// Starts `path` with `arguments` (the first is the program's name), its standard input and output pipes to
    /// this process (blocking, closed on `exec` here), its standard error the caller's.
    ///
    /// The corresponding C function is `posix_spawn`.
    /// - Throws: `SystemCallError` when the pipes cannot be made or the program cannot be started.
    public static func start(_ path: String, arguments: [String]) throws(SystemCallError) -> RunningChild {
        let (childInput, input) = try FileDescriptor.pipe()
        let output: FileDescriptor
        let childOutput: FileDescriptor
        do {
            (output, childOutput) = try FileDescriptor.pipe()
        } catch {
            childInput.close()
            input.close()
            throw error
        }
        defer {
            childInput.close()
            childOutput.close()
        }
        do {
            // The status flags are the pipe's, shared with the child's ends: both sides block.
            for end in [childInput, input, output, childOutput] { try end.setNonBlocking(false) }
        } catch {
            input.close()
            output.close()
            throw error
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, childInput.rawValue, 0)
        posix_spawn_file_actions_adddup2(&actions, childOutput.rawValue, 1)
        switch ChildProcess.spawn(path, arguments: arguments, actions: &actions) {
        case .success(let pid):
            return RunningChild(pid: pid, input: input, output: output)
        case .failure(let error):
            input.close()
            output.close()
            throw error
        }
    }

    /// Closes both pipes (the child sees the end of its input) and waits for it to exit.
    ///
    /// - Returns: its wait status, as ``wait()``.
    @discardableResult
    public func finish() -> Int32 {
        self.input.close()
        self.output.close()
        return self.wait()
    }

    /// Kills it (`SIGKILL`), closes both pipes and reaps it.
    ///
    /// The corresponding C function is `kill`.
    /// - Returns: its wait status, as ``wait()``.
    @discardableResult
    public func kill() -> Int32 {
        _ = Glibc.kill(self.pid, SIGKILL)
        return self.finish()
    }

    /// Waits for it to exit.
    ///
    /// The corresponding C function is `waitpid`.
    /// - Returns: its wait status (`waitpid`'s), or -1 when it cannot be waited for.
    public func wait() -> Int32 { ChildProcess.wait(for: self.pid) }

    /// A wait status in words: `exit status N`, `signal N`.
    public static func describe(status: Int32) -> String {
        if status == -1 { return "unknown" }
        if status & 0x7F == 0 { return "exit status \((status >> 8) & 0xFF)" }
        return "signal \(status & 0x7F)"
    }
}
