// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import TestTools

/// Test files made at test time with sox, lame and mutagen (installed by the project's install script) in
/// one temporary directory per test process; each file is made once, under a lock.
enum Fixtures {
    /// The files; `FERMATA_FIXTURE_DIR` names their directory instead (to run `mpd` on the same files).
    static let made: MadeFiles = {
        if let fixed = ProcessInfo.processInfo.environment["FERMATA_FIXTURE_DIR"] { return MadeFiles(directory: fixed) }
        return MadeFiles("formats")
    }()

    static var directory: String { self.made.directory }

    /// Runs a tool and fails with its stderr when it exits non-zero.
    static func run(_ tool: String, _ arguments: [String]) throws { try runTool(tool, arguments) }

    /// A file made once by `make(path)`.
    static func file(_ name: String, _ make: (String) throws -> Void) throws -> String {
        try self.made.file(name, make)
    }

    /// A LAME-encoded sine (deterministic content).
    static func lame(
        _ name: String, rate: Int, channels: Int, seconds: String, lameArguments: [String] = []
    ) throws -> String {
        try self.file(name) { path in
            let wave = path + ".wav"
            try self.run(
                "/usr/bin/sox",
                [
                    "-R", "-D", "-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", wave, "synth", seconds, "sine",
                    "300-3000",
                    "vol", "0.5",
                ])
            defer { removeFile(wave) }
            try self.run("/usr/bin/lame", ["--quiet"] + lameArguments + [wave, path])
        }
    }

    /// Bytes written as a file.
    static func bytes(_ name: String, _ bytes: [UInt8]) throws -> String {
        try self.made.file(name, bytes: bytes)
    }

    /// A copy of `source` tagged by a mutagen script (`PATH` names the file inside the script).
    static func tagged(_ name: String, from source: String, script: String) throws -> String {
        try self.file(name) { path in
            try copyFile(source, to: path)
            let program = "PATH = \(self.pythonString(path))\n" + script
            try self.run("/usr/bin/python3", ["-c", program])
        }
    }

    private static func pythonString(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    /// The bytes of a file.
    static func contents(_ path: String) throws -> [UInt8] { try fileBytes(path) }
}
