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
        let words: [UnsafeMutablePointer<CChar>?] = arguments.map { word in word.withCString { strdup($0) } }
        defer { words.forEach { free($0) } }
        var pid: pid_t = 0
        let started = (words + [nil]).withUnsafeBufferPointer { argv in
            posix_spawn(&pid, path, &actions, nil, UnsafeMutablePointer(mutating: argv.baseAddress!), environ)
        }
        write.close()
        guard started == 0 else { throw SystemCallError("posix_spawn", Errno(rawValue: started)) }
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
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && Errno.current == .interrupted {}
        if let failure { throw failure }
        // Exited normally (the low 7 bits: no signal) with status 0.
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            throw SystemCallError("waitpid", Errno(rawValue: ECHILD))
        }
        return output
    }
}
