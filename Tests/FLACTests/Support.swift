// SPDX-License-Identifier: GPL-3.0-or-later

import FLAC
import Input
import TestTools

/// FLAC files made at test time with sox and flac (installed by the project's install script), once per
/// test process.
enum Files {
    static let made = MadeFiles("flac")

    static func run(_ tool: String, _ arguments: [String]) throws { try runTool(tool, arguments) }

    /// A FLAC of a sweep per channel, with `flacArguments` (`--ogg`, `-T NAME=value`…).
    static func flac(
        _ name: String, rate: Int = 44100, channels: Int = 2, bits: Int = 16, seconds: String = "1",
        flacArguments: [String] = []
    ) throws -> String {
        try self.made.file(name) { path in
            let wave = path + ".wav"
            var synth: [String] = []
            for channel in 0..<channels { synth += ["sine", "\(200 + 100 * channel)-\(3000 - 200 * channel)"] }
            try self.run(
                "/usr/bin/sox",
                ["-R", "-D", "-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "\(bits)"]
                    + (bits == 8 ? ["-e", "unsigned-integer"] : ["-e", "signed-integer"])
                    + [wave, "synth", seconds] + synth + ["vol", "0.7"])
            defer { removeFile(wave) }
            try self.run("/usr/bin/flac", ["--silent", "--force"] + flacArguments + ["-o", path, wave])
        }
    }

    /// `flac -d`'s raw little-endian signed samples of a file (the reference decode).
    static func reference(_ path: String) throws -> [UInt8] {
        let name = String(path.split(separator: "/").last ?? "") + ".raw"
        let raw = try self.made.file(name) { raw in
            try self.run(
                "/usr/bin/flac",
                ["--silent", "--force", "-d", "--force-raw-format", "--endian=little", "--sign=signed", "-o", raw]
                    + (path.hasSuffix(".oga") ? ["--ogg"] : []) + [path])
        }
        return try fileBytes(raw)
    }

    /// Bytes of a file.
    static func bytes(_ path: String) throws -> [UInt8] { try fileBytes(path) }

    /// Bytes written as a file.
    static func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        try self.made.file(name, bytes: bytes)
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
