// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// The content of a pid file (`pid_file`): the process id in decimal, then a newline.
public enum PidFile {
    /// The process id a pid file holds, read as `mpd --kill` reads it: optional white space, then decimal digits
    /// (whatever follows them is ignored).
    ///
    /// - Returns: `nil` when there are no digits, or the number is not a process id above 0 (`kill` would signal a
    ///   whole process group for 0 or a negative number).
    public static func processID(contents: [UInt8]) -> pid_t? {
        let text = contents.drop { $0 == 0x20 || (0x09...0x0D).contains($0) }
        let digits = text.prefix { (0x30...0x39).contains($0) }
        guard !digits.isEmpty, digits.count <= 10 else { return nil }
        let value = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        guard value > 0, let pid = pid_t(exactly: value) else { return nil }
        return pid
    }

    /// The bytes written to a pid file for `pid`.
    public static func contents(for pid: pid_t) -> [UInt8] { Array("\(pid)\n".utf8) }
}
