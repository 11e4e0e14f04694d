// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import Posix
import RawText

/// The messages between the daemon and its scan worker (`fermata --scan-worker`), and their framing.
///
/// Each message is a frame: its payload's length (4 bytes, little-endian, at most ``maximumPayload``), then
/// the payload. A request names a plugin, the settings that rebuild it and a local file; the answer is what the
/// plugin's `readInfo(path:)` gives: the song's information or its error. Integers are little-endian; a string is
/// its UTF-8 length (4 bytes) and bytes; an optional is a byte (0 none, 1 some) and the value. Pure functions of
/// their arguments, any thread; reading and writing frames blocks.
public enum ScanWorkerProtocol {
    /// The largest payload either side accepts (a song's tags are far below it): a longer length is garbage.
    public static let maximumPayload = 1 << 24

    /// What the daemon asks: scan `path` with the plugin `plugin` built from `settings`.
    public struct Request: Sendable, Hashable {
        /// The plugin's name (`ffmpeg`).
        public var plugin: String
        /// The settings of its `decoder` block that rebuild it, in order.
        public var settings: [Setting]
        /// The local file.
        public var path: String

        /// Creates a request.
        public init(plugin: String, settings: [Setting], path: String) {
            self.plugin = plugin
            self.settings = settings
            self.path = path
        }
    }

    /// One setting of a plugin's `decoder` block.
    public struct Setting: Sendable, Hashable {
        /// Its key.
        public var name: String
        /// Its value, as written.
        public var value: String

        /// Creates a setting.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// What the worker answers.
    public typealias Reply = Result<SongInfo, FormatError>

    /// Why a frame or payload could not be read.
    public enum DecodingError: Error, Equatable, CustomStringConvertible {
        /// The payload ends inside a value.
        case truncated
        /// A value no encoder writes (an unknown kind, tag type or sample format, a length too large).
        case malformed(String)
        /// The stream ended inside a frame.
        case endOfStream
        /// Reading or writing the pipe failed.
        case system(SystemCallError)

        /// A one-line explanation.
        public var description: String {
            switch self {
            case .truncated: "truncated message"
            case .malformed(let what): "malformed message: \(what)"
            case .endOfStream: "end of stream inside a message"
            case .system(let error): "\(error)"
            }
        }
    }

    // MARK: - Payloads

    /// The payload of a request.
    public static func encode(_ request: Request) -> [UInt8] {
        var writer = Writer()
        writer.string(request.plugin)
        writer.uint32(UInt32(request.settings.count))
        for setting in request.settings {
            writer.string(setting.name)
            writer.string(setting.value)
        }
        writer.string(request.path)
        return writer.bytes
    }

    /// The request in a payload.
    ///
    /// - Throws: `DecodingError` when the payload is not one ``encode(_:)-(Request)`` writes.
    public static func decodeRequest(_ payload: [UInt8]) throws(DecodingError) -> Request {
        var reader = Reader(payload)
        let plugin = try reader.string()
        let count = try reader.count()
        var settings: [Setting] = []
        for _ in 0..<count { settings.append(Setting(name: try reader.string(), value: try reader.string())) }
        let request = Request(plugin: plugin, settings: settings, path: try reader.string())
        try reader.finish()
        return request
    }

    /// The payload of a reply. An error other than a decline, a decoder's message or a file that cannot be opened
    /// travels as its text (``FormatError/decoder(_:)``).
    public static func encode(_ reply: Reply) -> [UInt8] {
        var writer = Writer()
        switch reply {
        case .success(let info):
            writer.byte(0)
            writer.uint32(UInt32(info.tags.count))
            for item in info.tags {
                writer.byte(UInt8(item.type.rawValue))
                writer.string(item.value)
            }
            writer.optional(info.durationMilliseconds) { $0.uint64($1) }
            writer.optional(info.audioFormat) { writer, format in
                writer.uint64(UInt64(bitPattern: Int64(format.sampleRate)))
                writer.byte(format.sampleFormat.ordinal)
                writer.uint64(UInt64(bitPattern: Int64(format.channels)))
            }
            let gain = info.replayGain
            for value in [gain.trackGain, gain.trackPeak, gain.albumGain, gain.albumPeak] {
                writer.optional(value) { $0.uint64($1.bitPattern) }
            }
            writer.byte(info.hasPicture ? 1 : 0)
            writer.byte(info.hasPlaylist ? 1 : 0)
        case .failure(let error):
            writer.byte(1)
            switch error {
            case .notRecognized(let path):
                writer.byte(0)
                writer.string(path)
            case .unsupportedFormat(let what):
                writer.byte(1)
                writer.string(what)
            case .input(.io(let failure, let uri)):
                writer.byte(2)
                writer.string(failure.function)
                writer.uint32(UInt32(bitPattern: failure.errno.rawValue))
                writer.string(uri)
            case .input(.notAFile(let uri)):
                writer.byte(3)
                writer.string(uri)
            default:
                writer.byte(4)
                writer.string(error.description)
            }
        }
        return writer.bytes
    }

    /// The reply in a payload.
    ///
    /// - Throws: `DecodingError` when the payload is not one ``encode(_:)-(Reply)`` writes.
    public static func decodeReply(_ payload: [UInt8]) throws(DecodingError) -> Reply {
        var reader = Reader(payload)
        let reply: Reply
        switch try reader.byte() {
        case 0:
            var info = SongInfo()
            for _ in 0..<(try reader.count()) {
                let raw = try reader.byte()
                guard let type = TagType(rawValue: Int(raw)) else { throw .malformed("tag type \(raw)") }
                info.tags.append(TagItem(type, try reader.string()))
            }
            info.durationMilliseconds = try reader.optional { (reader) throws(DecodingError) in try reader.uint64() }
            info.audioFormat = try reader.optional { (reader) throws(DecodingError) in
                let rate = Int(Int64(bitPattern: try reader.uint64()))
                let code = try reader.byte()
                guard let sampleFormat = SampleFormat(ordinal: code) else { throw .malformed("sample format \(code)") }
                let channels = Int(Int64(bitPattern: try reader.uint64()))
                return AudioFormat(sampleRate: rate, sampleFormat: sampleFormat, channels: channels)
            }
            var values: [Double?] = []
            for _ in 0..<4 {
                values.append(
                    try reader.optional { (reader) throws(DecodingError) in Double(bitPattern: try reader.uint64()) })
            }
            info.replayGain.trackGain = values[0]
            info.replayGain.trackPeak = values[1]
            info.replayGain.albumGain = values[2]
            info.replayGain.albumPeak = values[3]
            info.hasPicture = try reader.flag()
            info.hasPlaylist = try reader.flag()
            reply = .success(info)
        case 1:
            switch try reader.byte() {
            case 0: reply = .failure(.notRecognized(path: try reader.string()))
            case 1: reply = .failure(.unsupportedFormat(try reader.string()))
            case 2:
                let function = try reader.string()
                let errno = Errno(rawValue: Int32(bitPattern: try reader.uint32()))
                reply = .failure(.input(.io(SystemCallError(function, errno), uri: try reader.string())))
            case 3: reply = .failure(.input(.notAFile(uri: try reader.string())))
            case 4: reply = .failure(.decoder(try reader.string()))
            case let kind: throw .malformed("error kind \(kind)")
            }
        case let kind: throw .malformed("reply kind \(kind)")
        }
        try reader.finish()
        return reply
    }

    // MARK: - Frames

    /// Writes `payload` as one frame.
    ///
    /// - Throws: `DecodingError.system` when the write fails (`EPIPE`: the other side is gone).
    public static func writeFrame(_ payload: [UInt8], to descriptor: FileDescriptor) throws(DecodingError) {
        var frame = Writer()
        frame.uint32(UInt32(payload.count))
        frame.bytes += payload
        do {
            try descriptor.writeAll(frame.bytes)
        } catch {
            throw .system(error)
        }
    }

    /// Reads one frame's payload.
    ///
    /// - Returns: `nil` when the stream ends before a frame starts.
    /// - Throws: `DecodingError.endOfStream` when it ends inside one, `.malformed` for a length above
    ///   ``maximumPayload``, `.system` when a read fails.
    public static func readFrame(from descriptor: FileDescriptor) throws(DecodingError) -> [UInt8]? {
        guard let header = try Self.read(4, from: descriptor, atStart: true) else { return nil }
        var reader = Reader(header)
        let length = Int(try reader.uint32())
        guard length <= Self.maximumPayload else { throw .malformed("frame of \(length) bytes") }
        return try Self.read(length, from: descriptor, atStart: false) ?? []
    }

    /// Exactly `count` bytes; `nil` when the stream ends before the first if `atStart`.
    private static func read(
        _ count: Int, from descriptor: FileDescriptor, atStart: Bool
    ) throws(DecodingError) -> [UInt8]? {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
        defer { buffer.deallocate() }
        var done = 0
        while done < count {
            let result: IOResult<Int>
            do throws(SystemCallError) {
                result = try descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]))
            } catch {
                if error.errno == .interrupted { continue }
                throw .system(error)
            }
            guard case .processed(let got) = result, got > 0 else {
                if done == 0 && atStart { return nil }
                throw .endOfStream
            }
            done += got
        }
        let bytes = [UInt8](buffer)
        return bytes
    }

    private struct Writer {
        var bytes: [UInt8] = []

        mutating func byte(_ value: UInt8) { self.bytes.append(value) }

        mutating func uint32(_ value: UInt32) {
            for shift in stride(from: 0, to: 32, by: 8) { self.bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }

        mutating func uint64(_ value: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) { self.bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }

        mutating func string(_ value: String) {
            self.uint32(UInt32(value.utf8.count))
            self.bytes += value.utf8
        }

        mutating func optional<Value>(_ value: Value?, _ write: (inout Writer, Value) -> Void) {
            guard let value else { return self.byte(0) }
            self.byte(1)
            write(&self, value)
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func byte() throws(DecodingError) -> UInt8 {
            guard self.offset < self.bytes.count else { throw .truncated }
            defer { self.offset += 1 }
            return self.bytes[self.offset]
        }

        mutating func flag() throws(DecodingError) -> Bool {
            switch try self.byte() {
            case 0: false
            case 1: true
            case let value: throw .malformed("flag \(value)")
            }
        }

        mutating func uint32() throws(DecodingError) -> UInt32 {
            var value: UInt32 = 0
            for shift in stride(from: 0, to: 32, by: 8) { value |= UInt32(try self.byte()) << shift }
            return value
        }

        mutating func uint64() throws(DecodingError) -> UInt64 {
            var value: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 8) { value |= UInt64(try self.byte()) << shift }
            return value
        }

        /// A count of items that follow: each takes at least one byte, so a count above what is left is garbage.
        mutating func count() throws(DecodingError) -> Int {
            let count = Int(try self.uint32())
            guard count <= self.bytes.count - self.offset else { throw .truncated }
            return count
        }

        mutating func string() throws(DecodingError) -> String {
            let length = Int(try self.uint32())
            guard length <= self.bytes.count - self.offset else { throw .truncated }
            defer { self.offset += length }
            let slice = self.bytes[self.offset..<self.offset + length]
            guard let text = slice.withUnsafeBufferPointer(RawText.validUTF8) else {
                throw .malformed("text not UTF-8")
            }
            return text
        }

        mutating func optional<Value>(
            _ read: (inout Reader) throws(DecodingError) -> Value
        ) throws(DecodingError) -> Value? {
            guard try self.flag() else { return nil }
            return try read(&self)
        }

        func finish() throws(DecodingError) {
            guard self.offset == self.bytes.count else {
                throw .malformed("\(self.bytes.count - self.offset) bytes left")
            }
        }
    }
}
