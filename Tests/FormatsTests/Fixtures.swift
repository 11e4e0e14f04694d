// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// Test files made at test time with sox, lame and mutagen (installed by the project's install script) in
/// one temporary directory per test process; each file is made once, under a lock.
enum Fixtures {
    struct ToolError: Error, CustomStringConvertible {
        var description: String
    }

    /// The directory; `FERMATA_FIXTURE_DIR` overrides it (to run `mpd` on the same files).
    static let directory: String = {
        if let fixed = ProcessInfo.processInfo.environment["FERMATA_FIXTURE_DIR"] {
            try? FileManager.default.createDirectory(atPath: fixed, withIntermediateDirectories: true)
            return fixed
        }
        let path = NSTemporaryDirectory() + "fermata-formats-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    private static let lock = NSLock()

    /// Runs a tool and fails with its stderr when it exits non-zero.
    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            throw ToolError(description: "\(tool) \(arguments): \(String(decoding: text, as: UTF8.self))")
        }
    }

    /// A file made once by `make(path)`.
    static func file(_ name: String, _ make: (String) throws -> Void) throws -> String {
        self.lock.lock()
        defer { self.lock.unlock() }
        let path = self.directory + "/" + name
        if FileManager.default.fileExists(atPath: path) { return path }
        let temporary = path + ".partial"
        try make(temporary)
        try FileManager.default.moveItem(atPath: temporary, toPath: path)
        return path
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
            defer { try? FileManager.default.removeItem(atPath: wave) }
            try self.run("/usr/bin/lame", ["--quiet"] + lameArguments + [wave, path])
        }
    }

    /// Bytes written as a file.
    static func bytes(_ name: String, _ bytes: [UInt8]) throws -> String {
        try self.file(name) { path in
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
    }

    /// A copy of `source` tagged by a mutagen script (`PATH` names the file inside the script).
    static func tagged(_ name: String, from source: String, script: String) throws -> String {
        try self.file(name) { path in
            try FileManager.default.copyItem(atPath: source, toPath: path)
            let program = "PATH = \(self.pythonString(path))\n" + script
            try self.run("/usr/bin/python3", ["-c", program])
        }
    }

    private static func pythonString(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    /// The bytes of a file.
    static func contents(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }
}
