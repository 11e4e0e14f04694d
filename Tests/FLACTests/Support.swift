// SPDX-License-Identifier: GPL-3.0-or-later

import FLAC
import Foundation
import Input

/// FLAC files made at test time with sox and flac (installed by the project's install script), once per
/// test process, under a lock.
enum Files {
    struct ToolError: Error, CustomStringConvertible {
        var description: String
    }

    static let directory: String = {
        let path = NSTemporaryDirectory() + "fermata-flac-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    private static let lock = NSLock()

    /// Runs a tool; its standard output.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let text = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            throw ToolError(description: "\(tool) \(arguments): \(String(decoding: text, as: UTF8.self))")
        }
        return data
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

    /// A FLAC of a sweep per channel, with `flacArguments` (`--ogg`, `-T NAME=value`…).
    static func flac(
        _ name: String, rate: Int = 44100, channels: Int = 2, bits: Int = 16, seconds: String = "1",
        flacArguments: [String] = []
    ) throws -> String {
        try self.file(name) { path in
            let wave = path + ".wav"
            var synth: [String] = []
            for channel in 0..<channels { synth += ["sine", "\(200 + 100 * channel)-\(3000 - 200 * channel)"] }
            try self.run(
                "/usr/bin/sox",
                ["-R", "-D", "-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "\(bits)"]
                    + (bits == 8 ? ["-e", "unsigned-integer"] : ["-e", "signed-integer"])
                    + [wave, "synth", seconds] + synth + ["vol", "0.7"])
            defer { try? FileManager.default.removeItem(atPath: wave) }
            try self.run("/usr/bin/flac", ["--silent", "--force"] + flacArguments + ["-o", path, wave])
        }
    }

    /// `flac -d`'s raw little-endian signed samples of a file (the reference decode).
    static func reference(_ path: String) throws -> [UInt8] {
        let raw = path + ".raw"
        if !FileManager.default.fileExists(atPath: raw) {
            try self.run(
                "/usr/bin/flac",
                ["--silent", "--force", "-d", "--force-raw-format", "--endian=little", "--sign=signed", "-o", raw]
                    + (path.hasSuffix(".oga") ? ["--ogg"] : []) + [path])
        }
        return Array(try Data(contentsOf: URL(fileURLWithPath: raw)))
    }

    /// Bytes of a file.
    static func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// Bytes written as a file.
    static func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        try self.file(name) { path in try Data(bytes).write(to: URL(fileURLWithPath: path)) }
    }
}

/// A stream that cannot seek and has no known size (like a live HTTP stream).
final class NonSeekableInput: Input.InputStream {
    let inner: MemoryInputStream
    init(_ bytes: [UInt8]) { self.inner = MemoryInputStream(bytes) }
    var uri: String { "nonseekable" }
    var size: UInt64? { nil }
    var isSeekable: Bool { false }
    var mimeType: String? { nil }
    var offset: UInt64 { self.inner.offset }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        try self.inner.read(into: buffer)
    }
    func seek(to offset: UInt64) throws(InputError) { throw .notSeekable(uri: self.uri) }
}

extension FLACStreamDecoder {
    /// Everything from the current position, in reads of `chunkFrames` frames.
    func readAll(chunkFrames: Int = 4096) throws -> [UInt8] {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkFrames * self.frameSize, alignment: 16)
        defer { buffer.deallocate() }
        var out: [UInt8] = []
        while true {
            let frames = try self.read(into: buffer)
            if frames == 0 { break }
            out.append(contentsOf: buffer[0..<(frames * self.frameSize)])
        }
        return out
    }
}

/// `flac -d` output widened to the decoder's sample width (`bytes` per sample in, `width` out).
func widened(_ raw: [UInt8], bytes: Int, width: Int) -> [UInt8] {
    guard bytes != width else { return raw }
    var out: [UInt8] = []
    out.reserveCapacity(raw.count / bytes * width)
    var index = 0
    while index + bytes <= raw.count {
        var value: Int32 = 0
        for byte in 0..<bytes { value |= Int32(raw[index + byte]) << (8 * byte) }
        let shift = Int32(32 - 8 * bytes)
        value = (value << shift) >> shift
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0.prefix(width)) }
        index += bytes
    }
    return out
}
