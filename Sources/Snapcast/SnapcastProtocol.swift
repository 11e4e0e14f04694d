// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// The message types of Snapcast's binary protocol that `mpd`'s snapcast output speaks (a snapclient's `Hello`
/// and `Time`; the server's `ServerSettings`, `CodecHeader`, `WireChunk`, `Time` and `StreamTags`).
public enum SnapcastMessageType: UInt16, Sendable {
    case codecHeader = 1
    case wireChunk = 2
    case serverSettings = 3
    case time = 4
    case hello = 5
    case streamTags = 6
}

/// A time in Snapcast's messages: seconds and microseconds, each a 32-bit little-endian number, of the monotonic
/// clock (as `mpd` sends `steady_clock` times; a snapclient only compares them with each other).
public struct SnapcastTimestamp: Sendable, Hashable {
    /// Whole seconds (wrapping).
    public var seconds: UInt32
    /// Microseconds within the second (below 1 000 000 in the times a server makes).
    public var microseconds: UInt32

    /// Creates a timestamp.
    public init(seconds: UInt32, microseconds: UInt32) {
        self.seconds = seconds
        self.microseconds = microseconds
    }

    /// A time of the monotonic clock in nanoseconds, cut to whole microseconds.
    public init(nanoseconds: UInt64) {
        self.seconds = UInt32(truncatingIfNeeded: nanoseconds / 1_000_000_000)
        self.microseconds = UInt32(nanoseconds % 1_000_000_000 / 1000)
    }

    /// `self - other`, field by field with a borrow from the seconds, wrapping as the 32-bit fields do (the
    /// latency a `Time` reply carries: when the request arrived minus when the client says it sent it).
    public static func - (lhs: SnapcastTimestamp, rhs: SnapcastTimestamp) -> SnapcastTimestamp {
        var seconds = lhs.seconds &- rhs.seconds
        var microseconds = lhs.microseconds &- rhs.microseconds
        if lhs.microseconds < rhs.microseconds {
            seconds &-= 1
            microseconds &+= 1_000_000
        }
        return SnapcastTimestamp(seconds: seconds, microseconds: microseconds)
    }
}

/// The 26-byte header every Snapcast message starts with (all fields little-endian): type, id, the id of the
/// message it answers, when it was sent and received, and the size of what follows.
public struct SnapcastHeader: Sendable, Hashable {
    /// Its size on the wire.
    public static let size = 26

    public var type: UInt16
    public var id: UInt16
    public var refersTo: UInt16
    public var sent: SnapcastTimestamp
    public var received: SnapcastTimestamp
    /// Bytes of payload after the header.
    public var size: UInt32

    /// Creates a header; `received` is zero in what a server sends.
    public init(
        type: SnapcastMessageType, id: UInt16, refersTo: UInt16 = 0, sent: SnapcastTimestamp,
        received: SnapcastTimestamp = SnapcastTimestamp(seconds: 0, microseconds: 0), size: UInt32
    ) {
        self.type = type.rawValue
        self.id = id
        self.refersTo = refersTo
        self.sent = sent
        self.received = received
        self.size = size
    }

    /// Reads a header from the first ``size`` bytes of `bytes`; `nil` when there are fewer.
    public init?(parsing bytes: some Collection<UInt8>) {
        guard bytes.count >= Self.size else { return nil }
        var reader = LittleEndianReader(bytes.prefix(Self.size))
        self.type = reader.u16()
        self.id = reader.u16()
        self.refersTo = reader.u16()
        self.sent = SnapcastTimestamp(seconds: reader.u32(), microseconds: reader.u32())
        self.received = SnapcastTimestamp(seconds: reader.u32(), microseconds: reader.u32())
        self.size = reader.u32()
    }

    /// Appends the header's 26 bytes to `bytes`.
    public func append(to bytes: inout [UInt8]) {
        bytes.appendLE16(self.type)
        bytes.appendLE16(self.id)
        bytes.appendLE16(self.refersTo)
        bytes.append(self.sent)
        bytes.append(self.received)
        bytes.appendLE32(self.size)
    }
}

/// The messages `mpd`'s snapcast output sends, framed (header and payload), and the requests it reads.
///
/// Pure: times are given, never read from a clock. `messages` appends to a caller's buffer, which keeps its
/// capacity between messages.
public enum SnapcastMessage {
    /// The server settings `mpd` 0.23 sends every client (its only setting: a one-second end-to-end buffer).
    public static let serverSettingsJSON = #"{"bufferMs": 1000}"#
    /// The codec `mpd` 0.23 names in its codec header: PCM in a WAV header (the wave encoder's).
    public static let pcmCodec = "pcm"
    /// The wire chunk's own header after the message header: its timestamp and the payload's size.
    public static let wireChunkHeaderSize = 12

    /// `ServerSettings`, the first answer to a `Hello`: the settings as a length-prefixed JSON text.
    public static func serverSettings(
        id: UInt16, refersTo: UInt16, sent: SnapcastTimestamp, json: String = serverSettingsJSON,
        into bytes: inout [UInt8]
    ) {
        let text = Array(json.utf8)
        SnapcastHeader(type: .serverSettings, id: id, refersTo: refersTo, sent: sent, size: UInt32(4 + text.count))
            .append(to: &bytes)
        bytes.appendLE32(UInt32(text.count))
        bytes.append(contentsOf: text)
    }

    /// `CodecHeader`, the second answer to a `Hello`: the codec's name and its header (the WAV header), each
    /// length-prefixed.
    public static func codecHeader(
        id: UInt16, refersTo: UInt16, sent: SnapcastTimestamp, codec: String = pcmCodec, header: [UInt8],
        into bytes: inout [UInt8]
    ) {
        let name = Array(codec.utf8)
        SnapcastHeader(
            type: .codecHeader, id: id, refersTo: refersTo, sent: sent, size: UInt32(4 + name.count + 4 + header.count)
        ).append(to: &bytes)
        bytes.appendLE32(UInt32(name.count))
        bytes.append(contentsOf: name)
        bytes.appendLE32(UInt32(header.count))
        bytes.append(contentsOf: header)
    }

    /// The answer to a `Time` request: the request's payload with its latency replaced by when the request
    /// arrived minus when the client sent it.
    public static func timeReply(
        id: UInt16, request: SnapcastHeader, sent: SnapcastTimestamp, into bytes: inout [UInt8]
    ) {
        SnapcastHeader(type: .time, id: id, refersTo: request.id, sent: sent, size: 8).append(to: &bytes)
        bytes.append(request.received - request.sent)
    }

    /// The headers of a `WireChunk` (the message's and the chunk's: when the audio is to be played, and the
    /// payload's size); the `payloadSize` bytes of audio follow.
    public static func wireChunkHeaders(
        id: UInt16, sent: SnapcastTimestamp, timestamp: SnapcastTimestamp, payloadSize: Int, into bytes: inout [UInt8]
    ) {
        SnapcastHeader(type: .wireChunk, id: id, sent: sent, size: UInt32(wireChunkHeaderSize + payloadSize))
            .append(to: &bytes)
        bytes.append(timestamp)
        bytes.appendLE32(UInt32(payloadSize))
    }

    /// `StreamTags`: the song's tags as a length-prefixed JSON object.
    public static func streamTags(id: UInt16, sent: SnapcastTimestamp, json: [UInt8], into bytes: inout [UInt8]) {
        SnapcastHeader(type: .streamTags, id: id, sent: sent, size: UInt32(4 + json.count)).append(to: &bytes)
        bytes.appendLE32(UInt32(json.count))
        bytes.append(contentsOf: json)
    }

    /// The tags `mpd` puts in `StreamTags`, with their names there, in its order (the first value of each).
    public static let tagNames: [(tag: TagType, name: String)] = [
        (.artist, "artist"), (.album, "album"), (.title, "track"), (.musicBrainzTrackID, "musicbrainzid"),
    ]

    /// The JSON object of `StreamTags` for a song's `tags`, as `mpd` writes it (compact, strings escaped as
    /// yajl escapes them); `nil` when none of ``tagNames`` is there.
    public static func streamTagsJSON(_ tags: [TagItem]) -> [UInt8]? {
        var json: [UInt8] = [UInt8(ascii: "{")]
        var empty = true
        for (tag, name) in Self.tagNames {
            guard let value = tags.first(where: { $0.type == tag })?.value else { continue }
            if !empty { json.append(UInt8(ascii: ",")) }
            empty = false
            Self.appendJSONString(name, to: &json)
            json.append(UInt8(ascii: ":"))
            Self.appendJSONString(value, to: &json)
        }
        guard !empty else { return nil }
        json.append(UInt8(ascii: "}"))
        return json
    }

    /// A JSON string as yajl's generator writes it: `"` and `\` escaped, the control characters as `\b`, `\f`,
    /// `\n`, `\r`, `\t` or `\u00XX`, everything else (UTF-8 and `/`) as it is.
    static func appendJSONString(_ text: String, to json: inout [UInt8]) {
        let hex = Array("0123456789ABCDEF".utf8)
        json.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): json += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): json += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x08: json += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: json += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0A: json += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: json += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: json += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20: json += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            default: json.append(byte)
            }
        }
        json.append(UInt8(ascii: "\""))
    }
}

/// What a client's input holds, read as `mpd`'s snapcast output reads it.
public enum SnapcastRequest: Sendable, Hashable {
    /// Not a whole message yet.
    case incomplete
    /// A `Hello`: answered with the server settings and the codec header, then the client gets the stream.
    case hello(SnapcastHeader, length: Int)
    /// A `Time` request whose payload holds a latency: answered.
    case time(SnapcastHeader, length: Int)
    /// A message that needs no answer (a `Time` request too short to have a latency): consumed.
    case ignored(length: Int)
    /// Any other message type: the client is hung up on.
    case unexpected(type: UInt16)

    /// Reads the first message of `input`, stamping it `received` (when it was read).
    public init(parsing input: some Collection<UInt8>, received: SnapcastTimestamp) {
        guard var header = SnapcastHeader(parsing: input),
            UInt64(input.count) >= UInt64(SnapcastHeader.size) + UInt64(header.size)
        else {
            self = .incomplete
            return
        }
        header.received = received
        let length = SnapcastHeader.size + Int(header.size)
        switch SnapcastMessageType(rawValue: header.type) {
        case .hello: self = .hello(header, length: length)
        case .time: self = header.size >= 8 ? .time(header, length: length) : .ignored(length: length)
        default: self = .unexpected(type: header.type)
        }
    }
}

extension [UInt8] {
    fileprivate mutating func appendLE16(_ value: UInt16) {
        self.append(UInt8(truncatingIfNeeded: value))
        self.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    fileprivate mutating func appendLE32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { self.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    fileprivate mutating func append(_ time: SnapcastTimestamp) {
        self.appendLE32(time.seconds)
        self.appendLE32(time.microseconds)
    }
}

/// Reads little-endian numbers from the front of a byte collection.
private struct LittleEndianReader<Bytes: Collection<UInt8>> {
    private var rest: Bytes.SubSequence

    init(_ bytes: Bytes) { self.rest = bytes[...] }

    mutating func u16() -> UInt16 { UInt16(truncatingIfNeeded: self.number(bytes: 2)) }

    mutating func u32() -> UInt32 { UInt32(truncatingIfNeeded: self.number(bytes: 4)) }

    private mutating func number(bytes count: Int) -> UInt64 {
        var value: UInt64 = 0
        for (index, byte) in self.rest.prefix(count).enumerated() { value |= UInt64(byte) << (8 * index) }
        self.rest = self.rest.dropFirst(count)
        return value
    }
}
